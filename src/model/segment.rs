//! A segment: slice `index` of `count` of every trial's load, for a load split over several
//! machines (`perflab run --segment i/N`). The slice is a pure function of the plan, `index` and
//! `count`: item `k` of any numbered sequence the load has (the open model's arrivals, the closed
//! model's connections or workers, the `-n` requests) belongs to segment `k mod count`, so the
//! slices of segments `0..count` are disjoint and their union is the whole.

use std::fmt;

/// Slice `index` of `count` (`index < count`); `0/1` is the whole load.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Segment {
    pub index: u32,
    pub count: u32,
}

/// The most segments one load is split into.
pub const MAX_SEGMENTS: u32 = 10_000;

impl Segment {
    /// The whole load: segment 0 of 1.
    pub const WHOLE: Segment = Segment { index: 0, count: 1 };

    /// Segment `index` of `count`, or why not.
    pub fn new(index: u32, count: u32) -> Result<Segment, String> {
        if count == 0 || count > MAX_SEGMENTS {
            return Err(format!("the number of segments must be from 1 to {MAX_SEGMENTS}, not {count}"));
        }
        if index >= count {
            return Err(format!(
                "segment {index} of {count} does not exist: segments are numbered 0 to {}",
                count - 1
            ));
        }
        Ok(Segment { index, count })
    }

    /// `i/N` as the command line writes it.
    pub fn parse(s: &str) -> Result<Segment, String> {
        let bad = || format!("`{s}` is not a segment: write i/N, as 0/4 for the first of four");
        let (i, n) = s.trim().split_once('/').ok_or_else(bad)?;
        let i: u32 = i.trim().parse().map_err(|_| bad())?;
        let n: u32 = n.trim().parse().map_err(|_| bad())?;
        Segment::new(i, n)
    }

    /// Whether this is the whole load (one segment).
    pub fn is_whole(&self) -> bool {
        self.count == 1
    }

    /// How many of the items `0..total` are this segment's (those with `k mod count == index`):
    /// the shares of all segments sum to `total` and differ by at most one.
    pub fn share(&self, total: u64) -> u64 {
        let (n, i) = (u64::from(self.count), u64::from(self.index));
        total / n + u64::from(i < total % n)
    }

    /// The global number of this segment's `local`-th item.
    pub fn global(&self, local: u64) -> u64 {
        u64::from(self.index) + local * u64::from(self.count)
    }

    /// Whether global item `k` is this segment's.
    pub fn owns(&self, k: u64) -> bool {
        k % u64::from(self.count) == u64::from(self.index)
    }
}

impl fmt::Display for Segment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_takes_i_of_n_and_refuses_what_does_not_exist() {
        assert_eq!(Segment::parse("2/4"), Ok(Segment { index: 2, count: 4 }));
        assert_eq!(Segment::parse(" 0/1 "), Ok(Segment::WHOLE));
        assert!(Segment::parse("4/4").unwrap_err().contains("numbered 0 to 3"));
        assert!(Segment::parse("0/0").unwrap_err().contains("from 1 to"));
        assert!(Segment::parse("1-4").unwrap_err().contains("write i/N"));
        assert!(Segment::parse("a/4").unwrap_err().contains("write i/N"));
        assert_eq!(Segment::new(1, 3).unwrap().to_string(), "1/3");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(128))]
        /// The segments' shares of any count (connections, `-n` requests) sum to it.
        #[test]
        fn the_shares_of_any_count_sum_to_it(total in 0u64..1_000_000_000_000, n in 1u32..16) {
            let sum: u64 = (0..n).map(|i| Segment::new(i, n).unwrap().share(total)).sum();
            proptest::prop_assert_eq!(sum, total);
        }

        /// N segments' latency histograms (value k recorded by segment k mod N), added up, equal
        /// one histogram fed every value, bucket for bucket.
        #[test]
        fn merged_segment_histograms_equal_one_histogram_of_every_value(
            values in proptest::collection::vec(1u64..3_600_000_000, 0..2000),
            n in 1u32..16,
        ) {
            let mut whole = crate::model::latency_histogram();
            let mut parts: Vec<_> = (0..n).map(|_| crate::model::latency_histogram()).collect();
            for (k, v) in values.iter().enumerate() {
                whole.record(*v).unwrap();
                parts[k % n as usize].record(*v).unwrap();
            }
            let mut merged = crate::model::latency_histogram();
            for p in &parts {
                merged.add(p).unwrap();
            }
            let buckets = |h: &hdrhistogram::Histogram<u64>| {
                h.iter_recorded().map(|b| (b.value_iterated_to(), b.count_at_value())).collect::<Vec<_>>()
            };
            proptest::prop_assert_eq!(merged.len(), values.len() as u64);
            proptest::prop_assert_eq!(buckets(&merged), buckets(&whole));
            for q in [0.5, 0.9, 0.99, 0.999] {
                proptest::prop_assert_eq!(merged.value_at_quantile(q), whole.value_at_quantile(q));
            }
        }
    }

    #[test]
    fn shares_sum_to_the_total_and_each_item_has_one_owner() {
        for n in 1..=16u32 {
            for total in [0u64, 1, 5, 15, 16, 17, 1000, 1001] {
                let segs: Vec<Segment> = (0..n).map(|i| Segment::new(i, n).unwrap()).collect();
                assert_eq!(segs.iter().map(|s| s.share(total)).sum::<u64>(), total, "n={n} total={total}");
                for k in 0..total {
                    let owners: Vec<_> = segs.iter().filter(|s| s.owns(k)).collect();
                    assert_eq!(owners.len(), 1);
                    // The owner's share counts k: k is its (k / n)-th item, below its share.
                    assert!(k / u64::from(n) < owners[0].share(total));
                    assert_eq!(owners[0].global(k / u64::from(n)), k);
                }
            }
        }
    }
}
