//! The `mem` workload's settings, as a plan's `[workload]` table and `perflab load mem` give them,
//! and their checks (a size the machine cannot hold is refused here, before the run).

use super::size::{self, human, SizeSpec};
use crate::error::usage;

crate::workload::registry::spec::settings! {
    /// The `mem` workload's settings: a plan's `[workload]` keys and `perflab load mem`'s options.
    #[derive(Clone, Debug, Default, serde::Serialize)]
    #[serde(deny_unknown_fields)]
    pub struct MemConfig {
        /// touch and hold a region (and verify it), memory bandwidth (STREAM, or a sequential read
        /// or write), or pointer-chase latency
        #[key("`\"touch\"`, `\"bandwidth\"` or `\"latency\"`", "required")]
        #[arg(value_name = "MODE")]
        pub mode: String,
        /// touch: the region; latency: the working set; bandwidth: each array (method read or
        /// write: each block); more than the machine can give is refused
        #[key("integer (bytes) or string (`\"512M\"`, `\"2G\"`, `\"75%\"`)", "touch: required; latency: `\"64M\"`; bandwidth: 4 × the last-level cache")]
        #[serde(default)]
        #[arg(short = 's', long, value_parser = SizeSpec::from_arg)]
        pub size: Option<SizeSpec>,
        /// touch: run memtester's pattern tests over the region and report each one
        #[key("bool", "`false`")]
        #[serde(default)]
        #[arg(long)]
        pub verify: bool,
        /// bandwidth: worker threads, each with its own arrays
        #[key("integer ≥ 1", "`1`")]
        #[serde(default)]
        #[arg(short = 'w', long)]
        pub workers: Option<u64>,
        /// bandwidth: STREAM's four kernels, or a pure sequential read (a sum of every 8-byte
        /// word) or write of one block of `size` per worker, one pass per operation
        #[key("`\"stream\"`, `\"read\"` or `\"write\"`", "`\"stream\"`")]
        #[serde(default)]
        #[arg(short = 'm', long)]
        pub method: Option<String>,
    }
}

/// What a `bandwidth` run measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// STREAM's copy, scale, add and triad over three arrays per worker.
    Stream,
    /// A sequential read (a sum of every 8-byte word) of one block per worker.
    Read,
    /// A sequential write of every 8-byte word of one block per worker.
    Write,
}

impl Method {
    pub fn name(self) -> &'static str {
        match self {
            Method::Stream => "stream",
            Method::Read => "read",
            Method::Write => "write",
        }
    }

    /// Arrays (blocks) of `size` each worker allocates.
    pub fn arrays(self) -> u64 {
        match self {
            Method::Stream => 3,
            Method::Read | Method::Write => 1,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Mode {
    Touch {
        bytes: u64,
        verify: bool,
    },
    Bandwidth {
        workers: usize,
        array_bytes: u64,
        llc: Option<u64>,
        method: Method,
    },
    Latency {
        bytes: u64,
    },
}

impl Mode {
    pub fn name(&self) -> &'static str {
        match self {
            Mode::Touch { .. } => "touch",
            Mode::Bandwidth { .. } => "bandwidth",
            Mode::Latency { .. } => "latency",
        }
    }

    pub fn workers(&self) -> usize {
        match self {
            Mode::Bandwidth { workers, .. } => *workers,
            _ => 1,
        }
    }

    /// Bytes the run allocates.
    pub fn footprint(&self) -> u64 {
        match self {
            Mode::Touch { bytes, .. } | Mode::Latency { bytes } => *bytes,
            Mode::Bandwidth {
                workers,
                array_bytes,
                method,
                ..
            } => method.arrays() * array_bytes * *workers as u64,
        }
    }
}

/// The smallest region or working set.
const MIN_BYTES: u64 = 4096;
/// A bandwidth array when sysfs does not give the last-level cache.
const DEFAULT_ARRAY: u64 = 128 << 20;

/// Check the settings against `available` bytes; the messages name the key first.
pub fn prepare(c: &MemConfig, available: u64) -> anyhow::Result<Mode> {
    let bytes = c.size.as_ref().map(|s| size::parse(s, available)).transpose().map_err(usage)?;
    if c.verify && c.mode != "touch" {
        return Err(usage(format!("verify needs mode = \"touch\" (the mode is \"{}\")", c.mode)));
    }
    if c.workers.is_some() && c.mode != "bandwidth" {
        return Err(usage(format!(
            "workers is for mode = \"bandwidth\" (mode \"{}\" runs one worker)",
            c.mode
        )));
    }
    if c.method.is_some() && c.mode != "bandwidth" {
        return Err(usage(format!("method is for mode = \"bandwidth\" (the mode is \"{}\")", c.mode)));
    }
    let small = |b: u64| (b < MIN_BYTES).then(|| usage(format!("size must be at least 4K, not {b} bytes")));
    let mode = match c.mode.as_str() {
        "touch" => {
            let bytes = bytes.ok_or_else(|| usage("size is needed with mode = \"touch\" (bytes, \"2G\" or \"75%\")"))?;
            if let Some(e) = small(bytes) {
                return Err(e);
            }
            Mode::Touch { bytes, verify: c.verify }
        }
        "latency" => {
            let bytes = bytes.unwrap_or(64 << 20);
            if let Some(e) = small(bytes) {
                return Err(e);
            }
            Mode::Latency { bytes }
        }
        "bandwidth" => {
            let workers = match c.workers {
                Some(0) => return Err(usage("workers must be at least 1")),
                Some(n) if n > 1024 => return Err(usage(format!("workers must be at most 1024, not {n}"))),
                Some(n) => n as usize,
                None => 1,
            };
            let llc = size::last_level_cache();
            let array_bytes = bytes.unwrap_or_else(|| llc.map_or(DEFAULT_ARRAY, |l| 4 * l));
            if let Some(e) = small(array_bytes) {
                return Err(e);
            }
            let method = match c.method.as_deref() {
                None | Some("stream") => Method::Stream,
                Some("read") => Method::Read,
                Some("write") => Method::Write,
                Some(other) => return Err(usage(format!("method \"{other}\": use \"stream\", \"read\" or \"write\""))),
            };
            Mode::Bandwidth {
                workers,
                array_bytes,
                llc,
                method,
            }
        }
        other => {
            return Err(usage(format!("mode \"{other}\": use \"touch\", \"bandwidth\" or \"latency\"")));
        }
    };
    let need = mode.footprint();
    if need > available {
        return Err(usage(format!(
            "size: {} is more than the {} this machine can give now (MemAvailable, or the cgroup's memory.max): \
             it would meet the OOM killer",
            human(need),
            human(available)
        )));
    }
    Ok(mode)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(mode: &str, size: Option<&str>) -> MemConfig {
        MemConfig {
            mode: mode.into(),
            size: size.map(|s| SizeSpec::Text(s.into())),
            ..Default::default()
        }
    }

    #[test]
    fn modes_sizes_and_what_the_machine_can_hold() {
        let gib = 1u64 << 30;
        assert_eq!(
            prepare(&cfg("touch", Some("75%")), 4 * gib).expect("ok"),
            Mode::Touch {
                bytes: 3 * gib,
                verify: false
            }
        );
        assert_eq!(prepare(&cfg("latency", None), gib).expect("ok"), Mode::Latency { bytes: 64 << 20 });
        let e = |c: &MemConfig| format!("{:#}", prepare(c, 4 * gib).expect_err("refused"));
        assert!(e(&cfg("touch", Some("8G"))).starts_with("size: 8.00 GiB is more than the 4.00 GiB"));
        assert!(e(&cfg("touch", Some("lots"))).starts_with("size \"lots\""));
        assert!(e(&cfg("touch", None)).starts_with("size is needed"));
        assert!(e(&cfg("latency", Some("1K"))).starts_with("size must be at least 4K"));
        assert!(e(&cfg("swap", None)).starts_with("mode \"swap\""));
        assert!(e(&MemConfig {
            verify: true,
            ..cfg("latency", None)
        })
        .starts_with("verify needs"));
        assert!(e(&MemConfig {
            workers: Some(2),
            ..cfg("touch", Some("1M"))
        })
        .starts_with("workers is for"));
        let bw = prepare(
            &MemConfig {
                workers: Some(2),
                ..cfg("bandwidth", Some("16M"))
            },
            4 * gib,
        )
        .expect("ok");
        assert_eq!(bw.footprint(), 2 * 3 * (16 << 20));
        let read = |m: &str| MemConfig {
            method: Some(m.into()),
            ..cfg("bandwidth", Some("16M"))
        };
        let rd = prepare(&read("read"), 4 * gib).expect("ok");
        assert!(matches!(rd, Mode::Bandwidth { method: Method::Read, .. }));
        assert_eq!(rd.footprint(), 16 << 20, "one block per worker");
        assert!(e(&read("sum")).starts_with("method \"sum\""));
        assert!(e(&MemConfig {
            method: Some("read".into()),
            ..cfg("latency", None)
        })
        .starts_with("method is for"));
    }
}
