//! The PostgreSQL client's TLS against a scratch PostgreSQL set up as a managed one: `ssl = on`
//! with a certificate from a test CA (for `localhost` only) and `hostssl` lines only (the test's
//! user with scram-sha-256). Each `sslmode` behaves as libpq's does; the server's own
//! `pg_stat_ssl` shows the session encrypted; SCRAM is channel-bound; transactions equal the
//! server's commit counter. Scripted servers check the failures that need no PostgreSQL: a
//! plaintext server, TLS dropped mid-handshake, a silent server (one line each, no hang, no
//! password).

use std::io::{Read, Write};
use std::time::{Duration, Instant};

use perflab::workload::oltp::backend::Database;
use perflab::workload::oltp::pg;

use crate::common::{only_run_dir, write_plan};
use crate::db_servers::Server;
use crate::oltp_servers::{prepare, refused_with, transactions_match_the_server, SHAPE};
use crate::tls_certs::Certs;

const PASSWORD: &str = "s3cret-Pw";

/// The one line a connection attempt fails with (checked: one line, no password).
fn refusal(db: &dyn Database) -> String {
    refused_with(db, PASSWORD)
}

/// A scratch PostgreSQL that accepts only TLS (`bench` with scram-sha-256; `postgres`, the
/// oracle's account, trusted over TLS).
fn tls_only_postgres(certs: &Certs) -> Option<Server> {
    let server = Server::postgres()?;
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(server.dir()).expect("scratch dir");
    let (crt, key) = certs.install_server(&server.dir(), meta.uid(), meta.gid());
    server.sql(&format!("CREATE ROLE bench LOGIN PASSWORD '{PASSWORD}'"));
    server.sql("GRANT ALL ON DATABASE sbtest TO bench");
    server
        .try_sql_in(Some("sbtest"), "GRANT ALL ON SCHEMA public TO bench")
        .expect("grant");
    server.sql("CREATE ROLE certified LOGIN");
    server.sql("ALTER SYSTEM SET ssl = on");
    server.sql(&format!(
        "ALTER SYSTEM SET ssl_ca_file = '{}'",
        server.dir().join("ca.pem").display()
    ));
    server.sql(&format!("ALTER SYSTEM SET ssl_cert_file = '{}'", crt.display()));
    server.sql(&format!("ALTER SYSTEM SET ssl_key_file = '{}'", key.display()));
    let hba = server.dir().join("data/pg_hba.conf");
    std::fs::write(
        &hba,
        "hostssl all postgres 127.0.0.1/32 trust\nhostssl all bench 127.0.0.1/32 scram-sha-256\n\
         hostssl all certified 127.0.0.1/32 cert\n",
    )
    .expect("write pg_hba.conf");
    server.sql("SELECT pg_reload_conf()");
    let deadline = Instant::now() + Duration::from_secs(30);
    while server.try_sql("SHOW ssl").as_deref() != Ok("on") {
        assert!(Instant::now() < deadline, "ssl did not turn on:\n{}", server.log());
        std::thread::sleep(Duration::from_millis(100));
    }
    Some(server)
}

fn url(server: &Server, host: &str, keys: &str) -> String {
    format!("postgres://bench:{PASSWORD}@{host}:{}/sbtest?connect_timeout=5&{keys}", server.port)
}

#[test]
fn each_sslmode_behaves_as_libpq_against_a_tls_only_server() {
    let Some(certs) = Certs::make() else { return };
    let Some(server) = tls_only_postgres(&certs) else { return };
    let ca = certs.path("ca.pem");
    let other = certs.path("other-ca.pem");
    let open = |u: String| pg::open(&u).unwrap_or_else(|e| panic!("{u}: {e}"));

    // disable: the server's refusal, in the user's terms
    let line = refusal(open(url(&server, "127.0.0.1", "sslmode=disable")).as_ref());
    assert!(
        line.ends_with("server requires TLS (pg_hba: no entry without encryption): add sslmode=require"),
        "{line}"
    );
    // allow: refused without TLS, then with TLS
    for mode in ["allow", "prefer", "require"] {
        let db = open(url(&server, "127.0.0.1", &format!("sslmode={mode}")));
        drop(db.connect().unwrap_or_else(|e| panic!("sslmode={mode}: {e}")));
        let s = db.session().expect("the session's facts");
        assert!(s.tls.is_some(), "sslmode={mode}: {s}");
        assert_eq!(s.auth, "SCRAM-SHA-256-PLUS", "sslmode={mode}: channel-bound SCRAM over TLS");
    }
    // channel_binding=disable: plain SCRAM over TLS
    let db = open(url(&server, "127.0.0.1", "sslmode=require&channel_binding=disable"));
    drop(db.connect().expect("connects"));
    assert_eq!(db.session().expect("facts").auth, "SCRAM-SHA-256");

    // verify-full: the right CA and host name connect (also sslnegotiation=postgres said outright)
    let good = url(
        &server,
        "localhost",
        &format!("sslmode=verify-full&sslrootcert={}&sslnegotiation=postgres", ca.display()),
    );
    drop(open(good).connect().expect("verify-full with the right CA and host"));
    // verify-ca accepts the CA's certificate whatever the host name
    drop(
        open(url(
            &server,
            "127.0.0.1",
            &format!("sslmode=verify-ca&sslrootcert={}", ca.display()),
        ))
        .connect()
        .expect("verify-ca"),
    );
    // a wrong CA and a wrong host name: their lines
    let line = refusal(
        open(url(
            &server,
            "localhost",
            &format!("sslmode=verify-full&sslrootcert={}", other.display()),
        ))
        .as_ref(),
    );
    assert!(
        line.ends_with(&format!(
            "certificate of localhost is not signed by the CA in sslrootcert={}",
            other.display()
        )),
        "{line}"
    );
    let line = refusal(
        open(url(
            &server,
            "127.0.0.1",
            &format!("sslmode=verify-full&sslrootcert={}", ca.display()),
        ))
        .as_ref(),
    );
    assert!(
        line.ends_with("host name mismatch: certificate is for localhost (sslmode=verify-full)"),
        "{line}"
    );
    // libpq's rule: require with a root certificate checks the chain
    let line = refusal(
        open(url(
            &server,
            "127.0.0.1",
            &format!("sslmode=require&sslrootcert={}", other.display()),
        ))
        .as_ref(),
    );
    assert!(line.contains("is not signed by the CA"), "{line}");

    // a client certificate (the server's `cert` method: the certificate is the login)
    let cert_url = |keys: &str| {
        format!(
            "postgres://certified@127.0.0.1:{}/sbtest?connect_timeout=5&sslmode=require{keys}",
            server.port
        )
    };
    let line = refusal(open(cert_url("")).as_ref());
    assert!(line.contains("certificate"), "{line}");
    let keys = format!(
        "&sslcert={}&sslkey={}",
        certs.path("client.crt").display(),
        certs.path("client.key").display()
    );
    let db = open(cert_url(&keys));
    drop(db.connect().expect("the client certificate logs in"));
    assert_eq!(db.session().expect("facts").auth, "certificate");

    // The server's own view: the session is encrypted, with the version perflab reports.
    let db = open(url(
        &server,
        "localhost",
        &format!("sslmode=verify-full&sslrootcert={}", ca.display()),
    ));
    let conn = db.connect().expect("connects");
    let seen = server.sql(
        "SELECT s.ssl, s.version, s.cipher FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) \
         WHERE a.usename = 'bench' AND a.application_name = 'perflab'",
    );
    let facts = db.session().expect("facts");
    let (version, _) = facts.tls.clone().expect("TLS");
    assert!(
        seen.starts_with(&format!("t|{version}|")),
        "pg_stat_ssl: {seen:?}, perflab: {facts}"
    );
    drop(conn);

    // A run's transactions over TLS equal the server's commit counter.
    prepare(db.as_ref(), SHAPE);
    transactions_match_the_server(&server, db.as_ref());
    assert!(!server.log().contains(PASSWORD), "the server's log holds no password");
}

/// A scripted server on loopback: `script` gets each accepted socket.
fn scripted(script: fn(std::net::TcpStream)) -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = l.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        for s in l.incoming().take(4).flatten() {
            std::thread::spawn(move || script(s));
        }
    });
    port
}

fn scripted_refusal(script: fn(std::net::TcpStream), keys: &str) -> (String, Duration) {
    let port = scripted(script);
    let db = pg::open(&format!("postgres://bench:{PASSWORD}@127.0.0.1:{port}/sb?connect_timeout=2&{keys}")).expect("parses");
    let t0 = Instant::now();
    let line = refusal(db.as_ref());
    (line, t0.elapsed())
}

#[test]
fn a_plaintext_server_a_dropped_handshake_and_a_silent_server_are_one_line_each() {
    // answers the SSLRequest with N (a server without TLS)
    let (line, _) = scripted_refusal(
        |mut s| {
            let mut req = [0u8; 8];
            let _ = s.read_exact(&mut req);
            let _ = s.write_all(b"N");
            std::thread::sleep(Duration::from_secs(3));
        },
        "sslmode=require",
    );
    assert!(
        line.ends_with("the server does not accept TLS (it answered the SSLRequest with N): sslmode requires it"),
        "{line}"
    );
    // not PostgreSQL at all: an HTTP server
    let (line, _) = scripted_refusal(
        |mut s| {
            let _ = s.write_all(b"HTTP/1.1 400 Bad Request\r\n\r\n");
        },
        "sslmode=require",
    );
    assert!(line.contains("does not speak PostgreSQL's TLS negotiation"), "{line}");
    // says S, reads the ClientHello, hangs up
    let (line, _) = scripted_refusal(
        |mut s| {
            let mut req = [0u8; 8];
            let _ = s.read_exact(&mut req);
            let _ = s.write_all(b"S");
            let mut hello = [0u8; 64];
            let _ = s.read(&mut hello);
        },
        "sslmode=require",
    );
    assert!(
        line.ends_with("the server closed the connection during the TLS handshake"),
        "{line}"
    );
    // says S and then nothing: bounded by connect_timeout
    let (line, took) = scripted_refusal(
        |mut s| {
            let mut req = [0u8; 8];
            let _ = s.read_exact(&mut req);
            let _ = s.write_all(b"S");
            std::thread::sleep(Duration::from_secs(8));
        },
        "sslmode=require",
    );
    assert!(
        line.ends_with("no answer from the server within 2s during the TLS handshake"),
        "{line}"
    );
    assert!(
        took < Duration::from_secs(7),
        "connect_timeout=2 bounds the handshake, took {took:?}"
    );
    // direct negotiation sends the ClientHello at once: the same server shape fails the same way
    let (line, _) = scripted_refusal(
        |mut s| {
            let mut hello = [0u8; 64];
            let _ = s.read(&mut hello);
        },
        "sslmode=require&sslnegotiation=direct",
    );
    assert!(
        line.ends_with("the server closed the connection during the TLS handshake"),
        "{line}"
    );
}

#[test]
fn tls_keys_are_checked_when_the_url_is_read() {
    let cases = [
        ("sslmode=bogus", "sslmode=bogus: not one of disable"),
        (
            "sslmode=verify-full",
            "sslmode=verify-full checks the server's certificate: give its CA with sslrootcert=FILE",
        ),
        ("sslmode=require&sslrootcert=system", "sslrootcert=system needs sslmode=verify-full"),
        (
            "sslmode=prefer&sslnegotiation=direct",
            "sslnegotiation=direct needs sslmode=require or stronger",
        ),
        ("sslmode=disable&channel_binding=require", "channel_binding=require needs TLS"),
        (
            "sslmode=verify-ca&sslrootcert=/nonexistent/ca.pem",
            "sslrootcert=/nonexistent/ca.pem: ",
        ),
        ("sslcert=/x.pem", "sslcert without sslkey"),
    ];
    for (keys, expected) in cases {
        let err = pg::open(&format!("postgres://bench:{PASSWORD}@127.0.0.1/sb?{keys}"))
            .err()
            .expect("refused");
        assert!(err.message.contains(expected), "{keys}: {}", err.message);
        assert!(
            err.message.starts_with("postgres://bench:[redacted]@127.0.0.1/sb?"),
            "{}",
            err.message
        );
        assert!(!err.message.contains(PASSWORD) && !err.message.contains('\n'), "{}", err.message);
    }
}

fn tls_plan(url: &str) -> String {
    format!(
        r#"name = "oltp-tls"
[workload]
type = "oltp"
db = "{url}"
scenario = "point_select"
threads = 1
tables = 1
table_size = 100

[phases]
baseline = "0s"
warmup = "0s"
load = "1s"
recovery = "0s"
interval = "500ms"
"#
    )
}

/// Run the plan against `url`; its run directory.
fn run_plan(tmp: &std::path::Path, name: &str, url: &str) -> std::path::PathBuf {
    let dir = tmp.join(name);
    std::fs::create_dir_all(&dir).expect("dir");
    let plan = write_plan(&dir, &tls_plan(url));
    let runs = dir.join("runs");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_perflab"))
        .args(["run", "--quiet", "--runs-dir"])
        .arg(&runs)
        .arg(&plan)
        .output()
        .expect("perflab run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains(PASSWORD));
    only_run_dir(&runs)
}

#[test]
fn the_report_says_how_each_run_connected_and_compare_flags_a_difference() {
    let Some(certs) = Certs::make() else { return };
    let Some(server) = tls_only_postgres(&certs) else { return };
    let tmp = tempfile::tempdir().expect("tmp");
    let bound = run_plan(tmp.path(), "bound", &url(&server, "127.0.0.1", "sslmode=require"));
    let unbound = run_plan(
        tmp.path(),
        "unbound",
        &url(&server, "127.0.0.1", "sslmode=require&channel_binding=disable"),
    );
    let target = format!(
        "oltp database postgres://bench:[redacted]@127.0.0.1:{}/sbtest: TLSv1.3 ",
        server.port
    );
    let md = std::fs::read_to_string(bound.join("report.md")).expect("report.md");
    let line = md
        .lines()
        .find(|l| l.contains(&target))
        .unwrap_or_else(|| panic!("no session line in:\n{md}"));
    assert!(line.ends_with(", SCRAM-SHA-256-PLUS"), "{line}");
    let store = std::fs::read(bound.join("perflab.db")).expect("the run's store");
    assert!(!String::from_utf8_lossy(&store).contains(PASSWORD), "no password in the store");
    assert!(!md.contains(PASSWORD));

    let out = std::process::Command::new(env!("CARGO_BIN_EXE_perflab"))
        .args(["compare", "--format", "md"])
        .arg(&bound)
        .arg(&unbound)
        .output()
        .expect("perflab compare");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let md = std::fs::read_to_string(unbound.join("compare/report.md")).expect("compare report");
    let flag = md
        .lines()
        .find(|l| l.contains("the runs connect to the database differently"))
        .unwrap_or_else(|| panic!("no flag in:\n{md}"));
    assert!(flag.contains("SCRAM-SHA-256-PLUS") && flag.ends_with(", SCRAM-SHA-256"), "{flag}");
}
