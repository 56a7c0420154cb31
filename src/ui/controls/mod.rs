//! The reader's controls: the scenario picker, the language switch, playback,
//! faults and switches. Each control sends the lab a command; none decides
//! anything itself.
//!
//! For the size budget the controls are plain markup ([`markup`]: [`picker`],
//! [`playback`], [`faults`], [`switches`]; pure, tested on the host), written once
//! per page or scenario, never re-rendered (so focus stays where the reader put
//! it). [`patch`] then keeps their state (disabled, pressed, values, labels) in
//! step with the lab; the page's one delegated listener ([`super::listen`]) calls
//! the functions of [`commands`] for a control's `Act`; [`share`] holds Copy link
//! and where the notices go.

mod commands;
mod markup;
mod patch;
mod share;

pub use commands::*;
pub use markup::*;
pub use patch::patch;
pub use share::*;
