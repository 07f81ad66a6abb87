//! CPU sets: `cpus = 2` (a count) or `cpus = [0, 1]` / `"0-1,3"` (a list), checked against this machine.

/// A CPU request from a plan.
#[derive(Clone, Debug, PartialEq)]
pub enum CpuSpec {
    Count(usize),
    List(Vec<usize>),
}

impl CpuSpec {
    /// The concrete CPUs to use on this machine, or why it cannot be honoured.
    pub fn resolve(&self) -> Result<Vec<usize>, String> {
        let online = online_cpus();
        match self {
            CpuSpec::Count(0) => Err("cpus = 0 asks for no CPU at all".into()),
            CpuSpec::Count(n) if *n > online.len() => Err(format!(
                "cpus = {n} cannot be honoured: this machine has {} online CPU(s) ({})",
                online.len(),
                format_cpu_list(&online)
            )),
            CpuSpec::Count(n) => Ok(online[..*n].to_vec()),
            CpuSpec::List(l) if l.is_empty() => Err("cpus = [] asks for no CPU at all".into()),
            CpuSpec::List(l) => match l.iter().find(|c| !online.contains(c)) {
                Some(c) => Err(format!("CPU {c} is not online here (online: {})", format_cpu_list(&online))),
                None => Ok(l.clone()),
            },
        }
    }
}

/// The online CPUs, from `/sys/devices/system/cpu/online` (falls back to 0..available_parallelism).
pub fn online_cpus() -> Vec<usize> {
    std::fs::read_to_string("/sys/devices/system/cpu/online")
        .ok()
        .and_then(|s| parse_cpu_list(s.trim()).ok())
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| (0..std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)).collect())
}

/// The highest CPU number Linux can have (`NR_CPUS` is at most 8192).
pub const MAX_CPU: usize = 8191;

/// Parse a kernel CPU list such as `0-1,3`.
pub fn parse_cpu_list(s: &str) -> Result<Vec<usize>, String> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        if let Some((a, b)) = part.split_once('-') {
            let a: usize = a.trim().parse().map_err(|_| format!("bad CPU list '{s}'"))?;
            let b: usize = b.trim().parse().map_err(|_| format!("bad CPU list '{s}'"))?;
            if a > b {
                return Err(format!("bad CPU range '{part}'"));
            }
            if b > MAX_CPU {
                return Err(format!("bad CPU range '{part}': CPU numbers end at {MAX_CPU}"));
            }
            out.extend(a..=b);
        } else {
            out.push(part.parse().map_err(|_| format!("bad CPU list '{s}'"))?);
        }
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

pub fn format_cpu_list(cpus: &[usize]) -> String {
    cpus.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lists() {
        assert_eq!(parse_cpu_list("0-1,3").unwrap(), vec![0, 1, 3]);
        assert_eq!(parse_cpu_list("2").unwrap(), vec![2]);
        assert!(parse_cpu_list("1-0").is_err());
        assert_eq!(
            parse_cpu_list("0-99999999999"),
            Err("bad CPU range '0-99999999999': CPU numbers end at 8191".into())
        );
    }

    #[test]
    fn too_many_cpus_is_refused() {
        let n = online_cpus().len();
        assert!(CpuSpec::Count(n + 2).resolve().unwrap_err().contains("cannot be honoured"));
        assert_eq!(CpuSpec::Count(1).resolve().unwrap().len(), 1);
    }
}
