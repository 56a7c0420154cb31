//! The nodes, one module per kind. Each owns its state and its rules: it
//! reacts to a message or a timer and writes its effects (messages, timers,
//! what happened) into the [`crate::out::Out`] the world lends it, never
//! into another node. A handler asks Postgres through messages only.

pub mod api;
pub mod broker;
pub mod charge;
pub mod client;
pub mod config;
pub mod handlers;
pub mod mail;
pub mod postgres;
pub mod processor;
pub mod reconciler;
pub mod redis;
pub mod rules;
