//! Sizes as a plan or the command line give them (bytes, `"512M"`, `"2G"`, `"75%"` of the memory
//! available), the memory the machine can give this process, and the last-level cache's size.

use std::path::Path;

/// A size as written: bytes or a text to parse.
#[derive(Clone, Debug, PartialEq, serde::Deserialize, serde::Serialize)]
#[serde(untagged)]
pub enum SizeSpec {
    Bytes(u64),
    Text(String),
}

impl SizeSpec {
    /// An option's value, as a plan's string is: read when the size is needed.
    pub fn from_arg(text: &str) -> Result<SizeSpec, String> {
        Ok(SizeSpec::Text(text.to_string()))
    }
}

/// The bytes `spec` means, given `available` bytes for a percentage. Messages start with `size`.
pub fn parse(spec: &SizeSpec, available: u64) -> Result<u64, String> {
    let text = match spec {
        SizeSpec::Bytes(n) => return Ok(*n),
        SizeSpec::Text(t) => t.trim(),
    };
    let bad = || {
        format!(
            "size \"{text}\": write bytes, a number with K, M, G or T (\"512M\", \"2G\") or a percentage of the available memory (\"75%\")"
        )
    };
    if let Some(p) = text.strip_suffix('%') {
        let p: f64 = p.trim().parse().map_err(|_| bad())?;
        if !(p > 0.0 && p <= 100.0) {
            return Err(format!("size \"{text}\": a percentage from above 0 to 100"));
        }
        return Ok((available as f64 * p / 100.0) as u64);
    }
    let upper = text.to_ascii_uppercase();
    let digits = upper.trim_end_matches(['B', 'I']);
    let (num, mult) = match digits.chars().last() {
        Some('K') => (&digits[..digits.len() - 1], 1u64 << 10),
        Some('M') => (&digits[..digits.len() - 1], 1 << 20),
        Some('G') => (&digits[..digits.len() - 1], 1 << 30),
        Some('T') => (&digits[..digits.len() - 1], 1 << 40),
        _ => (digits, 1),
    };
    let n: f64 = num.trim().parse().map_err(|_| bad())?;
    if !n.is_finite() || n < 0.0 {
        return Err(bad());
    }
    Ok((n * mult as f64) as u64)
}

/// Bytes this process can still get: `MemAvailable` of /proc/meminfo, less when its cgroup (v2) has
/// a lower `memory.max` than it uses plus that.
pub fn available() -> u64 {
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let avail = meminfo_kib(&meminfo, "MemAvailable").unwrap_or(0) * 1024;
    let cg = cgroup_room(
        Path::new("/sys/fs/cgroup"),
        &std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default(),
    );
    cg.map_or(avail, |room| room.min(avail))
}

/// A field of /proc/meminfo, in KiB.
pub fn meminfo_kib(meminfo: &str, field: &str) -> Option<u64> {
    meminfo
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
}

/// cgroup v2: `memory.max - memory.current` of this process's cgroup, when it has a limit.
fn cgroup_room(root: &Path, self_cgroup: &str) -> Option<u64> {
    let rel = self_cgroup.lines().find_map(|l| l.strip_prefix("0::"))?;
    let dir = root.join(rel.trim_start_matches('/'));
    let max: u64 = std::fs::read_to_string(dir.join("memory.max")).ok()?.trim().parse().ok()?;
    let cur: u64 = std::fs::read_to_string(dir.join("memory.current")).ok()?.trim().parse().ok()?;
    Some(max.saturating_sub(cur))
}

/// The largest cache of the highest level CPU 0 has (sysfs), in bytes; None when sysfs says nothing.
pub fn last_level_cache() -> Option<u64> {
    let dir = Path::new("/sys/devices/system/cpu/cpu0/cache");
    let mut best: Option<(u32, u64)> = None;
    for e in std::fs::read_dir(dir).ok()?.flatten() {
        let read = |f: &str| std::fs::read_to_string(e.path().join(f)).ok().map(|s| s.trim().to_string());
        let (Some(level), Some(size), Some(ty)) = (read("level"), read("size"), read("type")) else {
            continue;
        };
        if ty == "Instruction" {
            continue;
        }
        let (Ok(level), Ok(bytes)) = (level.parse::<u32>(), parse(&SizeSpec::Text(size), 0)) else {
            continue;
        };
        if best.is_none_or(|b| (level, bytes) > b) {
            best = Some((level, bytes));
        }
    }
    best.map(|b| b.1)
}

/// `1.5 GiB`, `512 MiB`, `64 KiB`.
pub fn human(bytes: u64) -> String {
    let b = bytes as f64;
    if b >= (1u64 << 30) as f64 {
        format!("{:.2} GiB", b / (1u64 << 30) as f64)
    } else if b >= (1u64 << 20) as f64 {
        format!("{:.1} MiB", b / (1u64 << 20) as f64)
    } else {
        format!("{:.0} KiB", b / 1024.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_as_written() {
        let t = |s: &str| parse(&SizeSpec::Text(s.into()), 1000);
        assert_eq!(parse(&SizeSpec::Bytes(4096), 0), Ok(4096));
        assert_eq!(t("2G"), Ok(2 << 30));
        assert_eq!(t("512M"), Ok(512 << 20));
        assert_eq!(t("512MiB"), Ok(512 << 20));
        assert_eq!(t("32K"), Ok(32 << 10));
        assert_eq!(t("1.5G"), Ok(3 << 29));
        assert_eq!(t("75%"), Ok(750));
        assert!(t("lots").unwrap_err().starts_with("size \"lots\""));
        assert!(t("0%").is_err());
        assert!(t("-1G").is_err());
        assert_eq!(meminfo_kib("MemTotal: 10 kB\nMemAvailable:    7 kB\n", "MemAvailable"), Some(7));
    }

    #[test]
    fn a_cgroup_limit_leaves_its_room() {
        let tmp = tempfile::tempdir().expect("tmp");
        let d = tmp.path().join("a/b");
        std::fs::create_dir_all(&d).expect("dir");
        std::fs::write(d.join("memory.max"), "1000\n").expect("max");
        std::fs::write(d.join("memory.current"), "300\n").expect("cur");
        assert_eq!(cgroup_room(tmp.path(), "0::/a/b\n"), Some(700));
        std::fs::write(d.join("memory.max"), "max\n").expect("max");
        assert_eq!(cgroup_room(tmp.path(), "0::/a/b\n"), None);
    }
}
