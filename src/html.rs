//! A tiny HTML writer with escaping. The state panes are rendered as markup
//! strings (one reactive `inner_html` per pane instead of hundreds of typed
//! view nodes), which keeps the WebAssembly module small. Every text and
//! attribute value goes through [`esc`]; the markup never carries script or
//! inline style, so it stays within the page's Content-Security-Policy.

use std::fmt::Write;

/// Escapes text content (quotes need no escaping outside attributes): the prose
/// fragments' and the listings' text.
pub fn esc_text(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Escapes text for HTML text and double-quoted attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Markup that may reach the DOM, escaped by construction: it is made only by
/// [`Html`] (which escapes every text and attribute value and adds constant markup
/// only from `&'static str`s), from text by [`Markup::text`], or, by name, from the
/// markup this project's own writers made elsewhere and sent as text
/// ([`Markup::prerendered`]). The page's one way into `innerHTML` takes a `Markup`
/// (`src/ui/mod.rs`; `tests/markup.rs` checks that nothing else writes markup).
#[derive(Clone, Default, PartialEq, Eq, Debug)]
pub struct Markup(String);

impl Markup {
    /// Text, escaped.
    pub fn text(s: &str) -> Markup {
        Markup(esc(s))
    }

    /// Markup written by this project's own [`Html`] on the host or in the
    /// explorer's worker, and sent as text: the build's lesson fragments
    /// (`fragment::files`, fetched) and the worker's replies. Nothing else.
    pub fn prerendered(s: String) -> Markup {
        Markup(s)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Each `from` replaced by `to`, both constant markup (an attribute's name,
    /// say): no text of it becomes markup.
    pub fn replace(&self, from: &'static str, to: &'static str) -> Markup {
        Markup(crate::template::replace(&self.0, from, to))
    }

    pub fn into_string(self) -> String {
        self.0
    }
}

impl std::ops::Deref for Markup {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

/// Its text, for a test or for markup written on the host (`fragment`); a `String`
/// made of it is no `Markup` again.
impl std::fmt::Display for Markup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Two pieces of markup, one after the other.
impl std::ops::Add<&Markup> for Markup {
    type Output = Markup;
    fn add(mut self, other: &Markup) -> Markup {
        self.0.push_str(&other.0);
        self
    }
}

impl FromIterator<Markup> for Markup {
    fn from_iter<I: IntoIterator<Item = Markup>>(parts: I) -> Markup {
        parts.into_iter().fold(Markup::default(), |a, b| a + &b)
    }
}

impl PartialEq<&str> for Markup {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

/// Markup under construction.
#[derive(Default)]
pub struct Html(String);

impl Html {
    pub fn new() -> Html {
        Html(String::with_capacity(1024))
    }

    /// `<name a="v" …>`; an attribute with an empty name is skipped.
    pub fn open(&mut self, name: &str, attrs: &[(&str, &str)]) -> &mut Html {
        self.0.push('<');
        self.0.push_str(name);
        for (k, v) in attrs {
            if !k.is_empty() {
                let _ = write!(self.0, " {k}=\"{}\"", esc(v));
            }
        }
        self.0.push('>');
        self
    }

    /// Adds attribute `k="v"` to the element just opened, or just written void (an
    /// empty name: none).
    pub fn attr(&mut self, k: &str, v: &str) -> &mut Html {
        let end = if self.0.ends_with("/>") { "/>" } else { ">" };
        if !k.is_empty() && self.0.ends_with(end) {
            self.0.truncate(self.0.len() - end.len());
            let _ = write!(self.0, " {k}=\"{}\"{end}", esc(v));
        }
        self
    }

    pub fn close(&mut self, name: &str) -> &mut Html {
        let _ = write!(self.0, "</{name}>");
        self
    }

    pub fn text(&mut self, s: &str) -> &mut Html {
        self.0.push_str(&esc(s));
        self
    }

    /// An element with text content.
    pub fn el(&mut self, name: &str, attrs: &[(&str, &str)], text: &str) -> &mut Html {
        self.open(name, attrs).text(text).close(name)
    }

    /// An element without content that needs no closing tag in SVG (`<line … />`).
    pub fn void(&mut self, name: &str, attrs: &[(&str, &str)]) -> &mut Html {
        self.open(name, attrs);
        self.0.insert(self.0.len() - 1, '/');
        self
    }

    /// Trusted, constant markup (never data).
    pub fn raw(&mut self, markup: &'static str) -> &mut Html {
        self.0.push_str(markup);
        self
    }

    /// Markup made already (escaped by construction).
    pub fn markup(&mut self, m: &Markup) -> &mut Html {
        self.0.push_str(&m.0);
        self
    }

    pub fn finish(self) -> Markup {
        Markup(self.0)
    }
}

/// A coordinate rounded to a whole number (without pulling float formatting into the module).
pub fn num(v: f64) -> String {
    (v.round() as i64).to_string()
}

/// A coordinate to one decimal: `12.3`.
pub fn tenths(v: f64) -> String {
    let t = (v * 10.0).round() as i64;
    let sign = if t < 0 { "-" } else { "" };
    format!("{sign}{}.{}", t.abs() / 10, t.abs() % 10)
}

/// A class list from optional parts: `classes(&[("row", true), ("changed", false)])` → `row`.
pub fn classes(parts: &[(&str, bool)]) -> String {
    parts
        .iter()
        .filter(|(_, on)| *on)
        .map(|(c, _)| *c)
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_attributes_are_escaped() {
        let mut h = Html::new();
        h.el("p", &[("title", "a\"b<c>"), ("", "skipped")], "<script>&");
        assert_eq!(
            h.finish(),
            "<p title=\"a&quot;b&lt;c&gt;\">&lt;script&gt;&amp;</p>"
        );
    }

    #[test]
    fn numbers_format_without_floats() {
        assert_eq!(
            (
                num(12.5),
                num(-3.4),
                tenths(7.25),
                tenths(-0.04),
                tenths(100.0)
            ),
            (
                "13".into(),
                "-3".into(),
                "7.3".into(),
                "0.0".into(),
                "100.0".into()
            )
        );
    }

    #[test]
    fn void_elements_self_close() {
        let mut h = Html::new();
        h.void("line", &[("x1", "1")]).attr("x2", "\"2");
        assert_eq!(h.finish(), "<line x1=\"1\" x2=\"&quot;2\"/>");
    }
}
