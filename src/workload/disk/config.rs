//! The `disk` workload's settings, as a plan's `[workload]` table and `perflab load disk` give them,
//! and their checks: everything that can be known before the run (a size larger than the free
//! space, a read-only location, writing to a block device not named by `allow_destroy`) is refused
//! here, before anything is written.

use crate::error::usage;
use crate::workload::mem::size::{self, human, SizeSpec};
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

crate::workload::registry::spec::settings! {
    /// The `disk` workload's settings: a plan's `[workload]` keys and `perflab load disk`'s options.
    #[derive(Clone, Debug, Default, serde::Serialize)]
    #[serde(deny_unknown_fields)]
    pub struct DiskConfig {
        /// the pattern: sequential or random, reads, writes or both
        #[key("`\"read\"`, `\"write\"`, `\"randread\"`, `\"randwrite\"` or `\"randrw\"`", "`\"randread\"`")]
        #[serde(default)]
        #[arg(long, default_value = "randread")]
        pub rw: Option<String>,
        /// randrw: % of operations that read
        #[key("number from 0 to 100", "`50`")]
        #[serde(default)]
        #[arg(long)]
        pub mix: Option<f64>,
        /// bytes per operation; a multiple of 512 with direct I/O
        #[key("integer (bytes) or string (`\"4K\"`, `\"1M\"`)", "`\"4K\"`")]
        #[serde(default)]
        #[arg(long, default_value = "4K", value_parser = SizeSpec::from_arg)]
        pub bs: Option<SizeSpec>,
        /// operations in flight per job
        #[key("integer from 1 to 4096", "`1`")]
        #[serde(default)]
        #[arg(long, default_value = "1")]
        pub iodepth: Option<u64>,
        /// jobs, each a thread with its own io_uring ring, on the same file
        #[key("integer from 1 to 256", "`1`")]
        #[serde(default)]
        #[arg(short = 'j', long, default_value = "1")]
        pub jobs: Option<u64>,
        /// the file's size; more than the free space is refused before the run
        #[key("integer (bytes) or string (`\"1G\"`)", "`\"1G\"` (a block device: its size)")]
        #[serde(default)]
        #[arg(short = 's', long, value_parser = SizeSpec::from_arg)]
        pub size: Option<SizeSpec>,
        /// the file or block device; a file perflab creates is laid out before the run and removed after it
        #[key("string (a path)", "a new file in a temporary directory")]
        #[serde(default)]
        #[arg(short = 'f', long)]
        pub file: Option<String>,
        /// writing to a block device destroys its data: name the device here again to allow it
        #[key("string (a path)", "none")]
        #[serde(default)]
        #[arg(long)]
        pub allow_destroy: Option<String>,
        /// O_DIRECT: past the page cache, to the device
        #[key("bool", "`true`")]
        #[serde(default)]
        #[arg(long = "buffered", action = clap::ArgAction::SetFalse, help = "go through the page cache (no O_DIRECT)")]
        pub direct: Option<bool>,
        /// an fsync after every N writes of a job (not timed as an operation)
        #[key("integer ≥ 0", "`0` (never)")]
        #[serde(default)]
        #[arg(long)]
        pub fsync: Option<u64>,
        /// keep the file perflab laid out
        #[key("bool", "`false`")]
        #[serde(default)]
        #[arg(long)]
        pub keep: bool,
        /// `auto`: io_uring, else synchronous pread/pwrite with one thread per operation in flight (said in the result)
        #[key("`\"auto\"`, `\"io_uring\"` or `\"sync\"`", "`\"auto\"`")]
        #[serde(default)]
        #[arg(long, default_value = "auto")]
        pub engine: Option<String>,
        /// stop after this many measured operations over all jobs
        #[key("integer ≥ 1", "none (time-based)")]
        #[serde(default)]
        #[arg(long)]
        pub ops: Option<u64>,
    }
}

/// The access pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rw {
    Read,
    Write,
    RandRead,
    RandWrite,
    RandRw,
}

impl Rw {
    pub fn parse(s: &str) -> Result<Rw, String> {
        Ok(match s {
            "read" => Rw::Read,
            "write" => Rw::Write,
            "randread" => Rw::RandRead,
            "randwrite" => Rw::RandWrite,
            "randrw" => Rw::RandRw,
            _ => {
                return Err(format!(
                    "rw must be \"read\", \"write\", \"randread\", \"randwrite\" or \"randrw\", not \"{s}\""
                ))
            }
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Rw::Read => "read",
            Rw::Write => "write",
            Rw::RandRead => "randread",
            Rw::RandWrite => "randwrite",
            Rw::RandRw => "randrw",
        }
    }

    pub fn random(self) -> bool {
        matches!(self, Rw::RandRead | Rw::RandWrite | Rw::RandRw)
    }

    pub fn writes(self) -> bool {
        matches!(self, Rw::Write | Rw::RandWrite | Rw::RandRw)
    }

    pub fn reads(self) -> bool {
        matches!(self, Rw::Read | Rw::RandRead | Rw::RandRw)
    }
}

/// Which engine the run asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EngineChoice {
    Auto,
    IoUring,
    Sync,
}

/// Where the I/O goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// A regular file; `temp`: perflab makes it in a temporary directory of its own.
    File {
        path: PathBuf,
        temp: bool,
    },
    Device {
        path: PathBuf,
    },
}

impl Target {
    pub fn path(&self) -> &Path {
        match self {
            Target::File { path, .. } | Target::Device { path } => path,
        }
    }
}

/// Checked settings.
#[derive(Clone, Debug)]
pub struct Prepared {
    pub rw: Rw,
    /// % of operations that read (100 for read-only patterns, 0 for write-only).
    pub read_pct: f64,
    pub bs: u64,
    pub iodepth: usize,
    pub jobs: usize,
    pub size: u64,
    pub target: Target,
    pub direct: bool,
    pub fsync: u64,
    pub keep: bool,
    pub engine: EngineChoice,
    pub ops: Option<u64>,
    /// The slice of the whole load these jobs are (`perflab run --segment`): job `j` here is the
    /// whole load's job `segment.global(j)` of `whole_jobs`, with that job's offsets.
    pub segment: crate::model::Segment,
    pub whole_jobs: usize,
    /// The file system the target lives on (`ext4`, `tmpfs`, ...), as far as it is known.
    pub fs: String,
}

const DEFAULT_SIZE: u64 = 1 << 30;

/// Check the settings; the messages name the key first (`bs must be ...`).
pub fn prepare(c: &DiskConfig) -> anyhow::Result<Prepared> {
    let rw = Rw::parse(c.rw.as_deref().unwrap_or("randread")).map_err(usage)?;
    let read_pct = match (rw, c.mix) {
        (Rw::RandRw, m) => {
            let m = m.unwrap_or(50.0);
            if !(0.0..=100.0).contains(&m) {
                return Err(usage(format!("mix must be from 0 to 100 (% of operations that read), not {m}")));
            }
            m
        }
        (_, Some(_)) => return Err(usage(format!("mix applies only to rw = \"randrw\", not \"{}\"", rw.name()))),
        (r, None) if r.reads() => 100.0,
        _ => 0.0,
    };
    let bs = match &c.bs {
        Some(s) => size::parse(s, 0).map_err(|e| usage(e.replacen("size", "bs", 1)))?,
        None => 4096,
    };
    let direct = c.direct.unwrap_or(true);
    if bs == 0 || bs > 64 << 20 {
        return Err(usage(format!("bs must be from 512 bytes to 64M, not {bs}")));
    }
    if direct && bs % 512 != 0 {
        return Err(usage(format!("bs must be a multiple of 512 with direct I/O, not {bs}")));
    }
    let iodepth = bounded("iodepth", c.iodepth, 1, 4096)?;
    let jobs = bounded("jobs", c.jobs, 1, 256)?;
    let engine = match c.engine.as_deref().unwrap_or("auto") {
        "auto" => EngineChoice::Auto,
        "io_uring" => EngineChoice::IoUring,
        "sync" => EngineChoice::Sync,
        e => return Err(usage(format!("engine must be \"auto\", \"io_uring\" or \"sync\", not \"{e}\""))),
    };
    if engine == EngineChoice::Sync && iodepth * jobs > 1024 {
        return Err(usage(format!(
            "iodepth × jobs must be at most 1024 with engine = \"sync\" (a thread each), not {}",
            iodepth * jobs
        )));
    }
    if c.ops == Some(0) {
        return Err(usage("ops must be at least 1"));
    }
    let target = target(c.file.as_deref())?;
    if let Target::Device { path } = &target {
        let named = c.allow_destroy.as_deref().map(Path::new) == Some(path.as_path());
        if rw.writes() && !named {
            return Err(usage(format!(
                "file {} is a block device: writing to it destroys its data; say allow_destroy = \"{}\" to do it anyway",
                path.display(),
                path.display()
            )));
        }
    }
    let (fs, existing) = inspect(&target)?;
    let size = match (&c.size, &target) {
        (Some(s), _) => size::parse(s, 0).map_err(usage)?,
        (None, Target::Device { .. }) => existing,
        (None, _) => DEFAULT_SIZE,
    };
    let size = size / bs * bs;
    if size < bs {
        return Err(usage(format!("size must hold at least one block of bs = {bs} bytes")));
    }
    match &target {
        Target::Device { path } => {
            if size > existing {
                return Err(usage(format!(
                    "size {} is larger than the device {} ({})",
                    human(size),
                    path.display(),
                    human(existing)
                )));
            }
        }
        Target::File { path, .. } => {
            if c.allow_destroy.is_some() {
                return Err(usage(format!("allow_destroy names a block device; {} is not one", path.display())));
            }
            room(path, size.saturating_sub(existing), rw.writes() || existing < size)?;
        }
    }
    Ok(Prepared {
        rw,
        read_pct,
        bs,
        iodepth,
        jobs,
        size,
        target,
        direct,
        fsync: c.fsync.unwrap_or(0),
        keep: c.keep,
        engine,
        ops: c.ops,
        segment: crate::model::Segment::WHOLE,
        whole_jobs: jobs,
        fs,
    })
}

impl Prepared {
    /// Only `segment`'s slice: its share of the jobs (job `j` is segment `j mod N`'s) and of `ops`.
    pub fn segmented(&self, segment: crate::model::Segment) -> Result<Prepared, String> {
        let mut p = self.clone();
        let n = segment.share(self.jobs as u64) as usize;
        if n == 0 {
            return Err(format!(
                "{} jobs cannot be split into {} segments: each segment needs at least one",
                self.jobs, segment.count
            ));
        }
        if let Some(total) = self.ops {
            let k = segment.share(total);
            if k == 0 {
                return Err(format!(
                    "{total} operations cannot be split into {} segments: each segment needs at least one",
                    segment.count
                ));
            }
            p.ops = Some(k);
        }
        p.jobs = n;
        p.whole_jobs = self.jobs;
        p.segment = segment;
        Ok(p)
    }
}

fn bounded(key: &str, v: Option<u64>, min: u64, max: u64) -> anyhow::Result<usize> {
    match v {
        None => Ok(min as usize),
        Some(n) if (min..=max).contains(&n) => Ok(n as usize),
        Some(n) => Err(usage(format!("{key} must be from {min} to {max}, not {n}"))),
    }
}

fn target(file: Option<&str>) -> anyhow::Result<Target> {
    let Some(f) = file else {
        let dir = std::env::temp_dir().join(format!("perflab-disk-{}", std::process::id()));
        return Ok(Target::File {
            path: dir.join("data"),
            temp: true,
        });
    };
    if f.trim().is_empty() {
        return Err(usage("file must name a file or a block device, not \"\""));
    }
    let path = PathBuf::from(f);
    match std::fs::metadata(&path) {
        Ok(m) if m.file_type().is_block_device() => Ok(Target::Device { path }),
        Ok(m) if m.is_dir() => Err(usage(format!("file {f} is a directory: name a file in it"))),
        Ok(m) if !m.is_file() => Err(usage(format!("file {f} is neither a regular file nor a block device"))),
        _ => Ok(Target::File { path, temp: false }),
    }
}

/// The file system's name and the target's current length (0 when it does not exist yet).
fn inspect(t: &Target) -> anyhow::Result<(String, u64)> {
    let dir = existing_dir(t.path());
    let fs = fs_name(&dir);
    let len = match t {
        Target::Device { path } => device_len(path).map_err(|e| usage(format!("file {}: {e}", path.display())))?,
        Target::File { path, .. } => std::fs::metadata(path).map(|m| m.len()).unwrap_or(0),
    };
    Ok((fs, len))
}

/// The nearest directory that exists at or above the target's directory.
pub fn existing_dir(path: &Path) -> PathBuf {
    let mut d = path.parent().map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("."));
    if d.as_os_str().is_empty() {
        d = PathBuf::from(".");
    }
    while !d.exists() {
        match d.parent() {
            Some(p) if !p.as_os_str().is_empty() => d = p.to_path_buf(),
            _ => return PathBuf::from("."),
        }
    }
    d
}

fn device_len(path: &Path) -> std::io::Result<u64> {
    use std::io::{Seek, SeekFrom};
    std::fs::File::open(path)?.seek(SeekFrom::End(0))
}

fn statvfs(dir: &Path) -> Option<libc::statvfs> {
    let c = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).ok()?;
    // SAFETY: statvfs is a C struct of integers, for which all-zero bytes are a valid value.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a NUL-terminated path and `st` a valid, writable statvfs for the whole call.
    (unsafe { libc::statvfs(c.as_ptr(), &mut st) } == 0).then_some(st)
}

/// The name of the file system `dir` is on, from statfs's magic number.
pub fn fs_name(dir: &Path) -> String {
    let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()) else {
        return "unknown".into();
    };
    // SAFETY: statfs is a C struct of integers, for which all-zero bytes are a valid value.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a NUL-terminated path and `st` a valid, writable statfs for the whole call.
    if unsafe { libc::statfs(c.as_ptr(), &mut st) } != 0 {
        return "unknown".into();
    }
    match st.f_type as u64 {
        0xEF53 => "ext4".into(),
        0x0102_1994 => "tmpfs".into(),
        0x5846_5342 => "xfs".into(),
        0x9123_683E => "btrfs".into(),
        0x794C_7630 => "overlay".into(),
        0x6969 => "nfs".into(),
        0x2FC1_2FC1 => "zfs".into(),
        0x6462_6720 => "debugfs".into(),
        m => format!("0x{m:x}"),
    }
}

/// Refuse a location that is read-only or lacks `more` bytes of free space.
fn room(path: &Path, more: u64, write: bool) -> anyhow::Result<()> {
    let dir = existing_dir(path);
    let Some(st) = statvfs(&dir) else {
        return Err(usage(format!(
            "file {}: cannot read the file system of {}",
            path.display(),
            dir.display()
        )));
    };
    if write && st.f_flag & libc::ST_RDONLY != 0 {
        return Err(usage(format!(
            "file {}: {} is on a read-only file system",
            path.display(),
            dir.display()
        )));
    }
    let free = st.f_bavail * st.f_frsize;
    if more > free {
        return Err(usage(format!(
            "size: laying out {} more in {} needs more than its {} of free space; choose a smaller size or another file",
            human(more),
            dir.display(),
            human(free)
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bad(c: DiskConfig) -> String {
        format!("{:#}", prepare(&c).expect_err("refused"))
    }

    #[test]
    fn bad_settings_are_refused_with_the_key_first() {
        assert!(bad(DiskConfig {
            rw: Some("readwrite".into()),
            ..Default::default()
        })
        .starts_with("rw must be"));
        assert!(bad(DiskConfig {
            mix: Some(30.0),
            ..Default::default()
        })
        .starts_with("mix applies only"));
        let rw = Some("randrw".to_string());
        assert!(bad(DiskConfig {
            rw: rw.clone(),
            mix: Some(130.0),
            ..Default::default()
        })
        .starts_with("mix must be"));
        assert!(bad(DiskConfig {
            bs: Some(SizeSpec::Bytes(1000)),
            ..Default::default()
        })
        .starts_with("bs must be a multiple of 512"));
        assert!(bad(DiskConfig {
            iodepth: Some(0),
            ..Default::default()
        })
        .starts_with("iodepth must be from 1"));
        assert!(bad(DiskConfig {
            jobs: Some(1000),
            ..Default::default()
        })
        .starts_with("jobs must be"));
        assert!(bad(DiskConfig {
            engine: Some("aio".into()),
            ..Default::default()
        })
        .starts_with("engine must be"));
        assert!(bad(DiskConfig {
            size: Some(SizeSpec::Text("100T".into())),
            ..Default::default()
        })
        .starts_with("size: laying out"));
        let p = prepare(&DiskConfig {
            rw,
            size: Some(SizeSpec::Text("1M".into())),
            ..Default::default()
        })
        .expect("defaults");
        assert_eq!(
            (p.bs, p.iodepth, p.jobs, p.read_pct, p.direct, p.size),
            (4096, 1, 1, 50.0, true, 1 << 20)
        );
        assert!(matches!(p.target, Target::File { temp: true, .. }));
    }
}
