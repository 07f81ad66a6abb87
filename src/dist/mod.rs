//! Past one load machine: the segments of a load split over N machines (`perflab run --segment
//! i/N`, docs/distributed.md) put back together. `perflab merge DIR... --out DIR` checks that the
//! run directories are the segments `0..N-1` of one plan started at one T0 (`segments.rs`), adds
//! each trial's results up (`figures.rs`: histograms bucket by bucket, counters summed, per-second
//! series aligned on T0 and summed) and writes one ordinary run directory (`write.rs`) that
//! `perflab report` and `perflab compare` read as any other.

pub mod cli;
mod figures;
mod segments;
mod write;

pub use figures::{merge_trial, MergedFigures};
pub use segments::{check_segments, SegmentRun};
pub use write::{merge, Merged};
