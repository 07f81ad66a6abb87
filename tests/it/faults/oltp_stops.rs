//! `perflab load oltp` against a real server that stops answering mid-load (frozen with SIGSTOP:
//! its sockets stay open, nothing comes back) ends at its duration, and within a second of
//! Ctrl-C; against a server that went away, its live line counts only committed transactions (the
//! failed ones per second apart) and its summary says why it exits 1. Scratch PostgreSQL and
//! MariaDB servers (`db_servers`); skipped loudly where they are not installed.

use super::peers::{allowance, no_internals, run, run_until, Ran, BIN};
use crate::db_servers::{Kind, Server};
use std::process::Command;
use std::time::{Duration, Instant};

fn servers() -> Vec<Server> {
    let all: Vec<Server> = [Server::postgres(), Server::mariadb()].into_iter().flatten().collect();
    if all.len() < 2 && crate::common::skip_unless_required("the OLTP stop tests need PostgreSQL and MariaDB") {
        return all;
    }
    all
}

/// `load oltp` on `server`'s `sbtest1` (1000 rows, prepared first), 2 threads, no warm-up.
fn load(server: &Server, more: &[&str]) -> Command {
    let base = ["load", "oltp", "--db", &server.url, "--tables", "1", "--table-size", "1000"];
    let prep = Command::new(BIN)
        .args(base)
        .args(["--prepare-only", "-q"])
        .output()
        .expect("prepare");
    assert_eq!(prep.status.code(), Some(0), "{}", String::from_utf8_lossy(&prep.stderr));
    let mut c = Command::new(BIN);
    c.args(base)
        .args(["--prepare", "never", "--threads", "2", "--warmup", "0s"])
        .args(more);
    c
}

/// The client connections the server has now (the observer's own left out).
fn in_use(server: &Server) -> i64 {
    let present = match server.kind {
        Kind::Postgres => server.number("SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'"),
        Kind::Mariadb => server.number("SHOW GLOBAL STATUS LIKE 'Threads_connected'"),
    };
    present - 1
}

/// The server's processes stopped (SIGSTOP) until dropped (SIGCONT): PostgreSQL's postmaster and
/// its children, MariaDB's one process.
struct Frozen(Vec<libc::pid_t>);

impl Frozen {
    fn freeze(server: &Server) -> Frozen {
        let leader = server.pid().expect("server pid") as libc::pid_t;
        let mut pids = vec![leader];
        for e in std::fs::read_dir("/proc").expect("/proc").flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<libc::pid_t>().ok()) else {
                continue;
            };
            let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
            let ppid = stat
                .rfind(')')
                .and_then(|i| stat[i + 1..].split_whitespace().nth(1))
                .and_then(|p| p.parse::<libc::pid_t>().ok());
            if ppid == Some(leader) {
                pids.push(pid);
            }
        }
        for &p in &pids {
            // SAFETY: kill(2) on the server this test started and its children.
            unsafe { libc::kill(p, libc::SIGSTOP) };
        }
        Frozen(pids)
    }
}

impl Drop for Frozen {
    fn drop(&mut self) {
        for &p in &self.0 {
            // SAFETY: as in `freeze`.
            unsafe { libc::kill(p, libc::SIGCONT) };
        }
    }
}

/// Run `cmd` and freeze `server` once both threads are connected; SIGINT `interrupt` after the
/// freeze when given.
fn frozen_under_load(server: &Server, cmd: Command, interrupt: Option<Duration>) -> Ran {
    let mut frozen: Option<(Frozen, Instant)> = None;
    let mut checked = Instant::now() - Duration::from_secs(1);
    let r = run_until(
        cmd,
        |_| {
            if frozen.is_none() && checked.elapsed() >= Duration::from_millis(100) {
                checked = Instant::now();
                if in_use(server) >= 2 {
                    // Transactions under way: freeze the server now.
                    std::thread::sleep(Duration::from_millis(300));
                    frozen = Some((Frozen::freeze(server), Instant::now()));
                }
            }
            match (&frozen, interrupt) {
                (Some((_, at)), Some(after)) => at.elapsed() >= after,
                _ => false,
            }
        },
        Duration::from_secs(120),
    );
    assert!(
        frozen.is_some(),
        "{:?}: the load ended before the server was frozen\n{}",
        server.kind,
        r.text()
    );
    drop(frozen);
    r
}

#[test]
fn a_server_that_stops_answering_mid_load_ends_the_load_at_its_duration_and_on_ctrl_c() {
    for server in servers() {
        let kind = server.kind;
        // At its duration: 4 s measured, the server frozen about 1 s in. Before, each thread waited
        // out the client's 30 s statement timeout.
        let r = frozen_under_load(&server, load(&server, &["-d", "4s", "-q"]), None);
        let bound = Duration::from_secs(4 + 3) + allowance() * 2;
        println!("{kind:?} frozen: exit {:?} after {:?}", r.code(), r.took);
        assert!(
            !r.hung && r.took <= bound,
            "{kind:?}: ran {:?}, more than {bound:?}\n{}",
            r.took,
            r.text()
        );
        assert_eq!(
            r.code(),
            Some(1),
            "{kind:?}: a load whose server stopped answering fails\n{}",
            r.text()
        );
        let stdout = String::from_utf8_lossy(&r.out.stdout);
        assert!(
            stdout.contains("Failed: connection_lost"),
            "{kind:?}: the summary says why\n{stdout}"
        );
        assert!(stdout.contains("still waiting on the peer at the end of the phase"), "{stdout}");
        // On Ctrl-C: 60 s asked, SIGINT 1 s after the freeze.
        let r = frozen_under_load(&server, load(&server, &["-d", "60s", "-q"]), Some(Duration::from_secs(1)));
        let bound = Duration::from_millis(1500) + allowance();
        let t = r.after_interrupt.expect("interrupted");
        println!("{kind:?} frozen, Ctrl-C: exit {:?} {t:?} after it", r.code());
        assert!(
            !r.hung && t <= bound,
            "{kind:?}: ended {t:?} after Ctrl-C, more than {bound:?}\n{}",
            r.text()
        );
        assert_eq!(r.code(), Some(130), "{}", r.text());
        let stdout = String::from_utf8_lossy(&r.out.stdout);
        assert!(
            stdout.contains("(interrupted)") && stdout.contains("transactions:"),
            "the summary\n{stdout}"
        );
    }
}

/// The live lines on stderr: (second, transactions/s, errors/s).
fn live_lines(stderr: &str) -> Vec<(u32, f64, f64)> {
    stderr
        .split(['\r', '\n'])
        .filter_map(|l| {
            let l = l.trim();
            let sec = l.strip_prefix('[')?.split('s').next()?.trim().parse().ok()?;
            let trx = l.split("trx/s").next()?.rsplit(']').next()?.trim().parse().ok()?;
            let errs = l.split("errors").nth(1)?.trim().strip_suffix("/s")?.trim().parse().ok()?;
            Some((sec, trx, errs))
        })
        .collect()
}

#[test]
fn with_the_server_gone_the_live_line_counts_no_transaction_and_the_errors_apart() {
    for mut server in servers() {
        let kind = server.kind;
        let cmd = load(&server, &["-d", "5s"]);
        let mut stopped: Option<Instant> = None;
        let mut checked = Instant::now() - Duration::from_secs(1);
        let r = run_until(
            cmd,
            |_| {
                if stopped.is_none() && checked.elapsed() >= Duration::from_millis(100) {
                    checked = Instant::now();
                    if in_use(&server) >= 2 {
                        std::thread::sleep(Duration::from_millis(500));
                        server.stop();
                        stopped = Some(Instant::now());
                    }
                }
                false
            },
            Duration::from_secs(120),
        );
        assert!(
            stopped.is_some(),
            "{kind:?}: the load ended before the server stopped\n{}",
            r.text()
        );
        assert_eq!(r.code(), Some(1), "{}", r.text());
        let stderr = String::from_utf8_lossy(&r.out.stderr);
        let lines = live_lines(&stderr);
        println!("{kind:?}: live lines {lines:?}");
        let last = lines.iter().filter(|(s, _, _)| *s >= 4).collect::<Vec<_>>();
        assert!(!last.is_empty(), "{kind:?}: live lines of the last seconds\n{stderr}");
        for (sec, trx, errs) in last {
            assert_eq!(
                *trx, 0.0,
                "{kind:?}: second {sec}: no transaction commits without a server\n{stderr}"
            );
            assert!(*errs > 0.0, "{kind:?}: second {sec}: the failed ones are counted apart\n{stderr}");
        }
        let stdout = String::from_utf8_lossy(&r.out.stdout);
        assert!(
            stdout.contains("failed transactions: ") && stdout.contains(" per sec.)"),
            "{stdout}"
        );
        assert!(
            stdout.contains("Failed: connection_lost: "),
            "the summary says why it exits 1\n{stdout}"
        );
    }
}

#[test]
fn ctrl_c_during_the_table_load_exits_130_within_a_second() {
    for server in servers() {
        let kind = server.kind;
        // Far more rows than can be loaded before the Ctrl-C, sent once the load is under way (the
        // progress line on stderr is not asked for here: 1.5 s after the start, the table exists).
        let mut cmd = Command::new(BIN);
        cmd.args([
            "load",
            "oltp",
            "--db",
            &server.url,
            "--tables",
            "1",
            "--table-size",
            "20000000",
            "--prepare-only",
            "-q",
        ]);
        let r = run(cmd, Some(Duration::from_millis(1500)), Duration::from_secs(120));
        let t = r
            .after_interrupt
            .unwrap_or_else(|| panic!("{kind:?}: the load ended before its Ctrl-C\n{}", r.text()));
        let bound = Duration::from_millis(1500) + allowance();
        println!("{kind:?} table load, Ctrl-C: exit {:?} {t:?} after it", r.code());
        assert!(
            !r.hung && t <= bound,
            "{kind:?}: ended {t:?} after Ctrl-C, more than {bound:?}\n{}",
            r.text()
        );
        assert_eq!(
            r.code(),
            Some(130),
            "{kind:?}: an interrupted table load is an interruption\n{}",
            r.text()
        );
        let stderr = String::from_utf8_lossy(&r.out.stderr);
        assert!(
            stderr.contains("interrupted while preparing the tables"),
            "{kind:?}: one line says so\n{stderr}"
        );
        no_internals(&r, "oltp table load, Ctrl-C");
    }
}
