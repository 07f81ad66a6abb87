//! Reading files a user names (a plan, a request body, a CA certificate) without trusting them to be
//! small: a device such as `/dev/zero` or a huge file is refused instead of filling memory.

use std::io::Read;
use std::path::Path;

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

#[cfg(test)]
mod tests {
    use super::read_bounded;
    use std::path::Path;

    #[test]
    fn devices_and_big_files_are_refused() {
        assert_eq!(read_bounded(Path::new("/dev/zero"), 1 << 20), Err("not a regular file".into()));
        let dir = std::env::temp_dir().join(format!("perflab-read-bounded-{}", std::process::id()));
        std::fs::write(&dir, vec![b'x'; 3 << 20]).unwrap();
        assert!(read_bounded(&dir, 1 << 20).unwrap_err().contains("larger than 1 MiB"));
        assert_eq!(read_bounded(&dir, 4 << 20).unwrap().len(), 3 << 20);
        std::fs::remove_file(&dir).unwrap();
    }
}
