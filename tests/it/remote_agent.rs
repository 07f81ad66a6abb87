//! The agent (`perflab agent --stdio`) driven through a controller channel over plain pipes: the
//! protocol, the clock offset against an injected skew, targets started, sampled and stopped, exec,
//! and the clean-up when the channel closes. The same over a real sshd is in `remote_ssh`.

use perflab::remote::protocol::{CommandSpec, ExecResult, Request, Started, TargetSpec};
use perflab::remote::{Channel, Offset};
use std::process::Command;
use std::time::{Duration, Instant};

fn agent(skew_ms: Option<f64>) -> Channel {
    let mut c = Command::new(env!("CARGO_BIN_EXE_perflab"));
    c.args(["agent", "--stdio"]);
    if let Some(s) = skew_ms {
        c.env(perflab::remote::protocol::CLOCK_SKEW_ENV, s.to_string());
    }
    Channel::open("testhost", c).expect("open the agent")
}

fn sleeper(secs: u32) -> TargetSpec {
    TargetSpec {
        // A shell with a child: the whole process group must go, not only its leader.
        command: CommandSpec::Shell(format!("sleep {secs} & sleep {secs}; wait")),
        cwd: None,
        env: vec![],
        stop_signal: libc::SIGTERM,
        grace_s: 1.0,
        cpus: None,
        cpu_quota: None,
        memory: None,
    }
}

/// Every live process of the group `pgid`.
fn group_alive(pgid: i32) -> Vec<i32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
            continue;
        };
        let f: Vec<&str> = rest.split_whitespace().collect();
        if f.len() > 3 && f[2].parse::<i32>() == Ok(pgid) && !matches!(f[0], "Z" | "X") {
            out.push(pid);
        }
    }
    out
}

fn wait_gone(pgid: i32, within: Duration) -> Vec<i32> {
    let end = Instant::now() + within;
    loop {
        let left = group_alive(pgid);
        if left.is_empty() || Instant::now() > end {
            return left;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn hello_reports_the_protocol_version_and_the_hosts_facts() {
    let ch = agent(None);
    assert_eq!(ch.hello.protocol, perflab::remote::protocol::PROTOCOL);
    assert_eq!(ch.hello.perflab, env!("CARGO_PKG_VERSION"));
    assert_eq!(ch.hello.facts.arch, std::env::consts::ARCH);
    assert_eq!(ch.hello.facts.cpus, perflab::util::cpus::online_cpus().len());
    assert!(ch.hello.facts.mem_bytes > 0);
    ch.close().expect("bye");
}

#[test]
fn an_injected_clock_skew_is_measured_within_its_uncertainty() {
    for skew_ms in [5000.0, -1234.5] {
        let mut ch = agent(Some(skew_ms));
        let o: Offset = ch.clock(8).expect("clock");
        let err = (o.offset_s - skew_ms / 1000.0).abs();
        // Reading the clock twice adds a few microseconds the round trip does not cover.
        assert!(err <= o.uncertainty_s + 1e-4, "skew {skew_ms} ms measured as {o:?}");
        assert!(o.uncertainty_s < 0.5, "a pipe's round trip is far below a second: {o:?}");
        ch.close().expect("bye");
    }
}

/// The skew file is read again at every reading: a skew changed while the agent runs is what the
/// next measurement finds, and the samples taken after it carry it.
#[test]
fn a_skew_changed_in_its_file_is_followed_by_the_next_measurement() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("skew_ms");
    let mut c = Command::new(env!("CARGO_BIN_EXE_perflab"));
    c.args(["agent", "--stdio"])
        .env(perflab::remote::protocol::CLOCK_SKEW_FILE_ENV, &file);
    let mut ch = Channel::open("testhost", c).expect("open the agent");
    for skew_ms in [0.0, 1250.0, -430.0] {
        std::fs::write(&file, format!("{skew_ms}\n")).expect("write the skew");
        let o = ch.clock(8).expect("clock");
        assert!(
            (o.offset_s - skew_ms / 1000.0).abs() <= o.uncertainty_s + 1e-4,
            "skew {skew_ms} ms measured as {o:?}"
        );
    }
    // The samples carry the skew of the file when they were taken (-430 ms now).
    ch.call::<serde_json::Value>(
        Request::Sample {
            interval_s: 0.05,
            first_tick_unix_s: None,
            targets: vec![],
            pids: vec![],
        },
        Duration::from_secs(10),
    )
    .expect("sample");
    let e = ch.events().recv_timeout(Duration::from_secs(10)).expect("a sample");
    let here = perflab::util::time::unix_now();
    let perflab::remote::protocol::Event::Sample { unix_s, .. } = e else {
        panic!("not a sample: {e:?}")
    };
    assert!(
        (here - 0.43 - unix_s).abs() < 1.0 && unix_s < here - 0.2,
        "a sample at {unix_s} on a host 430 ms behind, read at {here}"
    );
    ch.close().expect("bye");
}

/// The answer delay: the round trip, and so the uncertainty, grows by it; the offset stays within.
#[test]
fn a_held_back_clock_answer_makes_the_offset_uncertain() {
    let mut c = Command::new(env!("CARGO_BIN_EXE_perflab"));
    c.args(["agent", "--stdio"]).env(perflab::remote::protocol::CLOCK_DELAY_ENV, "40");
    let mut ch = Channel::open("testhost", c).expect("open the agent");
    let o = ch.clock(3).expect("clock");
    assert!(o.uncertainty_s >= 0.020, "40 ms held back: ± 20 ms at least, got {o:?}");
    assert!(o.offset_s.abs() <= o.uncertainty_s + 1e-4, "{o:?}");
    ch.close().expect("bye");
}

#[test]
fn a_target_is_started_sampled_and_stopped_with_its_whole_group() {
    let mut ch = agent(None);
    let s: Started = ch
        .call(
            Request::Start {
                name: "t".into(),
                target: sleeper(60),
            },
            Duration::from_secs(10),
        )
        .expect("start");
    assert!(s.pid > 0);
    assert!(!group_alive(s.pid).is_empty());
    let _: serde_json::Value = ch
        .call(
            Request::Sample {
                interval_s: 0.1,
                first_tick_unix_s: None,
                targets: vec!["t".into()],
                pids: vec![],
            },
            Duration::from_secs(10),
        )
        .expect("sample");
    let ev = ch.events().recv_timeout(Duration::from_secs(10)).expect("a sample event");
    let perflab::remote::protocol::Event::Sample { values, unix_s, .. } = ev else {
        panic!("not a sample: {ev:?}")
    };
    let now = perflab::util::time::unix_now();
    assert!((now - unix_s).abs() < 10.0);
    let count = values.iter().find(|(n, _)| n == "proc_t_count").map(|(_, v)| *v);
    assert_eq!(count, Some(3.0), "sh and its two sleeps: {values:?}");
    let _: serde_json::Value = ch.call(Request::SampleStop, Duration::from_secs(10)).expect("sample_stop");
    let stopped: perflab::remote::protocol::Stopped = ch.call(Request::Stop { name: "t".into() }, Duration::from_secs(10)).expect("stop");
    assert_eq!(stopped.died, None);
    assert_eq!(wait_gone(s.pid, Duration::from_secs(2)), Vec::<i32>::new());
    // Stopping it twice is an error in the user's terms.
    let again = ch
        .call::<serde_json::Value>(Request::Stop { name: "t".into() }, Duration::from_secs(10))
        .unwrap_err();
    assert_eq!(again.to_string(), "host `testhost`: no target named `t` runs on this host");
    ch.close().expect("bye");
}

/// The first `n` sample times of a channel, on this machine's timeline.
fn sample_times(ch: &Channel, o: &Offset, n: usize) -> Vec<f64> {
    (0..n)
        .map(
            |_| match ch.events().recv_timeout(Duration::from_secs(10)).expect("a sample event") {
                perflab::remote::protocol::Event::Sample { unix_s, .. } => unix_s - o.offset_s,
                ev => panic!("not a sample: {ev:?}"),
            },
        )
        .collect()
}

#[test]
fn two_hosts_given_the_same_first_tick_sample_on_the_same_instants() {
    // Two agents, one with its clock 1.5 s off: the controller sends each the same first tick
    // (translated by the offset it measured) and the same interval.
    let interval = Duration::from_millis(200);
    let mut chans: Vec<(Channel, Offset)> = [None, Some(1500.0)]
        .into_iter()
        .map(|skew| {
            let mut ch = agent(skew);
            let o = ch.clock(8).expect("clock");
            (ch, o)
        })
        .collect();
    let first = perflab::monitor::grid_tick(perflab::util::time::unix_now(), interval) + 0.5;
    for (ch, o) in &mut chans {
        let _: serde_json::Value = ch
            .call(
                Request::Sample {
                    interval_s: interval.as_secs_f64(),
                    first_tick_unix_s: Some(first + o.offset_s),
                    targets: vec![],
                    pids: vec![],
                },
                Duration::from_secs(10),
            )
            .expect("sample");
    }
    let a = sample_times(&chans[0].0, &chans[0].1, 6);
    let b = sample_times(&chans[1].0, &chans[1].1, 6);
    let i = interval.as_secs_f64();
    // Tick k of either stream is taken at first + k · interval (woken a little late, never early):
    // matched by their tick, the two streams' times coincide.
    let tick = |t: f64| ((t - first) / i).round() as i64;
    let mut diffs = Vec::new();
    for t in a.iter().chain(&b) {
        assert!(
            *t >= first - 0.002 - chans[1].1.uncertainty_s,
            "a sample before the first tick: {t} < {first}: {a:?} {b:?}"
        );
    }
    for ta in &a {
        if let Some(tb) = b.iter().find(|tb| tick(**tb) == tick(*ta)) {
            diffs.push((ta - tb).abs());
        }
    }
    assert!(diffs.len() >= 4, "the two streams share few ticks: {a:?} {b:?}");
    diffs.sort_by(f64::total_cmp);
    let median = diffs[diffs.len() / 2];
    let allowed = 0.005 + chans[0].1.uncertainty_s + chans[1].1.uncertainty_s;
    assert!(
        median < allowed,
        "the ticks differ by {median} s (median), more than {allowed} s: {a:?} {b:?}"
    );
    // On the grid: each time is just after its tick's instant.
    let on_grid: Vec<f64> = a.iter().map(|t| t - (first + tick(*t) as f64 * i)).collect();
    let mut sorted = on_grid.clone();
    sorted.sort_by(f64::total_cmp);
    assert!(sorted[sorted.len() / 2] < allowed, "not on the grid of the first tick: {on_grid:?}");
    for (mut ch, _) in chans {
        let _: serde_json::Value = ch.call(Request::SampleStop, Duration::from_secs(10)).expect("sample_stop");
        ch.close().expect("bye");
    }
}

#[test]
fn exec_returns_status_and_output_and_obeys_its_time_limit() {
    let mut ch = agent(None);
    let r: ExecResult = ch
        .call(
            Request::Exec {
                command: CommandSpec::Shell("echo out; echo err >&2; exit 3".into()),
                cwd: None,
                env: vec![],
                timeout_s: 10.0,
            },
            Duration::from_secs(20),
        )
        .expect("exec");
    assert_eq!(
        (r.status, r.timed_out, r.stdout.as_str(), r.stderr.as_str()),
        (Some(3), false, "out\n", "err\n")
    );
    let r: ExecResult = ch
        .call(
            Request::Exec {
                command: CommandSpec::Argv(vec!["sleep".into(), "30".into()]),
                cwd: None,
                env: vec![],
                timeout_s: 0.3,
            },
            Duration::from_secs(20),
        )
        .expect("exec");
    assert!(r.timed_out && r.status.is_none(), "{r:?}");
    let e = ch
        .call::<ExecResult>(
            Request::Exec {
                command: CommandSpec::Argv(vec!["/nonexistent/tool".into()]),
                cwd: None,
                env: vec![],
                timeout_s: 1.0,
            },
            Duration::from_secs(20),
        )
        .unwrap_err();
    assert!(
        e.to_string()
            .starts_with("host `testhost`: cannot run `/nonexistent/tool` on this host"),
        "{e}"
    );
    ch.close().expect("bye");
}

#[test]
fn when_the_channel_closes_the_agent_stops_its_targets_and_exits() {
    let mut ch = agent(None);
    let s: Started = ch
        .call(
            Request::Start {
                name: "t".into(),
                target: sleeper(60),
            },
            Duration::from_secs(10),
        )
        .expect("start");
    drop(ch); // end of input, no `bye`
    assert_eq!(
        wait_gone(s.pid, Duration::from_secs(5)),
        Vec::<i32>::new(),
        "the target's group outlived the channel"
    );
}

#[test]
fn a_bad_request_gets_one_line_and_the_agent_goes_on() {
    use std::io::{BufRead, BufReader, Write};
    let mut child = Command::new(env!("CARGO_BIN_EXE_perflab"))
        .args(["agent", "--stdio"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("agent");
    let mut stdin = child.stdin.take().expect("stdin");
    writeln!(stdin, r#"{{"id":9,"op":"launch_missiles"}}"#).expect("write");
    writeln!(stdin, r#"{{"id":10,"op":"clock"}}"#).expect("write");
    drop(stdin);
    let lines: Vec<String> = BufReader::new(child.stdout.take().expect("stdout"))
        .lines()
        .map_while(Result::ok)
        .collect();
    assert!(child.wait().expect("wait").success());
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(
        lines[0].starts_with(r#"{"id":9,"ok":false,"error":"agent: cannot read the request: unknown variant `launch_missiles`"#),
        "{}",
        lines[0]
    );
    assert!(lines[1].starts_with(r#"{"id":10,"ok":true"#), "{}", lines[1]);
}

#[test]
fn hosts_in_a_plan_are_checked_with_their_place() {
    let plan = |hosts: &str| format!("name = \"h\"\n[workload]\ntype = \"exec\"\ncommand = [\"true\"]\n[hosts]\n{hosts}\n");
    let ok = perflab::plan::parse_str(
        &plan("server = { ssh = \"u@10.0.0.2\", port = 2222, ssh_options = [\"ConnectTimeout=5\"] }"),
        "p.toml",
    )
    .expect("a good host");
    assert_eq!(ok.hosts.len(), 1);
    assert_eq!(
        (ok.hosts[0].name.as_str(), ok.hosts[0].ssh.as_str(), ok.hosts[0].port),
        ("server", "u@10.0.0.2", Some(2222))
    );
    let cases = [
        (
            "local = { ssh = \"x\" }",
            "p.toml:6:1: `local` is the machine perflab runs on: it cannot be redefined in [hosts]",
        ),
        (
            "server = { ssh = \"x\", prot = 22 }",
            "p.toml:6:23: unknown key `prot` in host `server` (did you mean `port`?)",
        ),
        (
            "server = { ssh = \"x\", port = 70000 }",
            "p.toml:6:23: `port` of host `server` must be a port number (1 to 65535)",
        ),
        (
            "server = { port = 22 }",
            "p.toml:6:1: host `server` needs `ssh` (an ssh destination such as \"user@192.168.56.10\")",
        ),
        (
            "server = { ssh = \"-oProxyCommand=x\" }",
            "p.toml:6:12: `ssh` of host `server` must be a non-empty string not starting with `-`",
        ),
        (
            "server = { ssh = \"x\", ssh_options = [\"-v\"] }",
            "p.toml:6:23: `ssh_options` of host `server`: each option is \"Key=value\"",
        ),
    ];
    for (hosts, want) in cases {
        let e = perflab::plan::parse_str(&plan(hosts), "p.toml").expect_err(hosts);
        assert_eq!(perflab::error::one_line(&e), want, "{hosts}");
    }
}

#[test]
fn target_host_names_a_host_of_the_plan_and_takes_matrix_values() {
    let plan = |machines: &str| {
        format!(
            "name = \"h\"\n[workload]\ntype = \"exec\"\ncommand = [\"true\"]\n[hosts]\nserver = {{ ssh = \"u@10.0.0.2\" }}\n\
             [matrix]\nmachine = [{machines}]\n[target]\nhost = \"${{machine}}\"\ncommand = [\"sleep\", \"9\"]\ncpus = 4096\n"
        )
    };
    // `local` and `server`; the CPU count is checked on the host (not here) for the remote one.
    let p = perflab::plan::parse_str(&plan("\"server\""), "p.toml").expect("a remote target");
    let t = p.points[0].target.as_ref().expect("a target");
    assert_eq!(t.host.as_ref().map(|h| h.ssh.as_str()), Some("u@10.0.0.2"));
    let e = perflab::plan::parse_str(&plan("\"nope\""), "p.toml").expect_err("an unknown host");
    assert_eq!(
        perflab::error::one_line(&e),
        "p.toml:10:1: [target] host: no host named `nope` in [hosts] (the plan names `server`, `local`)"
    );
}
