//! Named properties of a run and when each is judged. `judge` evaluates
//! them after every step; the trace marks the exact step at which one stops
//! (or starts again) holding.

/// A property the system should keep.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Invariant {
    /// Each conceptual payment is charged at most once at the card processor.
    AtMostOnceCharge,
    /// Committed ledger rows match the processor's charges (checked when no request is in flight).
    LedgerMatchesCharges,
    /// Likes never exceed the initial count plus the distinct like operations.
    LikesMatchOps,
    /// The balance never drops below the initial balance minus the debits meant.
    BalanceMatches,
    /// Every client operation ends with a definite answer (checked when the run is quiet).
    DefiniteAnswer,
    /// A success response answers the request it came for, not another one.
    ResponseMatchesRequest,
    /// The customer receives exactly one receipt per payment: never more
    /// receipts than the ledger has payments, and (once the run is quiet) no fewer.
    OneReceipt,
    /// A newer write is never overwritten by an older one (a late PUT's retry).
    NewerWriteKept,
    /// A refund the app asked for is made at the processor by the time the app
    /// has its answer (a definite answer ends the operation: nothing retries it).
    /// An app told "refused" (422) is answered, not refunded; one told "done"
    /// by a replay of another request's answer is neither.
    RefundMade,
    /// The app shows what happened: at rest, the phone says paid only if the
    /// card was charged for that payment and the ledger booked it, and failed
    /// only if nothing was charged; "checking" (no definite answer) is the
    /// truth while the outcome is unknown to it. A refund told refused was not made.
    AppShowsWhatHappened,
}

/// When a property is judged, as in stateright's `always` / `eventually`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Expect {
    /// Safety: it holds after every step.
    Always,
    /// Safety of state that lags by design (the ledger behind the processor while
    /// a request is in flight): judged whenever no request is in flight.
    AtRest,
    /// Liveness: judged once nothing is left to happen. Every operation ends
    /// with a definite answer once faults stop and the client keeps retrying
    /// within its attempts; a claim that never frees breaks it.
    Eventually,
}

impl Invariant {
    pub const ALL: [Invariant; 10] = [
        Invariant::AtMostOnceCharge,
        Invariant::LedgerMatchesCharges,
        Invariant::LikesMatchOps,
        Invariant::BalanceMatches,
        Invariant::DefiniteAnswer,
        Invariant::ResponseMatchesRequest,
        Invariant::OneReceipt,
        Invariant::NewerWriteKept,
        Invariant::RefundMade,
        Invariant::AppShowsWhatHappened,
    ];

    /// Stable id for test ids and URLs.
    pub fn id(self) -> &'static str {
        match self {
            Invariant::AtMostOnceCharge => "at-most-once-charge",
            Invariant::LedgerMatchesCharges => "ledger-matches-charges",
            Invariant::LikesMatchOps => "likes-match-ops",
            Invariant::BalanceMatches => "balance-matches",
            Invariant::DefiniteAnswer => "definite-answer",
            Invariant::ResponseMatchesRequest => "response-matches-request",
            Invariant::OneReceipt => "one-receipt",
            Invariant::NewerWriteKept => "newer-write-kept",
            Invariant::RefundMade => "refund-made",
            Invariant::AppShowsWhatHappened => "app-shows-what-happened",
        }
    }

    /// When it is judged.
    pub fn expect(self) -> Expect {
        match self {
            Invariant::LedgerMatchesCharges | Invariant::AppShowsWhatHappened => Expect::AtRest,
            Invariant::DefiniteAnswer => Expect::Eventually,
            _ => Expect::Always,
        }
    }
}
