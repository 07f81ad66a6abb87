//! The MySQL/MariaDB client's TLS: against a scratch MariaDB with `require_secure_transport = ON`
//! and a certificate from a test CA (each `ssl-mode` as the mysql client; `Ssl_cipher` of the
//! session non-empty; transactions equal `Com_commit`), and against a scripted server that speaks
//! MySQL 8's documented handshake for `caching_sha2_password`'s full authentication over TLS (a
//! server whose cache is empty), since Debian has no MySQL server.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::time::Duration;

use perflab::workload::oltp::backend::Database;
use perflab::workload::oltp::mysql;

use crate::db_servers::Server;
use crate::oltp_servers::{prepare, refused_with, transactions_match_the_server, SHAPE};
use crate::tls_certs::Certs;

const PASSWORD: &str = "s3cret-Pw";

fn refusal(db: &dyn Database) -> String {
    refused_with(db, PASSWORD)
}

#[test]
fn each_ssl_mode_behaves_as_the_mysql_client_against_a_tls_only_mariadb() {
    let Some(certs) = Certs::make() else { return };
    let p = |n: &str| certs.path(n).display().to_string();
    let Some(server) = Server::mariadb_with(&[
        format!("--ssl-cert={}", p("server.crt")),
        format!("--ssl-key={}", p("server.key")),
        format!("--ssl-ca={}", p("ca.pem")),
        "--require-secure-transport=ON".to_string(),
        "--performance-schema=ON".to_string(),
    ]) else {
        return;
    };
    server.sql(&format!(
        "CREATE USER bench@'%' IDENTIFIED BY '{PASSWORD}'; GRANT ALL ON sbtest.* TO bench@'%'; \
         CREATE USER certified@'%' IDENTIFIED BY '{PASSWORD}' REQUIRE X509; GRANT ALL ON sbtest.* TO certified@'%'"
    ));
    let url =
        |user: &str, host: &str, keys: &str| format!("mysql://{user}:{PASSWORD}@{host}:{}/sbtest?connect-timeout=5&{keys}", server.port);
    let open = |u: String| mysql::open(&u).unwrap_or_else(|e| panic!("{u}: {e}"));

    for keys in ["", "ssl-mode=PREFERRED", "ssl-mode=REQUIRED", "ssl-mode=required"] {
        let db = open(url("bench", "127.0.0.1", keys));
        drop(db.connect().unwrap_or_else(|e| panic!("{keys}: {e}")));
        let s = db.session().expect("facts");
        assert!(s.tls.is_some(), "{keys}: {s}");
        assert_eq!(s.auth, "mysql_native_password", "{keys}");
    }
    let line = refusal(open(url("bench", "127.0.0.1", "ssl-mode=DISABLED")).as_ref());
    eprintln!("DISABLED: {line}");
    assert!(
        // (MariaDB denies access where MySQL says "insecure transport": perflab adds the hint)
        line.ends_with("(error 1045) (ssl-mode=DISABLED: if the server requires secure transport, use ssl-mode=REQUIRED)"),
        "{line}"
    );
    let ca = p("ca.pem");
    drop(
        open(url("bench", "127.0.0.1", &format!("ssl-mode=VERIFY_CA&ssl-ca={ca}")))
            .connect()
            .expect("VERIFY_CA"),
    );
    drop(
        open(url("bench", "localhost", &format!("ssl-mode=VERIFY_IDENTITY&ssl-ca={ca}")))
            .connect()
            .expect("VERIFY_IDENTITY"),
    );
    let line = refusal(
        open(url(
            "bench",
            "localhost",
            &format!("ssl-mode=VERIFY_CA&ssl-ca={}", p("other-ca.pem")),
        ))
        .as_ref(),
    );
    assert!(
        line.ends_with(&format!(
            "certificate of localhost is not signed by the CA in ssl-ca={}",
            p("other-ca.pem")
        )),
        "{line}"
    );
    let line = refusal(open(url("bench", "127.0.0.1", &format!("ssl-mode=VERIFY_IDENTITY&ssl-ca={ca}"))).as_ref());
    assert!(
        line.ends_with("host name mismatch: certificate is for localhost (ssl-mode=VERIFY_IDENTITY)"),
        "{line}"
    );
    // a user that must show a client certificate: refused without one, let in with it
    refusal(open(url("certified", "127.0.0.1", "ssl-mode=REQUIRED")).as_ref());
    let with_cert = format!("ssl-mode=REQUIRED&ssl-cert={}&ssl-key={}", p("client.crt"), p("client.key"));
    drop(
        open(url("certified", "127.0.0.1", &with_cert))
            .connect()
            .expect("the client certificate"),
    );

    // The server's view of perflab's session: Ssl_cipher is set.
    let db = open(url("bench", "localhost", &format!("ssl-mode=VERIFY_IDENTITY&ssl-ca={ca}")));
    let conn = db.connect().expect("connects");
    let cipher = server.sql(
        "SELECT s.VARIABLE_VALUE FROM performance_schema.status_by_thread s JOIN performance_schema.threads t \
         USING (THREAD_ID) WHERE t.PROCESSLIST_USER = 'bench' AND s.VARIABLE_NAME = 'Ssl_cipher'",
    );
    assert!(!cipher.is_empty(), "the session's Ssl_cipher is empty");
    eprintln!("MariaDB says Ssl_cipher={cipher}; perflab says {}", db.session().expect("facts"));
    drop(conn);

    prepare(db.as_ref(), SHAPE);
    transactions_match_the_server(&server, db.as_ref());
}

/// The initial handshake of a MySQL 8 server offering caching_sha2_password (and TLS if `tls`).
fn greeting(tls: bool) -> Vec<u8> {
    let caps: u32 = 1 | 4 | 8 | (1 << 9) | (1 << 13) | (1 << 15) | (1 << 17) | (1 << 19) | (1 << 21) | if tls { 1 << 11 } else { 0 };
    let mut p = vec![10];
    p.extend_from_slice(b"8.4.0-scripted\0");
    p.extend_from_slice(&7u32.to_le_bytes());
    p.extend_from_slice(b"abcdefgh\0");
    p.extend_from_slice(&(caps as u16).to_le_bytes());
    p.push(255);
    p.extend_from_slice(&2u16.to_le_bytes());
    p.extend_from_slice(&((caps >> 16) as u16).to_le_bytes());
    p.push(21);
    p.extend_from_slice(&[0; 10]);
    p.extend_from_slice(b"ijklmnopqrst\0");
    p.extend_from_slice(b"caching_sha2_password\0");
    p
}

fn put(s: &mut impl Write, seq: u8, payload: &[u8]) {
    let mut out = (payload.len() as u32).to_le_bytes()[..3].to_vec();
    out.push(seq);
    out.extend_from_slice(payload);
    let _ = s.write_all(&out);
}

fn get(s: &mut impl Read) -> Option<(u8, Vec<u8>)> {
    let mut h = [0u8; 4];
    s.read_exact(&mut h).ok()?;
    let mut p = vec![0; u32::from_le_bytes([h[0], h[1], h[2], 0]) as usize];
    s.read_exact(&mut p).ok()?;
    Some((h[3], p))
}

/// After the handshake response: ask for the full authentication, check the password that
/// comes, say OK. Returns the password received.
fn full_auth(s: &mut (impl Read + Write), seq: u8) -> Option<Vec<u8>> {
    put(s, seq + 1, &[0x01, 0x04]);
    let (_, password) = get(s)?;
    put(s, seq + 3, &[0x00, 0, 0, 2, 0, 0, 0]);
    let mut rest = [0u8; 64];
    let _ = s.read(&mut rest);
    Some(password)
}

/// A scripted MySQL 8 with an empty caching_sha2_password cache, on loopback: serves one
/// connection, sends what it received as the password (None: the client gave up).
fn scripted_mysql(certs: &Certs, tls: bool) -> (u16, std::sync::mpsc::Receiver<Option<Vec<u8>>>) {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let chain = CertificateDer::pem_file_iter(certs.path("server.crt"))
        .expect("crt")
        .map(|c| c.expect("crt"))
        .collect();
    let key = PrivateKeyDer::from_pem_file(certs.path("server.key")).expect("key");
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .expect("server config");
    let config = Arc::new(config);
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = l.local_addr().expect("addr").port();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let Ok((mut s, _)) = l.accept() else { return };
        s.set_read_timeout(Some(Duration::from_secs(10))).expect("timeout");
        put(&mut s, 0, &greeting(tls));
        let result = (|| {
            let (seq, first) = get(&mut s)?;
            if first.len() == 32 && u32::from_le_bytes(first[..4].try_into().ok()?) & (1 << 11) != 0 {
                let conn = rustls::ServerConnection::new(config).ok()?;
                let mut t = rustls::StreamOwned::new(conn, s);
                let (seq, _response) = get(&mut t)?;
                full_auth(&mut t, seq)
            } else {
                full_auth(&mut s, seq)
            }
        })();
        let _ = tx.send(result);
    });
    (port, rx)
}

#[test]
fn caching_sha2_full_authentication_goes_over_tls_and_is_refused_without() {
    let Some(certs) = Certs::make() else { return };
    let (port, got) = scripted_mysql(&certs, true);
    let ca = certs.path("ca.pem").display().to_string();
    let db = mysql::open(&format!(
        "mysql://bench:{PASSWORD}@localhost:{port}/sbtest?ssl-mode=VERIFY_IDENTITY&ssl-ca={ca}&connect-timeout=5"
    ))
    .expect("parses");
    drop(db.connect().expect("logs in with the full authentication over TLS"));
    let s = db.session().expect("facts");
    assert!(s.tls.is_some(), "{s}");
    assert_eq!(s.auth, "caching_sha2_password");
    let password = got
        .recv_timeout(Duration::from_secs(20))
        .expect("the server finished")
        .expect("a password");
    assert_eq!(
        password,
        format!("{PASSWORD}\0").into_bytes(),
        "the password, NUL-terminated, over TLS"
    );

    // Without TLS, the client refuses to send the password in the clear (no RSA key exchange).
    let (port, got) = scripted_mysql(&certs, false);
    let db = mysql::open(&format!("mysql://bench:{PASSWORD}@127.0.0.1:{port}/sbtest?connect-timeout=5")).expect("parses");
    let line = refusal(db.as_ref());
    assert!(
        line.contains("the server offers only caching_sha2_password full authentication, which needs TLS: use ssl-mode=REQUIRED"),
        "{line}"
    );
    assert_eq!(got.recv_timeout(Duration::from_secs(20)).expect("the server finished"), None);

    // REQUIRED against a server without TLS: one line, before any password.
    let (port, got) = scripted_mysql(&certs, false);
    let db = mysql::open(&format!(
        "mysql://bench:{PASSWORD}@127.0.0.1:{port}/sbtest?ssl-mode=REQUIRED&connect-timeout=5"
    ))
    .expect("parses");
    let line = refusal(db.as_ref());
    assert!(line.contains("the server does not offer TLS (ssl-mode=REQUIRED)"), "{line}");
    assert_eq!(got.recv_timeout(Duration::from_secs(20)).expect("the server finished"), None);
}

#[test]
fn mysql_tls_keys_are_checked_when_the_url_is_read() {
    for (keys, expected) in [
        ("ssl-mode=bogus", "ssl-mode=BOGUS: not one of DISABLED"),
        (
            "ssl-mode=VERIFY_CA",
            "ssl-mode=VERIFY_CA checks the server's certificate: give its CA with ssl-ca=FILE",
        ),
        ("ssl-ca=/nonexistent/ca.pem", "ssl-ca=/nonexistent/ca.pem: "),
        ("ssl-key=/k.pem", "ssl-key without ssl-cert"),
    ] {
        let err = mysql::open(&format!("mysql://bench:{PASSWORD}@127.0.0.1/sb?{keys}"))
            .err()
            .expect("refused");
        assert!(err.message.contains(expected), "{keys}: {}", err.message);
        assert!(!err.message.contains(PASSWORD) && !err.message.contains('\n'), "{}", err.message);
    }
}
