//! What each workload's result is read for: its headline throughput and its key figures, one table
//! per tool adapter and built-in kind. The report's answer table shows a point's key figures (the
//! ones its trials produced), its chart and its observations follow the headline; the adapters and
//! kinds take their declared primary figures from here.
//!
//! A table is found by the workload name a trial stores (`http`, `exec:fio`, ...), so a report
//! written from an old store finds the same figures. A metric may be a pattern whose `*` stands for
//! a part the run chose (a stress-ng stressor, an error class): the part is then shown with the value.
//! Every label says what a percentile is the percentile of ("p99 request time", never a bare "p99").

use super::Primary;

/// How a key figure's value is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Show {
    /// The value (mean over the repetitions; a percentile: the point's own).
    Value,
    /// A count of tests passed, out of itself plus the named count of failed ones ("18/18").
    PassedOfSum(&'static str),
    /// A count of tests run, of which the named count failed: shown as passed/run ("6/6").
    PassedOfRun(&'static str),
    /// A pattern's instances that are not zero (error classes); "0" when every one is.
    NonZero,
    /// A count or rate of errors: shown as its value where any point has one; zero at every point
    /// of a report, its row is left out and the answer says so in one sentence ("No failed
    /// requests at any point").
    Errors,
}

/// One key figure: the metric (or the first of several alternatives the point has) and its label.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyFigure {
    /// (metric name or pattern, label), in order of preference.
    pub any_of: &'static [(&'static str, &'static str)],
    pub show: Show,
}

impl KeyFigure {
    /// The metric `name` of a point, if this figure shows it: the label, and the part a `*` stood
    /// for (None for an exact name).
    pub fn label_for(&self, name: &str) -> Option<(&'static str, Option<String>)> {
        self.any_of
            .iter()
            .find_map(|(pattern, label)| star_part(pattern, name).map(|part| (*label, part)))
    }
}

/// A figure shown by one name.
macro_rules! one {
    ($metric:expr, $label:expr) => {
        KeyFigure {
            any_of: &[($metric, $label)],
            show: Show::Value,
        }
    };
    ($metric:expr, $label:expr, $show:expr) => {
        KeyFigure {
            any_of: &[($metric, $label)],
            show: $show,
        }
    };
}

/// A workload's figures: its primary throughput and latency (in order of preference, the first a
/// trial produced is used) and the key figures its answer table shows.
#[derive(Clone, Copy, Debug)]
pub struct Figures {
    /// The workload names it covers (`exec:fio`, `http`).
    pub workload: &'static str,
    /// The system rows of the resource the workload exercises, by metric prefix (`net_` for a
    /// network or HTTP load, `disk_` for a disk load; empty for CPU and memory, which the system
    /// table always shows): the table keeps that resource's busiest device even where the load did
    /// not move it beyond the baseline's noise, so every report shows the resource it loaded.
    pub resource: &'static str,
    pub primary: Primary,
    pub key: &'static [KeyFigure],
}

impl Figures {
    /// The headline throughput of a point: the first declared throughput name (a pattern matched
    /// in the order of `names`) among the metrics the point's trials produced.
    pub fn headline<'a>(&self, names: impl IntoIterator<Item = &'a str> + Clone) -> Option<String> {
        self.primary
            .throughput
            .iter()
            .find_map(|want| names.clone().into_iter().find(|n| shows(want, n)).map(str::to_string))
    }

    /// The key figure that shows metric `name`, with its label and the part a `*` stood for.
    pub fn key_for(&self, name: &str) -> Option<(&'static KeyFigure, &'static str, Option<String>)> {
        self.key
            .iter()
            .find_map(|k| k.label_for(name).map(|(label, part)| (k, label, part)))
    }
}

/// Whether `name` matches `pattern`, where each `*` stands for one or more characters.
pub fn glob(pattern: &str, name: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == name,
        Some((head, tail)) => {
            let Some(rest) = name.strip_prefix(head) else { return false };
            // `*` takes at least one character, then the tail must match what is left.
            rest.char_indices()
                .skip(1)
                .map(|(i, _)| i)
                .chain([rest.len()])
                .filter(|i| *i > 0)
                .any(|i| glob(tail, &rest[i..]))
        }
    }
}

/// Whether a point's metric `name` is what `pattern` declares: `*` stands for any non-empty text,
/// but a rate (`errors_deadlock_per_s`) is never an instance of a pattern that is not one
/// (`errors_*`, the counts).
pub fn shows(pattern: &str, name: &str) -> bool {
    glob(pattern, name) && (pattern.ends_with("_per_s") || !name.ends_with("_per_s"))
}

/// The part of `name` a `*` in `pattern` stands for: Some(None) for an exact match, None when
/// the name does not match.
fn star_part(pattern: &str, name: &str) -> Option<Option<String>> {
    if !shows(pattern, name) {
        return None;
    }
    match pattern.split_once('*') {
        None => (pattern == name).then_some(None),
        Some((head, tail)) => {
            let mid = name.strip_prefix(head)?.strip_suffix(tail)?;
            (!mid.is_empty()).then(|| Some(mid.to_string()))
        }
    }
}

pub const HTTP: Figures = Figures {
    workload: "http",
    resource: "net_",
    primary: Primary {
        throughput: &["requests_per_s"],
        latency: &["latency_p99_ms"],
        latency_histogram: Some("latency"),
    },
    key: &[
        one!("requests_per_s", "requests/s"),
        one!("latency_p50_ms", "p50 response time"),
        one!("latency_p99_ms", "p99 response time"),
        one!("error_rate_pct", "error rate", Show::Errors),
    ],
};

pub const CPU: Figures = Figures {
    workload: "cpu",
    resource: "",
    primary: Primary {
        throughput: &["ops_per_s"],
        latency: &["op_p99_us"],
        latency_histogram: Some("op"),
    },
    key: &[
        one!("ops_per_s", "ops/s"),
        one!("ops_per_cpu_s", "ops per CPU-second"),
        one!("load_asked_pct", "load asked"),
        one!("load_achieved_pct", "load achieved"),
    ],
};

pub const MEM: Figures = Figures {
    workload: "mem",
    resource: "",
    primary: Primary {
        throughput: &[
            "touch_mib_per_s",
            "triad_mib_per_s",
            "read_mib_per_s",
            "write_mib_per_s",
            "accesses_per_s",
        ],
        latency: &["access_latency_ns"],
        latency_histogram: None,
    },
    key: &[
        one!("touch_mib_per_s", "touch rate"),
        one!("touched_mib", "touched"),
        one!(
            "verify_patterns_run",
            "patterns passed",
            Show::PassedOfRun("verify_patterns_failed")
        ),
        one!("triad_mib_per_s", "triad bandwidth"),
        one!("read_mib_per_s", "read bandwidth"),
        one!("write_mib_per_s", "write bandwidth"),
        one!("access_latency_ns", "mean access latency"),
    ],
};

pub const DISK: Figures = Figures {
    workload: "disk",
    resource: "disk_",
    primary: Primary {
        throughput: &["iops"],
        latency: &["read_lat_p99_us", "write_lat_p99_us"],
        latency_histogram: None,
    },
    key: &[
        one!("iops", "IOPS"),
        one!("mib_per_s", "MiB/s"),
        one!("read_lat_p50_us", "read p50 latency"),
        one!("read_lat_p99_us", "read p99 latency"),
        one!("write_lat_p50_us", "write p50 latency"),
        one!("write_lat_p99_us", "write p99 latency"),
        one!("errors", "errors", Show::Errors),
    ],
};

pub const NET: Figures = Figures {
    workload: "net",
    resource: "net_",
    primary: Primary {
        throughput: &["gbit_per_s", "received_gbit_per_s", "transactions_per_s"],
        latency: &["rtt_mean_us", "jitter_ms", "rtt_p99_us"],
        latency_histogram: None,
    },
    key: &[
        one!("gbit_per_s", "throughput"),
        one!("received_gbit_per_s", "received"),
        one!("transactions_per_s", "transactions/s"),
        one!("retransmits", "retransmits"),
        one!("rtt_mean_us", "mean TCP RTT"),
        one!("rtt_p99_us", "p99 round trip"),
        one!("jitter_ms", "jitter"),
        one!("loss_pct", "lost"),
    ],
};

pub const OLTP: Figures = Figures {
    workload: "oltp",
    resource: "net_",
    primary: Primary {
        throughput: &["transactions_per_s"],
        latency: &["latency_p99_ms"],
        latency_histogram: Some("latency"),
    },
    key: &[
        one!("transactions_per_s", "transactions/s"),
        one!("queries_per_s", "queries/s"),
        one!("latency_p50_ms", "p50 transaction time"),
        one!("latency_p99_ms", "p99 transaction time"),
        one!("errors_*", "errors", Show::NonZero),
    ],
};

pub const AB: Figures = Figures {
    workload: "exec:ab",
    resource: "net_",
    primary: Primary {
        throughput: &["requests_per_s"],
        latency: &["latency_p99_ms", "total_mean_ms"],
        latency_histogram: None,
    },
    key: &[
        one!("requests_per_s", "requests/s"),
        one!("time_per_request_ms", "time per request"),
        one!("transfer_kib_per_s", "transfer rate"),
        one!("latency_p50_ms", "p50 request time"),
        one!("latency_p99_ms", "p99 request time"),
        one!("failed_requests", "failed requests", Show::Errors),
        one!("non_2xx_responses", "non-2xx responses", Show::Errors),
    ],
};

pub const FIO: Figures = Figures {
    workload: "exec:fio",
    resource: "disk_",
    primary: Primary {
        throughput: &["read_iops", "write_iops", "trim_iops"],
        latency: &["read_clat_p99_us", "write_clat_p99_us", "trim_clat_p99_us"],
        latency_histogram: None,
    },
    key: &[
        one!("read_iops", "read IOPS"),
        one!("write_iops", "write IOPS"),
        one!("read_bw_mibps", "read bandwidth"),
        one!("write_bw_mibps", "write bandwidth"),
        KeyFigure {
            any_of: &[("read_lat_mean_us", "read mean lat"), ("read_clat_mean_us", "read mean clat")],
            show: Show::Value,
        },
        KeyFigure {
            any_of: &[("read_lat_p99_us", "read p99 lat"), ("read_clat_p99_us", "read p99 clat")],
            show: Show::Value,
        },
        KeyFigure {
            any_of: &[("write_lat_mean_us", "write mean lat"), ("write_clat_mean_us", "write mean clat")],
            show: Show::Value,
        },
        KeyFigure {
            any_of: &[("write_lat_p99_us", "write p99 lat"), ("write_clat_p99_us", "write p99 clat")],
            show: Show::Value,
        },
    ],
};

pub const IPERF3: Figures = Figures {
    workload: "exec:iperf3",
    resource: "net_",
    primary: Primary {
        throughput: &["received_mbitps", "sent_mbitps"],
        latency: &["rtt_mean_us", "jitter_ms"],
        latency_histogram: None,
    },
    key: &[
        one!("received_mbitps", "received"),
        one!("sent_mbitps", "sent"),
        one!("jitter_ms", "jitter"),
        one!("lost_pct", "lost"),
        one!("retransmits", "retransmits"),
        one!("rtt_mean_us", "mean TCP RTT"),
    ],
};

pub const MEMTESTER: Figures = Figures {
    workload: "exec:memtester",
    resource: "",
    primary: Primary::NONE,
    key: &[
        one!("memtest_tests_passed", "tests passed", Show::PassedOfSum("memtest_tests_failed")),
        one!("memtest_loops", "loops"),
        one!("wall_time_s", "run time"),
    ],
};

pub const PGBENCH: Figures = Figures {
    workload: "exec:pgbench",
    resource: "net_",
    primary: Primary {
        throughput: &["transactions_per_s", "transactions_incl_connect_per_s"],
        latency: &["latency_avg_ms", "latency_avg_derived_ms"],
        latency_histogram: None,
    },
    key: &[
        one!("transactions_per_s", "transactions/s"),
        KeyFigure {
            any_of: &[
                ("latency_avg_ms", "mean transaction time"),
                ("latency_avg_derived_ms", "mean transaction time (derived)"),
            ],
            show: Show::Value,
        },
        one!("failed_transactions", "failed transactions", Show::Errors),
    ],
};

pub const STRESS_NG: Figures = Figures {
    workload: "exec:stress-ng",
    resource: "",
    primary: Primary {
        throughput: &["*_bogo_ops_per_s"],
        latency: &[],
        latency_histogram: None,
    },
    key: &[
        one!("*_bogo_ops_per_s", "bogo-ops/s"),
        one!("*_bogo_ops_per_cpu_s", "bogo-ops per CPU-second"),
    ],
};

pub const SYSBENCH: Figures = Figures {
    workload: "exec:sysbench",
    resource: "",
    primary: Primary {
        throughput: &["transactions_per_s", "events_per_s"],
        latency: &["latency_p99_ms", "latency_p95_ms", "latency_p90_ms", "latency_avg_ms"],
        latency_histogram: None,
    },
    key: &[
        // An OLTP test's events are its transactions: events/s only where there are none (cpu,
        // memory, fileio tests).
        KeyFigure {
            any_of: &[("transactions_per_s", "transactions/s"), ("events_per_s", "events/s")],
            show: Show::Value,
        },
        one!("queries_per_s", "queries/s"),
        one!("latency_avg_ms", "mean time per event"),
        KeyFigure {
            any_of: &[
                ("latency_p99_ms", "p99 time per event"),
                ("latency_p95_ms", "p95 time per event"),
                ("latency_p90_ms", "p90 time per event"),
            ],
            show: Show::Value,
        },
        one!("ignored_errors", "ignored errors", Show::Errors),
        one!("reconnects", "reconnects", Show::Errors),
    ],
};

pub const WRK: Figures = Figures {
    workload: "exec:wrk",
    resource: "net_",
    primary: Primary {
        throughput: &["requests_per_s"],
        latency: &["latency_p99_ms", "latency_avg_ms"],
        latency_histogram: None,
    },
    key: &[
        one!("requests_per_s", "requests/s"),
        one!("latency_avg_ms", "mean latency"),
        one!("latency_p99_ms", "p99 latency"),
        one!("socket_errors", "socket errors", Show::Errors),
        one!("non_2xx_3xx_responses", "non-2xx/3xx responses", Show::Errors),
    ],
};

/// A command no adapter reads: its run time.
pub const COMMAND: Figures = Figures {
    workload: "exec",
    resource: "",
    primary: Primary {
        throughput: &[],
        latency: &["wall_time_s"],
        latency_histogram: None,
    },
    key: &[one!("wall_time_s", "run time"), one!("exit_status", "exit status")],
};

/// Every table, one per built-in kind and tool adapter.
pub const ALL: &[&Figures] = &[
    &HTTP, &CPU, &MEM, &DISK, &NET, &OLTP, &AB, &FIO, &IPERF3, &MEMTESTER, &PGBENCH, &STRESS_NG, &SYSBENCH, &WRK, &COMMAND,
];

/// The table of the workload a trial stored as `workload` (`exec:fio`, `http`, `mem:touch`: a
/// built-in kind's name may carry its mode after a colon).
pub fn of(workload: &str) -> Option<&'static Figures> {
    ALL.iter().copied().find(|f| f.workload == workload).or_else(|| {
        let (kind, _) = workload.split_once(':')?;
        ALL.iter().copied().find(|f| f.workload == kind && kind != "exec")
    })
}

/// The table docs/metrics.md shows ("Workload figures"): per workload, its headline throughput
/// in order of preference and its key figures with their labels.
pub fn markdown_table() -> String {
    let mut o = String::from("| workload | headline throughput (first the point has) | key figures (metric: label) |\n|---|---|---|\n");
    for f in ALL {
        let head = if f.primary.throughput.is_empty() {
            "none".to_string()
        } else {
            f.primary.throughput.iter().map(|t| format!("`{t}`")).collect::<Vec<_>>().join(", ")
        };
        let keys: Vec<String> = f
            .key
            .iter()
            .map(|k| {
                let alts: Vec<String> = k.any_of.iter().map(|(m, l)| format!("`{m}`: {l}")).collect();
                let how = match k.show {
                    Show::Value => String::new(),
                    Show::PassedOfSum(failed) => format!(" (shown as passed/(passed + `{failed}`))"),
                    Show::PassedOfRun(failed) => format!(" (shown as (run − `{failed}`)/run)"),
                    Show::NonZero => " (the ones not zero; 0 when none)".to_string(),
                    Show::Errors => " (left out where 0 at every point, and said so)".to_string(),
                };
                format!("{}{how}", alts.join(" or "))
            })
            .collect();
        o.push_str(&format!("| `{}` | {head} | {} |\n", f.workload, keys.join("; ")));
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_headline_is_the_first_declared_name_the_point_has() {
        assert_eq!(FIO.headline(["write_iops", "write_bw_mibps"]).as_deref(), Some("write_iops"));
        assert_eq!(FIO.headline(["write_iops", "read_iops"]).as_deref(), Some("read_iops"));
        assert_eq!(
            STRESS_NG.headline(["vm_bogo_ops", "vm_bogo_ops_per_s"]).as_deref(),
            Some("vm_bogo_ops_per_s")
        );
        assert_eq!(MEMTESTER.headline(["memtest_tests_passed"]), None);
    }

    #[test]
    fn a_pattern_names_the_part_it_matched() {
        let (_, label, part) = OLTP.key_for("errors_duplicate_key").unwrap();
        assert_eq!((label, part.as_deref()), ("errors", Some("duplicate_key")));
        assert!(OLTP.key_for("errors_duplicate_key_per_s").is_none(), "a rate is not a count");
        let (_, label, part) = STRESS_NG.key_for("io_bogo_ops_per_s").unwrap();
        assert_eq!((label, part.as_deref()), ("bogo-ops/s", Some("io")));
        let (_, label, part) = FIO.key_for("read_clat_p99_us").unwrap();
        assert_eq!((label, part), ("read p99 clat", None));
        assert!(FIO.key_for("job_read_iops").is_none());
    }

    #[test]
    fn every_table_is_found_by_its_workload_name_and_labels_its_percentiles() {
        for f in ALL {
            // Consts have no address of their own: the table found is the one of that name.
            assert_eq!(of(f.workload).map(|t| t.workload), Some(f.workload));
            assert_eq!(of("mem:touch").map(|t| t.workload), Some(MEM.workload));
            assert!(of("exec:nosuchtool").is_none());
            for k in f.key {
                for (metric, label) in k.any_of {
                    if crate::model::MetricKind::infer(metric, "ms").quantile().is_some() {
                        assert!(label.split(' ').count() >= 2, "{metric}: `{label}` says of what");
                    }
                }
            }
        }
    }
}
