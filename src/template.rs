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
    for (i, b) in forms.bytes().enumerate() {
        if b == SEP {
            if k == 0 {
                return &forms[start..i];
            }
            k -= 1;
            start = i + 1;
        }
    }
    &forms[start..]
}

/// The counted label `label` with each choice `[…]` made for the count `n`.
pub fn form(label: &str, n: u64) -> String {
    let mut out = String::with_capacity(label.len());
    let mut rest = label;
    while let Some(open) = rest.bytes().position(|b| b == b'[') {
        let Some(len) = rest[open..].bytes().position(|b| b == b']') else {
            break;
        };
        out.push_str(&rest[..open]);
        out.push_str(choose(&rest[open + 1..open + len], n));
        rest = &rest[open + len + 1..];
    }
    out.push_str(rest);
    out
}

/// Fills `{}` placeholders in order. A placeholder without its argument stays
/// `{}`, on the page for all to see (never dropped); the host test
/// `every_template_is_filled_with_as_many_arguments_as_it_has_placeholders`
/// checks every call's count against its template's.
pub fn fill(template: &str, args: &[&str]) -> String {
    let mut out = String::with_capacity(template.len() + 16);
    let mut rest = template;
    let mut args = args.iter();
    while let Some(i) = rest.find("{}") {
        out.push_str(&rest[..i]);
        out.push_str(args.next().copied().unwrap_or("{}"));
        rest = &rest[i + 2..];
    }
    out.push_str(rest);
    out
}

/// A counted label filled: the form the count `n` takes, with `n` for its first
/// `{}` and `rest` for the others.
pub fn count(label: &str, n: usize, rest: &[&str]) -> String {
    // The count fills the first `{}`; the others stay `{}` for `rest`.
    let counted = fill(&form(label, n as u64), &[&n.to_string()]);
    fill(&counted, rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `fill` dropped a missing argument silently ("x and ").
    #[test]
    fn a_missing_argument_stays_visible() {
        assert_eq!(fill("{} of {}", &["1"]), "1 of {}");
        assert_eq!(fill("{} of {}", &["1", "2", "3"]), "1 of 2");
        assert_eq!(fill("none", &["x"]), "none");
    }

    #[test]
    fn a_count_fills_the_first_placeholder_of_its_form() {
        let l = "{} charge[|s], {} in all";
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
