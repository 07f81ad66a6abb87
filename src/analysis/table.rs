//! Monitor samples by column: [`SampleTable`] holds each metric's values as one column (NaN where
//! a sample lacks the metric), the samples' times and phases once, and an index from metric name
//! to column. The bottleneck rules read it by column index, so a lookup costs one hash, not a scan
//! of every value of the sample; the store fills it from its packed series without making a
//! `(name, value)` pair per value.

use super::phases::SampleRef;
use std::collections::HashMap;

/// Samples of one or more trials (pooled in order), by column.
#[derive(Clone, Debug, Default)]
pub struct SampleTable {
    names: Vec<String>,
    index: HashMap<String, usize>,
    t_s: Vec<f64>,
    /// Index into `phases` per sample.
    phase_of: Vec<u16>,
    phases: Vec<String>,
    /// `cols[c][row]`: NaN when the sample lacks the metric (or its value is not finite).
    cols: Vec<Vec<f64>>,
}

impl SampleTable {
    pub fn new() -> Self {
        Self::default()
    }

    /// A table of borrowed samples; a metric named twice in one sample keeps its first value.
    pub fn from_refs(rows: &[SampleRef<'_>]) -> Self {
        let mut t = Self::new();
        for (ts, phase, values) in rows {
            t.push_row(*ts, phase, values.iter().map(|(k, v)| (k.as_str(), *v)));
        }
        t
    }

    /// Number of samples.
    pub fn len(&self) -> usize {
        self.t_s.len()
    }

    pub fn is_empty(&self) -> bool {
        self.t_s.is_empty()
    }

    /// Metric names in column order (first seen first).
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The column of a metric.
    pub fn col(&self, name: &str) -> Option<usize> {
        self.index.get(name).copied()
    }

    /// The values of column `c`, one per sample (NaN where absent).
    pub fn column(&self, c: usize) -> &[f64] {
        &self.cols[c]
    }

    /// The value of column `c` in sample `row` when present and finite.
    pub fn value(&self, row: usize, c: usize) -> Option<f64> {
        Some(self.cols[c][row]).filter(|v| v.is_finite())
    }

    pub fn t_s(&self, row: usize) -> f64 {
        self.t_s[row]
    }

    pub fn phase(&self, row: usize) -> &str {
        &self.phases[self.phase_of[row] as usize]
    }

    fn phase_index(&mut self, phase: &str) -> u16 {
        match self.phases.iter().position(|p| p == phase) {
            Some(i) => i as u16,
            None => {
                self.phases.push(phase.to_string());
                (self.phases.len() - 1) as u16
            }
        }
    }

    /// The column of a metric, added (all absent) when new.
    pub fn column_index(&mut self, name: &str) -> usize {
        if let Some(c) = self.index.get(name) {
            return *c;
        }
        self.names.push(name.to_string());
        self.index.insert(name.to_string(), self.names.len() - 1);
        self.cols.push(vec![f64::NAN; self.t_s.len()]);
        self.cols.len() - 1
    }

    /// Add empty samples (every value absent) with these times and phases; returns the first
    /// new row. Fill them with [`SampleTable::set_at`].
    pub fn push_clock<'p>(&mut self, clock: impl IntoIterator<Item = (f64, &'p str)>) -> usize {
        let first = self.len();
        for (t, phase) in clock {
            let p = self.phase_index(phase);
            self.t_s.push(t);
            self.phase_of.push(p);
        }
        let n = self.len();
        for c in &mut self.cols {
            c.resize(n, f64::NAN);
        }
        first
    }

    /// Set the value of column `c` in sample `row` (a non-finite value leaves it absent).
    pub fn set_at(&mut self, row: usize, c: usize, v: f64) {
        if v.is_finite() {
            self.cols[c][row] = v;
        }
    }

    /// Add one sample; a metric named twice keeps its first value.
    pub fn push_row<'v>(&mut self, t_s: f64, phase: &str, values: impl IntoIterator<Item = (&'v str, f64)>) {
        let row = self.push_clock([(t_s, phase)]);
        let mut seen = vec![false; self.cols.len()];
        for (name, v) in values {
            let c = self.column_index(name);
            if c >= seen.len() {
                seen.resize(c + 1, false);
            }
            if !seen[c] {
                seen[c] = true;
                if v.is_finite() {
                    self.cols[c][row] = v;
                }
            }
        }
    }

    /// Drop every sample, keeping the columns (their order and names): the next trial of a point
    /// read into the same table gets the column order the pooled table would have.
    pub fn clear_rows(&mut self) {
        self.t_s.clear();
        self.phase_of.clear();
        for c in &mut self.cols {
            c.clear();
        }
    }

    /// Append the samples of another table after these (pooling a point's trials).
    pub fn append(&mut self, other: &SampleTable) {
        let first = self.push_clock((0..other.len()).map(|r| (other.t_s(r), other.phase(r))));
        for (name, col) in other.names.iter().zip(&other.cols) {
            let c = self.column_index(name);
            self.cols[c][first..].copy_from_slice(col);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_and_columns_agree() {
        let a = vec![("x".to_string(), 1.0), ("y".to_string(), f64::INFINITY), ("x".to_string(), 9.0)];
        let b = vec![("z".to_string(), 3.0), ("x".to_string(), 2.0)];
        let t = SampleTable::from_refs(&[(0.0, "baseline", &a), (1.0, "load", &b)]);
        assert_eq!(t.len(), 2);
        assert_eq!(t.names(), ["x", "y", "z"]);
        let (x, y, z) = (t.col("x").unwrap(), t.col("y").unwrap(), t.col("z").unwrap());
        assert_eq!((t.value(0, x), t.value(0, y), t.value(0, z)), (Some(1.0), None, None));
        assert_eq!((t.value(1, x), t.value(1, y), t.value(1, z)), (Some(2.0), None, Some(3.0)));
        assert_eq!((t.phase(0), t.phase(1), t.t_s(1)), ("baseline", "load", 1.0));

        let mut pooled = SampleTable::from_refs(&[(5.0, "recovery", &b)]);
        pooled.append(&t);
        assert_eq!(pooled.len(), 3);
        assert_eq!(pooled.names(), ["z", "x", "y"]);
        assert_eq!(pooled.column(pooled.col("x").unwrap())[..2], [2.0, 1.0]);
        assert!(pooled.column(pooled.col("z").unwrap())[1].is_nan());
        assert_eq!(pooled.phase(2), "load");
    }
}
