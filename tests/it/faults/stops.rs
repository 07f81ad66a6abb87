//! Every stand-alone command ends at its duration, and within a second of Ctrl-C, whatever its
//! peer does: `load net` (each mode), `http`, `probe` (tcp, http, udp, command), `load oltp`
//! against a server that accepts and stays silent, one that never accepts, one that resets, one
//! that sends forever (`peers`); `load cpu`, `mem` and `disk` (the disk during its file's layout)
//! on their own. On Ctrl-C the exit code is 130 and the summary of what was measured is printed.
//!
//! Bounds (generous: they are about not hanging): the run ends within its duration + 3 s, and
//! within 1.5 s of its SIGINT, each plus [`allowance`] (perflab's own start and exit on this
//! machine now).

use super::peers::{allowance, flush, in_parallel, no_internals, perflab, run, Hostile, Peer, Ran, ALL};
use std::time::Duration;

/// One command line, `{addr}` standing for the peer's address.
#[derive(Clone, Debug)]
struct Case {
    name: String,
    args: Vec<String>,
}

impl Case {
    fn new(name: String, args: &[&str]) -> Case {
        Case {
            name,
            args: args.iter().map(|s| s.to_string()).collect(),
        }
    }

    fn with(&self, peer: &Peer, more: &[&str]) -> Vec<String> {
        let addr = peer.addr().to_string();
        self.args
            .iter()
            .map(|a| a.replace("{addr}", &addr))
            .chain(more.iter().map(|s| s.to_string()))
            .collect()
    }
}

/// What went wrong with one run, if anything.
fn judge_duration(what: &str, r: &Ran, duration: Duration) -> Option<String> {
    no_internals(r, what);
    let bound = duration + Duration::from_secs(3) + allowance();
    if r.hung || r.took > bound {
        return Some(format!("{what}: ran {:?}, more than {bound:?}\n{}", r.took, r.text()));
    }
    match r.code() {
        Some(0) | Some(1) => None,
        c => Some(format!("{what}: exit {c:?}, not 0 or 1\n{}", r.text())),
    }
}

/// A run sent SIGINT: exit 130 within the bound, its summary printed (or it had ended before, 0 or 1).
fn judge_interrupt(what: &str, r: &Ran) -> Option<String> {
    no_internals(r, what);
    let bound = Duration::from_millis(1500) + allowance();
    match r.after_interrupt {
        None => match r.code() {
            Some(0) | Some(1) => None,
            c => Some(format!("{what}: ended before its Ctrl-C with exit {c:?}\n{}", r.text())),
        },
        Some(t) if r.hung || t > bound => Some(format!("{what}: ended {t:?} after Ctrl-C, more than {bound:?}\n{}", r.text())),
        Some(_) if r.code() != Some(130) => Some(format!("{what}: exit {:?} after Ctrl-C, not 130\n{}", r.code(), r.text())),
        Some(_) if r.out.stdout.is_empty() => Some(format!("{what}: no summary after Ctrl-C\n{}", r.text())),
        Some(_) => None,
    }
}

/// Each case against each hostile peer: once with `duration` (`bounded` appended), once interrupted
/// after `interrupt_after` (`unbounded` appended). Returns the problems.
fn against_peers(cases: &[Case], bounded: &[&str], duration: Duration, unbounded: &[&str]) -> Vec<String> {
    let runs: Vec<(Case, Hostile, bool)> = cases
        .iter()
        .flat_map(|c| ALL.iter().flat_map(move |p| [(c.clone(), *p, false), (c.clone(), *p, true)]))
        .collect();
    let problems = in_parallel(&runs, 6, |(case, kind, interrupt)| {
        let peer = Peer::start(*kind);
        let what = format!(
            "{} against a peer that {kind:?}{}",
            case.name,
            if *interrupt { ", Ctrl-C" } else { "" }
        );
        let r = if *interrupt {
            run(
                perflab(&case.with(&peer, unbounded)),
                Some(Duration::from_millis(1200)),
                Duration::from_secs(90),
            )
        } else {
            run(perflab(&case.with(&peer, bounded)), None, Duration::from_secs(90))
        };
        println!(
            "{what}: exit {:?} after {:?} (after Ctrl-C: {:?})",
            r.code(),
            r.took,
            r.after_interrupt
        );
        flush();
        if *interrupt {
            judge_interrupt(&what, &r)
        } else {
            judge_duration(&what, &r, duration)
        }
    });
    problems.into_iter().flatten().collect()
}

fn assert_none(problems: Vec<String>) {
    assert!(
        problems.is_empty(),
        "{} case(s) did not stop in time:\n{}",
        problems.len(),
        problems.join("\n\n")
    );
}

#[test]
fn load_net_ends_at_its_duration_and_on_ctrl_c_whatever_the_peer_does() {
    let cases: Vec<Case> = [
        ("stream", vec!["-m", "stream"]),
        ("stream download", vec!["-m", "stream", "--direction", "download"]),
        ("rr", vec!["-m", "rr", "-P", "2"]),
        ("crr", vec!["-m", "crr"]),
        ("udp", vec!["-m", "udp"]),
    ]
    .into_iter()
    .map(|(name, mode)| {
        let mut args = vec!["load", "net", "{addr}", "-q"];
        args.extend(mode);
        Case::new(format!("load net {name}"), &args)
    })
    .collect();
    assert_none(against_peers(&cases, &["-d", "1s"], Duration::from_secs(1), &["-d", "60s"]));
}

#[test]
fn http_ends_at_its_duration_and_on_ctrl_c_whatever_the_peer_does() {
    let cases = [
        Case::new("http".into(), &["http", "http://{addr}/", "-c", "2", "-q"]),
        Case::new("http --http2".into(), &["http", "http://{addr}/", "-c", "2", "--http2", "-q"]),
        Case::new(
            "http --no-keepalive".into(),
            &["http", "http://{addr}/", "-c", "2", "--no-keepalive", "-q"],
        ),
        Case::new("http --rate".into(), &["http", "http://{addr}/", "-c", "2", "-r", "200", "-q"]),
    ];
    assert_none(against_peers(&cases, &["-d", "1s"], Duration::from_secs(1), &["-d", "60s"]));
}

#[test]
fn probes_end_at_their_duration_and_on_ctrl_c_whatever_the_peer_does() {
    // The probes' timeout is far longer than the run: the duration bounds the wait of the probe in
    // flight too, and Ctrl-C does not wait for it.
    let cases = [
        Case::new("probe tcp".into(), &["probe", "tcp", "{addr}", "-W", "30s", "-q"]),
        Case::new("probe http".into(), &["probe", "http", "http://{addr}/", "-W", "30s", "-q"]),
        Case::new("probe udp".into(), &["probe", "udp", "{addr}", "-W", "30s", "-q"]),
    ];
    assert_none(against_peers(&cases, &["-d", "1s"], Duration::from_secs(1), &[]));
}

#[test]
fn load_oltp_ends_on_ctrl_c_and_within_its_connect_timeout_whatever_the_server_does() {
    // None of these peers speaks a database protocol: the load never starts, and the preparation
    // ends at the client's connect timeout (3 s here, the "duration"; 10 s by default) or at once.
    let cases = [
        Case::new(
            "load oltp postgres".into(),
            &["load", "oltp", "--db", "postgres://u:p@{addr}/x?connect_timeout=3", "-q"],
        ),
        Case::new(
            "load oltp mysql".into(),
            &["load", "oltp", "--db", "mysql://u:p@{addr}/x?connect-timeout=3", "-q"],
        ),
    ];
    let problems = against_peers(&cases, &["-d", "1s"], Duration::from_secs(3), &["-d", "60s"]);
    // An interrupted preparation prints one line on stderr, no summary (nothing was measured).
    let problems = problems.into_iter().filter(|p| !p.contains("no summary after Ctrl-C")).collect();
    assert_none(problems);
}

#[test]
fn a_command_probe_ends_at_its_duration_and_on_ctrl_c_and_a_count_of_3_is_3() {
    let t = |args: &[&str]| perflab(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>());
    // A command that outlives the duration and ignores SIGTERM.
    let stubborn = "trap '' TERM INT; sleep 100";
    let r = run(
        t(&["probe", "command", stubborn, "-d", "1s", "-W", "30s", "-q"]),
        None,
        Duration::from_secs(90),
    );
    assert_none(
        judge_duration("probe command -d 1s", &r, Duration::from_secs(1))
            .into_iter()
            .collect(),
    );
    let r = run(
        t(&["probe", "command", stubborn, "-c", "3", "-W", "30s"]),
        Some(Duration::from_millis(1200)),
        Duration::from_secs(90),
    );
    assert_none(judge_interrupt("probe command -c 3, Ctrl-C", &r).into_iter().collect());
    let stdout = String::from_utf8_lossy(&r.out.stdout);
    assert!(stdout.contains("0 probes"), "the probe in flight is not a sample:\n{stdout}");
    assert!(!stdout.contains("skipped"), "nothing skipped:\n{stdout}");
    // Three probes, each longer than the interval: 3 probes, none skipped.
    let r = run(
        t(&["probe", "command", "sleep 0.3", "-c", "3", "-i", "50ms"]),
        None,
        Duration::from_secs(60),
    );
    assert_eq!(r.code(), Some(0), "{}", r.text());
    let stdout = String::from_utf8_lossy(&r.out.stdout);
    assert!(stdout.contains("3 probes, 3 replies"), "{stdout}");
    assert!(!stdout.contains("skipped"), "a count of 3 is 3, with no slots skipped:\n{stdout}");
}

#[test]
fn the_built_in_loads_end_at_their_duration_and_on_ctrl_c() {
    let loads: [(&str, &[&str]); 3] = [
        ("load cpu", &["load", "cpu", "-w", "1", "-q"]),
        ("load mem", &["load", "mem", "touch", "-s", "64M", "-q"]),
        ("load disk", &["load", "disk", "-s", "64M", "-q"]),
    ];
    let runs: Vec<(&str, &[&str], bool)> = loads.iter().flat_map(|(n, a)| [(*n, *a, false), (*n, *a, true)]).collect();
    let problems = in_parallel(&runs, 3, |(name, args, interrupt)| {
        let mut args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        args.extend(["-d".to_string(), if *interrupt { "60s" } else { "1s" }.to_string()]);
        let r = run(
            perflab(&args),
            interrupt.then_some(Duration::from_millis(1200)),
            Duration::from_secs(90),
        );
        println!(
            "{name}: exit {:?} after {:?} (after Ctrl-C: {:?})",
            r.code(),
            r.took,
            r.after_interrupt
        );
        if *interrupt {
            judge_interrupt(&format!("{name}, Ctrl-C"), &r)
        } else {
            judge_duration(name, &r, Duration::from_secs(1))
        }
    });
    assert_none(problems.into_iter().flatten().collect());
}

#[test]
fn ctrl_c_during_the_disk_files_layout_ends_it_within_a_second() {
    // A file far larger than can be written in the second before the Ctrl-C.
    let dir = tempfile::tempdir().expect("tmp");
    let file = dir.path().join("f");
    let args: Vec<String> = ["load", "disk", "-s", "8G", "-f", &file.to_string_lossy(), "-d", "5s", "-q"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let r = run(perflab(&args), Some(Duration::from_millis(800)), Duration::from_secs(120));
    println!(
        "load disk layout: exit {:?} after {:?} (after Ctrl-C: {:?})",
        r.code(),
        r.took,
        r.after_interrupt
    );
    assert_none(judge_interrupt("load disk, Ctrl-C during the layout", &r).into_iter().collect());
    let stdout = String::from_utf8_lossy(&r.out.stdout);
    assert!(stdout.contains("interrupted while laying out the file"), "{stdout}");
    assert!(!file.exists(), "the file perflab made is removed");
}

/// The processes whose command line holds `marker`.
fn with_marker(marker: &str) -> Vec<libc::pid_t> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<libc::pid_t>().ok()) else {
            continue;
        };
        let cmdline = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
        if String::from_utf8_lossy(&cmdline).replace('\0', " ").contains(marker) {
            out.push(pid);
        }
    }
    out
}

#[test]
fn a_command_probe_dies_with_perflab_the_whole_group() {
    // The shell forks the `sleep` (a `; true` follows it), so the command is a group of two: the
    // `sh` perflab started and its child. A sleep of an odd length is the marker.
    let marker = format!("sleep 4{}.25", std::process::id());
    let line = format!("{marker}; true");
    let mut child = perflab(&["probe", "command", &line, "-c", "1", "-W", "60s", "-q"].map(String::from))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start perflab");
    let perflab_pid = child.id() as libc::pid_t;
    let started = || with_marker(&marker).into_iter().filter(|&p| p != perflab_pid).count();
    let t0 = std::time::Instant::now();
    while started() < 2 && t0.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(started() >= 2, "the command started (sh and its sleep)");
    // SIGKILL: perflab has no chance to clean up; what it started must die all the same.
    child.kill().expect("kill perflab");
    child.wait().expect("wait");
    let t0 = std::time::Instant::now();
    while !with_marker(&marker).is_empty() && t0.elapsed() < Duration::from_secs(3) + allowance() {
        std::thread::sleep(Duration::from_millis(20));
    }
    let left = with_marker(&marker);
    for &p in &left {
        // SAFETY: kill(2) on a process this test's perflab started and left behind.
        unsafe { libc::kill(p, libc::SIGKILL) };
    }
    assert!(left.is_empty(), "the command's processes outlived perflab: {left:?}");
}
