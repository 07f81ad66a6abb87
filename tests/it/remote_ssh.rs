//! Remote hosts over a real sshd: the "server" is a network namespace reached over a veth pair,
//! with its own sshd (own config, host key and authorized key in a temp dir, a test port). Before
//! the pair gets its addresses an `unreachable` route for the whole test subnet is added in the
//! root namespace, so that no packet for a test address can leave through the real interface, even
//! after the namespace is gone. The namespace, the route and sshd are removed on every exit path
//! (a guard's Drop, and a clean-up of a killed earlier run's leftovers at the start). Where
//! namespaces cannot be made, sshd listens on 127.0.0.1 instead, and the test says so.

use crate::dist_lab::sh;
use perflab::plan::HostSpec;
use perflab::remote::protocol::{CommandSpec, Request, Started, TargetSpec};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const NETNS: &str = "perflab-it16";
const VETH_HOST: &str = "pl16h";
const VETH_NS: &str = "pl16n";
const SUBNET: &str = "10.213.16.0/24";
const HOST_ADDR: &str = "10.213.16.1";
const SERVER_ADDR: &str = "10.213.16.2";
const PORT: u16 = 2216;
/// Where a run leaves sshd's pid, so that the next run can stop a killed run's sshd.
const PIDFILE: &str = "/tmp/perflab-it16-sshd.pid";

/// Stop a leftover sshd of ours (its pid file names it; its command line must be our sshd), and
/// remove the namespace, the veth pair and the route.
fn clean_leftovers() {
    if let Ok(pid) = std::fs::read_to_string(PIDFILE).map(|s| s.trim().parse::<i32>().unwrap_or(0)) {
        let cmdline = std::fs::read_to_string(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        if pid > 0 && cmdline.contains("perflab-it16") {
            // SAFETY: kill takes two integers; the pid is checked to be our sshd just above.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        let _ = std::fs::remove_file(PIDFILE);
    }
    sh(&["ip", "netns", "del", NETNS]);
    sh(&["ip", "link", "del", VETH_HOST]);
    sh(&["ip", "route", "del", "unreachable", SUBNET]);
}

/// The test server: sshd in its namespace (or on 127.0.0.1), removed on drop.
pub(crate) struct Server {
    sshd: Child,
    /// Held until the server is gone: another test run on this machine (another checkout, the
    /// benchmark) waits instead of removing this run's namespace.
    _lock: std::fs::File,
    pub(crate) dir: tempfile::TempDir,
    pub(crate) addr: String,
    netns: bool,
}

impl Server {
    /// A directory of this machine that the server does not see (empty there).
    pub(crate) fn hidden(&self) -> PathBuf {
        self.dir.path().join("hidden")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.sshd.kill();
        let _ = self.sshd.wait();
        if self.netns {
            clean_leftovers();
        }
        let _ = std::fs::remove_file(PIDFILE);
    }
}

fn make_netns() -> bool {
    clean_leftovers();
    // The route first: from now on no packet for the subnet leaves through the real interface.
    if !sh(&["ip", "route", "add", "unreachable", SUBNET]) {
        return false;
    }
    let ok = sh(&["ip", "netns", "add", NETNS])
        && sh(&["ip", "link", "add", VETH_HOST, "type", "veth", "peer", "name", VETH_NS])
        && sh(&["ip", "link", "set", VETH_NS, "netns", NETNS])
        && sh(&["ip", "addr", "add", &format!("{HOST_ADDR}/30"), "dev", VETH_HOST])
        && sh(&["ip", "link", "set", VETH_HOST, "up"])
        && sh(&["ip", "-n", NETNS, "addr", "add", &format!("{SERVER_ADDR}/30"), "dev", VETH_NS])
        && sh(&["ip", "-n", NETNS, "link", "set", VETH_NS, "up"])
        && sh(&["ip", "-n", NETNS, "link", "set", "lo", "up"]);
    if !ok {
        clean_leftovers();
    }
    ok
}

fn keygen(path: &Path) -> bool {
    sh(&[
        "ssh-keygen",
        "-q",
        "-t",
        "ed25519",
        "-N",
        "",
        "-f",
        path.to_str().unwrap_or_default(),
    ])
}

/// The namespace, the veth pair, the route and the port are machine-wide: one test run at a time
/// holds them (an exclusive `flock` on a file in /tmp, released when the process ends).
fn machine_lock() -> Option<std::fs::File> {
    use std::os::fd::AsRawFd;
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open("/tmp/perflab-it16.lock")
        .ok()?;
    // SAFETY: flock takes the open file's descriptor and a flag; it touches no memory of ours.
    if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) } != 0 {
        crate::common::skip_unless_required("cannot lock /tmp/perflab-it16.lock");
        return None;
    }
    Some(f)
}

/// Start the server, or None (said loudly) when this machine cannot.
fn server() -> Option<Server> {
    // SAFETY: geteuid takes no arguments, touches no memory and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        crate::common::skip_unless_required("the remote tests need root (their own sshd and network namespace)");
        return None;
    }
    if !Path::new("/usr/sbin/sshd").exists() || Command::new("ssh").arg("-V").output().is_err() {
        crate::common::skip_unless_required("the remote tests need openssh-server and openssh-client (Debian packages)");
        return None;
    }
    let lock = machine_lock()?;
    let dir = tempfile::Builder::new().prefix("perflab-it16-").tempdir().ok()?;
    let d = dir.path();
    if !keygen(&d.join("host_key")) || !keygen(&d.join("client_key")) {
        crate::common::skip_unless_required("ssh-keygen failed");
        return None;
    }
    std::fs::copy(d.join("client_key.pub"), d.join("authorized_keys")).ok()?;
    let netns = make_netns();
    let addr = if netns {
        SERVER_ADDR.to_string()
    } else {
        eprintln!("NOTE: no network namespace could be made here: sshd listens on 127.0.0.1 instead");
        "127.0.0.1".to_string()
    };
    let config = format!(
        "Port {PORT}\nListenAddress {addr}\nHostKey {hk}\nAuthorizedKeysFile {ak}\nPermitRootLogin prohibit-password\n\
         PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\nPidFile {PIDFILE}\n\
         LogLevel ERROR\nMaxStartups 50\n",
        hk = d.join("host_key").display(),
        ak = d.join("authorized_keys").display(),
    );
    std::fs::write(d.join("sshd_config"), config).ok()?;
    let _ = std::fs::create_dir_all("/run/sshd");
    // A directory of this machine the server does not see (an empty tmpfs over it in sshd's own
    // mount namespace, gone with sshd): a path that exists here but not on the server. The
    // server's run list (/run/perflab) is its own too, as on another host: a `perflab run` of
    // another test on this machine cannot clean up after the server's killed agent before the
    // server's next agent does.
    let hidden = d.join("hidden");
    std::fs::create_dir(&hidden).ok()?;
    let mut cmd = if netns {
        let mut c = Command::new("nsenter");
        c.arg(format!("--net=/var/run/netns/{NETNS}")).arg("unshare");
        c
    } else {
        Command::new("unshare")
    };
    cmd.args(["--mount", "--propagation", "private", "sh", "-c"])
        .arg(
            "mount -t tmpfs perflab-it16-hidden \"$0\" && mkdir -p /run/perflab && \
             mount -t tmpfs -o mode=0700 perflab-it16-runs /run/perflab && exec /usr/sbin/sshd \"$@\"",
        )
        .arg(&hidden)
        .args(["-D", "-e", "-f"])
        .arg(d.join("sshd_config"))
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let sshd = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            if netns {
                clean_leftovers();
            }
            crate::common::skip_unless_required(&format!("cannot start sshd: {e}"));
            return None;
        }
    };
    let server = Server {
        sshd,
        _lock: lock,
        dir,
        addr,
        netns,
    };
    // Wait until it accepts (from the root namespace, over the veth pair).
    let end = Instant::now() + Duration::from_secs(10);
    let sa: std::net::SocketAddr = format!("{}:{PORT}", server.addr).parse().ok()?;
    while std::net::TcpStream::connect_timeout(&sa, Duration::from_millis(200)).is_err() {
        if Instant::now() > end {
            crate::common::skip_unless_required(&format!("sshd did not start listening on {sa}"));
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Some(server)
}

impl Server {
    fn host(&self, name: &str) -> HostSpec {
        HostSpec {
            name: name.into(),
            ssh: format!("root@{}", self.addr),
            port: Some(PORT),
            identity: Some(self.dir.path().join("client_key").display().to_string()),
            ssh_options: vec![
                "StrictHostKeyChecking=no".into(),
                "UserKnownHostsFile=/dev/null".into(),
                "LogLevel=ERROR".into(),
            ],
            perflab: Some(env!("CARGO_BIN_EXE_perflab").into()),
        }
    }

    fn plan(&self, hosts: &str) -> PathBuf {
        let body = format!("name = \"remote\"\n[workload]\ntype = \"exec\"\ncommand = [\"true\"]\n[hosts]\n{hosts}\n");
        crate::common::write_plan(self.dir.path(), &body)
    }

    /// This machine's address as the server reaches it (the root namespace's end of the veth
    /// pair, or 127.0.0.1 without a namespace).
    pub(crate) fn local_addr(&self) -> &'static str {
        if self.netns {
            HOST_ADDR
        } else {
            "127.0.0.1"
        }
    }

    /// The pid of the test's sshd (the agents it starts are its descendants).
    pub(crate) fn sshd_pid(&self) -> u32 {
        self.sshd.id()
    }

    pub(crate) fn toml_host(&self, name: &str, identity: &Path, perflab: &str) -> String {
        format!(
            "{name} = {{ ssh = \"root@{}\", port = {PORT}, identity = \"{}\", perflab = \"{perflab}\", \
             ssh_options = [\"StrictHostKeyChecking=no\", \"UserKnownHostsFile=/dev/null\", \"LogLevel=ERROR\"] }}",
            self.addr,
            identity.display()
        )
    }
}

pub(crate) fn group_alive(pgid: i32) -> bool {
    std::fs::read_dir("/proc").into_iter().flatten().flatten().any(|e| {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            return false;
        };
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let f: Vec<&str> = stat
            .rsplit_once(')')
            .map(|(_, r)| r.split_whitespace().collect())
            .unwrap_or_default();
        f.len() > 3 && f[2].parse::<i32>() == Ok(pgid) && !matches!(f[0], "Z" | "X")
    })
}

fn hosts_cmd(action: &str, plan: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_perflab"))
        .args(["hosts", action])
        .arg(plan)
        .output()
        .expect("perflab hosts")
}

/// The scenarios of `perflab run` with a target or an exec on the server, each in its own module.
fn scenarios_of_a_run(srv: &Server, key: &Path) {
    install_into_the_per_version_cache(srv, key);
    crate::remote_run::target_on_the_server(srv, key);
    crate::remote_programs::perflab_is_the_agents_own_binary(srv, key);
    crate::remote_programs::a_missing_program_is_said_before_the_run(srv, key);
    crate::remote_run::channel_lost_mid_trial(srv, key);
    crate::remote_run::exec_on_the_server(srv, key);
    crate::remote_run::ctrl_c_leaves_nothing_on_the_server(srv, key);
    crate::remote_agent_killed::the_next_agent_cleans_up_after_a_killed_one(srv, key);
    crate::remote_run::hosts_monitored_and_reported(srv, key);
    crate::dist_from::load_from_the_plans_hosts(srv, key);
    crate::dist_from::a_lost_agent_and_ctrl_c(srv, key);
    crate::dist_from::oltp_tables_prepared_once_by_segment_zero(srv, key);
    crate::remote_profile::the_servers_target_is_profiled_through_its_agent(srv, key);
    crate::remote_clock::clock_changed_between_trials(srv, key);
    crate::remote_clock::matrix_of_hosts(srv, key);
}

/// One sshd serves every scenario, one after the other.
#[test]
fn remote_hosts_over_a_real_sshd() {
    let Some(srv) = server() else { return };
    let key = srv.dir.path().join("client_key");
    let bin = env!("CARGO_BIN_EXE_perflab");

    // `hosts check`: facts, version and a clock offset within a millisecond.
    let plan = srv.plan(&srv.toml_host("server", &key, bin));
    let out = hosts_cmd("check", &plan);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    let line = text
        .lines()
        .find(|l| l.starts_with("server: reachable"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(line.contains(&format!("perflab {}", env!("CARGO_PKG_VERSION"))), "{line}");
    let mut ch = perflab::remote::open(&srv.host("server")).expect("channel over ssh");
    let o = ch.clock(8).expect("clock");
    // Same kernel clock on both ends: the true offset is 0.
    assert!(o.offset_s.abs() <= o.uncertainty_s + 1e-4, "{o:?}");
    eprintln!(
        "clock over ssh: offset {:+.3} ms ± {:.3} ms",
        o.offset_s * 1e3,
        o.uncertainty_s * 1e3
    );

    // `perflab monitor --host`: the remote live monitor, samples on this machine's timeline.
    let key_s = key.display().to_string();
    let port_s = PORT.to_string();
    let dest = format!("root@{}", srv.addr);
    let mut args = vec![
        "monitor",
        "--host",
        &dest,
        "--ssh-port",
        &port_s,
        "--identity",
        &key_s,
        "--remote-perflab",
        bin,
    ];
    for o in ["StrictHostKeyChecking=no", "UserKnownHostsFile=/dev/null", "LogLevel=ERROR"] {
        args.extend(["--ssh-option", o]);
    }
    args.extend(["--interval", "200ms", "--count", "2", "--jsonl", "-"]);
    let out = Command::new(bin).args(&args).output().expect("perflab monitor --host");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).expect("a JSON line")).collect();
    assert_eq!(lines.len(), 2, "{text}");
    for l in &lines {
        assert!(
            l.get("cpu_busy_pct")
                .and_then(|v| v.as_f64())
                .is_some_and(|v| (0.0..=100.0).contains(&v)),
            "{l}"
        );
    }

    // The ssh client killed mid-target: the agent stops the target's whole group.
    let target = TargetSpec {
        command: CommandSpec::Shell("sleep 120 & sleep 120; wait".into()),
        cwd: None,
        env: vec![],
        stop_signal: libc::SIGTERM,
        grace_s: 1.0,
        cpus: None,
        cpu_quota: None,
        memory: None,
    };
    let s: Started = ch
        .call(Request::Start { name: "t".into(), target }, Duration::from_secs(20))
        .expect("start over ssh");
    assert!(group_alive(s.pid));
    // SAFETY: kill takes two integers; the pid is the ssh client this channel started.
    unsafe { libc::kill(ch.pid() as i32, libc::SIGKILL) };
    let e = ch.call::<serde_json::Value>(Request::Clock, Duration::from_secs(10)).unwrap_err();
    assert!(e.to_string().starts_with("host `server`:"), "{e}");
    let end = Instant::now() + Duration::from_secs(10);
    while group_alive(s.pid) && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!group_alive(s.pid), "the target's process group survived the lost channel");
    drop(ch);

    // `perflab run` with [hosts]: each host reached before anything starts, its facts and clock
    // offset stored with the run; a refused key is one line and no run directory.
    let runs = srv.dir.path().join("runs");
    let phases = "[phases]\nbaseline = 0\nwarmup = 0\nload = \"200ms\"\nrecovery = 0\n";
    let good = format!("{}\n{phases}", srv.toml_host("server", &key, bin));
    let out = Command::new(bin)
        .args(["run", "-q", "--runs-dir"])
        .arg(&runs)
        .arg(srv.plan(&good))
        .output()
        .expect("perflab run");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let store = perflab::store::Store::open(crate::common::only_run_dir(&runs)).expect("the run's store");
    let hosts = store.hosts().expect("read hosts").expect("hosts stored");
    // `local` first (this machine, offset 0), then the plan's hosts.
    assert_eq!(hosts[0]["name"], "local");
    assert_eq!(hosts[0]["offset_s"], 0.0);
    assert_eq!(hosts[1]["name"], "server");
    assert_eq!(hosts[1]["perflab"], env!("CARGO_PKG_VERSION"));
    assert!(hosts[1]["facts"]["cpus"].as_u64().unwrap_or(0) >= 1, "{hosts}");
    let (off, unc) = (
        hosts[1]["offset_s"].as_f64().unwrap_or(9.0),
        hosts[1]["uncertainty_s"].as_f64().unwrap_or(9.0),
    );
    assert!(off.abs() <= unc + 1e-4, "{hosts}");
    let refused_runs = srv.dir.path().join("runs-refused");
    let other = srv.dir.path().join("other_key");
    assert!(keygen(&other));
    let bad = format!("{}\n{phases}", srv.toml_host("server", &other, bin));
    let out = Command::new(bin)
        .args(["run", "-q", "--runs-dir"])
        .arg(&refused_runs)
        .arg(srv.plan(&bad))
        .output()
        .expect("perflab run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("perflab: error: host `server`: ssh refused the login"), "{err}");
    assert!(
        std::fs::read_dir(&refused_runs).map(|d| d.count()).unwrap_or(0) == 0,
        "a run directory was made"
    );

    scenarios_of_a_run(&srv, &key);

    // A refused key, an unreachable host and a host without perflab: one clear line each.
    let cases = [
        (srv.toml_host("server", &other, bin), "server: ssh refused the login"),
        (
            srv.toml_host("server", &key, "/nonexistent/perflab"),
            "server: perflab is not installed there",
        ),
    ];
    for (host, want) in cases {
        let out = hosts_cmd("check", &srv.plan(&host));
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(1), "{text}");
        let line = text.lines().last().unwrap_or_default();
        assert!(
            line.starts_with(&format!("host `{}", want.split(':').next().unwrap_or_default()))
                && line.contains(want.split(": ").nth(1).unwrap_or_default()),
            "want {want:?}, got {text}"
        );
    }
    let unreachable = srv.toml_host("server", &key, bin).replace(&format!("port = {PORT}"), "port = 2");
    let out = hosts_cmd("check", &srv.plan(&unreachable));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.lines().last().unwrap_or_default().starts_with("host `server`: unreachable: "),
        "{text}"
    );
}

/// Removes the per-version cache this test filled, whatever happens.
struct RemoveOnDrop(PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
        // The cache's parent too, when nothing else is in it.
        if let Some(p) = self.0.parent() {
            let _ = std::fs::remove_dir(p);
        }
    }
}

/// `hosts install`: the binary copied into the host's per-version cache (the sshd's host is this
/// machine, its home root's), checked by SHA-256; a second install copies nothing; then the agent
/// starts from the cache (the plan names no `perflab`, and none is on the host's PATH).
fn install_into_the_per_version_cache(srv: &Server, key: &Path) {
    let cache = PathBuf::from("/root/.cache/perflab").join(env!("CARGO_PKG_VERSION"));
    if cache.exists() {
        crate::common::skip_unless_required(&format!(
            "install: {} exists already and is not this test's to replace",
            cache.display()
        ));
        return;
    }
    let _gone = RemoveOnDrop(cache.clone());
    let bin = env!("CARGO_BIN_EXE_perflab");
    let host = srv.toml_host("server", key, bin).replace(&format!("perflab = \"{bin}\", "), "");
    assert!(!host.contains("perflab ="), "{host}");
    let plan = srv.plan(&host);
    let out = hosts_cmd("install", &plan);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("server: installed perflab"), "{text}");
    let copied = std::fs::read(cache.join("perflab")).expect("the copy");
    assert_eq!(copied, std::fs::read(bin).expect("this perflab"), "the copy is this binary");
    let out = hosts_cmd("install", &plan);
    let again = format!("server: perflab {} already installed", env!("CARGO_PKG_VERSION"));
    assert!(String::from_utf8_lossy(&out.stdout).contains(&again), "{out:?}");
    let out = hosts_cmd("check", &plan);
    assert!(String::from_utf8_lossy(&out.stdout).contains("server: reachable"), "{out:?}");
}
