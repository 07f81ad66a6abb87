//! The exit-code contract (docs/exit-codes.md), held for every subcommand of `perflab --help`: a
//! bad value of each kind (not a number, out of range, a bad duration, an unknown word, a bad
//! address or URL, a path that cannot be read or written, options that do not go together) is
//! exit code 2 and one line on stderr naming the problem, before anything is sent, started or
//! written. One test per subcommand; `every_subcommand_is_held_to_the_contract` fails when
//! `perflab --help` lists one that has no test here.

use std::io::Read;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_perflab");

/// The subcommands tested here, as `perflab --help` lists them.
const TESTED: &[&str] = &[
    "monitor",
    "http",
    "load",
    "serve",
    "probe",
    "profile",
    "dist",
    "run",
    "watch",
    "demo",
    "merge",
    "report",
    "compare",
    "export",
    "store",
    "hosts",
    "agent",
    "completions",
    "man",
];

fn perflab(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .env("PERFLAB_RUNTIME_DIR", std::env::temp_dir().join("perflab-cli-contract"))
        .output()
        .expect("run perflab")
}

/// Each case: its arguments and a part of the message that names the problem. Exit code 2, one
/// line, nothing on stdout.
fn refused(cases: &[(&[&str], &str)]) {
    for (args, want) in cases {
        let out = perflab(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: one line: {err:?}");
        assert!(err.starts_with("perflab: error: "), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: want `{want}` in {err}");
        assert!(out.stdout.is_empty(), "{args:?}: {}", String::from_utf8_lossy(&out.stdout));
    }
}

#[test]
fn every_subcommand_is_held_to_the_contract() {
    let out = perflab(&["--help"]);
    let help = String::from_utf8_lossy(&out.stdout);
    let listed: Vec<&str> = help
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .collect();
    assert!(!listed.is_empty(), "{help}");
    for c in &listed {
        assert!(TESTED.contains(c), "`perflab {c}` has no exit-code test in cli_contract.rs");
    }
    // Usage itself: an unknown subcommand, an unknown option, no subcommand at all.
    refused(&[
        (&["nosuch"], "unrecognized subcommand"),
        (&["http", "--nosuch"], "unexpected argument"),
    ]);
    let out = perflab(&[]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn monitor() {
    let dir = tempfile::tempdir().expect("tmp");
    let nodir = dir.path().join("no/such/x.csv");
    let nodir = nodir.to_str().expect("utf-8");
    refused(&[
        (&["monitor", "-i", "abc", "-c", "1"], "--interval: invalid duration"),
        (&["monitor", "-i", "1ms", "-c", "1"], "the minimum is 10ms"),
        (&["monitor", "-c", "0"], "--count 0"),
        (&["monitor", "-c", "x"], "invalid value 'x'"),
        (&["monitor", "-d", "0s"], "shorter than one --interval"),
        (&["monitor", "-d", "1ns", "-i", "10ms"], "shorter than one --interval"),
        (&["monitor", "-c", "1", "--only", "foo"], "unknown group `foo`"),
        (&["monitor", "-c", "1", "--pid", "999999999"], "no such process"),
        (&["monitor", "-c", "1", "--match", "("], "--match: invalid regex"),
        (&["monitor", "-c", "1", "--csv", "/proc/version"], "cannot write /proc/version"),
        (&["monitor", "-c", "1", "--jsonl", nodir], "no such directory"),
        (&["monitor", "-c", "1", "--host", "bad host"], "not an ssh destination"),
        (&["monitor", "-c", "1", "--host", "x", "--ssh-port", "0"], "--ssh-port"),
        (&["monitor", "-c", "1", "--host", "x", "--ssh-option", "foo"], "Key=value"),
    ]);
    assert!(!dir.path().join("no").exists());
}

/// A listener that counts the connections it accepts, for checking that nothing was sent.
struct Counter {
    port: u16,
    accepted: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

fn counter() -> Counter {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = l.local_addr().expect("addr").port();
    let accepted = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let n = accepted.clone();
    std::thread::spawn(move || {
        for mut c in l.incoming().flatten() {
            n.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let mut buf = [0u8; 4096];
            let _ = c.read(&mut buf);
        }
    });
    Counter { port, accepted }
}

#[test]
fn http() {
    let c = counter();
    let url = format!("http://127.0.0.1:{}/", c.port);
    let u = url.as_str();
    let dir = tempfile::tempdir().expect("tmp");
    let missing = dir.path().join("missing.body");
    let missing = missing.to_str().expect("utf-8");
    refused(&[
        (&["http", u, "-n", "x"], "invalid value 'x'"),
        (&["http", u, "-n", "0"], "requests must be at least 1"),
        (&["http", u, "-c", "0", "-n", "1"], "connections must be from 1"),
        (&["http", u, "-n", "5", "--max-inflight", "0"], "max_inflight must be at least 1"),
        (&["http", u, "-n", "5", "-d", "1ns"], "duration must be at least 1ms"),
        (&["http", u, "-d", "abc"], "invalid duration"),
        (&["http", u, "-n", "1", "--timeout", "0s"], "timeout must be longer than 0s"),
        (&["http", u, "-n", "1", "--arrival", "foo", "-r", "1"], "arrival `foo`"),
        (&["http", u, "-n", "1", "-m", "GET\r\n"], "method `GET\\r\\n`"),
        (&["http", u, "-n", "1", "-H", "bad"], "Name: value"),
        (&["http", u, "-n", "1", "--body-file", missing], "cannot read body file"),
        (&["http", u, "-n", "1", "--hdr-log", "/proc/version"], "--hdr-log /proc/version"),
        (&["http", u, "-n", "1", "--streams", "2"], "streams needs HTTP/2"),
        (&["http", u], "give -n REQUESTS or -d DURATION"),
        (
            &["http", "http://127.0.0.1:0/", "-n", "1"],
            "the port `0` is not a number from 1 to 65535",
        ),
        (&["http", "http://127.0.0.1:99999/", "-n", "1"], "the port `99999`"),
        (&["http", "http://[::1", "-n", "1"], "without its closing `]`"),
        (&["http", "ftp://127.0.0.1/", "-n", "1"], "unsupported scheme `ftp`"),
        (&["http", "127.0.0.1:8080", "-n", "1"], "no scheme://"),
        (&["http", "http://127.0.0.1/a b", "-n", "1"], "no spaces"),
    ]);
    // None of them sent anything.
    std::thread::sleep(std::time::Duration::from_millis(100));
    assert_eq!(
        c.accepted.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "a refused command connected"
    );
    // A password in a refused URL is not shown; nor is it taken for a host name to resolve.
    let out = perflab(&["http", "http://user:s3cret-pw@127.0.0.1:0/", "-n", "1"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(!err.contains("s3cret-pw") && !err.contains("resolve"), "{err}");
}

#[test]
fn load() {
    let dir = tempfile::tempdir().expect("tmp");
    let nodir = dir.path().join("no/such/f");
    let nodir = nodir.to_str().expect("utf-8");
    let nodb = format!("sqlite:{}", dir.path().join("no/such/x.db").display());
    refused(&[
        (&["load", "nosuch"], "unrecognized subcommand"),
        (&["load", "cpu", "-w", "0", "-d", "1s"], "workers must be at least 1"),
        (&["load", "cpu", "-l", "101", "-d", "1s"], "load must be from 1 to 100"),
        (&["load", "cpu", "-m", "foo", "-d", "1s"], "method \"foo\""),
        (&["load", "cpu", "-d", "1ns"], "--duration must be at least 1ms"),
        (&["load", "cpu", "-d", "1s", "--warmup", "x"], "--warmup: invalid duration"),
        (&["load", "mem", "foo", "-d", "1s"], "mode \"foo\""),
        (&["load", "mem", "touch", "-s", "abc", "-d", "1s"], "size \"abc\""),
        (&["load", "mem", "touch", "-s", "99999T", "-d", "1s"], "OOM killer"),
        (&["load", "disk", "--bs", "3", "-d", "1s"], "bs must be a multiple of 512"),
        (&["load", "disk", "--rw", "foo", "-d", "1s"], "rw must be"),
        (&["load", "disk", "--iodepth", "0", "-d", "1s"], "iodepth must be from 1"),
        (&["load", "disk", "-f", nodir, "-d", "1s"], "no such directory"),
        (&["load", "disk", "-d", "1ns"], "--duration must be at least 1ms"),
        (&["load", "net", "127.0.0.1", "-d", "1s"], "needs a port"),
        (&["load", "net", "127.0.0.1:0", "-d", "1s"], "the port `0`"),
        (&["load", "net", "[::1", "-d", "1s"], "closing `]`"),
        (&["load", "net", "127.0.0.1:9", "-m", "foo", "-d", "1s"], "mode \"foo\""),
        (&["load", "net", "127.0.0.1:9", "-d", "1ns"], "--duration must be at least 1ms"),
        (
            &["load", "oltp", "--db", "postgres://127.0.0.1:9/x", "-d", "1s"],
            "--db: postgres://127.0.0.1:9/x: the URL names no user",
        ),
        (
            &["load", "oltp", "--db", "postgres://u:s3cret@127.0.0.1:0/x", "-d", "1s"],
            "the port `0`",
        ),
        (&["load", "oltp", "--db", "foo", "-d", "1s"], "--db must start with"),
        (&["load", "oltp", "--db", &nodb, "-d", "1s"], "--db: no such directory"),
        (&["load", "oltp", "--tables", "0", "-d", "1s"], "--tables must be from 1"),
        // Before any table is loaded (one line: no "preparing" first).
        (&["load", "oltp", "-d", "0s"], "--duration must be at least 1ms"),
        (&["load", "oltp", "-d", "1s", "--warmup", "x"], "--warmup: invalid duration"),
        // --live: what a run cannot keep, and the same checks as without it, before anything runs.
        (
            &["load", "cpu", "-d", "1s", "--live", "--json"],
            "--json cannot be used with --live",
        ),
        (
            &["load", "oltp", "--prepare-only", "--live"],
            "--prepare-only cannot be used with --live",
        ),
        (&["load", "cpu", "-w", "0", "-d", "1s", "--live"], "workers must be at least 1"),
        (&["load", "cpu", "-d", "1ns", "--live"], "--duration must be at least 1ms"),
        (&["load", "cpu", "-d", "1s", "--live=nowhere"], "--live nowhere: not an address"),
        (&["load", "cpu", "-d", "1s", "--runs-dir", "x"], "--live"),
    ]);
    assert!(!dir.path().join("no").exists(), "nothing was made");
}

#[test]
fn serve() {
    refused(&[
        (&["serve", "--port", "99999"], "invalid value '99999'"),
        (&["serve", "--host", "not a host"], "invalid value 'not a host'"),
        (&["serve", "--model", "foo"], "--model foo"),
        (&["serve", "--workers", "0"], "--workers must be at least 1"),
        (&["serve", "--delay", "foo"], "--delay"),
        (&["serve", "--fail-rate", "2"], "--fail-rate"),
        (&["serve", "--close-after", "0"], "--close-after"),
        (&["serve", "--stall-at", "1s"], "--stall-at and --stall-for"),
        (
            &["serve", "--tls-cert", "/nonexistent", "--tls-key", "/nonexistent"],
            "cannot read --tls-cert",
        ),
    ]);
}

#[test]
fn probe() {
    refused(&[
        (&["probe", "foo", "127.0.0.1:1", "-c", "1"], "unknown probe kind `foo`"),
        (&["probe", "tcp", "127.0.0.1", "-c", "1"], "needs a port"),
        (&["probe", "tcp", "127.0.0.1:0", "-c", "1"], "the port `0`"),
        (&["probe", "tcp", "[::1", "-c", "1"], "closing `]`"),
        (&["probe", "tcp", "127.0.0.1:1", "-c", "0"], "count must be at least 1"),
        (&["probe", "tcp", "127.0.0.1:1", "-i", "abc"], "invalid duration"),
        (&["probe", "tcp", "127.0.0.1:1", "-d", "1ns"], "duration must be at least 1ms"),
        (&["probe", "udp", "127.0.0.1:1", "-s", "0", "-c", "1"], "size must be"),
        (&["probe", "http", "http://u:s3cret@127.0.0.1:0/", "-c", "1"], "the port `0`"),
        (&["probe", "http", "ftp://127.0.0.1/", "-c", "1"], "unsupported scheme"),
        (
            &["probe", "icmp", "127.0.0.1", "--icmp-socket", "foo", "-c", "1"],
            "icmp socket `foo`",
        ),
        (&["probe", "tcp", "127.0.0.1:1", "--insecure", "-c", "1"], "http probes only"),
    ]);
}

#[test]
fn profile() {
    let dir = tempfile::tempdir().expect("tmp");
    let nodir = dir.path().join("no/such/flame.svg");
    let nodir = nodir.to_str().expect("utf-8");
    refused(&[
        (&["profile"], "required arguments were not provided"),
        (&["profile", "--pid", "1", "--system"], "cannot be used with"),
        (&["profile", "--pid", "999999999"], "--pid 999999999: no such process"),
        (&["profile", "--cgroup", "/no/such/cgroup"], "no such cgroup"),
        (&["profile", "--system", "-d", "abc"], "invalid duration"),
        (&["profile", "--system", "-d", "0s"], "--duration must be longer than 0s"),
        (&["profile", "--system", "-F", "0"], "--frequency must be between 1 and 10000 Hz"),
        (&["profile", "--system", "--call-graph", "lbr"], "invalid value 'lbr'"),
        (&["profile", "--system", "-o", nodir], "no such directory"),
    ]);
    assert!(!dir.path().join("no").exists());
}

#[test]
fn dist() {
    let dir = tempfile::tempdir().expect("tmp");
    let plan = crate::common::write_plan(
        dir.path(),
        "name = \"x\"\n[workload]\ntype = \"http\"\nurl = \"http://127.0.0.1:9/\"\nconnections = 4\n",
    );
    let plan = plan.to_str().expect("utf-8");
    // Without an engine: its help, and exit code 2, as `perflab` alone.
    assert_eq!(perflab(&["dist"]).status.code(), Some(2));
    refused(&[
        (&["dist", "slurm", plan], "--nodes"),
        (
            &["dist", "slurm", "/no/such/plan.toml", "--nodes", "2"],
            "cannot read plan /no/such/plan.toml",
        ),
        (&["dist", "slurm", plan, "--nodes", "0"], "the number of segments must be from 1 to"),
        (&["dist", "slurm", plan, "--nodes", "2", "--start-in", "soon"], "invalid duration"),
        (&["dist", "k8s", plan, "--agents", "2"], "--image"),
        (&["dist", "k8s", plan, "--agents", "2", "--image", " "], "--image is empty"),
        (
            &["dist", "k8s", plan, "--agents", "2", "--image", "x", "--start-at", "noon"],
            "--start-at noon: not a time",
        ),
        (&["dist", "k8s", plan, "--agents", "5", "--image", "x"], "segment"),
        (
            &["dist", "k8s", plan, "--agents", "2", "--image", "x", "--apply", "--start-at", "1"],
            "--start-at and --apply do not go together",
        ),
        (&["dist", "k8s", plan, "--agents", "2", "--image", "x", "--context", "c"], "--apply"),
    ]);
}

#[test]
fn run() {
    let dir = tempfile::tempdir().expect("tmp");
    let plan = crate::common::write_plan(dir.path(), "name = \"x\"\n[workload]\ntype = \"exec\"\ncommand = \"true\"\n");
    let plan = plan.to_str().expect("utf-8");
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "name = \"x\"\n[workload]\ntype = \"cpu\"\nworkers = \"many\"\n").expect("write");
    let bad = bad.to_str().expect("utf-8");
    let file = dir.path().join("a-file");
    std::fs::write(&file, "").expect("write");
    let file = file.to_str().expect("utf-8");
    refused(&[
        (&["run", "/nonexistent/plan.toml"], "cannot read plan"),
        (&["run", bad], "bad.toml:4:"),
        (&["run", "--resume", "/nonexistent"], "not a perflab run directory"),
        (&["run", "--runs-dir", file, plan], "is not a directory"),
        (&["run"], "<PLAN>"),
        (&["run", "--live=nowhere", plan], "--live nowhere: not an address"),
    ]);
}

#[test]
fn watch() {
    refused(&[
        (&["watch", "/nonexistent"], "not a perflab run directory"),
        (&["watch", "--live", "nowhere", "/nonexistent"], "--live nowhere: not an address"),
        (&["watch"], "<RUN>"),
    ]);
}

#[test]
fn demo() {
    refused(&[
        (&["demo", "--port", "99999"], "invalid value '99999'"),
        (&["demo", "--runs-dir", "/proc/version"], "is not a directory"),
    ]);
}

#[test]
fn merge() {
    let out = std::env::temp_dir().join("perflab-cli-contract-merged");
    let out = out.to_str().expect("utf-8 path");
    refused(&[
        (&["merge", "/nonexistent", "--out", out], "not a perflab run directory"),
        (
            &["merge", "/nonexistent", "--out", out, "--format", "foo"],
            "unknown report format \"foo\"",
        ),
        (&["merge", "--out", out], "<RUNS>"),
        (&["merge", "/nonexistent"], "--out"),
    ]);
    assert!(!std::path::Path::new(out).exists(), "a refused merge writes nothing");
}

#[test]
fn report() {
    refused(&[
        (&["report", "/nonexistent"], "not a perflab run directory"),
        (&["report", "/nonexistent", "--format", "foo"], "unknown report format \"foo\""),
        (&["report"], "<RUNS>"),
    ]);
}

#[test]
fn compare() {
    refused(&[
        (&["compare", "/nonexistent", "/nonexistent2"], "not a perflab run directory"),
        (&["compare", "/nonexistent"], "<RUN_B>"),
    ]);
}

#[test]
fn export() {
    refused(&[(&["export", "/nonexistent"], "not a perflab run directory"), (&["export"], "<RUN>")]);
}

#[test]
fn completions() {
    refused(&[
        (&["completions", "nosuch"], "invalid value 'nosuch'"),
        (&["completions"], "<SHELL>"),
    ]);
}

#[test]
fn man() {
    refused(&[(&["man", "/proc/version"], "is a file, not a directory")]);
}

#[test]
fn store() {
    refused(&[
        (&["store", "upgrade", "/nonexistent"], "not a perflab run directory"),
        (&["store", "nosuch"], "unrecognized subcommand"),
    ]);
}

#[test]
fn hosts() {
    let dir = tempfile::tempdir().expect("tmp");
    let plan = crate::common::write_plan(
        dir.path(),
        "name = \"x\"\n[workload]\ntype = \"exec\"\ncommand = \"true\"\n[hosts]\nserver = { ssh = \"root@10.0.0.2\", port = 0 }\n",
    );
    let plan = plan.to_str().expect("utf-8");
    refused(&[
        (&["hosts", "check", "/nonexistent/plan.toml"], "cannot read plan"),
        (&["hosts", "check", plan], "plan.toml:6:"),
        (&["hosts", "install", plan], "plan.toml:6:"),
        (&["hosts", "nosuch"], "unrecognized subcommand"),
    ]);
}

#[test]
fn agent() {
    refused(&[(&["agent"], "needs --stdio"), (&["agent", "--nosuch"], "unexpected argument")]);
}

/// A reader that stops early (`perflab report RUN | head`): the commands that print text end as any
/// Unix tool does (by SIGPIPE, or with its status 141), never with a panic on the failed print
/// (exit 101).
#[test]
fn a_closed_stdout_ends_the_printing_commands_quietly() {
    use std::os::unix::process::ExitStatusExt;
    let tmp = tempfile::tempdir().expect("tmp");
    let run = tmp.path().join("run");
    crate::report_common::synthetic_run(&run);
    let run = run.to_str().expect("utf-8 path");
    // The command's output, its stdout a pipe whose reader has gone.
    let to_a_closed_pipe = |args: &[&str]| {
        let (reader, writer) = std::io::pipe().expect("pipe");
        drop(reader);
        Command::new(BIN)
            .args(args)
            .stdout(writer)
            .stderr(std::process::Stdio::piped())
            .output()
            .expect("perflab")
    };
    for args in [&["completions", "bash"][..], &["store", "check", run][..], &["report", run][..]] {
        let out = to_a_closed_pipe(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert_ne!(out.status.code(), Some(101), "{args:?}: {err}");
        assert_eq!(out.status.signal(), Some(libc::SIGPIPE), "{args:?}: {:?} {err}", out.status);
    }
    // A command that keeps SIGPIPE ignored (it talks to peers) ends quietly with the shell's status
    // of a tool ended by SIGPIPE.
    let out = to_a_closed_pipe(&["load", "cpu", "-d", "100ms", "-w", "1"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(out.status.code(), Some(141), "{:?} {err}", out.status);
}
