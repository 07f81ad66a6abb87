//! `perf script` read back into samples, the samples outside the window dropped, and the rest
//! folded into stacks by inferno's perf collapser, once weighed in samples and once in time.

use crate::model::{FoldedStack, Profile};
use anyhow::{anyhow, Context};
use inferno::collapse::Collapse;
use std::collections::BTreeMap;
use std::io::BufRead;
use std::path::Path;
use std::process::{Command, Stdio};

/// One sample (or traced event) as `perf script` prints it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Block {
    pub comm: String,
    pub pid: i32,
    pub tid: i32,
    /// CLOCK_MONOTONIC seconds.
    pub time: f64,
    pub period: u64,
    pub event: String,
    /// What follows the event's name on its line (a tracepoint's fields).
    pub trace: String,
    /// The stack lines as printed (`addr symbol (dso)`), innermost first.
    pub stack: Vec<String>,
}

/// The samples of `data`, as `perf script -F <fields>` prints them (`fields` must include comm,
/// pid, tid, time, event, ip, sym and dso).
pub fn script(data: &Path, fields: &str) -> anyhow::Result<Vec<Block>> {
    let mut child = Command::new("perf")
        .args(["script", "--no-inline", "-F", fields, "-i"])
        .arg(data)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("cannot start perf script")?;
    let out = child.stdout.take().ok_or_else(|| anyhow!("perf script has no output"))?;
    let mut blocks = Vec::new();
    let mut cur: Option<Block> = None;
    for line in std::io::BufReader::new(out).lines() {
        let line = line?;
        if line.trim().is_empty() {
            blocks.extend(cur.take());
        } else if let Some(h) = header(&line) {
            // A new event (its command name may be right-aligned: the line starts with spaces).
            blocks.extend(cur.replace(h));
        } else if let Some(b) = cur.as_mut() {
            b.stack.push(line.trim().to_string());
        }
    }
    blocks.extend(cur);
    let mut err = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = std::io::Read::read_to_string(&mut e, &mut err);
    }
    let status = child.wait()?;
    if !status.success() && blocks.is_empty() {
        let why = err.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("it printed nothing");
        return Err(anyhow!("perf script failed: {}", why.trim()));
    }
    Ok(blocks)
}

/// `comm pid/tid time: [period] event: [trace]`; the command name may hold spaces.
fn header(line: &str) -> Option<Block> {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| {
        regex::Regex::new(r"^\s*(.+?)\s+(\d+)/(\d+)\s+(?:\[\d+\]\s+)?(\d+\.\d+):\s+(?:(\d+)\s+)?([^\s:]+(?::[^\s:]+)?):\s*(.*)$")
            .expect("the header pattern")
    });
    let c = re.captures(line)?;
    Some(Block {
        comm: c[1].to_string(),
        pid: c[2].parse().ok()?,
        tid: c[3].parse().ok()?,
        time: c[4].parse().ok()?,
        period: c.get(5).and_then(|m| m.as_str().parse().ok()).unwrap_or(1),
        event: c[6].to_string(),
        trace: c[7].to_string(),
        stack: Vec::new(),
    })
}

/// Fold the blocks, each weighed by its `ns` (and counted once in samples), into stacks in name
/// order; inferno names the frames (`[unknown]` for one without a symbol, `_[k]` after a kernel
/// function, the command as the root).
pub fn fold(weighted: &[(&Block, u64)]) -> anyhow::Result<Vec<FoldedStack>> {
    let by_samples = collapse(weighted.iter().map(|(b, _)| (*b, 1)))?;
    let by_time = collapse(weighted.iter().map(|(b, ns)| (*b, *ns)))?;
    let mut merged: BTreeMap<String, FoldedStack> = BTreeMap::new();
    for (stack, n) in by_samples {
        merged
            .entry(stack.clone())
            .or_insert_with(|| FoldedStack {
                stack,
                ..Default::default()
            })
            .samples += n;
    }
    for (stack, ns) in by_time {
        merged
            .entry(stack.clone())
            .or_insert_with(|| FoldedStack {
                stack,
                ..Default::default()
            })
            .ns += ns;
    }
    Ok(merged.into_values().collect())
}

/// Run inferno's perf collapser over the blocks, each printed with `weight` as its period.
fn collapse<'a>(blocks: impl Iterator<Item = (&'a Block, u64)>) -> anyhow::Result<Vec<(String, u64)>> {
    let mut text = String::new();
    for (b, w) in blocks {
        if w == 0 {
            continue;
        }
        text.push_str(&format!("{} {}/{} {:.6}: {w} {}:\n", b.comm, b.pid, b.tid, b.time, b.event));
        for l in &b.stack {
            text.push('\t');
            text.push_str(l);
            text.push('\n');
        }
        text.push('\n');
    }
    let mut opts = inferno::collapse::perf::Options::default();
    opts.nthreads = 1;
    // Kernel frames end in `_[k]` (FlameGraph's convention): the off-CPU table looks past them.
    opts.annotate_kernel = true;
    let mut out = Vec::new();
    inferno::collapse::perf::Folder::from(opts)
        .collapse(text.as_bytes(), &mut out)
        .context("cannot fold the stacks")?;
    let out = String::from_utf8_lossy(&out);
    Ok(out
        .lines()
        .filter_map(|l| {
            let (stack, n) = l.rsplit_once(' ')?;
            Some((stack.to_string(), n.parse().ok()?))
        })
        .collect())
}

/// The on-CPU profile of `data` within `window` (CLOCK_MONOTONIC seconds): each sample weighs its
/// period (nanoseconds of `cpu-clock`).
pub fn on_cpu(data: &Path, window: (f64, f64)) -> anyhow::Result<Profile> {
    let blocks = script(data, "comm,pid,tid,time,period,event,ip,sym,dso")?;
    let inside: Vec<(&Block, u64)> = blocks
        .iter()
        .filter(|b| b.time >= window.0 && b.time <= window.1)
        .map(|b| (b, b.period))
        .collect();
    profile_of(&inside)
}

/// The profile of weighed blocks: its stacks, the first and last sample's time, and a note when
/// most samples have no symbol.
pub fn profile_of(inside: &[(&Block, u64)]) -> anyhow::Result<Profile> {
    let stacks = fold(inside)?;
    let sampled = inside.iter().fold(None, |acc: Option<(f64, f64)>, (b, _)| match acc {
        None => Some((b.time, b.time)),
        Some((lo, hi)) => Some((lo.min(b.time), hi.max(b.time))),
    });
    let total: u64 = stacks.iter().map(|s| s.samples).sum();
    let unknown: u64 = stacks
        .iter()
        .filter(|s| s.stack.rsplit(';').next().is_some_and(|leaf| leaf == "[unknown]"))
        .map(|s| s.samples)
        .sum();
    let mut notes = Vec::new();
    if total > 0 {
        notes.extend(super::check::symbols_note(unknown as f64 / total as f64));
    }
    Ok(Profile {
        sampled,
        stacks,
        notes,
        ..Profile::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_of_samples_and_tracepoints() {
        let b = header("hot 12067/12068 33999.491242:   20408163 cpu-clock: ").expect("sample");
        assert_eq!(
            (b.comm.as_str(), b.pid, b.tid, b.period, b.event.as_str()),
            ("hot", 12067, 12068, 20408163, "cpu-clock")
        );
        assert!((b.time - 33999.491242).abs() < 1e-9);
        let t = header("V8 Worker 7/9 [001] 12.5: sched:sched_switch: prev_comm=a prev_pid=9 prev_state=S ==> next_comm=b next_pid=0")
            .expect("tracepoint");
        assert_eq!(
            (t.comm.as_str(), t.event.as_str(), t.period),
            ("V8 Worker", "sched:sched_switch", 1)
        );
        assert!(t.trace.starts_with("prev_comm=a prev_pid=9"));
        assert!(header("\t 113a hot_function (/tmp/hot)").is_none());
    }

    #[test]
    fn folds_with_both_weights() {
        let b = |f: &str, time: f64| Block {
            comm: "hot".into(),
            pid: 1,
            tid: 1,
            time,
            period: 10,
            event: "cpu-clock".into(),
            stack: vec![format!("113a {f} (/tmp/hot)"), "2724a main (/tmp/hot)".into()],
            ..Block::default()
        };
        let (h1, h2, c) = (b("hot_function", 1.0), b("hot_function", 2.0), b("cold_function", 3.0));
        let stacks = fold(&[(&h1, 10), (&h2, 30), (&c, 5)]).expect("fold");
        assert_eq!(
            stacks,
            vec![
                FoldedStack {
                    stack: "hot;main;cold_function".into(),
                    samples: 1,
                    ns: 5
                },
                FoldedStack {
                    stack: "hot;main;hot_function".into(),
                    samples: 2,
                    ns: 40
                },
            ]
        );
        let p = profile_of(&[(&h1, 10), (&c, 5)]).expect("profile");
        assert_eq!(p.sampled, Some((1.0, 3.0)));
        assert!(p.notes.is_empty());
    }
}
