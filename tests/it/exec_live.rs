//! One short live run per tool through `ExecWorkload` (each about a second, loopback only, small
//! sizes). A missing tool fails the test with the Debian package to install (CI installs them from
//! .ci/packages.txt). PostgreSQL for pgbench and sysbench's pgsql driver is started here on a scratch
//! data directory and a free loopback port, and stopped afterwards.

use perflab::util::Cancel;
use perflab::workload::exec::{preflight, ExecConfig, ExecWorkload};
use perflab::workload::{RunSpec, Workload, WorkloadResult};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::common;
use common::free_port;

const SPEC: RunSpec = RunSpec {
    warmup: Duration::ZERO,
    load: Duration::from_secs(1),
};

/// Run `cfg` (after the same preflight as a plan) and require success.
fn run(mut cfg: ExecConfig) -> WorkloadResult {
    if cfg.timeout.is_none() {
        cfg.timeout = Some(perflab::workload::exec::config::DurationSpec::Secs(30.0));
    }
    if let Err(e) = preflight(&cfg) {
        panic!("{e} — install it to run the live tests (CI does, from .ci/packages.txt)");
    }
    let r = ExecWorkload::new(cfg).run(SPEC, &Cancel::new(), &mut || {}).expect("runs");
    assert_eq!(r.failure, None, "raw: {:?}", r.raw);
    r
}

fn v(r: &WorkloadResult, name: &str) -> f64 {
    r.metric(name)
        .unwrap_or_else(|| panic!("metric {name} missing: {:?}", r.metrics))
        .value
}

/// A child process killed when dropped.
struct Guard(Child);

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn stress_ng_live() {
    let dir = tempfile::tempdir().expect("tmp");
    let yaml = dir.path().join("m.yaml");
    let r = run(ExecConfig::argv([
        "stress-ng",
        "--cpu",
        "1",
        "--cpu-method",
        "matrixprod",
        "--timeout",
        "1s",
        "--metrics-brief",
        "--yaml",
        yaml.to_str().expect("utf-8"),
    ]));
    let ops = v(&r, "cpu_bogo_ops");
    assert!(ops > 0.0, "a second of matrixprod does work");
    // stress-ng's real-time rate is its ops over its own wall time.
    let rate = ops / v(&r, "cpu_wall_time_s");
    assert!(
        (v(&r, "cpu_bogo_ops_per_s") - rate).abs() <= rate * 1e-3,
        "{rate} vs {:?}",
        r.metric("cpu_bogo_ops_per_s")
    );
    assert!(
        v(&r, "cpu_wall_time_s") <= v(&r, "wall_time_s"),
        "the stressor ran inside the command's time"
    );
}

#[test]
fn memtester_live() {
    let r = run(ExecConfig::argv(["memtester", "1M", "1"]));
    assert_eq!(v(&r, "memtest_tests_passed"), 18.0);
    assert_eq!(v(&r, "memtest_tests_failed"), 0.0);
    assert_eq!(v(&r, "exit_status"), 0.0);
}

#[test]
fn fio_live() {
    let dir = tempfile::tempdir().expect("tmp");
    let mut cfg = ExecConfig::argv([
        "fio",
        "--name=live",
        "--size=8M",
        "--rw=randread",
        "--bs=4k",
        "--ioengine=psync",
        "--time_based",
        "--runtime=1s",
        "--lat_percentiles=1",
        "--output-format=json",
        "--output=out.json",
    ]);
    cfg.cwd = Some(dir.path().to_path_buf());
    let r = run(cfg);
    let iops = v(&r, "read_iops");
    assert!(iops > 0.0);
    // Fixed 4 KiB blocks: bandwidth = IOPS × 4 KiB (fio rounds bw_bytes to whole bytes/s).
    let expect = iops * 4096.0 / 1048576.0;
    assert!(
        (v(&r, "read_bw_mibps") - expect).abs() <= expect * 1e-3 + 1e-6,
        "{expect} vs {:?}",
        r.metric("read_bw_mibps")
    );
    assert!(v(&r, "read_lat_p50_us") <= v(&r, "read_lat_p99_us"));
}

#[test]
fn iperf3_live() {
    let port = free_port();
    // A persistent server (not `-1`); readiness is read from /proc/net/tcp, not probed by connecting.
    let server = Command::new("iperf3")
        .args(["-s", "-B", "127.0.0.1", "-p", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("iperf3: {e} — Debian package: iperf3"));
    let _server = Guard(server);
    wait_listening(port);
    let port = port.to_string();
    let r = run(ExecConfig::argv(["iperf3", "-c", "127.0.0.1", "-p", &port, "-t", "1", "-J"]));
    let sent = v(&r, "sent_mbitps");
    assert!(sent > 0.0);
    assert!(v(&r, "received_mbitps") > 0.0);
    assert!(!r.series.is_empty(), "per-interval throughput");
}

#[test]
fn sysbench_cpu_live() {
    let r = run(ExecConfig::argv(["sysbench", "cpu", "--threads=1", "--time=1", "run"]));
    // sysbench's "events per second" uses its own run timer, not the printed "total time" (0.1 %
    // apart in the fixture: 5066.23 vs 10141 / 2.0003 = 5069.74), so the two agree within 1 %.
    let rate = v(&r, "events") / v(&r, "total_time_s");
    assert!(
        (v(&r, "events_per_s") - rate).abs() <= rate * 0.01,
        "{rate} vs {:?}",
        r.metric("events_per_s")
    );
    assert!(v(&r, "latency_min_ms") <= v(&r, "latency_p95_ms") && v(&r, "latency_p95_ms") <= v(&r, "latency_max_ms"));
}

/// A scratch PostgreSQL on a free loopback port, stopped on drop.
struct Pg {
    bin: PathBuf,
    data: PathBuf,
    port: u16,
    _dir: tempfile::TempDir,
}

fn as_postgres(bin: &Path, args: &[&str]) -> Command {
    // initdb and postgres refuse to run as root.
    // SAFETY: geteuid takes no arguments, touches no memory and cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    let mut c = if root {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(bin);
        c
    } else {
        Command::new(bin)
    };
    c.args(args).stdout(Stdio::null()).stderr(Stdio::piped());
    c
}

impl Pg {
    fn start() -> Pg {
        let bin = std::fs::read_dir("/usr/lib/postgresql")
            .ok()
            .and_then(|d| {
                d.flatten()
                    .map(|e| e.path().join("bin"))
                    .filter(|p| p.join("initdb").exists())
                    .max()
            })
            .unwrap_or_else(|| panic!("PostgreSQL not installed (Debian package: postgresql)"));
        let dir = tempfile::tempdir().expect("tmp");
        let data = dir.path().join("pg");
        std::fs::create_dir(&data).expect("data dir");
        // SAFETY: geteuid takes no arguments, touches no memory and cannot fail.
        if unsafe { libc::geteuid() } == 0 {
            let ok = Command::new("chown").arg("postgres").arg(&data).status().is_ok_and(|s| s.success())
                && Command::new("chmod").arg("755").arg(dir.path()).status().is_ok_and(|s| s.success());
            assert!(ok, "cannot hand the scratch data dir to the postgres user");
        }
        let d = data.to_str().expect("utf-8");
        let out = as_postgres(&bin.join("initdb"), &["-D", d, "-A", "trust", "-U", "postgres"])
            .output()
            .expect("initdb");
        assert!(out.status.success(), "initdb: {}", String::from_utf8_lossy(&out.stderr));
        let port = free_port();
        let opts = format!("-p {port} -k {d} -c listen_addresses=127.0.0.1 -c fsync=off");
        let out = as_postgres(
            &bin.join("pg_ctl"),
            &["-D", d, "-o", &opts, "-w", "-l", &format!("{d}/log"), "start"],
        )
        .output()
        .expect("pg_ctl");
        assert!(out.status.success(), "pg_ctl start: {}", String::from_utf8_lossy(&out.stderr));
        Pg {
            bin,
            data,
            port,
            _dir: dir,
        }
    }

    fn port(&self) -> String {
        self.port.to_string()
    }
}

impl Drop for Pg {
    fn drop(&mut self) {
        let d = self.data.to_string_lossy().to_string();
        let _ = as_postgres(&self.bin.join("pg_ctl"), &["-D", &d, "-m", "immediate", "stop"]).output();
    }
}

#[test]
fn pgbench_and_sysbench_oltp_live() {
    let pg = Pg::start();
    let pgbench = pg.bin.join("pgbench").to_string_lossy().to_string();
    let port = pg.port();
    let conn = ["-h", "127.0.0.1", "-p", &port, "-U", "postgres"];
    let init = Command::new(&pgbench)
        .args(conn)
        .args(["-i", "-s", "1", "-q", "postgres"])
        .output()
        .expect("pgbench -i");
    assert!(init.status.success(), "pgbench -i: {}", String::from_utf8_lossy(&init.stderr));

    // A fixed number of transactions: 2 clients × 100.
    let mut argv = vec![pgbench.as_str()];
    argv.extend(conn);
    argv.extend(["-S", "-c", "2", "-j", "1", "-t", "100", "postgres"]);
    let r = run(ExecConfig::argv(argv));
    assert_eq!(v(&r, "transactions"), 200.0);
    assert_eq!(v(&r, "failed_transactions"), 0.0);
    assert!(v(&r, "transactions_per_s") > 0.0);

    let sb: Vec<String> = [
        "--db-driver=pgsql",
        "--pgsql-host=127.0.0.1",
        "--pgsql-user=postgres",
        "--pgsql-db=postgres",
        "--tables=1",
        "--table-size=1000",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([format!("--pgsql-port={port}")])
    .collect();
    let prep = Command::new("sysbench").arg("oltp_read_only").args(&sb).arg("prepare").output();
    let prep = prep.unwrap_or_else(|e| panic!("sysbench: {e} — Debian package: sysbench"));
    assert!(prep.status.success(), "sysbench prepare: {}", String::from_utf8_lossy(&prep.stdout));
    let mut argv = vec!["sysbench".to_string(), "oltp_read_only".into()];
    argv.extend(sb);
    argv.extend(["--threads=2".into(), "--time=1".into(), "run".into()]);
    let r = run(ExecConfig::argv(argv));
    // oltp_read_only: BEGIN, 10 point selects, 4 range selects, COMMIT = 16 queries per transaction.
    assert!(v(&r, "transactions") > 0.0);
    assert_eq!(v(&r, "queries"), 16.0 * v(&r, "transactions"));
    assert_eq!(v(&r, "queries_read"), 14.0 * v(&r, "transactions"));
    assert_eq!(v(&r, "ignored_errors"), 0.0);
}

/// Wait (bounded, 2 s) until something listens on the loopback port.
/// Wait (at most 5 s) until a socket listens on 127.0.0.1:`port`, read from /proc/net/tcp without
/// connecting: a probe connection would be taken by iperf3's server as a client, and the real client
/// that follows could find it busy ("unable to receive control message").
fn wait_listening(port: u16) {
    let local = format!("0100007F:{port:04X}");
    for _ in 0..500 {
        let table = std::fs::read_to_string("/proc/net/tcp").unwrap_or_default();
        // Columns: sl local_address rem_address st ...; st 0A is LISTEN.
        if table.lines().any(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            f.len() > 3 && f[1] == local && f[3] == "0A"
        }) {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("nothing listens on 127.0.0.1:{port} after 5 s");
}

/// `perflab serve` on a free port for ab and wrk.
fn serve() -> (Guard, String) {
    let port = free_port();
    let child = Command::new(env!("CARGO_BIN_EXE_perflab"))
        .args(["serve", "-p", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("perflab serve");
    let guard = Guard(child);
    wait_listening(port);
    (guard, format!("http://127.0.0.1:{port}/"))
}

#[test]
fn ab_live() {
    let (_server, url) = serve();
    let r = run(ExecConfig::argv(["ab", "-n", "300", "-c", "2", url.as_str()]));
    assert_eq!(v(&r, "complete_requests"), 300.0);
    assert_eq!(v(&r, "failed_requests"), 0.0);
    assert_eq!(v(&r, "concurrency"), 2.0);
    assert!(v(&r, "latency_p50_ms") <= v(&r, "latency_p100_ms"));
}

#[test]
fn wrk_live() {
    let (_server, url) = serve();
    let r = run(ExecConfig::argv([
        "wrk",
        "-t",
        "1",
        "-c",
        "2",
        "-d",
        "1s",
        "--latency",
        url.as_str(),
    ]));
    let n = v(&r, "requests");
    assert!(n > 0.0);
    // wrk's rate is its requests over its own elapsed time (printed as 1.xxs, two decimals).
    let rate = n / v(&r, "duration_s");
    assert!(
        (v(&r, "requests_per_s") - rate).abs() <= rate * 0.01,
        "{rate} vs {:?}",
        r.metric("requests_per_s")
    );
    assert!(v(&r, "latency_p50_ms") <= v(&r, "latency_p99_ms"));
    assert_eq!(v(&r, "socket_errors"), 0.0);
}
