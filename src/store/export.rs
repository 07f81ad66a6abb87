//! Export every table of a run to CSV (histograms as base64 of their V2+DEFLATE bytes).

use super::{schema::TABLES, Store};
use anyhow::Context;
use rusqlite::types::ValueRef;
use std::path::{Path, PathBuf};

/// Write `<table>.csv` for every table into `out_dir`; returns the files written.
pub fn to_csv(store: &Store, out_dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(out_dir).with_context(|| format!("cannot create {}", out_dir.display()))?;
    let mut written = Vec::new();
    for (name, bytes) in tables_csv(store)? {
        let path = out_dir.join(name);
        crate::util::fs::write_atomic(&path, bytes).with_context(|| format!("cannot write {}", path.display()))?;
        written.push(path);
    }
    Ok(written)
}

/// Every table as (`<table>.csv`, its CSV bytes), in schema order.
pub fn tables_csv(store: &Store) -> anyhow::Result<Vec<(String, Vec<u8>)>> {
    let mut out = Vec::new();
    for table in TABLES {
        let mut w = csv::Writer::from_writer(Vec::new());
        let mut st = store.conn().prepare(&format!("SELECT * FROM {table}"))?;
        let names: Vec<String> = st.column_names().map(|s| s.to_string()).collect();
        w.write_record(&names)?;
        let mut rows = st.query([])?;
        while let Some(r) = rows.next()? {
            let mut rec = Vec::with_capacity(names.len());
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
        let bytes = w.into_inner().map_err(|e| anyhow::anyhow!("cannot write {table}.csv: {e}"))?;
        out.push((format!("{table}.csv"), bytes));
    }
    Ok(out)
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
