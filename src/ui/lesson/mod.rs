//! The lesson around the lab: the prose sections, the open scenario's explanation
//! and handler code, predict-then-reveal and the reader's progress.
//!
//! The text comes from fragments (see [`crate::lesson::fragment`]): the module links
//! no prose. The sections of the page's language are in the page already
//! (prerendered); those of the other language are fetched when the reader switches,
//! and the open scenario's text whenever it changes. This file only places that
//! text, marks the current code line, asks the question at the run's decisive step
//! and keeps the progress; which step is decisive, and which line a step runs, come
//! from the core's trace.
//!
//! Size matters here (the page has a 200 KB budget), so every part is one piece of
//! markup ([`Part`], rendered by pure functions), and its controls are handled by
//! the page's one delegated listener ([`super::listen`]), which calls the functions
//! here, instead of a typed view and a closure per control.
//!
//! By job: [`learn`] holds the question's state and the progress, and follows the
//! lab; [`fetch`] brings the text that arrives later; [`commands`] is what the
//! reader does; [`part`] places the markup of [`question`], [`progress_panel`] and
//! the code pane; [`focus`] moves the reader's eyes and keys.

mod commands;
mod fetch;
mod focus;
mod learn;
mod part;
mod progress_panel;
mod question;

pub use commands::{check, clear, go_on, open_link, recalc, set_predict, storage};
pub use fetch::{fetch_text, switch};
pub use focus::{focus_later, keep_focus, lab_into_view};
pub use learn::{Ask, Learn};
pub use part::{follow as follow_part, Part};
pub use progress_panel::progress;
pub use question::predict;
