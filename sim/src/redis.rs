//! Redis, reduced to the commands idempotency needs: GET, SET with NX/XX and
//! PX, DEL, INCR. Keys expire on the virtual clock.

use crate::key::KeyRecord;
use crate::time::Millis;
use crate::vecmap::VecMap;

/// A command, rendered exactly as `redis-cli` would take it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Cmd {
    Get(String),
    Set {
        key: String,
        value: Value,
        nx: bool,
        xx: bool,
        ttl: Option<Ttl>,
    },
    Del(String),
    Incr(String),
}

/// A key's time to live as `SET` takes it: `EX` seconds or `PX` milliseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ttl {
    Ex(u64),
    Px(u64),
}

impl Ttl {
    fn millis(self) -> Millis {
        match self {
            Ttl::Ex(s) => Millis(s * 1000),
            Ttl::Px(ms) => Millis(ms),
        }
    }
}

impl Cmd {
    /// The key the command names.
    pub fn key(&self) -> &str {
        match self {
            Cmd::Get(k) | Cmd::Del(k) | Cmd::Incr(k) | Cmd::Set { key: k, .. } => k,
        }
    }
}

/// A stored value: a string, or an idempotency key's record (shown as its JSON).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Value {
    Text(String),
    Key(KeyRecord),
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::Text(s.into())
    }
}

/// A reply: `OK`, `(nil)`, a bulk string or an integer.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Reply {
    Ok,
    Nil,
    Bulk(Value),
    Int(i64),
    Error(String),
}

/// A stored value and its absolute expiry time, if any.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Entry {
    pub value: Value,
    pub expires_at: Option<Millis>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Redis {
    pub keys: VecMap<String, Entry>,
}

impl Redis {
    /// Whether a key's TTL has run out at `now`.
    pub fn expires_by(&self, now: Millis) -> bool {
        self.keys
            .values()
            .any(|e| e.expires_at.is_some_and(|t| t <= now))
    }

    /// Removes keys whose TTL has run out at `now`; returns their names.
    pub fn expire(&mut self, now: Millis) -> Vec<String> {
        let gone: Vec<String> = self
            .keys
            .iter()
            .filter(|(_, e)| e.expires_at.is_some_and(|t| t <= now))
            .map(|(k, _)| k.clone())
            .collect();
        for k in &gone {
            self.keys.remove(k);
        }
        gone
    }

    /// Remaining time to live of `key` at `now` (`None`: no key or no TTL).
    pub fn ttl(&self, key: &str, now: Millis) -> Option<Millis> {
        self.keys
            .get(key)
            .and_then(|e| e.expires_at)
            .map(|t| t.saturating_sub(now))
    }

    pub fn execute(&mut self, cmd: &Cmd, now: Millis) -> Reply {
        self.expire(now);
        match cmd {
            Cmd::Get(k) => self
                .keys
                .get(k)
                .map_or(Reply::Nil, |e| Reply::Bulk(e.value.clone())),
            Cmd::Set {
                key,
                value,
                nx,
                xx,
                ttl,
            } => {
                let exists = self.keys.contains_key(key);
                if (*nx && exists) || (*xx && !exists) {
                    return Reply::Nil;
                }
                let expires_at = ttl.map(|t| now + t.millis());
                self.keys.insert(
                    key.clone(),
                    Entry {
                        value: value.clone(),
                        expires_at,
                    },
                );
                Reply::Ok
            }
            Cmd::Del(k) => Reply::Int(i64::from(self.keys.remove(k).is_some())),
            Cmd::Incr(k) => {
                let e = self.keys.get_or_insert_with(k.clone(), || Entry {
                    value: "0".into(),
                    expires_at: None,
                });
                let n = match &e.value {
                    Value::Text(s) => s.parse::<i64>().ok(),
                    Value::Key(_) => None,
                };
                match n {
                    Some(n) => {
                        e.value = Value::Text((n + 1).to_string());
                        Reply::Int(n + 1)
                    }
                    None => Reply::Error("ERR value is not an integer or out of range".into()),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set_nx(k: &str) -> Cmd {
        Cmd::Set {
            key: k.into(),
            value: "v".into(),
            nx: true,
            xx: false,
            ttl: Some(Ttl::Px(86_400_000)),
        }
    }

    #[test]
    fn set_nx_claims_once_and_expires_on_the_virtual_clock() {
        let mut r = Redis::default();
        assert_eq!(r.execute(&set_nx("idem:K1"), Millis(0)), Reply::Ok);
        assert_eq!(r.execute(&set_nx("idem:K1"), Millis(10)), Reply::Nil);
        assert_eq!(r.ttl("idem:K1", Millis::hours(1)), Some(Millis::hours(23)));
        assert_eq!(
            r.execute(&Cmd::Get("idem:K1".into()), Millis::hours(25)),
            Reply::Nil
        );
        assert_eq!(
            set_nx("idem:K1").to_string(),
            "SET idem:K1 'v' NX PX 86400000"
        );
    }

    #[test]
    fn set_ex_takes_seconds() {
        let mut r = Redis::default();
        let cmd = Cmd::Set {
            key: "k".into(),
            value: "v".into(),
            nx: true,
            xx: false,
            ttl: Some(Ttl::Ex(86_400)),
        };
        assert_eq!(cmd.to_string(), "SET k 'v' NX EX 86400");
        assert_eq!(r.execute(&cmd, Millis(0)), Reply::Ok);
        assert_eq!(r.ttl("k", Millis(0)), Some(Millis::hours(24)));
    }

    #[test]
    fn incr_and_del() {
        let mut r = Redis::default();
        assert_eq!(r.execute(&Cmd::Incr("n".into()), Millis(0)), Reply::Int(1));
        assert_eq!(r.execute(&Cmd::Incr("n".into()), Millis(0)), Reply::Int(2));
        assert_eq!(
            r.execute(&Cmd::Del("n".into()), Millis(0)).to_string(),
            "(integer) 1"
        );
    }
}
