//! Text that arrives after the page: the other language's labels and prose (a
//! switch of language), and each scenario's fragment.

use super::focus::keep_focus;
use crate::html::Markup;
use crate::lesson::fragment::{self, part_of};
use crate::lesson::{Lang, ScenarioId};
use crate::narrate::fill;
use crate::ui::act::Action;
use crate::ui::state::Lab;
use crate::ui::var::Var;
use leptos::prelude::*;
use leptos::task::spawn_local;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

/// The reader switches to `lang`. Its labels and prose arrive in one fragment
/// (`fragment::sections_path`: the parts `ui`, `header`, `before`, `after`); once it
/// is in, the header and prose are written over the page's and the lab is built anew
/// in `lang`, with the focus back on the language pressed, and `then` is called (the
/// lesson follows: `Learn::opened`). A failure is a notice in the language the page
/// is still in.
pub fn switch(lab: Lab, lang: Lang, then: impl FnOnce() + 'static) {
    spawn_local(async move {
        let url = fragment::sections_path(lang);
        let text = fetch_text(&url).await.unwrap_or_default();
        // A language switched to before already has its labels: parse them only once.
        let labels_in = crate::lesson::loaded(lang)
            || part_of(&text, "ui")
                .and_then(unescape)
                .is_some_and(|l| crate::lesson::load(lang, l));
        if !labels_in {
            let msg = fill(lab.ui().lesson_unavailable(), &[&url]);
            lab.notices.update(|n| n.push(msg));
            return;
        }
        let doc = document();
        for (sel, name) in [
            ("#page-header", "header"),
            ("[data-testid=prose-before]", "before"),
            ("[data-testid=prose-after]", "after"),
        ] {
            if let (Ok(Some(el)), Some(part)) = (doc.query_selector(sel), part_of(&text, name)) {
                crate::ui::set_inner(&el, &Markup::prerendered(part.to_string()));
            }
        }
        lab.lang.set(lang);
        then();
        keep_focus(Action::Lang(lang).selector());
    });
}

/// Escaped text back to text, by the browser's parser: a `<textarea>`'s content is
/// text, never markup, so nothing in it is an element.
fn unescape(html: &str) -> Option<String> {
    let el = document().create_element("textarea").ok()?;
    crate::ui::set_inner(&el, &Markup::prerendered(html.to_string()));
    el.text_content()
}

/// Fetches `url` (relative to the page) into `into`, tagged with `tag`, if it is
/// still `current` when it arrives (the reader may have moved to another language or
/// scenario meanwhile), then calls `then`. A failure becomes a notice, once, and an empty text: the lab
/// goes on without it, and the same text is not fetched again for every scenario.
pub(super) fn fetch(
    lab: Lab,
    into: Var<Option<(ScenarioId, String)>>,
    url: String,
    tag: ScenarioId,
    current: impl Fn() -> bool + 'static,
    then: impl Fn() + 'static,
) {
    spawn_local(async move {
        let text = fetch_text(&url).await;
        if !current() {
            return;
        }
        if text.is_none() {
            let msg = fill(lab.ui().lesson_unavailable(), &[&url]);
            lab.notices.update(|n| n.push(msg));
        }
        into.set(Some((tag, text.unwrap_or_default())));
        then();
    });
}

/// The text at `url` (relative to the page); `None` on any failure.
pub async fn fetch_text(url: &str) -> Option<String> {
    let resp = JsFuture::from(window().fetch_with_str(url)).await.ok()?;
    let resp: web_sys::Response = resp.dyn_into().ok()?;
    if !resp.ok() {
        return None;
    }
    JsFuture::from(resp.text().ok()?).await.ok()?.as_string()
}
