//! Label templates, for the page and for the explorer's worker (which compiles
//! this file in, as it does `html.rs`): `{}` placeholders filled in order.

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
}
