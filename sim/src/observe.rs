//! What a reader (and the explorer) can observe of a world, as data: money
//! taken at the processor, the ledger, the account, the post's likes, the
//! order. The page reads these instead of probing the stores' tables; which
//! of them a scenario shows is the catalogue's (`Scenario::shows`).

use crate::db::Value;
use crate::node::client::ClientOp;
use crate::scenario::Figure;
use crate::world::World;

/// The observable outcome of a world. A field is `None` where the
/// scenario does not show it (`Scenario::shows`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Observables {
    /// Charges at the card processor, and their total.
    pub charges: Option<usize>,
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
    /// The receipts the customer received by email.
    pub receipts: Option<usize>,
    /// The profile's email.
    pub email: Option<String>,
}

impl World {
    /// Everything its scenario shows, at once (for the page).
    pub fn observables(&self) -> Observables {
        let shows = |f| self.scenario.shows(f);
        let account = shows(Figure::Account);
        Observables {
            charges: shows(Figure::Charges).then_some(self.processor.charges.len()),
            charged: self.processor.total(),
            ledger_rows: self.ledger_rows().filter(|_| shows(Figure::LedgerRows)),
            balance: self.balance().filter(|_| account),
            version: self.db.first_int("accounts", "version").filter(|_| account),
            likes: self.likes().filter(|_| shows(Figure::Likes)),
            order_status: self
                .db
                .first("orders", "status")
                .filter(|_| shows(Figure::OrderStatus))
                .and_then(Value::as_text)
                .map(String::from),
            receipts: shows(Figure::Receipts).then_some(self.mail.sent.len()),
            email: self.email().filter(|_| shows(Figure::Profile)),
        }
    }

    /// The money the customer should have paid so far, by the operations the
    /// app has started ([`ClientOp::owed`]); `None` where the scenario takes no
    /// money. The outcome line compares the processor's total with it.
    pub fn expected_charge(&self) -> Option<i64> {
        self.scenario
            .shows(Figure::Charges)
            .then(|| self.client.ops.iter().map(ClientOp::owed).sum())
    }

    /// The outcome line's verdict: it is red exactly when an invariant of the
    /// scenario is broken (the money line itself shows the figures; whether they
    /// are wrong is the invariants' judgement, [`Invariant::AppShowsWhatHappened`]
    /// among them). The page reads it; it decides nothing of its own.
    ///
    /// [`Invariant::AppShowsWhatHappened`]: crate::Invariant::AppShowsWhatHappened
    pub fn outcome_is_bad(&self) -> bool {
        !self.all_hold()
    }

    /// The profile's committed email, where there is one.
    pub fn email(&self) -> Option<String> {
        self.db
            .first("profiles", "email")
            .and_then(Value::as_text)
            .map(String::from)
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

#[cfg(test)]
mod tests {
    use crate::scenario::{all, Figure};
    use crate::world::{Config, World};
    use std::sync::Arc;

    /// The catalogue's figures are exactly what each scenario's stores hold: a
    /// figure it shows has its table, and a table it has is shown.
    #[test]
    fn each_scenario_shows_exactly_the_figures_its_stores_hold() {
        for s in all() {
            let w = World::new(Arc::new(s.clone()), Config::defaults(s, 1));
            let has = |t| w.db.table(t).is_some();
            let held = [
                (Figure::Charges, s.takes_payments()),
                (Figure::LedgerRows, has("payments")),
                (Figure::Account, has("accounts")),
                (Figure::Likes, has("posts")),
                (Figure::OrderStatus, has("orders")),
                (Figure::Receipts, s.sends_receipts()),
                (Figure::Profile, has("profiles")),
            ];
            for (f, held) in held {
                assert_eq!(s.shows(f), held, "{}: {f:?}", s.id);
            }
            let o = w.observables();
            assert_eq!(o.charges.is_some(), s.shows(Figure::Charges), "{}", s.id);
            assert_eq!(o.likes.is_some(), s.shows(Figure::Likes), "{}", s.id);
        }
    }
}
