//! Export every table of a run to CSV (histograms as base64 of their V2+DEFLATE bytes), one file
//! per table, written row by row (memory stays flat however large the run).
//!
//! The packed samples of a store of version 3 are written unpacked, as `sample.csv` with one row
//! per value (`trial_id`, `host`, `phase`, `t_s`, `unix_s`, `name`, `value`), and `phase_summary.csv`
//! names its metrics; numbers are written in Rust's shortest form that reads back to the same f64,
//! bit for bit. The profiles' stacks (`profile.stacks_deflate`) are written as folded text, one
//! file per trial, host and kind under `profiles/` (`trial-3-local-on_cpu.folded`: on-CPU stacks
//! weighed in samples, off-CPU in microseconds), the input of FlameGraph and inferno.

use super::layout::{self, Col};
use super::{damage, schema::TABLES, Store};
use anyhow::Context;
use rusqlite::types::ValueRef;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

type Out = csv::Writer<BufWriter<File>>;

/// Write `<table>.csv` for every table into `out_dir`; returns the files written. Each file is
/// written under a temporary name and renamed into place; when one fails (a damaged store, a full
/// disk), the ones written before it are removed.
pub fn to_csv(store: &Store, out_dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let existed = out_dir.exists();
    std::fs::create_dir_all(out_dir).with_context(|| format!("cannot create {}", out_dir.display()))?;
    let mut written = Vec::new();
    for table in TABLES {
        let v3 = store.schema_version() >= 3;
        if !v3 && matches!(*table, "metric_dict" | "phase_summary") {
            continue;
        }
        // The probe tables exist only in runs whose plan had probes.
        if matches!(*table, "probe" | "probe_sample" | "profile" | "event") && !table_exists(store, table)? {
            continue;
        }
        let path = out_dir.join(format!("{table}.csv"));
        let tmp = out_dir.join(format!(".{table}.csv.tmp-{}", std::process::id()));
        let result = (|| -> anyhow::Result<()> {
            let mut w = csv::Writer::from_writer(BufWriter::new(File::create(&tmp)?));
            match *table {
                "sample" if v3 => samples(store, &mut w)?,
                "phase_summary" => query(
                    store,
                    &mut w,
                    "phase_summary",
                    "SELECT p.trial_id, d.host, d.name, p.baseline, p.n_baseline, p.under_load, p.n_load, p.peak,
                            p.recovery, p.n_recovery, p.recovery_s, p.never_recovered
                     FROM phase_summary p JOIN metric_dict d ON d.id = p.metric_id ORDER BY p.trial_id, d.host, d.name",
                )?,
                "profile" => query(
                    store,
                    &mut w,
                    "profile",
                    "SELECT trial_id, host, kind, scope, frequency_hz, window_start_s, window_end_s, first_sample_s,
                            last_sample_s, samples, ns, notes FROM profile ORDER BY trial_id, host, kind",
                )?,
                t => query(store, &mut w, t, &format!("SELECT * FROM {t}"))?,
            }
            let file = w.into_inner().map_err(|e| anyhow::anyhow!("{e}"))?;
            file.into_inner().map_err(|e| anyhow::anyhow!("{e}"))?.sync_all()?;
            Ok(())
        })();
        if let Err(e) = result.and_then(|_| Ok(std::fs::rename(&tmp, &path)?)) {
            let _ = std::fs::remove_file(&tmp);
            // An export is whole or absent: the tables already written go too.
            written.iter().for_each(|p| drop(std::fs::remove_file(p)));
            if !existed {
                let _ = std::fs::remove_dir(out_dir);
            }
            if e.chain().any(|c| c.is::<crate::error::DamagedStore>()) {
                return Err(e);
            }
            return Err(e.context(format!("cannot write {}", path.display())));
        }
        written.push(path);
    }
    if table_exists(store, "profile")? {
        match folded_files(store, out_dir) {
            Ok(files) => written.extend(files),
            Err(e) => {
                written.iter().for_each(|p| drop(std::fs::remove_file(p)));
                return Err(e);
            }
        }
    }
    Ok(written)
}

/// Each stored profile as folded text under `profiles/`.
fn folded_files(store: &Store, out_dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    let dir = out_dir.join("profiles");
    for t in store.trial_ids()? {
        for r in store.profiles(t)? {
            let kind = r.profile.kind.unwrap_or(crate::model::ProfileKind::OnCpu);
            let in_time = kind == crate::model::ProfileKind::OffCpu;
            let text = if in_time {
                r.profile
                    .stacks
                    .iter()
                    .filter(|s| s.ns >= 1000)
                    .map(|s| format!("{} {}\n", s.stack, s.ns / 1000))
                    .collect()
            } else {
                r.profile.folded(false)
            };
            std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
            let safe: String = r
                .host
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' })
                .collect();
            let path = dir.join(format!("trial-{t}-{safe}-{}.folded", kind.name()));
            crate::util::fs::write_atomic(&path, text.as_bytes()).with_context(|| format!("cannot write {}", path.display()))?;
            written.push(path);
        }
    }
    Ok(written)
}

fn table_exists(store: &Store, table: &str) -> anyhow::Result<bool> {
    let n: i64 = store.conn().query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
        [table],
        |r| r.get(0),
    )?;
    Ok(n > 0)
}

/// Every row of `sql` (of `table`), with its column names as the header. A value that is not of
/// its column's kind, or a histogram that does not decode, is an error naming the trial, in the
/// words a report uses: a damaged store is not exported as if it were sound.
fn query(store: &Store, w: &mut Out, table: &str, sql: &str) -> anyhow::Result<()> {
    let mut st = store.conn().prepare(sql)?;
    let names: Vec<String> = st.column_names().map(|s| s.to_string()).collect();
    let cols: Vec<Option<Col>> = names.iter().map(|n| layout::column(table, n)).collect();
    let trial_col = names.iter().position(|n| n == "trial_id");
    let blob_name = (table == "histogram").then(|| names.iter().position(|n| n == "name")).flatten();
    w.write_record(&names)?;
    let mut rows = st.query([])?;
    let mut rec = Vec::with_capacity(names.len());
    while let Some(r) = rows.next()? {
        let trial = || trial_col.and_then(|i| r.get_ref(i).ok()?.as_i64().ok());
        for (i, c) in cols.iter().enumerate() {
            let bad = c.as_ref().and_then(|c| damage::misfit(c, r.get_ref(i).ok()?));
            if let Some(what) = bad {
                return Err(store.read_error(table, trial(), anyhow::anyhow!(what)));
            }
        }
        if let (Some(n), Some(ValueRef::Blob(b))) = (
            blob_name,
            names.iter().position(|n| n == "hdr_v2_deflate").map(|i| r.get_ref(i)).transpose()?,
        ) {
            if super::decode_histogram(b).is_err() {
                let name = r.get_ref(n)?.as_str().unwrap_or("?").to_string();
                return Err(store.read_error(table, trial(), anyhow::anyhow!(damage::histogram(&name))));
            }
        }
        rec.clear();
        for i in 0..names.len() {
            rec.push(match r.get_ref(i)? {
                ValueRef::Null => String::new(),
                ValueRef::Integer(v) => v.to_string(),
                ValueRef::Real(v) => v.to_string(),
                ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
                ValueRef::Blob(b) => base64_encode(b),
            });
        }
        w.write_record(&rec)?;
    }
    Ok(())
}

/// The packed samples, one row per value, trial by trial and host by host.
fn samples(store: &Store, w: &mut Out) -> anyhow::Result<()> {
    w.write_record(["trial_id", "host", "phase", "t_s", "unix_s", "name", "value"])?;
    let keys: Vec<(i64, String)> = store
        .conn()
        .prepare("SELECT trial_id, host FROM sample_clock ORDER BY trial_id, host")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
    for (trial, host) in keys {
        let id = trial.to_string();
        for s in store.samples_on(trial as usize, &host)? {
            let (t, u) = (s.t_s.to_string(), s.unix_s.to_string());
            for (name, v) in &s.values {
                w.write_record([id.as_str(), &host, &s.phase, &t, &u, name, &v.to_string()])?;
            }
        }
    }
    Ok(())
}

fn base64_encode(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(A[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn base64_known_answers() {
        assert_eq!(super::base64_encode(b""), "");
        assert_eq!(super::base64_encode(b"f"), "Zg==");
        assert_eq!(super::base64_encode(b"fo"), "Zm8=");
        assert_eq!(super::base64_encode(b"foobar"), "Zm9vYmFy");
    }
}
