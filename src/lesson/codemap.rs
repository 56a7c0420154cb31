//! Which line of the open scenario's listing the current step runs. The listing
//! comes in the scenario's fragment (part `code`, written from
//! [`super::listing`]): each line starts with its anchors, the words of what the
//! core does when it runs that line (see [`Ev`]), then a space and the line. The
//! code pane highlights the line of the latest thing, at or before the current
//! step, that the listing shows; the module holds no table of lines.

use idem_sim::scenario::Phase;
use idem_sim::trace::{Happening, StepRecord};

/// What a happening of the trace executes, as a listing's anchors name it: a
/// handler (an API instance, the consumer, the producer) entering a phase — the
/// letter of the phase before it (`*`: none) and of the phase; for
/// [`Phase::Reply`], then the status it answered, in three digits — or the app
/// sending an attempt: `*` and [`FIRST`], [`SAME_KEY`] or [`NEW_KEY`].
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Key([u8; 5], usize);

impl Key {
    pub fn bytes(&self) -> &[u8] {
        &self.0[..self.1]
    }
}

/// The app sends an operation's first attempt.
pub const FIRST: u8 = b'^';
/// The app retries with the key of its attempt before.
pub const SAME_KEY: u8 = b'=';
/// The app retries with a key it made anew.
pub const NEW_KEY: u8 = b'+';

/// The letters of the phases, by their place in [`Phase::ALL`]: never one of
/// the app's bytes ([`FIRST`], [`SAME_KEY`], [`NEW_KEY`]), the `*` of no phase,
/// nor a fragment's separators. (A test checks that they last.)
const LETTERS: &[u8; 52] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// The letter that names `p` in an anchor.
pub fn letter(p: Phase) -> u8 {
    LETTERS[p as usize]
}

/// Whether anchor `tok` names `key`: one letter names a phase entered from any
/// other (or one of the app's bytes); a longer anchor is the whole key.
pub fn hit(tok: &[u8], key: Key) -> bool {
    match tok {
        [one] => key.1 >= 2 && *one == key.0[1],
        _ => tok == key.bytes(),
    }
}

/// Calls `f` with what each phase entered and each attempt sent in `trace`
/// executes, in order.
pub fn keys(trace: &[StepRecord], mut f: impl FnMut(Key)) {
    // The phase each request is in (the world numbers requests across its
    // nodes; the producer's is 0), and the key each operation sent last.
    let mut at = [b'*'; 64];
    let mut sent: [Option<&Option<String>>; 8] = [None; 8];
    for r in trace {
        for (i, h) in r.happenings.iter().enumerate() {
            let mut k = [b'*'; 5];
            let mut n = 2;
            match h {
                Happening::Phase { req, phase, .. } => {
                    let from = &mut at[req.0 as usize % 64];
                    k[0] = *from;
                    k[1] = letter(*phase);
                    *from = k[1];
                    // The runtime answers as it enters `Reply`.
                    let next = r.happenings.get(i + 1);
                    if let (Phase::Reply, Some(Happening::Responded { status, .. })) = (phase, next)
                    {
                        let digit = |d: u16| b'0' + (status / d % 10) as u8;
                        k[2..].copy_from_slice(&[digit(100), digit(10), digit(1)]);
                        n = 5;
                    }
                }
                Happening::ClientSent { op, key, .. } => {
                    let before = sent[op % 8].replace(key);
                    k[1] = match before {
                        None => FIRST,
                        Some(b) if b == key => SAME_KEY,
                        Some(_) => NEW_KEY,
                    }
                }
                _ => continue,
            }
            f(Key(k, n));
        }
    }
}

/// Whether a line of a fragment's `code` part (its anchors, a space, the line)
/// is the one `key` runs.
pub fn runs(line: &str, key: Key) -> bool {
    let b = line.as_bytes();
    let end = b.iter().position(|&c| c == b' ').unwrap_or(0);
    b[..end].split(|&c| c == b',').any(|t| hit(t, key))
}

/// The line to highlight at step `k` of a trace: the line of the latest phase or
/// attempt, at or before step `k`, that the listing `code` shows.
pub fn current(trace: &[StepRecord], k: usize, code: &str) -> Option<usize> {
    let mut cur = None;
    keys(&trace[..k.min(trace.len())], |key| {
        if let Some(l) = code.lines().position(|l| runs(l, key)) {
            cur = Some(l);
        }
    });
    cur
}

/// The listing as `<li>` items, without the anchors (each line of `code` is
/// already escaped); line `cur` is marked as the current one. Only the lines that
/// run under the switches (`on`: whether the toggle of that id is on) are shown: a
/// line's `?id` anchors need it on, its `!id` anchors off.
pub fn listing(code: &str, cur: Option<usize>, on: impl Fn(&str) -> bool) -> String {
    let mut out = String::with_capacity(code.len() + 256);
    let shown = |l: &str| {
        l.split_once(' ')
            .map_or("", |(a, _)| a)
            .split(',')
            .all(|w| match (w.strip_prefix('?'), w.strip_prefix('!')) {
                (Some(id), _) => on(id),
                (_, Some(id)) => !on(id),
                _ => true,
            })
    };
    for (i, l) in code.lines().enumerate().filter(|(_, l)| shown(l)) {
        out.push_str(if Some(i) == cur {
            "<li class=\"cur\" aria-current=\"step\">"
        } else {
            "<li>"
        });
        out.push_str(l.split_once(' ').map_or("", |(_, text)| text));
        out.push_str("</li>");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lesson::{listing, Lang, ScenarioId};
    use idem_sim::scenario;
    use idem_sim::{Config, Run};

    /// The code pane walks down naive-post's listing as its first request runs: the
    /// charge (in the step that receives the request), the ledger row (no
    /// transaction), the answer with the ledger's payment id.
    #[test]
    fn the_current_line_follows_the_steps() {
        let s = ScenarioId::NaivePost.scenario().clone();
        let toggles = s.default_toggles();
        let run = Run::new(
            s,
            Config {
                toggles,
                seed: 1,
                random: Default::default(),
            },
        );
        let code = listing::lines(ScenarioId::NaivePost, Lang::En);
        assert_eq!(current(&run.trace, 0, &code), None);
        let mut seen: Vec<usize> = Vec::new();
        for k in 0..=run.len() {
            if let Some(l) = current(&run.trace, k, &code) {
                if seen.last() != Some(&l) {
                    seen.push(l);
                }
            }
        }
        let text: Vec<&str> = seen
            .iter()
            .map(|&l| code.lines().nth(l).unwrap().split_once(' ').unwrap().1)
            .collect();
        assert_eq!(
            text[..3],
            [
                "charge = processor.charge(card, 100)",
                "INSERT INTO payments VALUES ('pay_1', 42, 100, NULL)  // no transaction",
                "return 201 {payment_id: pay_1}",
            ]
        );
        assert_eq!(
            listing("B a\n b &lt; c\n", Some(1), |_| false),
            "<li>a</li><li class=\"cur\" aria-current=\"step\">b &lt; c</li>"
        );
    }

    /// Regression: `letter(p)` was `b'A' + p`, past `Z` at the 27th phase
    /// (`[`, `\\`, `]`) and equal to [`FIRST`] at the 30th; its guard checked
    /// `CommitOffset`, the 24th, so it could not fail. Every phase's letter is a
    /// letter, its own, and none of the app's bytes.
    #[test]
    fn every_phase_has_a_letter_of_its_own() {
        let letters: Vec<u8> = scenario::Phase::ALL.iter().map(|p| letter(*p)).collect();
        for (i, l) in letters.iter().enumerate() {
            assert!(
                l.is_ascii_alphabetic(),
                "{:?}: {}",
                Phase::ALL[i],
                *l as char
            );
            assert!(![FIRST, SAME_KEY, NEW_KEY, b'*'].contains(l));
            assert!(
                !letters[..i].contains(l),
                "{:?} shares a letter",
                Phase::ALL[i]
            );
        }
    }

    /// The listing shows only the lines of the run's switches: idempotency-key's
    /// three replies to a timeout (Stripe's, Powertools', the ADR's), one at a time.
    #[test]
    fn the_listing_shows_only_the_design_switched_on() {
        let code = listing::lines(ScenarioId::IdempotencyKey, Lang::En);
        let shown = |on: &'static str| listing(&code, None, move |id| id == on);
        let adr = shown("");
        assert!(adr.contains("the ADR") && !adr.contains("Stripe") && !adr.contains("Powertools"));
        let stripe = shown("errors-replayed");
        assert!(
            stripe.contains("Stripe")
                && !stripe.contains("the ADR")
                && !stripe.contains("Powertools")
        );
        let powertools = shown("delete-on-error");
        assert!(powertools.contains("Powertools") && !powertools.contains("Stripe"));
        assert!(
            adr.contains("on timeout: return 503") && stripe.contains("on timeout: return 503")
        );
    }

    /// The anchors: a phase, a phase after another, an answer after a phase.
    #[test]
    fn anchors_name_what_runs() {
        use scenario::Phase::*;
        let k = |b: &[u8]| {
            let mut k = [0; 5];
            k[..b.len()].copy_from_slice(b);
            Key(k, b.len())
        };
        assert_eq!(letter(Receive), b'A');
        assert!(hit(b"F", k(b"AF")));
        assert!(hit(b"AF", k(b"AF")));
        assert!(!hit(b"BF", k(b"AF")));
        assert!(hit(b"LN201", k(b"LN201")));
        assert!(!hit(b"LN201", k(b"LN409")));
        assert!(!hit(b"", k(b"*A")));
        assert!(hit(b"^", k(b"*^")));
        assert!(runs("B,F x", k(b"AF")) && !runs(" x F", k(b"AF")));
    }
}
