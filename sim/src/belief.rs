//! [`Belief`]: what the client believes about one operation.

use crate::http::ErrorCode;

/// What the client believes about one operation. Kept apart from what
/// actually happened (the processor's charges, the ledger's rows).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Belief {
    NotStarted,
    /// A request is out; the spinner turns.
    Waiting,
    /// An attempt timed out: it may or may not have worked. A retry is planned.
    Unknown,
    Succeeded(String),
    /// A definite failure (4xx), with its status and error code.
    Failed(u16, ErrorCode),
    /// The API answered 409 version_mismatch: the client re-reads the account.
    Conflict,
    /// The client re-read the account and must decide again.
    Reread {
        balance: i64,
        version: i64,
    },
    /// The client's conditional PUT was refused (412) and its re-read found
    /// another value: it tells the user the value was changed elsewhere.
    ChangedElsewhere,
    /// Out of attempts without a definite answer.
    GaveUp,
}

impl Belief {
    /// A definite answer ends the operation.
    pub fn is_definite(&self) -> bool {
        matches!(
            self,
            Belief::Succeeded(_)
                | Belief::Failed(..)
                | Belief::Reread { .. }
                | Belief::ChangedElsewhere
        )
    }
}
