//! The client's retry policy as data: its numbers, the presets the reader
//! switches on, and the schedule of attempts they make. The client
//! (`node::client`) decides with the functions the schedule is computed by, so
//! what the lab shows is what the client does.

use super::{Toggle, Toggles};
use crate::time::Millis;
use crate::timing::SHORT_DEADLINE;

/// The client's retry policy. Which answers it retries is the client's rule
/// (`node::client`): no answer, 409 and 5xx are retried with the same key; any
/// other 4xx is final.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Retry {
    /// How long the client waits for a response before it gives the attempt up.
    pub timeout: Millis,
    pub max_attempts: u32,
    /// Backoff before retry n is `backoff × 2^(n−1)` plus up to `jitter`.
    pub backoff: Millis,
    pub jitter: Millis,
    /// No retry is sent later than this after the operation's first attempt: past
    /// it the client gives up, the outcome still unknown. It must be shorter than
    /// the key's TTL (`ttl-expiry` shows why).
    pub deadline: Millis,
}

/// When an attempt goes out, counted from the first, if no attempt before it is
/// answered: between `from` and `to` (the backoff's jitter). `cut`: the deadline
/// stops it always (`Some(true)`) or with some jitter (`Some(false)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
    pub from: Millis,
    pub to: Millis,
    pub cut: Option<bool>,
}

impl Retry {
    /// A phone that keeps a payment and retries it in the background: 4 attempts,
    /// 1.5 s each, and never later than 12 h after the first, half the key's 24 h.
    pub const MOBILE: Retry = Retry {
        timeout: Millis(1_500),
        max_attempts: 4,
        backoff: Millis(500),
        jitter: Millis(200),
        deadline: Millis::hours(12),
    };

    /// The range of each of a policy's numbers as the reader gives them
    /// ([`Retry::numbers`]: the timeout, attempts, backoff, jitter in ms and the
    /// deadline in s; up to 30 days, past the longest TTL of a key). A link's,
    /// a field's or the worker's number is brought into it ([`Retry::of`]).
    pub const BOUNDS: [(u64, u64); 5] = [
        (50, 60_000),
        (1, 10),
        (0, 60_000),
        (0, 60_000),
        (1, 2_592_000),
    ];

    /// The policy's numbers, in the order and units of [`Retry::BOUNDS`].
    pub fn numbers(&self) -> [u64; 5] {
        [
            self.timeout.0,
            self.max_attempts.into(),
            self.backoff.0,
            self.jitter.0,
            self.deadline.0 / 1000,
        ]
    }

    /// The policy of `n` ([`Retry::numbers`]), each brought into its range.
    pub fn of(n: [u64; 5]) -> Retry {
        let c = |i: usize| n[i].clamp(Self::BOUNDS[i].0, Self::BOUNDS[i].1);
        Retry {
            timeout: Millis(c(0)),
            max_attempts: c(1) as u32,
            backoff: Millis(c(2)),
            jitter: Millis(c(3)),
            deadline: Millis(c(4) * 1000),
        }
    }

    /// The preset that sets number `i` ([`Retry::under`]): a number the reader
    /// gives for it turns the preset off, so what they typed is what runs.
    pub fn preset(i: usize) -> Option<Toggle> {
        match i {
            1 => Some(Toggle::NoRetry),
            4 => Some(Toggle::ShortDeadline),
            _ => None,
        }
    }

    /// The policy under `toggles`, the reader's presets: [`Toggle::ShortDeadline`]
    /// cuts the deadline to [`SHORT_DEADLINE`], [`Toggle::NoRetry`] leaves one attempt.
    pub fn under(mut self, toggles: Toggles) -> Retry {
        if toggles.has(Toggle::ShortDeadline) {
            self.deadline = self.deadline.min(SHORT_DEADLINE);
        }
        if toggles.has(Toggle::NoRetry) {
            self.max_attempts = 1;
        }
        self
    }

    /// Whether another attempt may follow `sent` attempts.
    pub fn again(&self, sent: u32) -> bool {
        sent < self.max_attempts
    }

    /// The pause before the attempt after `sent`: `backoff × 2^(sent−1)` plus
    /// `jitter` (the client draws it in `0..=self.jitter`).
    pub fn pause(&self, sent: u32, jitter: Millis) -> Millis {
        Millis(self.backoff.0 << sent.saturating_sub(1).min(10)) + jitter
    }

    /// Whether an attempt may go out at `at` of an operation first tried at `first`.
    pub fn in_time(&self, first: Millis, at: Millis) -> bool {
        at <= first + self.deadline
    }

    /// When each attempt goes out if none is answered (each waits its timeout,
    /// then its pause), by the client's own rules: [`Retry::again`],
    /// [`Retry::pause`], [`Retry::in_time`]. The first attempt the deadline
    /// always cuts is the last slot.
    pub fn schedule(&self) -> Vec<Slot> {
        let mut at = Slot {
            from: Millis(0),
            to: Millis(0),
            cut: None,
        };
        let mut slots = vec![at];
        let mut sent = 1;
        while self.again(sent) && at.cut != Some(true) {
            let from = at.from + self.timeout + self.pause(sent, Millis(0));
            let to = at.to + self.timeout + self.pause(sent, self.jitter);
            let cut = match (self.in_time(Millis(0), from), self.in_time(Millis(0), to)) {
                (true, true) => None,
                (true, false) => Some(false),
                _ => Some(true),
            };
            at = Slot { from, to, cut };
            slots.push(at);
            sent += 1;
        }
        slots
    }
}
