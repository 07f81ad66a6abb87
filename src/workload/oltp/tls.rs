//! TLS for the OLTP clients (PostgreSQL and MySQL/MariaDB) through rustls and its ring provider:
//! the client configuration a URL's keys ask for (how the server's certificate is checked, which
//! roots, a client certificate), the socket that is plain or TLS, and the handshake's failures in
//! the database user's terms.
//!
//! How the server is checked, as libpq's `sslmode` and the mysql client's `ssl-mode` say:
//! [`Verify::None`] (`require`, `REQUIRED`, `prefer`: encrypted, any certificate; the handshake's
//! signatures are still checked), [`Verify::Ca`] (`verify-ca`, `VERIFY_CA`: signed by the given
//! roots, any name) and [`Verify::Full`] (`verify-full`, `VERIFY_IDENTITY`: signed and issued for
//! the host the URL names).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::fd::{AsRawFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::util::tls::AnyCertificate;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{CertificateError, ClientConfig, ClientConnection, DigitallySignedStruct, RootCertStore, SignatureScheme, StreamOwned};

use super::backend::{cut_or, DbError, ErrorClass};
use crate::util::cut::Watched;

/// How much of the server's certificate is checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verify {
    None,
    Ca,
    Full,
}

/// Where the trusted roots come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Roots {
    /// A PEM file of CA certificates.
    File(PathBuf),
    /// The platform's roots (`SSL_CERT_FILE`, else the distribution's bundle, else Mozilla's
    /// roots compiled in).
    System,
}

/// What a URL asks of TLS, with the names its keys have in that URL (for the error lines).
#[derive(Clone, Debug)]
pub struct TlsSettings {
    pub verify: Verify,
    pub roots: Option<Roots>,
    /// The client certificate chain and its key (PEM files).
    pub client: Option<(PathBuf, PathBuf)>,
    /// The key that names the roots (`sslrootcert`, `ssl-ca`).
    pub roots_key: &'static str,
    /// The mode as the URL says it (`sslmode=verify-full`), for the error lines.
    pub mode: String,
    /// ALPN protocol to offer (PostgreSQL's direct negotiation needs `postgresql`).
    pub alpn: Option<&'static [u8]>,
}

/// The client configuration for `s`: roots and client certificate read now, so that a missing or
/// bad file is said before any connection. The error is a short reason.
pub fn client_config(s: &TlsSettings) -> Result<Arc<ClientConfig>, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?;
    let verifier: Arc<dyn ServerCertVerifier> = match s.verify {
        Verify::None => Arc::new(AnyCertificate(provider)),
        Verify::Ca | Verify::Full => {
            let roots = match &s.roots {
                Some(r) => load_roots(r, s.roots_key)?,
                None => load_roots(&Roots::System, s.roots_key)?,
            };
            let webpki = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
                .build()
                .map_err(|e| format!("{}: {e}", s.roots_key))?;
            if s.verify == Verify::Ca {
                Arc::new(AnyName(webpki))
            } else {
                webpki
            }
        }
    };
    let builder = builder.dangerous().with_custom_certificate_verifier(verifier);
    let mut config = match &s.client {
        None => builder.with_no_client_auth(),
        Some((cert, key)) => {
            let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
                .and_then(|i| i.collect::<Result<_, _>>())
                .map_err(|e| format!("cannot read the client certificate {}: {e}", cert.display()))?;
            if chain.is_empty() {
                return Err(format!("{}: no certificate in it", cert.display()));
            }
            let key = PrivateKeyDer::from_pem_file(key).map_err(|e| format!("cannot read the client key {}: {e}", key.display()))?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| format!("the client certificate and key do not go together: {e}"))?
        }
    };
    if let Some(p) = s.alpn {
        config.alpn_protocols = vec![p.to_vec()];
    }
    Ok(Arc::new(config))
}

fn load_roots(r: &Roots, key: &str) -> Result<RootCertStore, String> {
    let mut store = RootCertStore::empty();
    let file = match r {
        Roots::File(f) => Some(f.clone()),
        Roots::System => std::env::var_os("SSL_CERT_FILE").map(PathBuf::from).or_else(|| {
            [
                "/etc/ssl/certs/ca-certificates.crt",
                "/etc/pki/tls/certs/ca-bundle.crt",
                "/etc/ssl/cert.pem",
            ]
            .iter()
            .map(PathBuf::from)
            .find(|p| p.is_file())
        }),
    };
    match file {
        Some(f) => {
            let certs = CertificateDer::pem_file_iter(&f)
                .and_then(|i| i.collect::<Result<Vec<_>, _>>())
                .map_err(|e| format!("{key}={}: {e}", f.display()))?;
            let (added, _) = store.add_parsable_certificates(certs);
            if added == 0 {
                return Err(format!("{key}={}: no CA certificate in it", f.display()));
            }
        }
        None => store.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
    }
    Ok(store)
}

/// Signed by the roots, for any host name: `verify-ca`. (webpki checks the chain before the
/// name, so a name error means the chain is good.)
#[derive(Debug)]
struct AnyName(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for AnyName {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self.0.verify_server_cert(end_entity, intermediates, name, ocsp, now) {
            Err(rustls::Error::InvalidCertificate(CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. })) => {
                Ok(ServerCertVerified::assertion())
            }
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

/// A database connection's socket: plain TCP, or TLS over it.
pub enum DbStream {
    Plain(TcpStream),
    Tls(Box<StreamOwned<ClientConnection, TcpStream>>),
}

impl DbStream {
    pub fn tcp(&self) -> &TcpStream {
        match self {
            DbStream::Plain(s) => s,
            DbStream::Tls(s) => &s.sock,
        }
    }

    /// The TLS version and cipher suite (`TLSv1.3`, `TLS13_AES_256_GCM_SHA384`), None when plain.
    pub fn tls_facts(&self) -> Option<(String, String)> {
        let DbStream::Tls(s) = self else { return None };
        let version = match s.conn.protocol_version()? {
            rustls::ProtocolVersion::TLSv1_3 => "TLSv1.3".to_string(),
            rustls::ProtocolVersion::TLSv1_2 => "TLSv1.2".to_string(),
            v => format!("{v:?}"),
        };
        let cipher = s.conn.negotiated_cipher_suite().map(|c| format!("{:?}", c.suite()))?;
        Some((version, cipher))
    }

    /// The server's certificate (DER), when TLS is on.
    pub fn peer_certificate(&self) -> Option<&[u8]> {
        let DbStream::Tls(s) = self else { return None };
        s.conn.peer_certificates()?.first().map(|c| c.as_ref())
    }
}

impl Read for DbStream {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            DbStream::Plain(s) => s.read(buf),
            DbStream::Tls(s) => s.read(buf),
        }
    }
}

impl Write for DbStream {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            DbStream::Plain(s) => s.write(buf),
            DbStream::Tls(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            DbStream::Plain(s) => s.flush(),
            DbStream::Tls(s) => s.flush(),
        }
    }
}

impl AsRawFd for DbStream {
    fn as_raw_fd(&self) -> RawFd {
        self.tcp().as_raw_fd()
    }
}

/// Wrap `sock` in TLS and finish the handshake (each read waiting at most `timeout`). `host` is
/// the name the certificate is checked against; `s` words the failures.
pub fn handshake(
    sock: Watched<DbStream>,
    config: &Arc<ClientConfig>,
    host: &str,
    s: &TlsSettings,
    timeout: Duration,
) -> Result<Watched<DbStream>, DbError> {
    let other = |m: String| DbError::new(ErrorClass::Other, m);
    let name = ServerName::try_from(host.to_string()).map_err(|_| other(format!("'{host}' is not a host name for TLS")))?;
    let conn = ClientConnection::new(config.clone(), name).map_err(|e| other(format!("cannot start TLS: {e}")))?;
    sock.tcp()
        .set_read_timeout(Some(timeout))
        .map_err(|e| DbError::new(ErrorClass::ConnectionLost, e.to_string()))?;
    let mut sock = sock.map(|s| match s {
        DbStream::Plain(tcp) => DbStream::Tls(Box::new(StreamOwned::new(conn, tcp))),
        tls => tls,
    });
    if let DbStream::Tls(t) = &mut *sock {
        while t.conn.is_handshaking() {
            match t.conn.complete_io(&mut t.sock) {
                Ok((0, 0)) if t.conn.is_handshaking() => {
                    return Err(DbError::new(
                        ErrorClass::ConnectionLost,
                        cut_or("the server closed the connection during the TLS handshake".into()),
                    ))
                }
                Ok(_) => {}
                Err(e) => return Err(handshake_error(e, host, s, timeout)),
            }
        }
    }
    Ok(sock)
}

/// A failed handshake in the user's terms.
fn handshake_error(e: std::io::Error, host: &str, s: &TlsSettings, timeout: Duration) -> DbError {
    use std::io::ErrorKind::{BrokenPipe, ConnectionAborted, ConnectionReset, TimedOut, UnexpectedEof, WouldBlock};
    let tls = e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>());
    let roots = match &s.roots {
        Some(Roots::File(f)) => format!("the CA in {}={}", s.roots_key, shown_path(f)),
        _ => format!("a CA the system trusts ({}=system)", s.roots_key),
    };
    let message = match tls {
        Some(rustls::Error::InvalidCertificate(c)) => match c {
            CertificateError::UnknownIssuer | CertificateError::BadSignature => {
                format!("certificate of {host} is not signed by {roots}")
            }
            CertificateError::NotValidForNameContext { presented, .. } => format!(
                "host name mismatch: certificate is for {} ({})",
                if presented.is_empty() {
                    "no host name".to_string()
                } else {
                    presented.iter().map(|n| bare_name(n)).collect::<Vec<_>>().join(", ")
                },
                s.mode
            ),
            CertificateError::NotValidForName => format!("host name mismatch: the certificate is not for {host} ({})", s.mode),
            CertificateError::Expired | CertificateError::ExpiredContext { .. } => {
                format!("certificate of {host} has expired ({})", s.mode)
            }
            CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => {
                format!("certificate of {host} is not valid yet ({})", s.mode)
            }
            other => format!("certificate of {host} refused: {other:?} ({})", s.mode),
        },
        Some(rustls::Error::AlertReceived(alert)) => format!("the server refused the TLS handshake (alert {alert:?})"),
        Some(other) => format!("TLS handshake failed: {other}"),
        None => match e.kind() {
            WouldBlock | TimedOut => format!(
                "no answer from the server within {} during the TLS handshake",
                crate::util::duration::format(timeout)
            ),
            UnexpectedEof | ConnectionReset | ConnectionAborted | BrokenPipe => {
                "the server closed the connection during the TLS handshake".to_string()
            }
            _ => format!("TLS handshake failed: {e}"),
        },
    };
    let class = if tls.is_some() {
        ErrorClass::Other
    } else {
        ErrorClass::ConnectionLost
    };
    DbError::new(class, cut_or(message))
}

/// A name the certificate presents, without rustls' wrapping (`DnsName("db.example.com")`).
fn bare_name(n: &str) -> &str {
    match (n.find("(\""), n.rfind("\")")) {
        (Some(a), Some(b)) if a + 2 <= b => &n[a + 2..b],
        _ => n,
    }
}

/// A path as the user wrote it (its file name is enough when it is long).
fn shown_path(p: &Path) -> String {
    p.display().to_string()
}

/// The hash of the server's certificate for SCRAM's `tls-server-end-point` channel binding
/// (RFC 5929): the certificate's own signature hash, SHA-256 for MD5 and SHA-1. None when the
/// signature algorithm has no single hash (Ed25519), as PostgreSQL's server says too.
pub fn server_end_point(cert: &[u8]) -> Option<Vec<u8>> {
    use ring::digest::{digest, SHA256, SHA384, SHA512};
    // Certificate ::= SEQUENCE { tbsCertificate, signatureAlgorithm SEQUENCE { OID, ... }, ... }
    let (_, outer, _) = der(cert)?;
    let (_, _, rest) = der(outer)?;
    let (_, alg, _) = der(rest)?;
    let (tag, oid, _) = der(alg)?;
    if tag != 0x06 {
        return None;
    }
    const RSA: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01];
    const ECDSA: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04];
    let algorithm = match oid {
        [p @ .., 0x04 | 0x05 | 0x0b] if p == RSA => &SHA256,
        [p @ .., 0x0c] if p == RSA => &SHA384,
        [p @ .., 0x0d] if p == RSA => &SHA512,
        [p @ .., 0x01] if p == ECDSA => &SHA256,
        [p @ .., 0x03, 0x02] if p == ECDSA => &SHA256,
        [p @ .., 0x03, 0x03] if p == ECDSA => &SHA384,
        [p @ .., 0x03, 0x04] if p == ECDSA => &SHA512,
        _ => return None,
    };
    Some(digest(algorithm, cert).as_ref().to_vec())
}

/// One DER element: its tag, its contents and what follows it.
fn der(b: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let tag = *b.first()?;
    let first = *b.get(1)?;
    let (len, at) = if first < 0x80 {
        (first as usize, 2)
    } else {
        let n = (first & 0x7f) as usize;
        if n == 0 || n > 4 {
            return None;
        }
        let len = b.get(2..2 + n)?.iter().fold(0usize, |l, d| (l << 8) | *d as usize);
        (len, 2 + n)
    };
    let end = at.checked_add(len)?;
    Some((tag, b.get(at..end)?, &b[end..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn der_elements_and_the_end_point_hash_of_a_truncated_certificate() {
        assert_eq!(der(&[0x30, 0x03, 1, 2, 3, 9]), Some((0x30, &[1u8, 2, 3][..], &[9u8][..])));
        assert_eq!(der(&[0x30, 0x82, 0x00, 0x01, 7]), Some((0x30, &[7u8][..], &[][..])));
        assert_eq!(der(&[0x30, 0x05, 1]), None);
        assert_eq!(server_end_point(&[0x30, 0x02, 0x30, 0x00]), None);
        assert_eq!(bare_name("DnsName(\"db.example.com\")"), "db.example.com");
        assert_eq!(bare_name("10.0.0.1"), "10.0.0.1");
    }

    #[test]
    fn missing_roots_and_keys_are_named() {
        let s = TlsSettings {
            verify: Verify::Full,
            roots: Some(Roots::File("/nonexistent/ca.pem".into())),
            client: None,
            roots_key: "sslrootcert",
            mode: "sslmode=verify-full".into(),
            alpn: None,
        };
        let err = client_config(&s).expect_err("refused");
        assert!(err.starts_with("sslrootcert=/nonexistent/ca.pem: "), "{err}");
        let s = TlsSettings {
            verify: Verify::None,
            roots: None,
            client: Some(("/nonexistent/c.pem".into(), "/nonexistent/k.pem".into())),
            ..s
        };
        let err = client_config(&s).expect_err("refused");
        assert!(err.starts_with("cannot read the client certificate /nonexistent/c.pem"), "{err}");
    }
}
