//! Label templates, for the page and for the explorer's worker (which compiles
//! this file in, as it does `html.rs`): `{}` placeholders filled in order
//! ([`fill`]), and the plural forms of a counted label ([`form`], [`count`]).
//!
//! A counted label has the count as its first `{}` and, where a word agrees with
//! it, a choice of forms in brackets: English `one|other` ("{} charge[|s]",
//! "{} retr[y|ies]"), Russian `one|few|many` ("{} списани[е|я|й]"). The number
//! of forms names the language's rule, so a label needs no language beside it;
//! the host test `every_counted_label_has_its_forms_in_both_languages` keeps two
//! in English and three in Russian.
//!
//! # Arity, checked by the compiler
//!
//! A label with placeholders is a [`Template<N>`] (`N` placeholders, no choice of
//! forms) or a [`Counted<N>`] (the count's `{}`, a choice of forms, and `N`
//! placeholders more). Their constructors are `const`: a label whose text has
//! another number of `{}` than its type says fails to compile where the lesson's
//! text declares it (`src/lesson/en.rs`, `ru.rs`). [`fill`] takes exactly `N`
//! arguments and [`count`] the count and exactly `N` more, so a call with one too
//! few or too many fails to compile too. The examples that show it, each a
//! `compile_fail` doctest, are on `template` in `src/lib.rs` (the worker compiles
//! this file without the page's crate).

/// A label with `N` `{}` placeholders and no choice of forms, filled by [`fill`].
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(transparent)]
pub struct Template<const N: usize>(&'static str);

impl<const N: usize> Template<N> {
    /// The label `text`; fails to compile (in a `static` or `const`) unless it has
    /// exactly `N` placeholders and no `[`.
    pub const fn new(text: &'static str) -> Self {
        assert!(
            placeholders(text) == N,
            "a template's text has another number of {{}} than its type"
        );
        assert!(
            !has(text, b'['),
            "a template with a choice of forms is a Counted"
        );
        Template(text)
    }

    /// The text as written, its placeholders unfilled.
    pub const fn text(self) -> &'static str {
        self.0
    }
}

/// A counted label ([`count`]): the count's `{}`, a choice of forms, and `N`
/// placeholders more.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(transparent)]
pub struct Counted<const N: usize>(&'static str);

impl<const N: usize> Counted<N> {
    /// The label `text`; fails to compile (in a `static` or `const`) unless it has
    /// exactly `N + 1` placeholders and a `[`.
    pub const fn new(text: &'static str) -> Self {
        assert!(
            placeholders(text) == N + 1,
            "a counted label's text has another number of {{}} than its type"
        );
        assert!(has(text, b'['), "a counted label has a choice of forms");
        Counted(text)
    }

    /// The text as written, its forms unchosen.
    pub const fn text(self) -> &'static str {
        self.0
    }
}

/// A field of a table of labels (`lesson::Ui`): plain text, a [`Template`] or a
/// [`Counted`]. The tables are data: their text is checked by the constructors
/// where it is written, and the page's copy, which comes as text
/// (`lesson::parse_labels`), is that text written out.
pub trait Label: Copy {
    /// The label's text as written.
    fn text(self) -> &'static str;
    /// The label of `text`, as its table wrote it out.
    fn of(text: &'static str) -> Self;
}

impl Label for &'static str {
    fn text(self) -> &'static str {
        self
    }
    fn of(text: &'static str) -> Self {
        text
    }
}

impl<const N: usize> Label for Template<N> {
    fn text(self) -> &'static str {
        self.0
    }
    fn of(text: &'static str) -> Self {
        Template(text)
    }
}

impl<const N: usize> Label for Counted<N> {
    fn text(self) -> &'static str {
        self.0
    }
    fn of(text: &'static str) -> Self {
        Counted(text)
    }
}

/// How many `{}` the text has (at compile time, for the constructors).
pub const fn placeholders(text: &str) -> usize {
    let b = text.as_bytes();
    let (mut i, mut n) = (0, 0);
    while i + 1 < b.len() {
        if b[i] == b'{' && b[i + 1] == b'}' {
            n += 1;
            i += 1;
        }
        i += 1;
    }
    n
}

/// Whether the text has the byte `c`.
const fn has(text: &str, c: u8) -> bool {
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == c {
            return true;
        }
        i += 1;
    }
    false
}

/// Separates the forms of a choice `[a|b]`.
pub const SEP: u8 = b'|';

/// Which form the count `n` takes, by the rule of a choice of `forms` forms:
/// three is Russian's one/few/many, any other English's one/other.
pub fn form_index(forms: usize, n: u64) -> usize {
    if forms == 3 {
        russian(n)
    } else {
        usize::from(n != 1)
    }
}

/// Russian's rule: one for 1, 21, 101 (not 11, 111); few for 2–4, 22–24 (not
/// 12–14); many for the rest (0, 5–20, 25…).
pub fn russian(n: u64) -> usize {
    let (ten, hundred) = (n % 10, n % 100);
    if ten == 1 && hundred != 11 {
        0
    } else if (2..=4).contains(&ten) && !(12..=14).contains(&hundred) {
        1
    } else {
        2
    }
}

/// The form of the choice `forms` (`a|b`, `a|b|c`) that the count `n` takes.
pub fn choose(forms: &str, n: u64) -> &str {
    // By bytes, not `split`: the page pays for every generic searcher.
    let bars = forms.bytes().filter(|&b| b == SEP).count();
    let mut k = form_index(bars + 1, n);
    let mut start = 0;
    // Slices by `get`, which cannot panic: a slice that could would link the
    // panic's message, which Debug-formats a char (~1 KB gzip of the worker).
    for (i, b) in forms.bytes().enumerate() {
        if b == SEP {
            if k == 0 {
                return forms.get(start..i).unwrap_or_default();
            }
            k -= 1;
            start = i + 1;
        }
    }
    forms.get(start..).unwrap_or_default()
}

/// The counted label `label` with each choice `[…]` made for the count `n`.
pub fn form(label: &str, n: u64) -> String {
    let mut out = String::with_capacity(label.len());
    let mut rest = label;
    // `[` and `]` are ASCII, so each `get` below is on a char boundary ([`choose`]).
    while let Some(open) = rest.bytes().position(|b| b == b'[') {
        let Some(close) = rest.bytes().skip(open).position(|b| b == b']') else {
            break;
        };
        let close = open + close;
        out.push_str(rest.get(..open).unwrap_or_default());
        out.push_str(choose(rest.get(open + 1..close).unwrap_or_default(), n));
        rest = rest.get(close + 1..).unwrap_or_default();
    }
    out.push_str(rest);
    out
}

/// The template `t` with its `N` placeholders filled in order.
pub fn fill<const N: usize>(t: Template<N>, args: &[&str; N]) -> String {
    fill_text(t.0, args)
}

/// The counted label `t`: the form the count `n` takes, with `n` for its first
/// `{}` and `rest` for the others.
pub fn count<const N: usize>(t: Counted<N>, n: usize, rest: &[&str; N]) -> String {
    count_text(t.0, n, rest)
}

/// Where `needle` first occurs in `text`, as `str::find` with a `&str` pattern but
/// without the standard library's two-way searcher (its setup and search were
/// ~1.1 KB gzip of the page's module, for a few short, fixed patterns: issue 28,
/// item 5). The page's code searches for text with this, [`split_once`] and
/// [`replace`]. A match starts where a character does (UTF-8), so the offset is one
/// to slice at.
pub fn find(text: &str, needle: &str) -> Option<usize> {
    if needle.is_empty() {
        return Some(0);
    }
    text.as_bytes()
        .windows(needle.len())
        .position(|w| w == needle.as_bytes())
}

/// `text` around the first `sep`: `str::split_once` with [`find`].
pub fn split_once<'a>(text: &'a str, sep: &str) -> Option<(&'a str, &'a str)> {
    let i = find(text, sep)?;
    // By `get`, which cannot panic ([`choose`]).
    Some((text.get(..i)?, text.get(i + sep.len()..)?))
}

/// Each `from` of `text` replaced by `to`: `str::replace` with [`find`] (`from` is
/// never empty here; an empty one replaces nothing).
pub fn replace(text: &str, from: &str, to: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some((before, after)) = split_once(rest, from).filter(|_| !from.is_empty()) {
        out.push_str(before);
        out.push_str(to);
        rest = after;
    }
    out.push_str(rest);
    out
}

/// Fills `{}` placeholders in order, for text whose count no type states (the
/// worker's labels, and [`fill`]'s work). A placeholder without its argument
/// stays `{}`, on the page for all to see (never dropped).
pub fn fill_text(template: &str, args: &[&str]) -> String {
    let mut out = String::with_capacity(template.len() + 16);
    let mut rest = template;
    let mut args = args.iter();
    while let Some((before, after)) = split_once(rest, "{}") {
        out.push_str(before);
        out.push_str(args.next().copied().unwrap_or("{}"));
        rest = after;
    }
    out.push_str(rest);
    out
}

/// A counted label filled ([`count`]'s work, for text whose count no type states).
pub fn count_text(label: &str, n: usize, rest: &[&str]) -> String {
    // The count fills the first `{}`; the others stay `{}` for `rest`.
    let counted = fill_text(&form(label, n as u64), &[&n.to_string()]);
    fill_text(&counted, rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The page's own search finds what the standard library's does, in Russian too.
    #[test]
    fn find_split_once_and_replace_agree_with_str() {
        let texts = [
            "",
            "a",
            "{}",
            "x{}y{}",
            "<!--@a-->b<!--@c-->",
            "Платёж (Redis) «{}»",
            "aaab",
            "ёё",
        ];
        let needles = [
            "{}",
            "<!--@",
            "-->",
            " (",
            "ab",
            "ё",
            "aab",
            "**",
            "data-testid=",
        ];
        for t in texts {
            for n in needles {
                assert_eq!(find(t, n), t.find(n), "{t:?} {n:?}");
                assert_eq!(split_once(t, n), t.split_once(n), "{t:?} {n:?}");
                assert_eq!(replace(t, n, "<>"), t.replace(n, "<>"), "{t:?} {n:?}");
            }
        }
        assert_eq!(find("abc", ""), Some(0));
        assert_eq!(replace("abc", "", "x"), "abc");
    }

    /// `fill` dropped a missing argument silently ("x and ").
    #[test]
    fn a_missing_argument_stays_visible() {
        assert_eq!(fill_text("{} of {}", &["1"]), "1 of {}");
        assert_eq!(fill_text("{} of {}", &["1", "2", "3"]), "1 of 2");
        assert_eq!(fill_text("none", &["x"]), "none");
    }

    #[test]
    fn a_count_fills_the_first_placeholder_of_its_form() {
        let l = Counted::new("{} charge[|s], {} in all");
        assert_eq!(count(l, 1, &["$1"]), "1 charge, $1 in all");
        assert_eq!(count(l, 2, &["$2"]), "2 charges, $2 in all");
    }

    /// The standard rule at the counts where Russian changes form.
    #[test]
    fn russian_takes_one_few_many_by_the_last_two_digits() {
        let got: Vec<(u64, usize)> = [1, 2, 5, 11, 12, 21, 22, 25, 111]
            .into_iter()
            .map(|n| (n, russian(n)))
            .collect();
        assert_eq!(
            got,
            [
                (1, 0),
                (2, 1),
                (5, 2),
                (11, 2),
                (12, 2),
                (21, 0),
                (22, 1),
                (25, 2),
                (111, 2)
            ]
        );
        assert_eq!(russian(0), 2);
        assert_eq!(russian(14), 2);
        assert_eq!(russian(104), 1);
    }

    #[test]
    fn english_takes_one_only_for_one() {
        let l = "{} retr[y|ies]";
        let got = [0, 1, 2, 11, 21].map(|n| form(l, n));
        assert_eq!(
            got,
            [
                "{} retries",
                "{} retry",
                "{} retries",
                "{} retries",
                "{} retries"
            ]
        );
    }

    #[test]
    fn every_choice_of_a_label_follows_the_count() {
        let ru = "{} конечн[ое|ых|ых] состояни[е|я|й]";
        assert_eq!(form(ru, 21), "{} конечное состояние");
        assert_eq!(form(ru, 3), "{} конечных состояния");
        assert_eq!(form(ru, 12), "{} конечных состояний");
        assert_eq!(form("charges: {}", 1), "charges: {}");
        assert_eq!(form("a] [b", 1), "a] [b");
        assert_eq!(form("[a|b] [c", 2), "b [c");
    }
}
