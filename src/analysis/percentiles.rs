//! Latency percentiles from merged HDR histograms.
//!
//! Histograms of several trials are merged with `Histogram::add` (counts are summed), never by
//! averaging per-trial percentiles. A percentile the sample cannot support is left out: a
//! quantile q needs at least `ceil(1 / (1 - q))` recorded values, i.e. p90 needs 10, p99 needs 100
//! and p99.9 needs 1000 (with fewer values the "p99" is simply the maximum). This is the rule Rally
//! applies to its service-time percentiles; the left-out ones are named in `omitted`.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// The percentiles reported: (label, quantile, values needed).
pub const PERCENTILES: [(&str, f64, u64); 4] = [("p50", 0.50, 2), ("p90", 0.90, 10), ("p99", 0.99, 100), ("p99.9", 0.999, 1000)];

/// The number of values a quantile q needs to be supported: ceil(1 / (1 - q)) (q = 1 → never).
pub fn min_count(q: f64) -> u64 {
    if q >= 1.0 {
        return u64::MAX;
    }
    // The small epsilon keeps 1 / (1 - 0.99) = 100.000000001 from rounding up to 101.
    ((1.0 / (1.0 - q)) - 1e-9).ceil().max(1.0) as u64
}

/// One supported percentile, in the histogram's unit (µs for perflab's latency histograms).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Percentile {
    pub label: String,
    pub q: f64,
    pub value: f64,
}

/// The percentiles of one (merged) histogram.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Percentiles {
    /// Values recorded.
    pub count: u64,
    /// Only the percentiles the count supports, in PERCENTILES order.
    pub values: Vec<Percentile>,
    /// The largest value recorded (always supported when count > 0).
    pub max: f64,
    /// Those left out, e.g. "p99.9 needs >= 1000 values" (the count is in `count`).
    pub omitted: Vec<String>,
}

impl Percentiles {
    /// The value of a supported percentile by label ("p99"), None if left out.
    pub fn get(&self, label: &str) -> Option<f64> {
        self.values.iter().find(|p| p.label == label).map(|p| p.value)
    }
}

/// Merge histograms by adding their counts; None when given none. Values beyond the first
/// histogram's range saturate rather than fail (perflab's histograms all share one range).
pub fn merge<'a, I>(hists: I) -> Option<Histogram<u64>>
where
    I: IntoIterator<Item = &'a Histogram<u64>>,
{
    let mut it = hists.into_iter();
    let mut out = it.next()?.clone();
    for h in it {
        if out.add(h).is_err() {
            for v in h.iter_recorded() {
                out.saturating_record_n(v.value_iterated_to(), v.count_at_value());
            }
        }
    }
    Some(out)
}

/// The supported percentiles of `h` (see the module doc for the rule); None when empty.
pub fn of(h: &Histogram<u64>) -> Option<Percentiles> {
    let count = h.len();
    if count == 0 {
        return None;
    }
    let mut values = Vec::new();
    let mut omitted = Vec::new();
    for (label, q, need) in PERCENTILES {
        if count >= need {
            values.push(Percentile {
                label: label.to_string(),
                q,
                value: h.value_at_quantile(q) as f64,
            });
        } else {
            omitted.push(format!("{label} needs >= {need} values"));
        }
    }
    Some(Percentiles {
        count,
        values,
        max: h.max() as f64,
        omitted,
    })
}

/// The percentile spectrum for a chart: (1 / (1 - q), value) at four steps per decade of
/// 1 / (1 - q), as far as the count supports, then (count, max).
pub fn spectrum(h: &Histogram<u64>) -> Vec<(f64, f64)> {
    let count = h.len();
    if count == 0 {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut k = 0;
    loop {
        let x = 10f64.powf(k as f64 / 4.0);
        if x > count as f64 {
            break;
        }
        out.push((x, h.value_at_quantile(1.0 - 1.0 / x) as f64));
        k += 1;
    }
    out.push(((count as f64).max(2.0), h.max() as f64));
    out
}
