//! Monitor samples, packed (schema 3): metric names once in `metric_dict`, a trial's timestamps and
//! phases once per sample in `sample_clock`, and each metric's values of a trial in one
//! `sample_series` row (see `pack` for the blob format). Stores of versions 1 and 2 keep one
//! `sample` row per value; they are read as they are.

use super::pack;
use super::Store;
use super::TaggedSample;
use crate::analysis::table::SampleTable;
use crate::model::{MetricKind, LOCAL_HOST};
use rusqlite::{params, Connection, OptionalExtension};

/// The unit a monitor column's name ends with (`cpu_busy_pct` is `%`); "" when it names none.
pub fn unit_of(name: &str) -> &'static str {
    const SUFFIXES: [(&str, &str); 10] = [
        ("_pct", "%"),
        ("_per_s", "/s"),
        ("_mbitps", "Mbit/s"),
        ("_mbps", "MB/s"),
        ("_mb", "MB"),
        ("_kb", "KB"),
        ("_bytes", "bytes"),
        ("_ms", "ms"),
        ("_us", "us"),
        ("_s", "s"),
    ];
    SUFFIXES.iter().find(|(s, _)| name.ends_with(s)).map_or("", |(_, u)| u)
}

/// The id of (`host`, `name`) in the metric dictionary, added when new.
fn metric_id(c: &Connection, host: &str, name: &str) -> anyhow::Result<i64> {
    let found: Option<i64> = c
        .prepare_cached("SELECT id FROM metric_dict WHERE host = ?1 AND name = ?2")?
        .query_row(params![host, name], |r| r.get(0))
        .optional()?;
    if let Some(id) = found {
        return Ok(id);
    }
    let unit = unit_of(name);
    // A sampled count (processes running, the load average) is a level at one instant: a gauge.
    let kind = match MetricKind::infer(name, unit) {
        MetricKind::Count => MetricKind::Gauge,
        k => k,
    };
    c.prepare_cached("INSERT INTO metric_dict (name, unit, kind, host) VALUES (?1, ?2, ?3, ?4)")?
        .execute(params![name, unit, kind.to_text(), host])?;
    Ok(c.last_insert_rowid())
}

/// One trial's samples taken on `host`, split into columns: (phase names, phase index per sample,
/// t_s, unix_s, per metric in first-seen order: (name, value or None per sample)).
struct Columns<'a> {
    phases: Vec<&'a str>,
    phase_of: Vec<u8>,
    t_s: Vec<f64>,
    unix_s: Vec<f64>,
    metrics: Vec<(&'a str, Vec<Option<f64>>)>,
}

fn columns(samples: &[TaggedSample]) -> Columns<'_> {
    let n = samples.len();
    let mut c = Columns {
        phases: Vec::new(),
        phase_of: Vec::with_capacity(n),
        t_s: Vec::with_capacity(n),
        unix_s: Vec::with_capacity(n),
        metrics: Vec::new(),
    };
    let mut index: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for (i, s) in samples.iter().enumerate() {
        let p = match c.phases.iter().position(|p| *p == s.phase) {
            Some(p) => p,
            None => {
                c.phases.push(&s.phase);
                c.phases.len() - 1
            }
        };
        c.phase_of.push(p.min(255) as u8);
        c.t_s.push(s.t_s);
        c.unix_s.push(s.unix_s);
        for (name, v) in s.values.iter().filter(|(_, v)| v.is_finite()) {
            let m = *index.entry(name).or_insert_with(|| {
                c.metrics.push((name.as_str(), vec![None; n]));
                c.metrics.len() - 1
            });
            c.metrics[m].1[i] = Some(*v);
        }
    }
    c
}

/// Write one trial's samples taken on `host` (inside the trial's transaction).
pub(super) fn write(c: &Connection, trial_id: usize, host: &str, samples: &[TaggedSample]) -> anyhow::Result<()> {
    if samples.is_empty() {
        return Ok(());
    }
    let cols = columns(samples);
    c.prepare_cached(
        "INSERT INTO sample_clock (trial_id, host, n_samples, phases, phase_of, t_s, unix_s) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?
    .execute(params![
        trial_id as i64,
        host,
        samples.len() as i64,
        cols.phases.join(","),
        cols.phase_of,
        pack::encode_f64(&cols.t_s),
        pack::encode_f64(&cols.unix_s)
    ])?;
    for (name, vals) in &cols.metrics {
        let id = metric_id(c, host, name)?;
        let present: Vec<bool> = vals.iter().map(Option::is_some).collect();
        let bits = (!present.iter().all(|p| *p)).then(|| pack::encode_bits(&present));
        let values: Vec<f64> = vals.iter().flatten().copied().collect();
        c.prepare_cached("INSERT INTO sample_series (trial_id, metric_id, n_values, present, vals) VALUES (?1, ?2, ?3, ?4, ?5)")?
            .execute(params![trial_id as i64, id, values.len() as i64, bits, pack::encode_f64(&values)])?;
    }
    Ok(())
}

/// One trial's samples taken on `host` from the packed tables, in time order (each sample's values
/// in the dictionary's order).
pub(super) fn read(c: &Connection, trial_id: usize, host: &str) -> anyhow::Result<Vec<TaggedSample>> {
    type Clock = (i64, String, Vec<u8>, Vec<u8>, Vec<u8>);
    let clock: Option<Clock> = c
        .prepare_cached("SELECT n_samples, phases, phase_of, t_s, unix_s FROM sample_clock WHERE trial_id = ?1 AND host = ?2")?
        .query_row(params![trial_id as i64, host], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })
        .optional()?;
    let Some((n, phases, phase_of, t_blob, unix_blob)) = clock else {
        return Ok(Vec::new());
    };
    let n = n as usize;
    let phases: Vec<&str> = phases.split(',').collect();
    let t_s = pack::decode_f64(&t_blob, n)?;
    let unix_s = pack::decode_f64(&unix_blob, n)?;
    let mut out: Vec<TaggedSample> = (0..n)
        .map(|i| TaggedSample {
            phase: phases
                .get(phase_of.get(i).copied().unwrap_or(0) as usize)
                .unwrap_or(&"")
                .to_string(),
            t_s: t_s[i],
            unix_s: unix_s[i],
            values: Vec::new(),
        })
        .collect();
    let mut st = c.prepare_cached(
        "SELECT d.name, s.n_values, s.present, s.vals FROM sample_series s JOIN metric_dict d ON d.id = s.metric_id
         WHERE s.trial_id = ?1 AND d.host = ?2 ORDER BY s.metric_id",
    )?;
    let mut rows = st.query(params![trial_id as i64, host])?;
    while let Some(r) = rows.next()? {
        let name: String = r.get(0)?;
        let k = r.get::<_, i64>(1)? as usize;
        let present: Option<Vec<u8>> = r.get(2)?;
        let vals = pack::decode_f64(&r.get::<_, Vec<u8>>(3)?, k)?;
        let mut vi = vals.into_iter();
        for (i, s) in out.iter_mut().enumerate() {
            if present.as_deref().is_none_or(|b| pack::bit(b, i)) {
                let Some(v) = vi.next() else {
                    anyhow::bail!("trial {trial_id}: the series of {name} has fewer values than its samples");
                };
                s.values.push((name.clone(), v));
            }
        }
    }
    Ok(out)
}

/// One trial's samples taken on `host` from the packed tables, by column (no pair per value),
/// appended to `t`: only the metrics `wanted` accepts (the others are not unpacked).
fn read_table(c: &Connection, trial_id: usize, host: &str, wanted: &dyn Fn(&str) -> bool, t: &mut SampleTable) -> anyhow::Result<()> {
    type Clock = (i64, String, Vec<u8>, Vec<u8>);
    let clock: Option<Clock> = c
        .prepare_cached("SELECT n_samples, phases, phase_of, t_s FROM sample_clock WHERE trial_id = ?1 AND host = ?2")?
        .query_row(params![trial_id as i64, host], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .optional()?;
    let Some((n, phases, phase_of, t_blob)) = clock else {
        return Ok(());
    };
    let n = n as usize;
    let phases: Vec<&str> = phases.split(',').collect();
    let t_s = pack::decode_f64(&t_blob, n)?;
    let first = t.push_clock((0..n).map(|i| {
        let p = phase_of.get(i).copied().unwrap_or(0) as usize;
        (t_s[i], phases.get(p).copied().unwrap_or(""))
    }));
    let mut st = c.prepare_cached(
        "SELECT d.name, s.n_values, s.present, s.vals FROM sample_series s JOIN metric_dict d ON d.id = s.metric_id
         WHERE s.trial_id = ?1 AND d.host = ?2 ORDER BY s.metric_id",
    )?;
    let mut rows = st.query(params![trial_id as i64, host])?;
    while let Some(r) = rows.next()? {
        let name = r.get_ref(0)?.as_str()?;
        if !wanted(name) {
            continue;
        }
        let k = r.get::<_, i64>(1)? as usize;
        let present = r.get_ref(2)?.as_blob_or_null()?;
        let vals = pack::decode_f64(r.get_ref(3)?.as_blob()?, k)?;
        let mut vi = vals.into_iter();
        let col = t.column_index(name);
        for i in 0..n {
            if present.is_none_or(|b| pack::bit(b, i)) {
                let Some(v) = vi.next() else {
                    anyhow::bail!("trial {trial_id}: the series of {name} has fewer values than its samples");
                };
                t.set_at(first + i, col, v);
            }
        }
    }
    Ok(())
}

/// One trial's samples from a store of version 1 or 2 (one `sample` row per value).
pub(super) fn read_rows(c: &Connection, trial_id: usize) -> anyhow::Result<Vec<TaggedSample>> {
    let mut st = c.prepare("SELECT phase, t_s, unix_s, name, value FROM sample WHERE trial_id = ?1 ORDER BY t_s, rowid")?;
    let mut rows = st.query(params![trial_id as i64])?;
    let mut out: Vec<TaggedSample> = Vec::new();
    while let Some(r) = rows.next()? {
        let t_s: f64 = r.get(1)?;
        let name: String = r.get(3)?;
        let value: f64 = r.get(4)?;
        match out.last_mut() {
            Some(last) if last.t_s == t_s => last.values.push((name, value)),
            _ => out.push(TaggedSample {
                phase: r.get(0)?,
                t_s,
                unix_s: r.get(2)?,
                values: vec![(name, value)],
            }),
        }
    }
    Ok(out)
}

impl Store {
    /// The monitor samples of one trial taken on this machine, in time order.
    pub fn samples(&self, trial_id: usize) -> anyhow::Result<Vec<TaggedSample>> {
        self.samples_on(trial_id, LOCAL_HOST)
    }

    /// The monitor samples of one trial taken on `host` ("local" for this machine), in time order.
    /// A store of version 1 or 2 has local samples only.
    pub fn samples_on(&self, trial_id: usize, host: &str) -> anyhow::Result<Vec<TaggedSample>> {
        let read = if self.schema_version() >= 3 {
            read(self.conn(), trial_id, host)
        } else if host == LOCAL_HOST {
            read_rows(self.conn(), trial_id)
        } else {
            Ok(Vec::new())
        };
        read.map_err(|e| self.samples_error(trial_id, host, e))
    }

    /// An error reading a trial's samples, naming the trial (and the host when not this machine).
    fn samples_error(&self, trial_id: usize, host: &str, e: anyhow::Error) -> anyhow::Error {
        let table = if self.schema_version() >= 3 { "sample_series" } else { "sample" };
        let e = if host == LOCAL_HOST {
            e
        } else {
            e.context(format!("on host {host}"))
        };
        self.read_error(table, Some(trial_id as i64), e)
    }

    /// The hosts whose samples the store holds (`local` first; only `local` before schema 3).
    pub fn sample_hosts(&self) -> anyhow::Result<Vec<String>> {
        if self.schema_version() < 3 {
            return Ok(vec![LOCAL_HOST.to_string()]);
        }
        let read = || -> rusqlite::Result<Vec<String>> {
            self.conn()
                .prepare("SELECT DISTINCT host FROM sample_clock ORDER BY host != 'local', host")?
                .query_map([], |r| r.get(0))?
                .collect()
        };
        read().map_err(|e| self.read_error("sample_clock", None, e))
    }

    /// The monitor samples of one trial taken on `host`, by column (what the bottleneck rules
    /// read): the same values as [`Store::samples_on`] without a `(name, value)` pair per value.
    pub fn sample_table_on(&self, trial_id: usize, host: &str) -> anyhow::Result<SampleTable> {
        let mut t = SampleTable::new();
        self.read_sample_table(trial_id, host, &|_| true, &mut t)?;
        Ok(t)
    }

    /// Append one trial's samples taken on `host` to `t`, only the metrics `wanted` accepts (the
    /// others are not unpacked): what the bottleneck rules read of one trial at a time.
    pub fn read_sample_table(&self, trial_id: usize, host: &str, wanted: &dyn Fn(&str) -> bool, t: &mut SampleTable) -> anyhow::Result<()> {
        if self.schema_version() >= 3 {
            return read_table(self.conn(), trial_id, host, wanted, t).map_err(|e| self.samples_error(trial_id, host, e));
        }
        for s in &self.samples_on(trial_id, host)? {
            t.push_row(
                s.t_s,
                &s.phase,
                s.values.iter().filter(|(k, _)| wanted(k)).map(|(k, v)| (k.as_str(), *v)),
            );
        }
        Ok(())
    }

    /// How many sampled values the store holds (the bytes-per-value figure of `docs/store.md`).
    pub fn sampled_values(&self) -> anyhow::Result<u64> {
        let sql = if self.schema_version() >= 3 {
            "SELECT coalesce(sum(n_values), 0) FROM sample_series"
        } else {
            "SELECT count(*) FROM sample"
        };
        Ok(self.conn().query_row(sql, [], |r| r.get::<_, i64>(0))? as u64)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn units_from_names() {
        assert_eq!(super::unit_of("cpu_busy_pct"), "%");
        assert_eq!(super::unit_of("tcp_retrans_per_s"), "/s");
        assert_eq!(super::unit_of("net_eth0_rx_mbitps"), "Mbit/s");
        assert_eq!(super::unit_of("mem_used_mb"), "MB");
        assert_eq!(super::unit_of("procs_running"), "");
    }
}
