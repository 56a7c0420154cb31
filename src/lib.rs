//! Idempotency Lab: the user interface of an interactive lesson on retries and
//! idempotency. The simulation itself lives in the `idem-sim` crate (`sim/`).

pub mod app;
