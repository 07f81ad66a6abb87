//! Where samples go: an aligned live table, CSV, JSON lines.

use super::{group_of, Group, Sample};
use std::io::Write;

/// The columns of the terminal table: a readable subset per group (the files get everything).
pub fn table_columns(names: &[String]) -> Vec<String> {
    let keep = |n: &str| -> bool {
        match group_of(n) {
            Some(Group::Cpu) => {
                n.starts_with("cpu_")
                    && ["busy", "user", "system", "iowait", "steal", "idle"]
                        .iter()
                        .any(|k| n == format!("cpu_{k}_pct"))
                    || (n.ends_with("_busy_pct") && !n.starts_with("cpu_"))
            }
            Some(Group::Load) => ["procs_running", "procs_blocked", "load_1", "ctxt_per_s"].contains(&n),
            Some(Group::Mem) => ["mem_used_mb", "mem_available_mb", "swap_used_mb", "major_faults_per_s"].contains(&n),
            Some(Group::Disk) => ["_read_mbps", "_write_mbps", "_util_pct"].iter().any(|s| n.ends_with(s)),
            Some(Group::Net) => (n.ends_with("_rx_mbitps") || n.ends_with("_tx_mbitps")) && !n.starts_with("net_lo_"),
            Some(Group::Tcp) => ["tcp_retrans_per_s", "tcp_established"].contains(&n),
            Some(Group::Psi) => n.ends_with("_some_avg10_pct") && (n.starts_with("psi_cpu") || n.starts_with("psi_io")),
            Some(Group::Temp) => true,
            Some(Group::Proc) => ["_cpu_pct", "_rss_mb", "_count", "_threads"].iter().any(|s| n.ends_with(s)),
            None => false,
        }
    };
    names.iter().filter(|n| keep(n)).cloned().collect()
}

/// A column's short header for the terminal.
fn short(name: &str) -> String {
    name.replace("_pct", "%")
        .replace("_per_s", "/s")
        .replace("_mbitps", "Mb/s")
        .replace("_mbps", "MB/s")
        .replace("_mb", "MB")
        .replace("procs_running", "run")
        .replace("procs_blocked", "blk")
}

pub struct Table {
    cols: Vec<String>,
    widths: Vec<usize>,
    rows: usize,
}

impl Table {
    pub fn new(first: &Sample) -> Table {
        let names: Vec<String> = first.values.iter().map(|(n, _)| n.clone()).collect();
        let cols = table_columns(&names);
        let widths = cols.iter().map(|c| short(c).len().max(7)).collect();
        Table { cols, widths, rows: 0 }
    }

    pub fn print(&mut self, s: &Sample, out: &mut dyn Write) -> std::io::Result<()> {
        if self.rows.is_multiple_of(20) {
            let mut h = format!("{:>8}", "time");
            for (c, w) in self.cols.iter().zip(&self.widths) {
                h.push_str(&format!(" {:>w$}", short(c)));
            }
            writeln!(out, "{h}")?;
        }
        self.rows += 1;
        let mut line = crate::util::time::hms_utc(s.unix_s);
        for (c, w) in self.cols.iter().zip(&self.widths) {
            match s.get(c) {
                Some(v) => line.push_str(&format!(" {:>w$}", fmt(v))),
                None => line.push_str(&format!(" {:>w$}", "-")),
            }
        }
        writeln!(out, "{line}")?;
        out.flush()
    }
}

fn fmt(v: f64) -> String {
    if (v.fract() == 0.0 && v.abs() < 1e9) || v.abs() >= 1000.0 {
        format!("{v:.0}")
    } else if v.abs() >= 100.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// CSV with the columns of the first sample; a figure absent later is an empty cell.
pub struct Csv {
    cols: Option<Vec<String>>,
    out: Box<dyn Write + Send>,
}

impl Csv {
    pub fn new(out: Box<dyn Write + Send>) -> Csv {
        Csv { cols: None, out }
    }

    pub fn write(&mut self, s: &Sample) -> std::io::Result<()> {
        if self.cols.is_none() {
            let cols: Vec<String> = s.values.iter().map(|(n, _)| n.clone()).collect();
            writeln!(self.out, "time,unix_s,elapsed_s,{}", cols.join(","))?;
            self.cols = Some(cols);
        }
        let cols = self.cols.as_deref().unwrap_or(&[]);
        let mut line = format!("{},{:.3},{:.3}", crate::util::time::iso_utc(s.unix_s), s.unix_s, s.elapsed_s);
        for c in cols {
            line.push(',');
            if let Some(v) = s.get(c) {
                line.push_str(&format!("{v:.4}"));
            }
        }
        writeln!(self.out, "{line}")?;
        self.out.flush()
    }
}

/// One JSON object per sample.
pub fn jsonl(s: &Sample, out: &mut dyn Write) -> std::io::Result<()> {
    let mut m = serde_json::Map::new();
    m.insert("time".into(), crate::util::time::iso_utc(s.unix_s).into());
    m.insert("unix_s".into(), s.unix_s.into());
    m.insert("elapsed_s".into(), s.elapsed_s.into());
    for (k, v) in &s.values {
        m.insert(k.clone(), (*v).into());
    }
    writeln!(out, "{}", serde_json::Value::Object(m))?;
    out.flush()
}
