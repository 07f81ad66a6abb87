//! What each table of a store holds, column by column, as perflab reads it: the checks of a store
//! (`check`) and the words of a damaged store's message (`damage`) both come from this one list,
//! which follows `schema.rs` (docs/store.md).

/// The kind of value a column holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ty {
    /// A whole number.
    Int,
    /// A number (a whole number is read as one too).
    Real,
    /// UTF-8 text.
    Text,
    /// Bytes (a histogram, a packed series).
    Blob,
}

impl Ty {
    /// "a number", as the message says what belongs in the column.
    pub fn words(self) -> &'static str {
        match self {
            Ty::Int => "a whole number",
            Ty::Real => "a number",
            Ty::Text => "text",
            Ty::Blob => "bytes",
        }
    }
}

/// One column: its name, what it holds, and whether it may be empty (NULL).
#[derive(Clone, Copy, Debug)]
pub struct Col {
    pub name: &'static str,
    pub ty: Ty,
    pub null: bool,
}

const fn c(name: &'static str, ty: Ty) -> Col {
    Col { name, ty, null: false }
}

const fn n(name: &'static str, ty: Ty) -> Col {
    Col { name, ty, null: true }
}

/// One table: its name, what one of its rows is in the user's words (`trial_id` names the trial),
/// the columns perflab reads, and the oldest and newest schema versions that have it.
#[derive(Clone, Copy, Debug)]
pub struct Table {
    pub name: &'static str,
    /// "metrics", as in "trial 3's metrics".
    pub rows: &'static str,
    pub cols: &'static [Col],
    pub since: i64,
    pub until: i64,
    /// Made only by runs that needed it (the probe tables): a store without it is sound.
    pub optional: bool,
}

use Ty::*;

const fn t(name: &'static str, rows: &'static str, cols: &'static [Col], since: i64, until: i64) -> Table {
    Table {
        name,
        rows,
        cols,
        since,
        until,
        optional: false,
    }
}

const LAST: i64 = i64::MAX;

/// Every table, in the order they are checked (the ones others refer to first).
pub const TABLES: &[Table] = &[
    t("meta", "facts", &[c("key", Text), c("value", Text)], 1, LAST),
    t(
        "run",
        "run",
        &[
            c("id", Int),
            c("plan_name", Text),
            c("plan_file", Text),
            c("plan_source", Text),
            c("seed", Int),
            c("started_unix", Real),
            n("ended_unix", Real),
            c("status", Text),
            c("perflab_version", Text),
            c("host", Text),
            c("kernel", Text),
            c("ncpu", Int),
            c("mem_total_mb", Real),
            c("planned_trials", Int),
        ],
        1,
        LAST,
    ),
    t(
        "point",
        "points",
        &[
            c("id", Int),
            c("label", Text),
            c("params_json", Text),
            c("repetitions", Int),
            n("stop_reason", Text),
        ],
        1,
        LAST,
    ),
    t(
        "trial",
        "trials",
        &[
            c("id", Int),
            c("point", Int),
            c("repetition", Int),
            c("params_json", Text),
            c("workload", Text),
            c("status", Text),
            n("failure", Text),
            c("started_unix", Real),
            c("ended_unix", Real),
            n("limit_mechanism", Text),
            n("limit_proof", Text),
            n("target_stdout_tail", Text),
            n("target_stderr_tail", Text),
        ],
        1,
        LAST,
    ),
    t(
        "phase",
        "phases",
        &[c("trial_id", Int), c("name", Text), c("start_s", Real), c("end_s", Real)],
        1,
        LAST,
    ),
    t(
        "metric",
        "metrics",
        &[
            c("trial_id", Int),
            c("name", Text),
            c("unit", Text),
            c("value", Real),
            c("better", Text),
        ],
        1,
        LAST,
    ),
    t("metric", "metrics", &[n("kind", Text)], 2, LAST),
    t("trial", "trials", &[n("failure_kind", Text)], 4, LAST),
    t(
        "histogram",
        "histograms",
        &[c("trial_id", Int), c("name", Text), c("count", Int), c("hdr_v2_deflate", Blob)],
        1,
        LAST,
    ),
    t(
        "series",
        "per-second series",
        &[c("trial_id", Int), c("name", Text), c("t_s", Real), c("value", Real)],
        1,
        LAST,
    ),
    t(
        "error",
        "error counts",
        &[c("trial_id", Int), c("class", Text), c("count", Int)],
        1,
        LAST,
    ),
    t(
        "raw_output",
        "kept output lines",
        &[c("trial_id", Int), c("line_no", Int), c("line", Text)],
        1,
        LAST,
    ),
    t(
        "threshold",
        "thresholds",
        &[c("expr", Text), c("point", Int), n("observed", Real), c("passed", Int)],
        1,
        LAST,
    ),
    t("threshold", "thresholds", &[n("basis", Text)], 2, LAST),
    t(
        "sample",
        "monitor samples",
        &[
            c("trial_id", Int),
            c("phase", Text),
            c("t_s", Real),
            c("unix_s", Real),
            c("name", Text),
            c("value", Real),
        ],
        1,
        2,
    ),
    t(
        "metric_dict",
        "sampled metric names",
        &[c("id", Int), c("name", Text), c("unit", Text), c("kind", Text), c("host", Text)],
        3,
        LAST,
    ),
    t(
        "sample_clock",
        "sample times",
        &[
            c("trial_id", Int),
            c("host", Text),
            c("n_samples", Int),
            c("phases", Text),
            c("phase_of", Blob),
            c("t_s", Blob),
            c("unix_s", Blob),
        ],
        3,
        LAST,
    ),
    t(
        "sample_series",
        "monitor samples",
        &[
            c("trial_id", Int),
            c("metric_id", Int),
            c("n_values", Int),
            n("present", Blob),
            c("vals", Blob),
        ],
        3,
        LAST,
    ),
    t(
        "phase_summary",
        "per-phase summaries",
        &[
            c("trial_id", Int),
            c("metric_id", Int),
            n("baseline", Real),
            c("n_baseline", Int),
            n("under_load", Real),
            c("n_load", Int),
            n("peak", Real),
            n("recovery", Real),
            c("n_recovery", Int),
            n("recovery_s", Real),
            c("never_recovered", Int),
        ],
        3,
        LAST,
    ),
    Table {
        optional: true,
        ..t(
            "probe",
            "probes",
            &[
                c("trial_id", Int),
                c("name", Text),
                c("kind", Text),
                c("target", Text),
                c("interval_s", Real),
                c("detail", Text),
                c("started_s", Real),
            ],
            1,
            LAST,
        )
    },
    Table {
        optional: true,
        ..t(
            "probe_sample",
            "probe samples",
            &[
                c("trial_id", Int),
                c("probe", Text),
                c("seq", Int),
                c("phase", Text),
                c("t_s", Real),
                c("outcome", Text),
                n("rtt_ms", Real),
                n("status", Int),
                c("packets", Int),
                c("bytes", Int),
            ],
            1,
            LAST,
        )
    },
    t(
        "profile",
        "profiles",
        &[
            c("trial_id", Int),
            c("host", Text),
            c("kind", Text),
            c("scope", Text),
            n("frequency_hz", Real),
            c("window_start_s", Real),
            c("window_end_s", Real),
            n("first_sample_s", Real),
            n("last_sample_s", Real),
            c("samples", Int),
            c("ns", Int),
            c("stacks_deflate", Blob),
            c("notes", Text),
        ],
        5,
        LAST,
    ),
    t(
        "event",
        "events",
        &[
            c("seq", Int),
            c("unix_s", Real),
            n("trial_id", Int),
            c("kind", Text),
            c("body", Text),
        ],
        6,
        LAST,
    ),
];

/// The tables (with their columns) a store of `version` has.
pub fn tables(version: i64) -> impl Iterator<Item = &'static Table> {
    TABLES.iter().filter(move |t| (t.since..=t.until).contains(&version))
}

/// The column `col` of `table` (in any version), to say what belongs there.
pub fn column(table: &str, col: &str) -> Option<Col> {
    TABLES
        .iter()
        .filter(|t| t.name == table)
        .flat_map(|t| t.cols.iter())
        .find(|c| c.name == col)
        .copied()
}

/// What one row of `table` is, in the user's words ("metrics").
pub fn rows_of(table: &str) -> &'static str {
    TABLES.iter().find(|t| t.name == table).map_or("rows", |t| t.rows)
}
