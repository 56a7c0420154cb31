//! Idempotency Lab: the user interface of an interactive lesson on retries and
//! idempotency. The simulation itself lives in the `idem-sim` crate (`sim/`);
//! this crate renders its state and trace and sends it the reader's commands.
//!
//! - [`app`]: the root component; reads the URL and the browser once.
//! - [`ui`]: the lab's components and its state ([`ui::state::Lab`]).
//! - [`lesson`]: every text of the page, in Russian and English, as data.
//! - [`render`]: the state panes, narration, outcome and sequence diagram as markup.
//! - [`crash`]: the panic hook's friendly failure box.
//! - [`heap`]: the module's memory allocator (size classes, smaller than dlmalloc).
//! - [`lms`]: what the module tells an LMS's adapter (`scorm.js`), and what it reads from it.
//! - [`params`], [`narrate`], [`template`], [`seqdiag`], [`layout`], [`html`]: pure helpers, tested on the host.

pub mod app;
pub mod crash;
pub mod fixit;
pub mod heap;
pub mod html;
pub mod layout;
pub mod lesson;
pub mod lms;
pub mod narrate;
pub mod params;
pub mod progress;
pub mod render;
pub mod seqdiag;
pub mod template;
pub mod ui;
