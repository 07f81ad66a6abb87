//! A segment's mark (`meta.segment`, JSON): the store of `perflab run --segment i/N` says which
//! slice of which plan it holds and when it started against the common start, so that `perflab
//! merge` can check that the segments it adds are one load's, all there, and on time.

use super::Store;
use serde::{Deserialize, Serialize};

/// What a segment's store says of it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SegmentMark {
    /// `i/N`.
    pub segment: String,
    pub index: u32,
    pub count: u32,
    /// SHA-256 of the plan's text as the run keeps it (`plan.toml` in the run directory), hex.
    pub plan_sha256: String,
    /// The common start (`--start-at`), Unix seconds; None without one.
    pub start_at_unix: Option<f64>,
    /// How late this segment's load began after `start_at_unix`, seconds (negative: early).
    pub late_s: Option<f64>,
    /// The most lateness `--start-at` allowed, seconds.
    pub tolerance_s: Option<f64>,
    /// This machine's clock: the kernel's estimated error of its time, microseconds, and whether
    /// it said the clock was synchronised (NTP), when it could be read. A segment's own clock
    /// offset to another machine is not measured here.
    pub clock_est_error_us: Option<f64>,
    pub clock_synced: Option<bool>,
}

impl SegmentMark {
    /// The segment it names.
    pub fn segment(&self) -> Option<crate::model::Segment> {
        crate::model::Segment::new(self.index, self.count).ok()
    }
}

/// What a run merged from segments (`perflab merge`) says of them (`meta.merged`, JSON).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MergedMark {
    /// N: how many segments the load was split into (all of them are merged).
    pub count: u32,
    pub plan_sha256: String,
    /// The common start, Unix seconds; None when the segments had none.
    pub start_at_unix: Option<f64>,
    /// One per segment merged, in order.
    pub segments: Vec<MergedSegment>,
    /// Why the merge is not the whole load as planned, one line each (a segment missing, late,
    /// incomplete or saturated), merged with `--allow-partial`; empty for a whole load.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub partial: Vec<String>,
}

/// One segment of a merged run: where its run directory was, which machine ran it, how late.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MergedSegment {
    /// `i/N`.
    pub segment: String,
    /// The name its monitor samples have in the merged store (`segment-0`).
    pub host: String,
    pub hostname: String,
    pub dir: String,
    pub late_s: Option<f64>,
}

/// The SHA-256 of a plan's text, hex: what marks two segments as one plan's.
pub fn plan_sha256(source: &str) -> String {
    let d = ring::digest::digest(&ring::digest::SHA256, source.as_bytes());
    d.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

impl Store {
    /// Mark the run as one segment of a split load.
    pub fn write_segment(&mut self, m: &SegmentMark) -> anyhow::Result<()> {
        self.write_meta_json("segment", m)
    }

    /// Mark the run as the merge of a split load's segments.
    pub fn write_merged(&mut self, m: &MergedMark) -> anyhow::Result<()> {
        self.write_meta_json("merged", m)
    }

    /// What the run merged; None for a run that is no merge.
    pub fn merged(&self) -> anyhow::Result<Option<MergedMark>> {
        self.meta_json("merged", "the run's merged segments (meta key merged) are not JSON")
    }

    /// The run's segment mark; None for a run of the whole load.
    pub fn segment(&self) -> anyhow::Result<Option<SegmentMark>> {
        self.meta_json("segment", "the run's segment mark (meta key segment) is not JSON")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mark_is_kept_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Store::create(&dir.path().join("run")).unwrap();
        assert_eq!(s.segment().unwrap(), None);
        let m = SegmentMark {
            segment: "1/3".into(),
            index: 1,
            count: 3,
            plan_sha256: plan_sha256("name = \"x\"\n"),
            start_at_unix: Some(1_800_000_000.5),
            late_s: Some(0.004),
            tolerance_s: Some(1.0),
            clock_est_error_us: Some(16.0),
            clock_synced: Some(true),
        };
        s.write_segment(&m).unwrap();
        assert_eq!(s.segment().unwrap(), Some(m.clone()));
        assert_eq!(m.segment(), Some(crate::model::Segment { index: 1, count: 3 }));
        // The SHA-256 of the empty text, as sha256sum prints it.
        let merged = MergedMark {
            count: 1,
            plan_sha256: m.plan_sha256.clone(),
            start_at_unix: None,
            partial: Vec::new(),
            segments: vec![MergedSegment {
                segment: "0/1".into(),
                host: "segment-0".into(),
                hostname: "a".into(),
                dir: "runs/a".into(),
                late_s: None,
            }],
        };
        assert_eq!(s.merged().unwrap(), None);
        s.write_merged(&merged).unwrap();
        assert_eq!(s.merged().unwrap(), Some(merged));
        assert_eq!(plan_sha256(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    }
}
