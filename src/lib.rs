//! Idempotency Lab: the user interface of an interactive lesson on retries and
//! idempotency. The simulation itself lives in the `idem-sim` crate (`sim/`);
//! this crate renders its state and trace and sends it the reader's commands.
//!
//! - [`app`]: the root; reads the URL and the browser once, writes the lab's markup.
//! - [`ui`]: the lab's parts and its state ([`ui::state::Lab`]).
//! - [`lesson`]: every text of the page, in Russian and English, as data.
//! - [`render`]: the state panes, narration, outcome and sequence diagram as markup.
//! - [`crash`]: the panic hook's friendly failure box.
//! - [`heap`]: the module's memory allocator (size classes, smaller than dlmalloc).
//! - [`lms`]: what the module tells an LMS's adapter (`scorm.js`), and what it reads from it.
//! - [`params`], [`narrate`], [`template`], [`seqdiag`], [`layout`], [`html`]: pure helpers, tested on the host.
//!
//! No `unsafe` outside the allocator ([`heap`]): the compiler refuses it (`deny(unsafe_code)`).

#![deny(unsafe_code)]

pub mod app;
pub mod crash;
pub mod fixit;
#[allow(unsafe_code)]
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
/// Label templates whose arity the compiler checks: a call with one argument too
/// few, or a text with one placeholder too many, does not compile.
///
/// ```
/// use idempotency_lab::template::{count, fill, Counted, Template};
/// static STEP: Template<2> = Template::new("Step {} of {}");
/// static CHARGES: Counted<1> = Counted::new("{} charge[|s], {} in all");
/// assert_eq!(fill(STEP, &["1", "3"]), "Step 1 of 3");
/// assert_eq!(count(CHARGES, 2, &["$2"]), "2 charges, $2 in all");
/// ```
///
/// One argument too few:
///
/// ```compile_fail,E0308
/// use idempotency_lab::template::{fill, Template};
/// static STEP: Template<2> = Template::new("Step {} of {}");
/// fill(STEP, &["1"]);
/// ```
///
/// A text with one placeholder too many for its type:
///
/// ```compile_fail,E0080
/// use idempotency_lab::template::Template;
/// static STEP: Template<1> = Template::new("Step {} of {}");
/// ```
///
/// A counted label without its choice of forms, and a template with one:
///
/// ```compile_fail,E0080
/// use idempotency_lab::template::Counted;
/// static CHARGES: Counted<0> = Counted::new("{} charges");
/// ```
///
/// ```compile_fail,E0080
/// use idempotency_lab::template::Template;
/// static CHARGES: Template<1> = Template::new("{} charge[|s]");
/// ```
///
/// A counted label's extra arguments, one too many:
///
/// ```compile_fail,E0308
/// use idempotency_lab::template::{count, Counted};
/// static RETRIES: Counted<0> = Counted::new("{} retr[y|ies]");
/// count(RETRIES, 2, &["x"]);
/// ```
pub mod template;
pub mod ui;

/// Every file under `dir` (recursively), with its text: the source-scanning rule tests'.
#[cfg(test)]
pub(crate) fn source_files(dir: &std::path::Path) -> Vec<(std::path::PathBuf, String)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let src = std::fs::read_to_string(&p).unwrap_or_default();
                out.push((p, src));
            }
        }
    }
    out
}
