//! `--hdr-log FILE`: one latency histogram per second of the measured phase, written as an
//! HdrHistogram interval log (V2 compressed histograms, the format of the Java `HistogramLogWriter`,
//! readable by `HistogramLogProcessor` and by the hdrhistogram crate's `IntervalLogIterator`).
//! Values are microseconds; `BaseTime` is the start of the measured phase, so each interval's
//! timestamp is its offset in seconds. `Interval_Max` is written in milliseconds.

use crate::error::usage;
use hdrhistogram::serialization::interval_log::{IntervalLogWriter, IntervalLogWriterBuilder};
use hdrhistogram::serialization::V2DeflateSerializer;
use hdrhistogram::Histogram;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::time::{Duration, SystemTime};

/// The open file and its serializer; `begin` borrows them for the log's writer.
pub struct HdrLogFile {
    path: String,
    out: BufWriter<File>,
    ser: V2DeflateSerializer,
}

pub type Writer<'a> = IntervalLogWriter<'a, 'a, BufWriter<File>, V2DeflateSerializer>;

impl HdrLogFile {
    /// Create the file (bad input, exit 2, when it cannot be).
    pub fn create(path: &str) -> anyhow::Result<HdrLogFile> {
        crate::util::fs::check_output(std::path::Path::new(path)).map_err(|e| usage(format!("--hdr-log {path}: {e}")))?;
        let f = File::create(path).map_err(|e| usage(format!("--hdr-log {path}: {e}")))?;
        Ok(HdrLogFile {
            path: path.to_string(),
            out: BufWriter::new(f),
            ser: V2DeflateSerializer::new(),
        })
    }

    /// Write the headers; `measure_start` is the wall-clock start of the measured phase.
    pub fn begin(&mut self, measure_start: SystemTime, url: &str) -> anyhow::Result<Writer<'_>> {
        let w = IntervalLogWriterBuilder::new()
            .add_comment("[Histogram log format version 1.3]")
            .add_comment(&format!("[perflab http {url}: latency in microseconds, one interval per second]"))
            .with_start_time(measure_start)
            .with_base_time(measure_start)
            .with_max_value_divisor(1000.0)
            .begin_log_with(&mut self.out, &mut self.ser)
            .map_err(|e| anyhow::anyhow!("--hdr-log {}: {e}", self.path))?;
        Ok(w)
    }
}

/// Append one interval: `t_s` seconds after the start, `span_s` long.
pub fn write(w: &mut Writer<'_>, h: &Histogram<u64>, t_s: f64, span_s: f64) -> anyhow::Result<()> {
    w.write_histogram(
        h,
        Duration::from_secs_f64(t_s.max(0.0)),
        Duration::from_secs_f64(span_s.max(0.0)),
        None,
    )
    .map_err(|e| anyhow::anyhow!("--hdr-log: cannot write an interval: {e:?}"))
}

/// Flush the file at the end of the run.
pub fn finish(file: &mut HdrLogFile) -> anyhow::Result<()> {
    file.out.flush().map_err(|e| anyhow::anyhow!("--hdr-log {}: {e}", file.path))
}
