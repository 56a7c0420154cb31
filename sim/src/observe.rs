//! What a reader (and the explorer) can observe of a world, as data: money
//! taken at the processor, the ledger, the account, the post's likes, the
//! order. The page reads these instead of probing the stores' tables.

use crate::world::World;

/// The observable outcome of a world. A field is `None` where the
/// scenario has no such thing (no account, no post, no order).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Observables {
    /// Charges at the card processor, and their total.
    pub charges: usize,
    pub charged: i64,
    /// Committed rows of the ledger (`payments`).
    pub ledger_rows: Option<usize>,
    /// The account's balance and version.
    pub balance: Option<i64>,
    pub version: Option<i64>,
    /// The post's likes.
    pub likes: Option<i64>,
    /// The order's status (`NEW`, `PAID`).
    pub order_status: Option<String>,
}

impl World {
    /// Everything observable, at once (for the page).
    pub fn observables(&self) -> Observables {
        Observables {
            charges: self.processor.charges.len(),
            charged: self.processor.total(),
            ledger_rows: self.ledger_rows(),
            balance: self.balance(),
            version: self.db.first_int("accounts", "version"),
            likes: self.likes(),
            order_status: self.db.table("orders").map(|t| {
                let c = t.col("status");
                t.committed_rows()
                    .next()
                    .map(|r| r[c].to_string())
                    .unwrap_or_default()
            }),
        }
    }

    /// Committed rows of the ledger, where there is one.
    pub fn ledger_rows(&self) -> Option<usize> {
        self.db.table("payments").map(|t| t.committed_count())
    }

    /// The account's committed balance, where there is one.
    pub fn balance(&self) -> Option<i64> {
        self.db.first_int("accounts", "balance")
    }

    /// The post's committed likes, where there is one.
    pub fn likes(&self) -> Option<i64> {
        self.db.first_int("posts", "likes")
    }
}
