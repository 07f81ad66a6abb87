//! The files the system sampler reads every tick. On the live system each one is opened once and
//! read again from offset 0 with `pread` (a `/proc` or `/sys` file read from offset 0 shows its
//! current content): two system calls a file per tick instead of four, into one reused buffer.
//! What never changes between ticks (whether a disk is a whole disk, where the temperature
//! sensors are) is looked up once. Any other root (captured snapshots) is read afresh each time.

use std::collections::HashMap;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// Where the files are read from (`/` live, a fixture directory in tests).
#[derive(Clone, Debug)]
pub struct Root(pub PathBuf);

impl Root {
    pub fn live() -> Root {
        Root(PathBuf::from("/"))
    }
    /// The whole file, read in large chunks: a `/proc` file has no size, and `read_to_string`
    /// would start with small probing reads (six system calls for a 2 KiB file instead of two).
    pub fn read(&self, rel: &str) -> Option<String> {
        use std::io::Read;
        let mut f = std::fs::File::open(self.0.join(rel)).ok()?;
        let mut buf = vec![0u8; 8192];
        let mut len = 0;
        loop {
            if len == buf.len() {
                buf.resize(buf.len() * 2, 0);
            }
            match f.read(&mut buf[len..]) {
                Ok(0) => break,
                Ok(n) => len += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return None,
            }
        }
        buf.truncate(len);
        String::from_utf8(buf).ok()
    }
    pub fn path(&self, rel: &str) -> PathBuf {
        self.0.join(rel)
    }
}

pub struct Files {
    root: Root,
    /// Keep files open and remember lookups (the live `/` only).
    keep: bool,
    open: HashMap<&'static str, File>,
    buf: Vec<u8>,
    /// Disk name → it has a `/sys/block/NAME` entry (a whole disk).
    whole: HashMap<String, bool>,
    /// The temperature sensors found at the first read: (column, file).
    sensors: Option<Vec<(String, File)>>,
}

impl Files {
    pub fn new(root: Root) -> Files {
        let keep = root.0 == Path::new("/");
        Files {
            root,
            keep,
            open: HashMap::new(),
            buf: Vec::new(),
            whole: HashMap::new(),
            sensors: None,
        }
    }

    pub fn root(&self) -> &Root {
        &self.root
    }

    /// `f` over the current text of `rel` (None: it cannot be read).
    pub fn with<T>(&mut self, rel: &'static str, f: impl FnOnce(&str) -> T) -> Option<T> {
        if !self.keep {
            return self.root.read(rel).map(|t| f(&t));
        }
        if !self.open.contains_key(rel) {
            let file = File::open(self.root.path(rel)).ok()?;
            self.open.insert(rel, file);
        }
        let Some(n) = read_from_start(&self.open[rel], &mut self.buf) else {
            // Opened again at the next tick.
            self.open.remove(rel);
            return None;
        };
        std::str::from_utf8(&self.buf[..n]).ok().map(f)
    }

    /// Whether `name` (a `/proc/diskstats` device) is a whole disk (`/sys/block/NAME` exists).
    pub fn whole_disk(&mut self, name: &str) -> bool {
        if let Some(w) = self.whole.get(name) {
            return *w;
        }
        let w = self.root.path(&format!("sys/block/{name}")).exists();
        if self.keep {
            self.whole.insert(name.to_string(), w);
        }
        w
    }

    /// Every temperature sensor's reading, in °C: (column, value). The sensors are found once
    /// on the live system.
    pub fn temperatures(&mut self) -> Vec<(String, f64)> {
        if self.sensors.is_none() || !self.keep {
            self.sensors = Some(sensors(&self.root));
        }
        let buf = &mut self.buf;
        let out = self
            .sensors
            .iter()
            .flatten()
            .filter_map(|(c, f)| Some((c.clone(), celsius(f, buf)?)))
            .collect();
        if !self.keep {
            self.sensors = None;
        }
        out
    }
}

/// The whole file from offset 0 into `buf`: its length.
fn read_from_start(file: &File, buf: &mut Vec<u8>) -> Option<usize> {
    if buf.is_empty() {
        buf.resize(16 * 1024, 0);
    }
    let mut len = 0;
    loop {
        if len == buf.len() {
            buf.resize(buf.len() * 2, 0);
        }
        match file.read_at(&mut buf[len..], len as u64) {
            Ok(0) => return Some(len),
            Ok(n) => len += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
}

/// A sensor file's millidegrees as °C.
fn celsius(f: &File, buf: &mut Vec<u8>) -> Option<f64> {
    let n = read_from_start(f, buf)?;
    let mc: f64 = std::str::from_utf8(&buf[..n]).ok()?.trim().parse().ok()?;
    Some(mc / 1000.0)
}

/// The thermal zones' and hwmon chips' temperature inputs, in name order: (column, open file).
fn sensors(root: &Root) -> Vec<(String, File)> {
    let mut out = Vec::new();
    for dir in read_dir(&root.path("sys/class/thermal")) {
        let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if !name.starts_with("thermal_zone") {
            continue;
        }
        let kind = std::fs::read_to_string(dir.join("type"))
            .map(|t| t.trim().to_string())
            .unwrap_or(name.clone());
        if let Ok(f) = File::open(dir.join("temp")) {
            out.push((format!("temp_{}_c", clean(&kind)), f));
        }
    }
    for dir in read_dir(&root.path("sys/class/hwmon")) {
        let chip = std::fs::read_to_string(dir.join("name"))
            .map(|t| t.trim().to_string())
            .unwrap_or_default();
        for f in read_dir(&dir) {
            let fname = f.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            if let Some(idx) = fname.strip_prefix("temp").and_then(|r| r.strip_suffix("_input")) {
                if let Ok(file) = File::open(&f) {
                    out.push((format!("temp_{}_{}_c", clean(&chip), idx), file));
                }
            }
        }
    }
    out
}

fn read_dir(p: &Path) -> Vec<std::path::PathBuf> {
    let mut v: Vec<std::path::PathBuf> = std::fs::read_dir(p).into_iter().flatten().flatten().map(|e| e.path()).collect();
    v.sort();
    v
}

fn clean(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '_' })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_file_read_again_shows_its_current_content_and_a_large_one_whole() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        std::fs::write(&p, "one\n").unwrap();
        let f = File::open(&p).unwrap();
        let mut buf = Vec::new();
        let n = read_from_start(&f, &mut buf).unwrap();
        assert_eq!(&buf[..n], b"one\n");
        let big = "x".repeat(40_000);
        std::fs::write(&p, &big).unwrap();
        let n = read_from_start(&f, &mut buf).unwrap();
        assert_eq!(&buf[..n], big.as_bytes());
        std::fs::write(&p, "two\n").unwrap();
        let n = read_from_start(&f, &mut buf).unwrap();
        assert_eq!(&buf[..n], b"two\n");
    }

    #[test]
    fn live_proc_files_read_again_from_the_start() {
        let mut files = Files::new(Root::live());
        let a = files.with("proc/uptime", |t| t.split_ascii_whitespace().next().map(str::to_string));
        std::thread::sleep(std::time::Duration::from_millis(30));
        let b = files.with("proc/uptime", |t| t.split_ascii_whitespace().next().map(str::to_string));
        let (a, b): (f64, f64) = (a.flatten().unwrap().parse().unwrap(), b.flatten().unwrap().parse().unwrap());
        assert!(b > a, "uptime moved on: {a} then {b}");
        assert!(files.open.contains_key("proc/uptime"), "kept open");
        assert!(files.with("proc/no-such-file", |_| ()).is_none());
    }
}
