//! Pure parsers over the text of /proc and /sys files, so that captured snapshots test them.

use std::collections::BTreeMap;

/// `/proc/stat`: the `cpu` lines and the scalar counters.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stat {
    /// `("cpu", fields)` for the total, then `("cpu0", ...)`: user nice system idle iowait irq softirq
    /// steal guest guest_nice (missing trailing fields are 0).
    pub cpus: Vec<(String, [u64; 10])>,
    pub ctxt: Option<u64>,
    pub intr: Option<u64>,
    pub processes: Option<u64>,
    pub procs_running: Option<u64>,
    pub procs_blocked: Option<u64>,
}

pub fn stat(text: &str) -> Stat {
    let mut s = Stat::default();
    for line in text.lines() {
        let mut it = line.split_ascii_whitespace();
        let Some(key) = it.next() else { continue };
        if key.starts_with("cpu") {
            let mut f = [0u64; 10];
            for (slot, v) in f.iter_mut().zip(it) {
                *slot = v.parse().unwrap_or(0);
            }
            s.cpus.push((key.to_string(), f));
            continue;
        }
        let first = it.next().and_then(|v| v.parse().ok());
        match key {
            "ctxt" => s.ctxt = first,
            "intr" => s.intr = first,
            "processes" => s.processes = first,
            "procs_running" => s.procs_running = first,
            "procs_blocked" => s.procs_blocked = first,
            _ => {}
        }
    }
    s
}

/// `key: value [kB]` files (`/proc/meminfo`, `/proc/PID/status`); values as written (kB for meminfo).
pub fn colon_kv(text: &str) -> BTreeMap<String, u64> {
    text.lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(':')?;
            Some((k.trim().to_string(), v.split_ascii_whitespace().next()?.parse().ok()?))
        })
        .collect()
}

/// `colon_kv` keeping only `keys` (no allocation for the others).
pub fn colon_kv_only(text: &str, keys: &[&str]) -> BTreeMap<String, u64> {
    text.lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(':')?;
            let k = k.trim();
            if !keys.contains(&k) {
                return None;
            }
            Some((k.to_string(), v.split_ascii_whitespace().next()?.parse().ok()?))
        })
        .collect()
}

/// Free pages held in the per-CPU page lists (`/proc/zoneinfo`, the `count:` lines of every zone's
/// `pagesets`). MemFree leaves them out; on 6.x kernels they can hold hundreds of MB.
pub fn zoneinfo_pcp_pages(text: &str) -> Option<u64> {
    let mut sum = None;
    for l in text.lines() {
        if let Some(v) = l.trim_start().strip_prefix("count:") {
            if let Ok(n) = v.trim().parse::<u64>() {
                sum = Some(sum.unwrap_or(0) + n);
            }
        }
    }
    sum
}

/// `key value` files (`/proc/vmstat`).
pub fn space_kv(text: &str) -> BTreeMap<String, u64> {
    text.lines()
        .filter_map(|l| {
            let mut it = l.split_ascii_whitespace();
            Some((it.next()?.to_string(), it.next()?.parse().ok()?))
        })
        .collect()
}

/// `space_kv` keeping only `keys` (no allocation for the others).
pub fn space_kv_only(text: &str, keys: &[&str]) -> BTreeMap<String, u64> {
    text.lines()
        .filter_map(|l| {
            let mut it = l.split_ascii_whitespace();
            let k = it.next()?;
            if !keys.contains(&k) {
                return None;
            }
            Some((k.to_string(), it.next()?.parse().ok()?))
        })
        .collect()
}

/// `/proc/loadavg`: the three load averages.
pub fn loadavg(text: &str) -> Option<[f64; 3]> {
    let v: Vec<f64> = text.split_ascii_whitespace().take(3).filter_map(|x| x.parse().ok()).collect();
    (v.len() == 3).then(|| [v[0], v[1], v[2]])
}

/// One line of `/proc/diskstats`: the device name and its first 11 counters (reads, read merges,
/// sectors read, read ms, writes, write merges, sectors written, write ms, in flight, io ms,
/// weighted io ms).
#[derive(Clone, Debug, PartialEq)]
pub struct DiskLine {
    pub name: String,
    pub f: [u64; 11],
}

pub fn diskstats(text: &str) -> Vec<DiskLine> {
    text.lines()
        .filter_map(|l| {
            let v: Vec<&str> = l.split_ascii_whitespace().collect();
            if v.len() < 14 {
                return None;
            }
            let mut f = [0u64; 11];
            for (slot, x) in f.iter_mut().zip(&v[3..14]) {
                *slot = x.parse().ok()?;
            }
            Some(DiskLine { name: v[2].to_string(), f })
        })
        .collect()
}

/// One interface of `/proc/net/dev`: rx bytes, packets, errs, drop, then tx bytes, packets, errs, drop.
#[derive(Clone, Debug, PartialEq)]
pub struct NetLine {
    pub name: String,
    pub rx: [u64; 4],
    pub tx: [u64; 4],
}

pub fn net_dev(text: &str) -> Vec<NetLine> {
    text.lines()
        .filter_map(|l| {
            let (name, rest) = l.split_once(':')?;
            let v: Vec<u64> = rest.split_ascii_whitespace().filter_map(|x| x.parse().ok()).collect();
            if v.len() < 16 {
                return None;
            }
            Some(NetLine {
                name: name.trim().to_string(),
                rx: [v[0], v[1], v[2], v[3]],
                tx: [v[8], v[9], v[10], v[11]],
            })
        })
        .collect()
}

/// `/proc/net/snmp`'s `Tcp:` header and value lines as a map.
pub fn snmp_tcp(text: &str) -> BTreeMap<String, i64> {
    let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("Tcp:")).collect();
    if lines.len() < 2 {
        return BTreeMap::new();
    }
    let names = lines[0].split_ascii_whitespace().skip(1);
    let values = lines[1].split_ascii_whitespace().skip(1).map(|v| v.parse::<i64>().unwrap_or(0));
    names.map(str::to_string).zip(values).collect()
}

/// `/proc/pressure/<res>`: (`some` | `full`) → (avg10, total µs).
pub fn pressure(text: &str) -> Vec<(String, f64, u64)> {
    text.lines()
        .filter_map(|l| {
            let mut it = l.split_ascii_whitespace();
            let kind = it.next()?.to_string();
            let mut avg10 = None;
            let mut total = None;
            for kv in it {
                match kv.split_once('=') {
                    Some(("avg10", v)) => avg10 = v.parse().ok(),
                    Some(("total", v)) => total = v.parse().ok(),
                    _ => {}
                }
            }
            Some((kind, avg10?, total?))
        })
        .collect()
}

/// `/proc/PID/stat` fields after the command name: (ppid, utime, stime, threads, starttime, rss pages).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PidStat {
    pub ppid: i32,
    pub utime: u64,
    pub stime: u64,
    pub threads: u64,
    pub starttime: u64,
    pub rss_pages: u64,
}

pub fn pid_stat(text: &str) -> Option<PidStat> {
    let rest = &text[text.rfind(')')? + 1..];
    let v: Vec<&str> = rest.split_ascii_whitespace().collect();
    // rest[0] is the state (field 3); field N is v[N - 3].
    let f = |n: usize| v.get(n - 3).and_then(|x| x.parse::<u64>().ok());
    Some(PidStat {
        ppid: v.get(1)?.parse().ok()?,
        utime: f(14)?,
        stime: f(15)?,
        threads: f(20)?,
        starttime: f(22)?,
        rss_pages: f(24)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_stat_lines() {
        let s = stat("cpu  10 1 5 100 2 0 1 3 0 0\ncpu0 5 0 2 50 1 0 0 1 0 0\nctxt 99\nprocs_running 3\nintr 7 1 2\n");
        assert_eq!(s.cpus.len(), 2);
        assert_eq!(s.cpus[0].1[3], 100);
        assert_eq!((s.ctxt, s.intr, s.procs_running), (Some(99), Some(7), Some(3)));
    }

    #[test]
    fn pid_stat_with_spaces_in_the_name() {
        let line = "42 (a b) c) S 1 42 42 0 -1 4194560 100 0 0 0 7 3 0 0 20 0 4 0 5000 1000 250 18446744073709551615";
        let p = pid_stat(line).expect("parses");
        assert_eq!(
            (p.ppid, p.utime, p.stime, p.threads, p.starttime, p.rss_pages),
            (1, 7, 3, 4, 5000, 250)
        );
    }

    #[test]
    fn net_snmp_and_pressure() {
        let n = net_dev("Inter-|\n face |bytes\n  lo: 100 2 0 0 0 0 0 0 100 2 0 0 0 0 0 0\n");
        assert_eq!(n[0].name, "lo");
        assert_eq!((n[0].rx[0], n[0].tx[1]), (100, 2));
        let t = snmp_tcp("Tcp: RtoAlgorithm RetransSegs CurrEstab\nTcp: 1 77 5\n");
        assert_eq!(t.get("RetransSegs"), Some(&77));
        let p = pressure("some avg10=1.50 avg60=0.00 avg300=0.00 total=1234\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=5\n");
        assert_eq!(p[0], ("some".to_string(), 1.5, 1234));
    }
}
