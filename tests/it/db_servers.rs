//! Scratch database servers for the OLTP tests: PostgreSQL and MariaDB from the distribution's
//! packages, each on its own data directory, on 127.0.0.1 and a free port, with a small
//! `max_connections`. A [`Server`] stops its server by PID (and waits for it) and removes the
//! directory when it is dropped, on every exit path of a test. The tests ask the server's own
//! command-line client (`psql`, `mariadb`) for the figures they check, so the oracle is not the
//! client under test.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

/// The connection limit the scratch servers run with.
pub const MAX_CONNECTIONS: u32 = 20;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Postgres,
    Mariadb,
}

/// A running scratch server.
pub struct Server {
    pub kind: Kind,
    pub port: u16,
    /// The URL the workload connects with (database `sbtest`, an ordinary user on MariaDB).
    pub url: String,
    child: Option<Child>,
    /// The PostgreSQL binaries' directory (for `psql`).
    bin: PathBuf,
    dir: Option<tempfile::TempDir>,
    /// The oracle's client connects with TLS (a MariaDB that requires it).
    oracle_tls: bool,
}

/// The uid/gid to run PostgreSQL as when we are root (it refuses to run as root): the `postgres`
/// account the Debian package creates, or `nobody`.
fn unprivileged() -> Option<(u32, u32)> {
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    for name in ["postgres", "nobody"] {
        for line in passwd.lines() {
            let f: Vec<&str> = line.split(':').collect();
            if f.len() > 3 && f[0] == name {
                return Some((f[2].parse().ok()?, f[3].parse().ok()?));
            }
        }
    }
    None
}

fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").map(|m| m.uid() == 0).unwrap_or(false)
}

/// The directory holding `initdb`, `postgres` and `psql`: `PERFLAB_PG_BIN`, the one of
/// `/usr/local/bin/initdb`, or the newest `/usr/lib/postgresql/<version>/bin`.
fn postgres_bin() -> Option<PathBuf> {
    if let Ok(dir) = std::env::var("PERFLAB_PG_BIN") {
        return Some(PathBuf::from(dir));
    }
    if let Ok(initdb) = std::fs::canonicalize("/usr/local/bin/initdb") {
        return initdb.parent().map(Path::to_path_buf);
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| e.ok())
        .filter_map(|e| Some((e.file_name().to_str()?.parse().ok()?, e.path().join("bin"))))
        .filter(|(_, p): &(u32, PathBuf)| p.join("initdb").exists())
        .collect();
    versions.sort();
    versions.pop().map(|(_, p)| p)
}

fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin".into(), "/usr/bin".into()])
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

fn run_quietly(cmd: &mut Command, what: &str, log: &Path) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: cannot start: {e}"));
    if !out.status.success() {
        let _ = std::fs::write(log, [&out.stdout[..], &out.stderr[..]].concat());
        panic!(
            "{what} failed ({}):\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// Bootstrap MariaDB's system tables into `data`. The bootstrap failed once during a full
/// parallel `cargo test` on 2 busy vCPUs, saying nothing more than "Installation of system tables
/// failed": it is tried up to three times, into an empty data directory each time.
fn install_mariadb(install: &Path, data: &Path, cwd: &Path) {
    for attempt in 1..=3 {
        let _ = std::fs::remove_dir_all(data);
        let mut cmd = Command::new(install);
        cmd.arg("--no-defaults")
            .arg(format!("--datadir={}", data.display()))
            .args(["--auth-root-authentication-method=normal", "--skip-test-db"])
            .current_dir(cwd);
        if is_root() {
            cmd.arg("--user=root");
        }
        if attempt == 3 {
            run_quietly(&mut cmd, "mariadb-install-db", &cwd.join("install.log"));
        } else if cmd.output().is_ok_and(|o| o.status.success()) {
            break;
        } else {
            eprintln!("NOTE: mariadb-install-db failed (attempt {attempt} of 3): trying again");
        }
    }
}

/// The test process's bootstrapped MariaDB data directory (made once, removed when the process
/// exits), or None where it could not be made.
fn mariadb_template(install: &Path) -> Option<&'static Path> {
    static TEMPLATE: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    fn root() -> PathBuf {
        std::env::temp_dir().join(format!("perflab-my-template-{}", std::process::id()))
    }
    extern "C" fn remove_template() {
        let _ = std::fs::remove_dir_all(root());
    }
    TEMPLATE
        .get_or_init(|| {
            let root = root();
            let _ = std::fs::remove_dir_all(&root);
            std::fs::create_dir_all(&root).ok()?;
            // SAFETY: atexit takes a plain C function; remove_template only reads a OnceLock.
            unsafe { libc::atexit(remove_template) };
            let data = root.join("data");
            install_mariadb(install, &data, &root);
            data.is_dir().then_some(data)
        })
        .as_deref()
}

/// `cp -a FROM TO`: a copy that keeps owners and modes.
fn copy_dir(from: &Path, to: &Path) -> bool {
    let _ = std::fs::remove_dir_all(to);
    Command::new("cp").arg("-a").arg(from).arg(to).status().is_ok_and(|s| s.success())
}

impl Server {
    /// A scratch PostgreSQL, or None (said loudly) when its binaries are not installed.
    pub fn postgres() -> Option<Server> {
        let Some(bin) = postgres_bin().filter(|b| b.join("postgres").exists() && b.join("initdb").exists()) else {
            crate::common::skip_unless_required("PostgreSQL is not installed (no initdb/postgres; Debian package `postgresql`)");
            return None;
        };
        let dir = tempfile::Builder::new().prefix("perflab-pg-").tempdir().expect("scratch dir");
        let user = if is_root() {
            let Some(ids) = unprivileged() else {
                crate::common::skip_unless_required("running as root and no `postgres` or `nobody` account to run PostgreSQL as");
                return None;
            };
            std::os::unix::fs::chown(dir.path(), Some(ids.0), Some(ids.1)).expect("chown scratch dir");
            Some(ids)
        } else {
            None
        };
        let as_user = |cmd: &mut Command| {
            if let Some((uid, gid)) = user {
                use std::os::unix::process::CommandExt;
                cmd.uid(uid).gid(gid);
            }
        };
        let data = dir.path().join("data");
        let mut initdb = Command::new(bin.join("initdb"));
        initdb
            .args(["-A", "trust", "-U", "postgres", "-E", "UTF8", "--locale=C", "--no-sync", "-D"])
            .arg(&data)
            .current_dir(dir.path());
        as_user(&mut initdb);
        run_quietly(&mut initdb, "initdb", &dir.path().join("initdb.log"));

        let port = crate::common::free_port();
        let log = std::fs::File::create(dir.path().join("server.log")).expect("log file");
        if let Some((uid, gid)) = user {
            std::os::unix::fs::chown(dir.path().join("server.log"), Some(uid), Some(gid)).expect("chown log");
        }
        let mut cmd = Command::new(bin.join("postgres"));
        cmd.arg("-D").arg(&data).arg("-p").arg(port.to_string());
        for setting in [
            "listen_addresses=127.0.0.1".to_string(),
            format!("unix_socket_directories={}", dir.path().display()),
            format!("max_connections={MAX_CONNECTIONS}"),
            "superuser_reserved_connections=0".to_string(),
            "fsync=off".to_string(),
            "shared_buffers=32MB".to_string(),
            // autovacuum's and autoanalyze's transactions count in pg_stat_database.xact_commit,
            // which the tests compare with the transactions perflab committed
            "autovacuum=off".to_string(),
        ] {
            cmd.arg("-c").arg(setting);
        }
        cmd.current_dir(dir.path())
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log"))
            .stderr(log);
        as_user(&mut cmd);
        let child = cmd.spawn().expect("start postgres");
        let mut server = Server {
            kind: Kind::Postgres,
            port,
            url: format!("postgres://postgres@127.0.0.1:{port}/sbtest"),
            child: Some(child),
            bin,
            dir: Some(dir),
            oracle_tls: false,
        };
        server.wait_ready();
        server.sql("CREATE DATABASE sbtest");
        Some(server)
    }

    /// A scratch MariaDB, or None (said loudly) when it is not installed.
    pub fn mariadb() -> Option<Server> {
        Server::mariadb_with(&[])
    }

    /// A scratch MariaDB with more server options (`--ssl-cert=...`: its own client then
    /// connects with TLS).
    pub fn mariadb_with(extra: &[String]) -> Option<Server> {
        let (Some(mariadbd), Some(install)) = (which("mariadbd"), which("mariadb-install-db")) else {
            crate::common::skip_unless_required(
                "MariaDB is not installed (no mariadbd/mariadb-install-db; Debian package `mariadb-server`)",
            );
            return None;
        };
        let dir = tempfile::Builder::new().prefix("perflab-my-").tempdir().expect("scratch dir");
        let data = dir.path().join("data");
        // A copy of one data directory bootstrapped once per test process (mariadb-install-db
        // takes seconds; a copy a few tenths), or a bootstrap of its own where none could be made.
        if !mariadb_template(&install).is_some_and(|t| copy_dir(t, &data)) {
            install_mariadb(&install, &data, dir.path());
        }

        let port = crate::common::free_port();
        let mut cmd = Command::new(mariadbd);
        cmd.arg("--no-defaults")
            .arg(format!("--datadir={}", data.display()))
            .arg(format!("--socket={}", dir.path().join("sock").display()))
            .arg(format!("--port={port}"))
            .arg(format!("--pid-file={}", dir.path().join("pid").display()))
            .arg(format!("--log-error={}", dir.path().join("server.log").display()))
            .arg(format!("--max-connections={MAX_CONNECTIONS}"))
            .args([
                "--bind-address=127.0.0.1",
                "--skip-name-resolve",
                "--skip-log-bin",
                "--innodb-buffer-pool-size=64M",
            ])
            .args(["--innodb-flush-log-at-trx-commit=2", "--max-connect-errors=100000"])
            .args(extra)
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if is_root() {
            cmd.arg("--user=root");
        }
        let child = cmd.spawn().expect("start mariadbd");
        let mut server = Server {
            kind: Kind::Mariadb,
            port,
            url: format!("mysql://sb@127.0.0.1:{port}/sbtest"),
            child: Some(child),
            bin: PathBuf::new(),
            dir: Some(dir),
            oracle_tls: extra.iter().any(|a| a.starts_with("--ssl-cert")),
        };
        server.wait_ready();
        server.sql("CREATE DATABASE sbtest; CREATE USER sb@'%'; GRANT ALL ON sbtest.* TO sb@'%'");
        Some(server)
    }

    /// The server's process (PostgreSQL: the postmaster), while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(|c| c.id())
    }

    /// MariaDB's Unix socket (None for PostgreSQL, whose socket directory the tests do not use).
    pub fn socket(&self) -> Option<PathBuf> {
        match self.kind {
            Kind::Mariadb => self.dir.as_ref().map(|d| d.path().join("sock")),
            Kind::Postgres => None,
        }
    }

    /// The server's scratch directory (PostgreSQL's data directory is `data` in it).
    pub fn dir(&self) -> PathBuf {
        self.dir.as_ref().map(|d| d.path().to_path_buf()).unwrap_or_default()
    }

    pub fn log(&self) -> String {
        let dir = self.dir.as_ref().map(|d| d.path().to_path_buf()).unwrap_or_default();
        std::fs::read_to_string(dir.join("server.log")).unwrap_or_default()
    }

    /// Wait (up to 60 s) until the server answers its own client.
    fn wait_ready(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(status) = self.child.as_mut().and_then(|c| c.try_wait().expect("wait")) {
                panic!("the {:?} server exited at start ({status}):\n{}", self.kind, self.log());
            }
            if self.try_sql("SELECT 1").is_ok() {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the {:?} server did not answer within 60 s:\n{}",
                self.kind,
                self.log()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Run SQL as the superuser through the server's own client; its output, trimmed.
    pub fn try_sql(&self, sql: &str) -> Result<String, String> {
        self.try_sql_in(None, sql)
    }

    /// Run SQL in database `db` (None: the server's default one).
    pub fn try_sql_in(&self, db: Option<&str>, sql: &str) -> Result<String, String> {
        let port = self.port.to_string();
        let mut cmd = match self.kind {
            Kind::Postgres => {
                let local = self.bin.join("psql");
                let mut c = Command::new(if local.exists() {
                    local
                } else {
                    which("psql").unwrap_or_else(|| "psql".into())
                });
                c.args(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", &port]);
                c.args(["-U", "postgres", "-d", db.unwrap_or("postgres"), "-c", sql]);
                c
            }
            Kind::Mariadb => {
                let mut c = Command::new(which("mariadb").unwrap_or_else(|| "mariadb".into()));
                c.args(["--no-defaults", "-h", "127.0.0.1", "-P", &port, "-u", "root", "-N", "-B", "-e", sql]);
                if self.oracle_tls {
                    c.arg("--ssl");
                }
                c.args(db);
                c
            }
        };
        let out = cmd.stdin(Stdio::null()).output().map_err(|e| e.to_string())?;
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
        } else {
            Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
        }
    }

    pub fn sql(&self, sql: &str) -> String {
        self.try_sql(sql).unwrap_or_else(|e| panic!("{sql}: {e}"))
    }

    /// One number the server's client printed.
    pub fn number(&self, sql: &str) -> i64 {
        self.number_in_db(None, sql)
    }

    /// One number, from SQL run in database `db`.
    pub fn number_in(&self, db: &str, sql: &str) -> i64 {
        self.number_in_db(Some(db), sql)
    }

    fn number_in_db(&self, db: Option<&str>, sql: &str) -> i64 {
        let out = self.try_sql_in(db, sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
        let last = out.split_whitespace().last().unwrap_or("");
        last.parse().unwrap_or_else(|_| panic!("{sql}: not a number: {out:?}"))
    }

    /// Stop the server (PostgreSQL: fast shutdown, which ends the sessions; MariaDB: normal
    /// shutdown), wait for it, SIGKILL after 30 s.
    pub fn stop(&mut self) {
        let Some(mut child) = self.child.take() else { return };
        let pid = Pid::from_raw(child.id() as i32);
        let signal = match self.kind {
            Kind::Postgres => Signal::SIGINT,
            Kind::Mariadb => Signal::SIGTERM,
        };
        let _ = kill(pid, signal);
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = child.kill();
        let _ = child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
        if let Some(dir) = self.dir.take() {
            let _ = dir.close();
        }
    }
}
