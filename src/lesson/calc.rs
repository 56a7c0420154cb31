//! The ADR-001 cost calculator: how many idempotency keys the store holds, how much
//! memory that takes, and how much latency the extra round trip adds. Pure
//! functions; the page only formats their results with the labels in
//! [`super::Ui`].

use super::{ui, Lang, Ui};
use crate::template::fill;

/// ADR-001's load: 10,000 mutating requests per second.
pub const DEFAULT_RPS: f64 = 10_000.0;
/// ADR-001's TTL: 24 hours.
pub const DEFAULT_TTL_HOURS: f64 = 24.0;
/// About 100 bytes per entry: a UUID key, a short status and Redis's per-key
/// overhead. Storing whole response bodies costs several times more.
pub const DEFAULT_BYTES_PER_KEY: f64 = 100.0;
/// One extra round trip to Redis in the same data centre, in milliseconds.
pub const DEFAULT_EXTRA_RTT_MS: f64 = 1.0;
/// A fast write endpoint, in milliseconds, before the extra round trip.
pub const DEFAULT_BASE_LATENCY_MS: f64 = 2.5;

/// Rule of thumb for the memory one Redis node should hold before the data set is
/// sharded across a cluster: 25 GB. Beyond that, snapshots, replication and
/// failover of a single node get slow.
pub const SINGLE_NODE_BYTES: f64 = 25e9;

/// Keys held at steady state: every request in the last `ttl_hours` left one key.
pub fn keys_held(rps: f64, ttl_hours: f64) -> f64 {
    rps.max(0.0) * ttl_hours.max(0.0) * 3600.0
}

/// Memory for `keys` entries of `bytes_per_key` bytes each.
pub fn memory_bytes(keys: f64, bytes_per_key: f64) -> f64 {
    keys.max(0.0) * bytes_per_key.max(0.0)
}

/// Latency added by one extra round trip, as a percentage of the endpoint's
/// latency without it: +1 ms on a 2.5 ms endpoint is +40 %, on 50 ms it is +2 %.
pub fn added_latency_percent(extra_rtt_ms: f64, base_latency_ms: f64) -> f64 {
    if base_latency_ms <= 0.0 {
        return 0.0;
    }
    extra_rtt_ms.max(0.0) / base_latency_ms * 100.0
}

/// Whether `bytes` is more than one Redis node should hold ([`SINGLE_NODE_BYTES`]).
pub fn needs_cluster(bytes: f64) -> bool {
    bytes > SINGLE_NODE_BYTES
}

/// `x` with up to three significant digits (at most two decimals), trailing zeros
/// trimmed, and the decimal separator of `lang` ("86.4" / "86,4"). Integer
/// arithmetic only: float formatting would add kilobytes to the WebAssembly module.
pub fn format_short(x: f64, lang: Lang) -> String {
    let decimals: u32 = if x.abs() >= 100.0 {
        0
    } else if x.abs() >= 10.0 {
        1
    } else {
        2
    };
    let scale = 10u64.pow(decimals);
    let scaled = (x.abs() * scale as f64).round() as u64;
    let (int, mut frac) = (scaled / scale, scaled % scale);
    let mut s = if x < 0.0 && scaled > 0 {
        format!("-{int}")
    } else {
        int.to_string()
    };
    let mut digits = decimals;
    while digits > 0 && frac % 10 == 0 {
        frac /= 10;
        digits -= 1;
    }
    if digits > 0 {
        s.push(match lang {
            Lang::En => '.',
            Lang::Ru => ',',
        });
        let f = frac.to_string();
        for _ in f.len()..digits as usize {
            s.push('0');
        }
        s.push_str(&f);
    }
    s
}

/// An integer with digit groups: "864,000,000" in English, "864 000 000" (with
/// no-break spaces) in Russian.
pub fn format_grouped(x: f64, lang: Lang) -> String {
    let n = x.max(0.0).round() as u64;
    let digits = n.to_string();
    let sep = match lang {
        Lang::En => ',',
        Lang::Ru => '\u{a0}',
    };
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(sep);
        }
        out.push(c);
    }
    out
}

/// A count in words: "864 million" / "864 млн", "1.2 thousand" / "1,2 тыс.";
/// below a thousand, the plain number.
pub fn format_count(n: f64, lang: Lang) -> String {
    let ui = ui(lang);
    let scaled = [
        (1e9, ui.count_billion()),
        (1e6, ui.count_million()),
        (1e3, ui.count_thousand()),
    ];
    for (unit, word) in scaled {
        if n.abs() >= unit {
            return format!("{}\u{a0}{}", format_short(n / unit, lang), word);
        }
    }
    format_short(n, lang)
}

/// Bytes in decimal units (1 GB = 10⁹ bytes): "86.4 GB" / "86,4 ГБ".
pub fn format_bytes(bytes: f64, lang: Lang) -> String {
    let ui = ui(lang);
    let scaled = [
        (1e12, ui.unit_tb()),
        (1e9, ui.unit_gb()),
        (1e6, ui.unit_mb()),
        (1e3, ui.unit_kb()),
    ];
    for (unit, word) in scaled {
        if bytes.abs() >= unit {
            return format!("{}\u{a0}{}", format_short(bytes / unit, lang), word);
        }
    }
    format!("{}\u{a0}{}", format_short(bytes, lang), ui.unit_bytes())
}

/// A percentage: "+40%" in English, "+40 %" in Russian.
pub fn format_percent(p: f64, lang: Lang) -> String {
    match lang {
        Lang::En => format!("+{}%", format_short(p, lang)),
        Lang::Ru => format!("+{}\u{a0}%", format_short(p, lang)),
    }
}

/// Milliseconds: "1 ms" / "1 мс".
pub fn format_ms(ms: f64, lang: Lang) -> String {
    format!("{}\u{a0}{}", format_short(ms, lang), ui(lang).unit_ms())
}

/// The calculator's inputs, as the reader typed them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Inputs {
    pub rps: f64,
    pub ttl_hours: f64,
    pub bytes_per_key: f64,
    pub extra_rtt_ms: f64,
    pub base_latency_ms: f64,
}

impl Default for Inputs {
    /// ADR-001's figures.
    fn default() -> Inputs {
        Inputs {
            rps: DEFAULT_RPS,
            ttl_hours: DEFAULT_TTL_HOURS,
            bytes_per_key: DEFAULT_BYTES_PER_KEY,
            extra_rtt_ms: DEFAULT_EXTRA_RTT_MS,
            base_latency_ms: DEFAULT_BASE_LATENCY_MS,
        }
    }
}

/// The inputs' labels, in the order of [`Inputs::values`].
pub fn input_labels(ui: &Ui) -> [&'static str; 5] {
    [
        ui.calc_rps(),
        ui.calc_ttl_hours(),
        ui.calc_bytes_per_key(),
        ui.calc_extra_rtt_ms(),
        ui.calc_base_latency_ms(),
    ]
}

/// The calculator's results, formatted for `lang`, in the order of [`OUTPUT_NAMES`]:
/// keys held, memory, added latency, the formula and the verdict (one node or a cluster).
/// An input that is empty, not a number or out of [`BOUNDS`] computes nothing: the
/// figures read "—" and the verdict says which field is wrong and what it takes.
pub fn outputs(i: Inputs, lang: Lang) -> [String; 5] {
    let ui = ui(lang);
    let labels = input_labels(ui);
    let bad = i
        .values()
        .iter()
        .zip(BOUNDS)
        .position(|(v, (lo, hi))| !(lo..=hi).contains(v));
    if let Some(k) = bad {
        let (lo, hi) = BOUNDS[k];
        let dash = || "—".to_string();
        let why = fill(
            ui.calc_bad_input(),
            &[
                labels[k],
                &format_short(lo, lang),
                &format_grouped(hi, lang),
            ],
        );
        return [dash(), dash(), dash(), String::new(), why];
    }
    let keys = keys_held(i.rps, i.ttl_hours);
    let bytes = memory_bytes(keys, i.bytes_per_key);
    let memory = format_bytes(bytes, lang);
    let verdict = if needs_cluster(bytes) {
        ui.calc_needs_cluster()
    } else {
        ui.calc_fits_one_node()
    };
    [
        format_count(keys, lang),
        memory.clone(),
        format_percent(
            added_latency_percent(i.extra_rtt_ms, i.base_latency_ms),
            lang,
        ),
        fill(
            ui.calc_formula(),
            &[
                &format_grouped(i.rps, lang),
                &format_short(i.ttl_hours.max(0.0), lang),
                &format_grouped(keys, lang),
            ],
        ),
        fill(verdict, &[&memory]),
    ]
}

/// The `name`s of the calculator's `<input>`s, in [`Inputs`] field order.
pub const INPUT_NAMES: [&str; 5] = ["rps", "ttl", "bytes", "rtt", "base"];
/// The `name`s of its `<output>`s, in the order [`outputs`] returns them.
pub const OUTPUT_NAMES: [&str; 5] = ["keys", "memory", "latency", "formula", "verdict"];

/// What each input accepts, in [`INPUT_NAMES`] order: up to 100 million requests per
/// second, a year of TTL, a megabyte per key, 10 s of latency.
pub const BOUNDS: [(f64, f64); 5] = [
    (0.0, 1e8),
    (0.0, 8760.0),
    (1.0, 1e6),
    (0.0, 1e4),
    (0.1, 1e4),
];

impl Inputs {
    /// From values in [`INPUT_NAMES`] order, as typed: an empty field is NaN, which
    /// [`outputs`] refuses (it used to stand for the ADR's figure, silently).
    pub fn from_values(v: [f64; 5]) -> Inputs {
        Inputs {
            rps: v[0],
            ttl_hours: v[1],
            bytes_per_key: v[2],
            extra_rtt_ms: v[3],
            base_latency_ms: v[4],
        }
    }

    /// The values in [`INPUT_NAMES`] order.
    pub fn values(&self) -> [f64; 5] {
        [
            self.rps,
            self.ttl_hours,
            self.bytes_per_key,
            self.extra_rtt_ms,
            self.base_latency_ms,
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adr_numbers() {
        let keys = keys_held(DEFAULT_RPS, DEFAULT_TTL_HOURS);
        assert_eq!(keys, 864_000_000.0);
        let bytes = memory_bytes(keys, DEFAULT_BYTES_PER_KEY);
        assert_eq!(bytes, 86_400_000_000.0);
        assert!(needs_cluster(bytes));
        assert_eq!(format_bytes(bytes, Lang::En), "86.4\u{a0}GB");
        assert_eq!(format_bytes(bytes, Lang::Ru), "86,4\u{a0}ГБ");
        assert_eq!(format_count(keys, Lang::En), "864\u{a0}million");
        assert_eq!(format_count(keys, Lang::Ru), "864\u{a0}млн");
        assert_eq!(format_grouped(keys, Lang::En), "864,000,000");
        assert_eq!(format_grouped(keys, Lang::Ru), "864\u{a0}000\u{a0}000");
    }

    #[test]
    fn small_loads_fit_one_node() {
        let bytes = memory_bytes(keys_held(100.0, 24.0), DEFAULT_BYTES_PER_KEY);
        assert_eq!(bytes, 864_000_000.0);
        assert!(!needs_cluster(bytes));
        assert_eq!(format_bytes(bytes, Lang::En), "864\u{a0}MB");
        assert_eq!(format_bytes(512.0, Lang::En), "512\u{a0}bytes");
        assert_eq!(format_count(999.0, Lang::En), "999");
        assert_eq!(format_count(1_200.0, Lang::Ru), "1,2\u{a0}тыс.");
    }

    #[test]
    fn latency_depends_on_the_baseline() {
        assert_eq!(added_latency_percent(1.0, 2.0), 50.0);
        assert_eq!(added_latency_percent(1.0, 2.5), 40.0);
        assert!((added_latency_percent(1.0, 3.0) - 33.333).abs() < 0.01);
        assert_eq!(added_latency_percent(1.0, 50.0), 2.0);
        assert_eq!(added_latency_percent(1.0, 0.0), 0.0);
        assert_eq!(format_percent(40.0, Lang::En), "+40%");
        assert_eq!(format_percent(33.333, Lang::Ru), "+33,3\u{a0}%");
        assert_eq!(format_ms(1.0, Lang::Ru), "1\u{a0}мс");
    }

    #[test]
    fn negative_inputs_clamp_to_zero() {
        assert_eq!(keys_held(-5.0, 24.0), 0.0);
        assert_eq!(memory_bytes(10.0, -1.0), 0.0);
        assert_eq!(format_short(-0.0001, Lang::En), "0");
    }

    #[test]
    fn inputs_out_of_range_or_empty_compute_nothing_and_say_why() {
        let ok = outputs(Inputs::default(), Lang::En);
        assert_eq!(ok[0], "864\u{a0}million");
        let mut v = Inputs::default().values();
        v[0] = 1e308;
        let out = outputs(Inputs::from_values(v), Lang::En);
        assert_eq!(out[0], "—");
        assert_eq!(
            out[4],
            "“Mutating requests per second”: enter a number from 0 to 100,000,000."
        );
        v[0] = f64::NAN;
        assert_eq!(outputs(Inputs::from_values(v), Lang::Ru)[1], "—");
        let mut v = Inputs::default().values();
        v[4] = 0.0;
        assert!(outputs(Inputs::from_values(v), Lang::Ru)[4].contains("от 0,1 до 10\u{a0}000"));
    }
}
