//! # idem-sim: the simulation core of Idempotency Lab
//!
//! A deterministic discrete-event simulation of a payment system under
//! retries: a mobile client, API instances behind a load balancer, Redis,
//! Postgres, a card processor, and (for the consumer pitfall) a broker and a
//! consumer. It knows nothing of the DOM and never reads a clock: time is
//! [`time::Millis`], moved only by an event queue ordered by (time, sequence
//! number); randomness comes only from the world's own seeded [`rng::Rng`].
//!
//! - [`scenario`]: the scenarios as data (handler, toggles, faults, invariants).
//! - [`world::World`]: the state and the router; `step()` fires one event,
//!   `apply()` a command. Each node ([`node`]) owns its state and rules and
//!   writes its effects into an [`out::Out`].
//! - [`trace`]: what each step did, as typed data for the page and the tests;
//!   [`text`] renders it; [`observe`]: the outcome as data.
//! - [`run::Run`]: a whole run with time travel and branching.
//! - [`mod@explore`]: every order of events and faults within a bound, breadth
//!   first: the shortest path to each broken invariant, the outcomes.
//! - [`db`], [`redis`], [`net`], [`http`]: the stores, the messages, HTTP;
//!   [`network`]: routing, the load balancer, faults' verdicts, crash rules.
//! - [`invariant`]: named properties checked after every step.
//! - [`timing`]: every fixed duration of the model, documented once.
//! - [`fault_model`]: what a reader can do to a run, and the rules that answer it.

//!
//! No `unsafe` outside the explorer's cache hints (`prefetch.rs`): the
//! compiler refuses it (`deny(unsafe_code)`).

#![deny(unsafe_code)]

pub mod answer;
pub mod belief;
pub mod command;
pub mod db;
pub mod explore;
#[doc = include_str!("fault_model.md")]
pub mod fault_model {}
pub mod http;
pub mod invariant;
pub mod judge;
pub mod key;
pub mod link;
pub mod net;
pub mod network;
pub mod node;
pub mod observe;
pub mod out;
mod prefetch;
pub mod redis;
pub mod rng;
pub mod run;
pub mod scenario;
pub mod shared;
pub mod text;
pub mod time;
pub mod timing;
pub mod trace;
pub mod truth;
pub mod vecmap;
pub mod wire;
pub mod world;

pub use explore::{explore, Bound, Choice, Report};
pub use invariant::Invariant;
pub use net::{MsgId, NodeId};
pub use run::Run;
pub use scenario::{Scenario, ScenarioId, Toggle, Toggles};
pub use time::Millis;
pub use world::{Command, Config, World};
