//! The `oltp` workload's settings, as a plan's `[workload]` table and `perflab load oltp` give
//! them, and their checks (messages start with the key's name).

use super::scenario::{Mix, RandType, Scenario};
use crate::error::usage;

crate::workload::registry::spec::settings! {
    /// The `oltp` workload's settings: a plan's `[workload]` keys and `perflab load oltp`'s options.
    #[derive(Clone, Debug, Default, serde::Serialize)]
    #[serde(deny_unknown_fields)]
    pub struct OltpConfig {
        /// the database; a password in the URL is kept out of the store, the report and every message; TLS keys as libpq's (`?sslmode=verify-full&sslrootcert=ca.pem`, `channel_binding`) and the mysql client's (`?ssl-mode=REQUIRED&ssl-ca=ca.pem`), see [load.md](load.md#tls)
        #[key("string (`\"sqlite:PATH\"`, `\"postgres://user:password@host:port/db\"`, `\"mysql://...\"`)", "a SQLite file `oltp.db` in the run directory")]
        #[serde(default)]
        #[arg(long)]
        pub db: Option<String>,
        /// sysbench's `oltp_*` script of that name: its statement mix, one transaction per event
        #[key("`\"point_select\"`, `\"read_only\"`, `\"read_write\"`, `\"write_only\"`, `\"update_index\"`, `\"update_non_index\"`, `\"insert\"` or `\"delete\"`", "`\"read_write\"`")]
        #[serde(default)]
        #[arg(short = 's', long, default_value = "read_write")]
        pub scenario: Option<String>,
        /// tables `sbtest1`..`sbtestN`; each group of statements picks one uniformly
        #[key("integer from 1 to 1024", "`1`")]
        #[serde(default)]
        #[arg(long)]
        pub tables: Option<u64>,
        /// rows per table (ids 1..=table_size)
        #[key("integer ≥ 1", "`10000`")]
        #[serde(default)]
        #[arg(long)]
        pub table_size: Option<u64>,
        /// worker threads, one connection each
        #[key("integer from 1 to 4096", "`1`")]
        #[serde(default)]
        #[arg(short = 't', long)]
        pub threads: Option<u64>,
        /// open model: transactions per second over all threads, latency from each one's intended start
        #[key("number > 0", "none (closed model)")]
        #[serde(default)]
        #[arg(long)]
        pub rate: Option<f64>,
        /// stop after this many measured transactions over all threads
        #[key("integer ≥ 1", "none (time-based)")]
        #[serde(default)]
        #[arg(long)]
        pub transactions: Option<u64>,
        /// ids per range select
        #[key("integer ≥ 1", "`100`")]
        #[serde(default)]
        #[arg(long)]
        pub range_size: Option<u64>,
        /// point selects per transaction (read_only, read_write)
        #[key("integer ≥ 0", "`10`")]
        #[serde(default)]
        #[arg(long)]
        pub point_selects: Option<u32>,
        /// range selects per transaction
        #[key("integer ≥ 0", "`1`")]
        #[serde(default)]
        #[arg(long)]
        pub simple_ranges: Option<u32>,
        /// SUM(k) range selects per transaction
        #[key("integer ≥ 0", "`1`")]
        #[serde(default)]
        #[arg(long)]
        pub sum_ranges: Option<u32>,
        /// ORDER BY range selects per transaction
        #[key("integer ≥ 0", "`1`")]
        #[serde(default)]
        #[arg(long)]
        pub order_ranges: Option<u32>,
        /// DISTINCT range selects per transaction
        #[key("integer ≥ 0", "`1`")]
        #[serde(default)]
        #[arg(long)]
        pub distinct_ranges: Option<u32>,
        /// `k = k + 1` updates per transaction (read_write, write_only, update_index)
        #[key("integer ≥ 0", "`1`")]
        #[serde(default)]
        #[arg(long)]
        pub index_updates: Option<u32>,
        /// updates of `c` per transaction (read_write, write_only, update_non_index)
        #[key("integer ≥ 0", "`1`")]
        #[serde(default)]
        #[arg(long)]
        pub non_index_updates: Option<u32>,
        /// deletes of an id followed by an insert of the same id, per transaction
        #[key("integer ≥ 0", "`1`")]
        #[serde(default)]
        #[arg(long)]
        pub delete_inserts: Option<u32>,
        /// no BEGIN/COMMIT: each statement commits by itself
        #[key("bool", "`false`")]
        #[serde(default)]
        #[arg(long)]
        pub skip_trx: bool,
        /// create and load the tables before the trial: when one is missing or not of `table_size` rows, always, or never (a missing table fails the trial)
        #[key("`\"auto\"`, `\"always\"` or `\"never\"`", "`\"auto\"`")]
        #[serde(default)]
        #[arg(long)]
        pub prepare: Option<String>,
        /// drop the tables at the end of each trial (kept by default, so the next trial reuses them)
        #[key("bool", "`false`")]
        #[serde(default)]
        #[arg(long)]
        pub cleanup: bool,
        /// seed of the ids and strings each thread draws
        #[key("integer", "`1`")]
        #[serde(default)]
        #[arg(long)]
        pub seed: Option<u64>,
        /// how ids are drawn; `special` is sysbench's default (75 % of the draws in 1 % of the ids)
        #[key("`\"uniform\"` or `\"special\"`", "`\"uniform\"`")]
        #[serde(default)]
        #[arg(long)]
        pub rand_type: Option<String>,
    }
}

/// When the tables are (re)created and loaded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrepareMode {
    /// When a table is missing or does not hold `table_size` rows.
    Auto,
    Always,
    /// Never: a missing table fails the trial.
    Never,
}

impl PrepareMode {
    pub fn name(self) -> &'static str {
        match self {
            PrepareMode::Auto => "auto",
            PrepareMode::Always => "always",
            PrepareMode::Never => "never",
        }
    }
}

/// The largest id the tables may hold (sysbench's `id` is a 32-bit INTEGER).
pub const MAX_ID: u64 = i32::MAX as u64;

/// Checked settings.
#[derive(Clone, Debug)]
pub struct Settings {
    /// The `db` URL as given (None: a SQLite file the workload chooses).
    pub db: Option<String>,
    pub scenario: Scenario,
    pub tables: u32,
    pub table_size: u64,
    pub threads: usize,
    pub rate: Option<f64>,
    pub transactions: Option<u64>,
    pub range_size: u64,
    pub mix: Mix,
    pub skip_trx: bool,
    pub prepare: PrepareMode,
    pub cleanup: bool,
    pub seed: u64,
    pub rand: RandType,
    /// The slice of the load this run sends (`perflab run --segment`; the whole load otherwise).
    pub segment: crate::model::Segment,
    /// A slice of `[workload] from`, whose tables segment 0's machine prepares before the start
    /// and drops after every segment ended: this one neither loads, checks nor drops them.
    pub shared: bool,
}

impl Settings {
    /// Only `segment`'s slice: in the closed model its share of the threads (connection `j` is
    /// segment `j mod N`'s), in the open model its arrivals of the one global schedule, and its
    /// share of `transactions`. `cleanup` and `prepare = "always"` are refused: one segment would
    /// drop or reload tables the others still use.
    pub fn segmented(&self, segment: crate::model::Segment) -> Result<Settings, String> {
        let mut s = self.clone();
        s.segment = segment;
        if segment.is_whole() {
            return Ok(s);
        }
        if self.cleanup {
            return Err("cleanup = true cannot run in segments: one segment would drop the tables the others still use".into());
        }
        if self.prepare == PrepareMode::Always {
            return Err("prepare = \"always\" cannot run in segments: each segment would reload the tables the others use (prepare once, then run the segments with prepare = \"auto\" or \"never\")".into());
        }
        if self.rate.is_none() {
            s.threads = segment.share(self.threads as u64) as usize;
            if s.threads == 0 {
                return Err(format!(
                    "{} threads cannot be split into {} segments: each segment needs at least one",
                    self.threads, segment.count
                ));
            }
        }
        if let Some(total) = self.transactions {
            s.transactions = Some(segment.share(total));
            if s.transactions == Some(0) {
                return Err(format!(
                    "{total} transactions cannot be split into {} segments: each segment needs at least one",
                    segment.count
                ));
            }
        }
        Ok(s)
    }

    /// As [`segmented`](Self::segmented), for `[workload] from`: the tables are prepared once for
    /// every segment before the common start and dropped (`cleanup`) once after every segment
    /// ended, by segment 0's machine, so `cleanup` and `prepare = "always"` are allowed and the
    /// slice does neither ([`shared`](Settings::shared)). The machines must share one database
    /// server: a SQLite file is each machine's own.
    pub fn segmented_shared(&self, segment: crate::model::Segment) -> Result<Settings, String> {
        if self.db.as_deref().is_none_or(|u| u.starts_with("sqlite:")) {
            return Err(
                "an oltp load split over machines needs one database server they all reach: set `db` to its URL (postgres://... or mysql://...); a SQLite file is each machine's own"
                    .into(),
            );
        }
        let plain = Settings {
            cleanup: false,
            prepare: PrepareMode::Auto,
            ..self.clone()
        };
        let mut s = plain.segmented(segment)?;
        s.prepare = self.prepare;
        s.shared = true;
        Ok(s)
    }

    /// BEGIN/COMMIT around each transaction.
    pub fn in_transaction(&self) -> bool {
        self.scenario.transactional() && !self.skip_trx
    }
}

fn range(key: &str, v: Option<u64>, default: u64, lo: u64, hi: u64) -> anyhow::Result<u64> {
    let v = v.unwrap_or(default);
    if !(lo..=hi).contains(&v) {
        return Err(usage(format!("{key} must be from {lo} to {hi}, not {v}")));
    }
    Ok(v)
}

fn count(key: &str, v: Option<u32>, default: u32) -> anyhow::Result<u32> {
    Ok(range(key, v.map(u64::from), u64::from(default), 0, 1000)? as u32)
}

/// The URL schemes `db` accepts.
pub const SCHEMES: &[&str] = &["sqlite:", "postgres://", "postgresql://", "mysql://", "mariadb://"];

/// Check the settings.
pub fn prepare(c: &OltpConfig) -> anyhow::Result<Settings> {
    if let Some(db) = &c.db {
        if !SCHEMES.iter().any(|s| db.starts_with(s)) {
            return Err(usage(format!(
                "db must start with sqlite:, postgres://, postgresql://, mysql:// or mariadb://, not \"{}\"",
                crate::util::text::clip(&super::redact_url(db))
            )));
        }
        if db == "sqlite:" {
            return Err(usage("db = \"sqlite:\" needs a file path (sqlite:/path/to/file.db)"));
        }
        // The URL as the backend reads it (no connection is made): a missing user, a bad port or
        // an unknown parameter is bad input, found before anything starts.
        if let Err(e) = super::open(db) {
            return Err(usage(format!("db: {}", e.message)));
        }
    }
    let scenario = match c.scenario.as_deref() {
        None => Scenario::ReadWrite,
        Some(s) => Scenario::parse(s).ok_or_else(|| usage(format!("scenario must be {}, not \"{s}\"", Scenario::choices())))?,
    };
    let tables = range("tables", c.tables, 1, 1, 1024)? as u32;
    let table_size = range("table_size", c.table_size, 10_000, 1, MAX_ID / 2)?;
    let threads = range("threads", c.threads, 1, 1, 4096)? as usize;
    if let Some(r) = c.rate {
        if !(r.is_finite() && r > 0.0) {
            return Err(usage(format!("rate must be a number of transactions per second above 0, not {r}")));
        }
    }
    if c.transactions == Some(0) {
        return Err(usage("transactions must be at least 1"));
    }
    let prepare = match c.prepare.as_deref().unwrap_or("auto") {
        "auto" => PrepareMode::Auto,
        "always" => PrepareMode::Always,
        "never" => PrepareMode::Never,
        other => return Err(usage(format!("prepare must be \"auto\", \"always\" or \"never\", not \"{other}\""))),
    };
    let rand_name = c.rand_type.as_deref().unwrap_or("uniform");
    let rand =
        RandType::parse(rand_name).ok_or_else(|| usage(format!("rand_type must be \"uniform\" or \"special\", not \"{rand_name}\"")))?;
    let mix = Mix {
        point_selects: count("point_selects", c.point_selects, 10)?,
        simple_ranges: count("simple_ranges", c.simple_ranges, 1)?,
        sum_ranges: count("sum_ranges", c.sum_ranges, 1)?,
        order_ranges: count("order_ranges", c.order_ranges, 1)?,
        distinct_ranges: count("distinct_ranges", c.distinct_ranges, 1)?,
        index_updates: count("index_updates", c.index_updates, 1)?,
        non_index_updates: count("non_index_updates", c.non_index_updates, 1)?,
        delete_inserts: count("delete_inserts", c.delete_inserts, 1)?,
    };
    if super::scenario::groups(scenario, &mix).is_empty() {
        return Err(usage(format!(
            "scenario = \"{}\" runs no statement with these counts (all 0)",
            scenario.name()
        )));
    }
    Ok(Settings {
        db: c.db.clone(),
        scenario,
        tables,
        table_size,
        threads,
        rate: c.rate,
        transactions: c.transactions,
        range_size: range("range_size", c.range_size, 100, 1, 1_000_000)?,
        mix,
        skip_trx: c.skip_trx,
        prepare,
        cleanup: c.cleanup,
        seed: c.seed.unwrap_or(1),
        rand,
        segment: crate::model::Segment::WHOLE,
        shared: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_sysbench_s_and_bad_values_name_their_key() {
        let s = prepare(&OltpConfig::default()).expect("defaults");
        assert_eq!(
            (s.scenario, s.tables, s.table_size, s.threads, s.range_size),
            (Scenario::ReadWrite, 1, 10_000, 1, 100)
        );
        assert_eq!(
            (s.prepare, s.rand, s.cleanup, s.in_transaction()),
            (PrepareMode::Auto, RandType::Uniform, false, true)
        );
        let bad = |c: OltpConfig| format!("{:#}", prepare(&c).expect_err("refused"));
        assert!(bad(OltpConfig {
            scenario: Some("read".into()),
            ..Default::default()
        })
        .starts_with("scenario must be"));
        assert!(bad(OltpConfig {
            tables: Some(0),
            ..Default::default()
        })
        .starts_with("tables must be from 1"));
        let url = bad(OltpConfig {
            db: Some("oracle://u:hunter22@h/db".into()),
            ..Default::default()
        });
        assert!(url.starts_with("db must start with") && !url.contains("hunter22"), "{url}");
        assert!(bad(OltpConfig {
            scenario: Some("update_index".into()),
            index_updates: Some(0),
            ..Default::default()
        })
        .starts_with("scenario = \"update_index\" runs no statement"));
        assert!(bad(OltpConfig {
            prepare: Some("sometimes".into()),
            ..Default::default()
        })
        .starts_with("prepare must be"));
    }

    #[test]
    fn a_slice_of_from_leaves_the_tables_to_segment_zero_s_machine() {
        use crate::model::Segment;
        let c = OltpConfig {
            db: Some("mysql://sb@192.0.2.7/sbtest".into()),
            prepare: Some("always".into()),
            cleanup: true,
            threads: Some(4),
            ..Default::default()
        };
        let whole = prepare(&c).expect("settings");
        let seg = Segment::new(1, 2).unwrap();
        // `--segment` cannot: each segment would reload or drop the others' tables.
        assert!(whole
            .segmented(seg)
            .unwrap_err()
            .starts_with("cleanup = true cannot run in segments"));
        let s = whole.segmented_shared(seg).expect("a slice of from");
        assert_eq!((s.shared, s.cleanup, s.prepare, s.threads), (true, false, PrepareMode::Always, 2));
        assert!(!whole.shared, "the whole load prepares its own");
        for db in [None, Some("sqlite:/var/tmp/sb.db".to_string())] {
            let local = prepare(&OltpConfig { db, ..c.clone() }).expect("settings");
            let e = local.segmented_shared(seg).unwrap_err();
            assert!(e.starts_with("an oltp load split over machines needs one database server"), "{e}");
        }
    }
}
