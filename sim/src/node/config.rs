//! The scenario's switches, resolved once when a world is made
//! ([`NodeConfig::new`], from `Config::toggles`) into a typed configuration
//! per node and per handler. The world lends it with the outbox
//! ([`crate::out::Out::cfg`]); no rule reads a toggle.

use crate::scenario::{Handler, KeyStore, Retry, Scenario, Toggle, Toggles};
use crate::time::Millis;
use crate::timing::{TTL_DAY, TTL_WEEK};

/// Every node's configuration under the run's toggles.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct NodeConfig {
    pub client: ClientConfig,
    pub api: ApiConfig,
    pub pipeline: PipelineConfig,
    /// The nightly reconciliation job runs (`node::reconciler`): where the
    /// status read may book a charge it finds, for a payment's key.
    pub reconcile: bool,
}

/// The mobile client's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ClientConfig {
    /// Its retry policy under the reader's presets ([`Retry::under`]).
    pub retry: Retry,
    /// The API's key handling, which the client follows (`None`: it sends no key).
    pub key: Option<KeyCfg>,
    /// How long the API stands by an operation ([`op_ttl`]).
    pub op_ttl: Option<Millis>,
    /// `Toggle::OpDedup`: a like carries an operation id the app can ask by.
    pub op_ids: bool,
    /// `Toggle::NewKeyPerRetry`: every retry is sent under a fresh key (the pitfall).
    pub new_key_per_retry: bool,
}

/// An API instance's: its runtime's and each handler's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ApiConfig {
    /// How long it stands by an operation ([`op_ttl`]).
    pub op_ttl: Option<Millis>,
    /// `Toggle::ScopedKey`: a key is stored under the method and path too.
    pub scoped_key: bool,
    /// `Toggle::Outbox`: the instance runs the outbox's relay.
    pub relay: bool,
    pub charge: ChargeConfig,
    pub order: OrderConfig,
    pub status: StatusConfig,
    /// `Toggle::VersionCheck`: a debit's UPDATE checks the version the client read.
    pub version_check: bool,
    /// `Toggle::IfMatch`: a PUT's UPDATE checks its `If-Match`.
    pub if_match: bool,
    /// `Toggle::OpDedup`: a like first records its operation id, in one transaction.
    pub op_dedup: bool,
}

/// `POST /charges` (and refunds).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ChargeConfig {
    /// The key handling (`None`: no key).
    pub key: Option<KeyCfg>,
    /// `@Transactional`: the charge runs inside the ledger row's transaction.
    pub transactional: bool,
    /// The scenario sends a receipt for each payment.
    pub receipt: bool,
    /// The receipt goes into the outbox in the ledger row's transaction
    /// (`Toggle::Outbox`), not emailed by the handler after the commit.
    pub outbox: bool,
    /// `Toggle::ErrorsReplayed`: Stripe's way, a timeout past the claim is
    /// stored under the key and replayed.
    pub errors_replayed: bool,
    /// `Toggle::DeleteOnError`: Powertools' way, a timeout past the claim deletes the key.
    pub delete_on_error: bool,
}

/// `POST /orders/42/pay`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct OrderConfig {
    /// `Toggle::PayingLease`: NEW → PAYING (a fenced lease) → charge → PAID.
    pub paying_lease: bool,
    /// `Toggle::RowCountCheck`: the naive handler answers PAID when its UPDATE found no NEW row.
    pub row_count_check: bool,
}

/// The status read by key (`GET /payments?key=…`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StatusConfig {
    /// `Toggle::Fingerprint`: a payment of another amount under the key is not this one.
    pub fingerprint: bool,
    /// It may book a charge it finds at the processor: the processor was given
    /// the key, and the ledger refuses a second row for it.
    pub books_found_charges: bool,
}

/// The pipeline's producer and consumer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PipelineConfig {
    /// `Toggle::IdempotentProducer`: the broker drops a sequence number it has appended.
    pub idempotent_producer: bool,
    /// `Toggle::ConsumerDedup`: the consumer records each message id in its transaction.
    pub consumer_dedup: bool,
}

/// The key handling an API instance does, derived from the scenario and its toggles.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KeyCfg {
    pub store: KeyStore,
    pub atomic: bool,
    pub fingerprint: bool,
    pub to_processor: bool,
    pub ttl: Millis,
}

impl NodeConfig {
    /// Resolves the scenario's switches under `toggles`.
    pub fn new(s: &Scenario, toggles: Toggles) -> NodeConfig {
        let has = |t| toggles.has(t);
        let key = key_cfg(s, toggles);
        let receipt = s.sends_receipts();
        let books_found_charges =
            key.is_some_and(|c| c.to_processor) && s.ledger_refuses_a_second_row(toggles);
        NodeConfig {
            client: ClientConfig {
                retry: s.retry_policy(toggles),
                key,
                op_ttl: op_ttl(s, toggles),
                op_ids: has(Toggle::OpDedup),
                new_key_per_retry: has(Toggle::NewKeyPerRetry),
            },
            api: ApiConfig {
                op_ttl: op_ttl(s, toggles),
                scoped_key: has(Toggle::ScopedKey),
                relay: has(Toggle::Outbox),
                charge: ChargeConfig {
                    key,
                    transactional: matches!(
                        s.handler,
                        Handler::Charge {
                            transactional: true,
                            ..
                        }
                    ),
                    receipt,
                    outbox: receipt && has(Toggle::Outbox),
                    errors_replayed: has(Toggle::ErrorsReplayed),
                    delete_on_error: has(Toggle::DeleteOnError),
                },
                order: OrderConfig {
                    paying_lease: has(Toggle::PayingLease),
                    row_count_check: has(Toggle::RowCountCheck),
                },
                status: StatusConfig {
                    fingerprint: has(Toggle::Fingerprint),
                    books_found_charges,
                },
                version_check: has(Toggle::VersionCheck),
                if_match: has(Toggle::IfMatch),
                op_dedup: has(Toggle::OpDedup),
            },
            pipeline: PipelineConfig {
                idempotent_producer: has(Toggle::IdempotentProducer),
                consumer_dedup: has(Toggle::ConsumerDedup),
            },
            reconcile: books_found_charges && matches!(s.handler, Handler::Charge { .. }),
        }
    }
}

/// The key handling of the scenario's API under `toggles` (`None`: no key).
fn key_cfg(s: &Scenario, toggles: Toggles) -> Option<KeyCfg> {
    let Handler::Charge { store, .. } = s.handler else {
        return None;
    };
    let store = match store {
        None if toggles.has(Toggle::IdempotencyKey) => KeyStore::Postgres,
        None => return None,
        Some(_) if toggles.has(Toggle::SameTransaction) => KeyStore::Postgres,
        Some(KeyStore::Memory) if toggles.has(Toggle::SharedStore) => KeyStore::Redis,
        Some(s) => s,
    };
    Some(KeyCfg {
        store,
        atomic: toggles.has(Toggle::AtomicClaim),
        fingerprint: toggles.has(Toggle::Fingerprint),
        to_processor: toggles.has(Toggle::KeyToProcessor),
        ttl: if toggles.has(Toggle::LongTtl) {
            TTL_WEEK
        } else {
            TTL_DAY
        },
    })
}

/// How long the API stands by an operation's key (the payment's key, the
/// order's id, the like's operation id): a request sent longer ago is refused
/// (400 `request_expired`) before it changes anything, so a status read may
/// answer 404 once the latest attempt is older. `None` where nothing is
/// deduplicated (the app has no status to ask for, or the pitfall answers at once).
pub fn op_ttl(s: &Scenario, toggles: Toggles) -> Option<Millis> {
    match s.handler {
        Handler::PayOrder if toggles.has(Toggle::PayingLease) => Some(TTL_DAY),
        Handler::Like if toggles.has(Toggle::OpDedup) => Some(TTL_DAY),
        _ => key_cfg(s, toggles).map(|c| c.ttl),
    }
}

/// How long the scenario's API keeps a key's result under `toggles`: `None`
/// without a key, or where the keys live in the process's memory (they never expire).
pub fn key_ttl(s: &Scenario, toggles: Toggles) -> Option<Millis> {
    key_cfg(s, toggles)
        .filter(|k| k.store != KeyStore::Memory)
        .map(|k| k.ttl)
}
