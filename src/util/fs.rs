//! Files that are either whole or absent: written under a temporary name in the same directory and
//! renamed into place, the temporary file removed on any error. A full disk leaves no empty or
//! half-written report, chart or record behind.
//!
//! And files a user names (a plan, a request body, a CA certificate), read without trusting them to
//! be small: a device such as `/dev/zero` or a huge file is refused instead of filling memory.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// The hidden temporary name `path` is written under: `.NAME.tmp-PID` beside it.
fn temp_name(path: &Path) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    path.with_file_name(format!(".{name}.tmp-{}", std::process::id()))
}

/// Write `bytes` to `path` whole or not at all.
pub fn write_atomic(path: &Path, bytes: impl AsRef<[u8]>) -> std::io::Result<()> {
    let mut f = AtomicFile::create(path)?;
    f.write_all(bytes.as_ref())?;
    f.commit()
}

/// A file being written under a temporary name; [`AtomicFile::commit`] renames it into place, and
/// dropping it uncommitted removes it.
pub struct AtomicFile {
    file: Option<std::io::BufWriter<std::fs::File>>,
    temp: PathBuf,
    path: PathBuf,
}

impl AtomicFile {
    pub fn create(path: &Path) -> std::io::Result<AtomicFile> {
        let temp = temp_name(path);
        let file = std::fs::File::create(&temp)?;
        Ok(AtomicFile {
            file: Some(std::io::BufWriter::new(file)),
            temp,
            path: path.to_path_buf(),
        })
    }

    /// Flush what is buffered and rename the file to its real name.
    pub fn commit(mut self) -> std::io::Result<()> {
        let Some(file) = self.file.take() else {
            return Ok(());
        };
        // Written out before the rename; on an error `Drop` removes the temporary file.
        file.into_inner().map_err(|e| e.into_error())?;
        std::fs::rename(&self.temp, &self.path)
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self.file.as_mut() {
            Some(f) => f.write(buf),
            None => Err(std::io::Error::other("file already committed")),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self.file.as_mut() {
            Some(f) => f.flush(),
            None => Ok(()),
        }
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        // Uncommitted, or the rename failed: the temporary file must not stay behind.
        drop(self.file.take());
        if self.temp.exists() {
            let _ = std::fs::remove_file(&self.temp);
        }
    }
}

/// The bytes of the regular file at `path`, refused when it is larger than `max` bytes (also when
/// it grows while being read). The error is a sentence about the file, for a one-line message.
pub fn read_bounded(path: &Path, max: u64) -> Result<Vec<u8>, String> {
    let meta = std::fs::metadata(path).map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    if meta.len() > max {
        return Err(format!("larger than {} MiB", max >> 20));
    }
    let f = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut out = Vec::with_capacity(meta.len() as usize);
    f.take(max + 1).read_to_end(&mut out).map_err(|e| e.to_string())?;
    if out.len() as u64 > max {
        return Err(format!("larger than {} MiB", max >> 20));
    }
    Ok(out)
}

/// Whether a file the user names for perflab to write (`--csv`, `--hdr-log`, ...) can be: not a
/// directory, not a kernel interface (`/proc`, `/sys`: writing there changes settings or fails
/// once the work is done), writable if it exists, else its directory exists and is writable.
/// Nothing is created. The error is a reason, for `cannot write PATH: REASON`.
pub fn check_output(p: &Path) -> Result<(), String> {
    if p.as_os_str() == "-" {
        return Ok(());
    }
    let dir = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        return Err(format!("no such directory {}", dir.display()));
    }
    if let Some(kind) = kernel_fs(dir) {
        return Err(format!("{} is the kernel's {kind}, not a place for data", dir.display()));
    }
    match std::fs::metadata(p) {
        Ok(m) if m.is_dir() => return Err("it is a directory".into()),
        Ok(_) => {
            return std::fs::OpenOptions::new()
                .append(true)
                .open(p)
                .map(|_| ())
                .map_err(|e| e.to_string())
        }
        Err(_) => {}
    }
    let c = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).map_err(|e| e.to_string())?;
    // SAFETY: `c` is a NUL-terminated string that lives until the end of the function; access(2)
    // only reads it.
    if unsafe { libc::access(c.as_ptr(), libc::W_OK) } != 0 {
        return Err(format!("directory {} is not writable", dir.display()));
    }
    Ok(())
}

/// `proc` or `sysfs` when `dir` is on one of the kernel's interface file systems.
fn kernel_fs(dir: &Path) -> Option<&'static str> {
    let c = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).ok()?;
    // SAFETY: statfs is a C struct of integers, for which all-zero bytes are a valid value.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a NUL-terminated path and `st` a valid, writable statfs for the whole call.
    if unsafe { libc::statfs(c.as_ptr(), &mut st) } != 0 {
        return None;
    }
    match st.f_type as i64 {
        0x9fa0 => Some("/proc"),
        0x6265_6572 => Some("/sys"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_committed_file_has_its_bytes_and_an_abandoned_one_leaves_nothing() {
        let dir = tempfile::tempdir().expect("tmp");
        let p = dir.path().join("a.txt");
        write_atomic(&p, "hello").expect("write");
        assert_eq!(std::fs::read_to_string(&p).expect("read"), "hello");
        let mut f = AtomicFile::create(&dir.path().join("b.txt")).expect("create");
        f.write_all(b"half").expect("write");
        drop(f);
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .expect("list")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["a.txt"]);
    }

    #[test]
    fn a_rename_that_fails_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().expect("tmp");
        // A directory where the file should go: the rename fails.
        std::fs::create_dir(dir.path().join("c.txt")).expect("mkdir");
        assert!(write_atomic(&dir.path().join("c.txt"), "x").is_err());
        let n = std::fs::read_dir(dir.path()).expect("list").count();
        assert_eq!(n, 1, "only the directory that was there");
    }

    #[test]
    fn devices_and_big_files_are_not_read() {
        assert_eq!(read_bounded(Path::new("/dev/zero"), 1 << 20), Err("not a regular file".into()));
        let dir = tempfile::tempdir().expect("tmp");
        let p = dir.path().join("big");
        std::fs::write(&p, vec![b'x'; 3 << 20]).expect("write");
        assert!(read_bounded(&p, 1 << 20).expect_err("too big").contains("larger than 1 MiB"));
        assert_eq!(read_bounded(&p, 4 << 20).expect("read").len(), 3 << 20);
    }

    #[test]
    fn outputs_are_checked_before_anything_is_written() {
        let dir = tempfile::tempdir().expect("tmp");
        assert_eq!(check_output(&dir.path().join("new.csv")), Ok(()));
        assert_eq!(check_output(dir.path()), Err("it is a directory".into()));
        assert!(check_output(&dir.path().join("no/such.csv"))
            .expect_err("no dir")
            .starts_with("no such directory"));
        assert!(check_output(Path::new("/proc/version")).expect_err("procfs").contains("kernel"));
        assert!(check_output(Path::new("/sys/kernel/x")).expect_err("sysfs").contains("kernel"));
        assert_eq!(check_output(Path::new("-")), Ok(()));
        assert!(!dir.path().join("new.csv").exists(), "nothing is created");
    }
}
