//! The start of a PostgreSQL connection: libpq's connection keys with libpq's meaning, the TLS
//! negotiation (`sslmode`, `sslnegotiation`), the startup message and authentication (trust,
//! password, md5, SCRAM-SHA-256 with `tls-server-end-point` channel binding over TLS).
//!
//! Unlike libpq, no default file is read from `~/.postgresql/` (`sslrootcert`, `sslcert` and
//! `sslkey` are used only when the URL gives them).

use std::io::{Read, Write};
use std::sync::Arc;
use std::time::Duration;

use fallible_iterator::FallibleIterator;
use postgres_protocol::authentication::sasl::{self, ChannelBinding, ScramSha256};
use postgres_protocol::message::backend::Message;
use postgres_protocol::message::frontend;

use super::backend::{connect_tcp, DbError, ErrorClass, Session};
use super::db_url::DbUrl;
use super::pg_wire::{lost, server_error, Wire, STATEMENT_TIMEOUT};
use super::tls::{self, DbStream, Roots, TlsSettings, Verify};

/// How long a connection attempt may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The keys a PostgreSQL URL may carry besides user, password, host, port and dbname.
pub const KEYS: &[&str] = &[
    "connect_timeout",
    "application_name",
    "sslmode",
    "sslrootcert",
    "sslcert",
    "sslkey",
    "sslnegotiation",
    "channel_binding",
];

/// libpq's `sslmode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SslMode {
    Disable,
    Allow,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

/// libpq's `channel_binding`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Binding {
    Disable,
    Prefer,
    Require,
}

/// Whether an attempt asks for TLS.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Want {
    Never,
    IfOffered,
    Must,
}

/// How to start a connection.
pub struct Start {
    pub host: String,
    pub port: u16,
    pub user: String,
    pub password: Option<Vec<u8>>,
    pub database: String,
    pub connect_timeout: Duration,
    pub sslmode: SslMode,
    direct: bool,
    binding: Binding,
    /// The TLS settings and client configuration (None with `sslmode=disable`).
    tls: Option<(TlsSettings, Arc<rustls::ClientConfig>)>,
}

/// The start settings of a parsed URL (its host already checked). The error is a short reason.
pub fn settings(u: &DbUrl, user: String, host: String) -> Result<Start, String> {
    let connect_timeout = match u.param("connect_timeout") {
        None => CONNECT_TIMEOUT,
        Some(t) => match t.parse::<u64>() {
            Ok(0) => CONNECT_TIMEOUT,
            Ok(secs) => Duration::from_secs(secs),
            Err(_) => return Err(format!("connect_timeout={t}: not a number of seconds")),
        },
    };
    let rootcert = u.param("sslrootcert");
    let sslmode = match u.param("sslmode") {
        None if rootcert == Some("system") => SslMode::VerifyFull,
        None | Some("prefer") => SslMode::Prefer,
        Some("disable") => SslMode::Disable,
        Some("allow") => SslMode::Allow,
        Some("require") => SslMode::Require,
        Some("verify-ca") => SslMode::VerifyCa,
        Some("verify-full") => SslMode::VerifyFull,
        Some(m) => {
            return Err(format!(
                "sslmode={m}: not one of disable, allow, prefer, require, verify-ca, verify-full"
            ))
        }
    };
    let mode_text = format!("sslmode={}", u.param("sslmode").unwrap_or("prefer"));
    let direct = match u.param("sslnegotiation") {
        None | Some("postgres") => false,
        Some("direct") => true,
        Some(n) => return Err(format!("sslnegotiation={n}: not postgres or direct")),
    };
    if direct && matches!(sslmode, SslMode::Disable | SslMode::Allow | SslMode::Prefer) {
        return Err(format!("sslnegotiation=direct needs sslmode=require or stronger, not {mode_text}"));
    }
    let binding = match u.param("channel_binding") {
        None | Some("prefer") => Binding::Prefer,
        Some("disable") => Binding::Disable,
        Some("require") => Binding::Require,
        Some(b) => return Err(format!("channel_binding={b}: not disable, prefer or require")),
    };
    if binding == Binding::Require && sslmode == SslMode::Disable {
        return Err("channel_binding=require needs TLS, and sslmode=disable turns it off".to_string());
    }
    let verify = match sslmode {
        SslMode::VerifyFull => Verify::Full,
        SslMode::VerifyCa => Verify::Ca,
        // libpq: `require` with a root certificate file checks the chain, as verify-ca does
        SslMode::Require if rootcert.is_some_and(|r| r != "system") => Verify::Ca,
        _ => Verify::None,
    };
    if rootcert == Some("system") && sslmode != SslMode::VerifyFull {
        return Err(format!("sslrootcert=system needs sslmode=verify-full, not {mode_text}"));
    }
    let roots = rootcert.map(|r| if r == "system" { Roots::System } else { Roots::File(r.into()) });
    if verify != Verify::None && roots.is_none() {
        return Err(format!(
            "{mode_text} checks the server's certificate: give its CA with sslrootcert=FILE (or sslrootcert=system)"
        ));
    }
    let client = match (u.param("sslcert"), u.param("sslkey")) {
        (Some(c), Some(k)) => Some((c.into(), k.into())),
        (None, None) => None,
        (Some(_), None) => return Err("sslcert without sslkey".to_string()),
        (None, Some(_)) => return Err("sslkey without sslcert".to_string()),
    };
    let tls = if sslmode == SslMode::Disable {
        None
    } else {
        let s = TlsSettings {
            verify,
            roots,
            client,
            roots_key: "sslrootcert",
            mode: mode_text,
            alpn: direct.then_some(&b"postgresql"[..]),
        };
        let config = tls::client_config(&s)?;
        Some((s, config))
    };
    Ok(Start {
        database: u.database.clone().unwrap_or_else(|| user.clone()),
        password: u.password.clone(),
        port: u.port.unwrap_or(5432),
        connect_timeout,
        host,
        user,
        sslmode,
        direct,
        binding,
        tls,
    })
}

/// PostgreSQL's SSLRequest: length 8, code 80877103.
const SSL_REQUEST: [u8; 8] = [0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f];

impl Start {
    /// A connection ready for queries, and how it is secured and authenticated.
    pub fn connect(&self) -> Result<(Wire, Session), DbError> {
        match self.sslmode {
            SslMode::Disable => self.attempt(Want::Never),
            // libpq: without TLS first, with TLS when the server refuses that
            SslMode::Allow => match self.attempt(Want::Never) {
                Err(e) if e.class == ErrorClass::Other && self.tls.is_some() => self.attempt(Want::Must),
                other => other,
            },
            SslMode::Prefer => self.attempt(Want::IfOffered),
            _ => self.attempt(Want::Must),
        }
    }

    fn attempt(&self, want: Want) -> Result<(Wire, Session), DbError> {
        let sock = connect_tcp(&self.host, self.port, self.connect_timeout)?;
        sock.set_write_timeout(Some(STATEMENT_TIMEOUT)).map_err(lost)?;
        sock.set_read_timeout(Some(self.connect_timeout)).map_err(lost)?;
        let stream = match (&self.tls, want) {
            (None, _) | (_, Want::Never) => sock.map(DbStream::Plain),
            (Some((s, config)), _) => {
                if self.direct || negotiate(&sock, want, self.connect_timeout)? {
                    tls::handshake(sock.map(DbStream::Plain), config, &self.host, s, self.connect_timeout)?
                } else {
                    sock.map(DbStream::Plain)
                }
            }
        };
        let encrypted = matches!(*stream, DbStream::Tls(_));
        let mut wire = Wire::new(stream, self.connect_timeout).map_err(lost)?;
        let params = [
            ("user", self.user.as_str()),
            ("database", self.database.as_str()),
            ("client_encoding", "UTF8"),
            ("application_name", "perflab"),
        ];
        frontend::startup_message(params, &mut wire.wbuf).map_err(lost)?;
        wire.send()?;
        let auth = self
            .authenticate(&mut wire)
            .map_err(|e| if encrypted { e } else { plaintext_refused(e) })?;
        wire.until_ready()?;
        wire.set_read_timeout(STATEMENT_TIMEOUT)?;
        let tls = wire.sock.tls_facts();
        Ok((wire, Session { tls, auth }))
    }

    /// Authenticate; the method used.
    fn authenticate(&self, wire: &mut Wire) -> Result<String, DbError> {
        let other = |m: &str| DbError::new(ErrorClass::Other, m.to_string());
        let password = || {
            self.password
                .as_deref()
                .ok_or_else(|| other("the server asks for a password and the URL has none"))
        };
        let unbound = |method: &str| -> Result<String, DbError> {
            if self.binding == Binding::Require {
                return Err(other(&format!(
                    "the server authenticated with {method}, without channel binding (channel_binding=require)"
                )));
            }
            Ok(method.to_string())
        };
        let mut method = None;
        loop {
            match wire.next()? {
                // (without a request: trust, or a `cert` line that took the client certificate)
                Message::AuthenticationOk => {
                    let sent_cert = self.tls.as_ref().is_some_and(|(s, _)| s.client.is_some()) && wire.sock.peer_certificate().is_some();
                    return method.map_or_else(|| unbound(if sent_cert { "certificate" } else { "trust" }), Ok);
                }
                Message::AuthenticationCleartextPassword => {
                    method = Some(unbound("password")?);
                    frontend::password_message(password()?, &mut wire.wbuf).map_err(lost)?;
                    wire.send()?;
                }
                Message::AuthenticationMd5Password(body) => {
                    method = Some(unbound("md5")?);
                    let hash = postgres_protocol::authentication::md5_hash(self.user.as_bytes(), password()?, body.salt());
                    frontend::password_message(hash.as_bytes(), &mut wire.wbuf).map_err(lost)?;
                    wire.send()?;
                }
                Message::AuthenticationSasl(body) => {
                    let offered: Vec<String> = body.mechanisms().map(|m| Ok(m.to_string())).collect().map_err(lost)?;
                    method = Some(self.scram(wire, &offered, password()?)?);
                }
                Message::ErrorResponse(body) => return Err(server_error(&body)),
                _ => {
                    return Err(other(
                        "the server asks for an authentication method perflab does not speak (trust, password, md5 and SCRAM-SHA-256 are supported)",
                    ))
                }
            }
        }
    }

    /// SCRAM-SHA-256, bound to the TLS channel when both sides can; the mechanism used.
    fn scram(&self, wire: &mut Wire, offered: &[String], password: &[u8]) -> Result<String, DbError> {
        let other = |m: String| DbError::new(ErrorClass::Other, m);
        let plus = offered.iter().any(|m| m == sasl::SCRAM_SHA_256_PLUS);
        let end_point = wire.sock.peer_certificate().and_then(tls::server_end_point);
        let (mechanism, binding) = match (self.binding, &end_point) {
            (Binding::Disable, _) => (sasl::SCRAM_SHA_256, ChannelBinding::unsupported()),
            (_, Some(hash)) if plus => (sasl::SCRAM_SHA_256_PLUS, ChannelBinding::tls_server_end_point(hash.clone())),
            (Binding::Require, _) => {
                return Err(other(format!(
                    "the server does not offer SCRAM-SHA-256-PLUS on this connection{} (channel_binding=require)",
                    if wire.sock.peer_certificate().is_none() { " (no TLS)" } else { "" }
                )))
            }
            // TLS on but the server offers no binding: say so ('y'), so a downgrade is detected
            (Binding::Prefer, _) if wire.sock.peer_certificate().is_some() => (sasl::SCRAM_SHA_256, ChannelBinding::unrequested()),
            (Binding::Prefer, _) => (sasl::SCRAM_SHA_256, ChannelBinding::unsupported()),
        };
        if !offered.iter().any(|m| m == mechanism) {
            return Err(other(format!(
                "the server offers SASL mechanisms perflab does not speak ({})",
                offered.join(", ")
            )));
        }
        let failed = |e: std::io::Error| other(format!("authentication failed: {e}"));
        let mut scram = ScramSha256::new(password, binding);
        frontend::sasl_initial_response(mechanism, scram.message(), &mut wire.wbuf).map_err(lost)?;
        wire.send()?;
        let body = match wire.next()? {
            Message::AuthenticationSaslContinue(body) => body,
            Message::ErrorResponse(body) => return Err(server_error(&body)),
            _ => return Err(other("unexpected message during SCRAM authentication".into())),
        };
        scram.update(body.data()).map_err(failed)?;
        frontend::sasl_response(scram.message(), &mut wire.wbuf).map_err(lost)?;
        wire.send()?;
        let body = match wire.next()? {
            Message::AuthenticationSaslFinal(body) => body,
            Message::ErrorResponse(body) => return Err(server_error(&body)),
            _ => return Err(other("unexpected message during SCRAM authentication".into())),
        };
        scram.finish(body.data()).map_err(failed)?;
        Ok(mechanism.to_string())
    }
}

/// Send the SSLRequest; whether the server accepts TLS. `N` is an error when TLS is a must.
fn negotiate(sock: &std::net::TcpStream, want: Want, timeout: Duration) -> Result<bool, DbError> {
    let mut sock = sock;
    sock.write_all(&SSL_REQUEST).map_err(lost)?;
    let mut answer = [0u8; 1];
    loop {
        match sock.read(&mut answer) {
            Ok(0) => {
                return Err(DbError::new(
                    ErrorClass::ConnectionLost,
                    super::backend::cut_or("the server closed the connection after the SSLRequest".into()),
                ))
            }
            Ok(_) => break,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
                return Err(DbError::new(
                    ErrorClass::ConnectionLost,
                    super::backend::cut_or(format!(
                        "no answer to the SSLRequest within {}",
                        crate::util::duration::format(timeout)
                    )),
                ))
            }
            Err(e) => return Err(lost(e)),
        }
    }
    match answer[0] {
        b'S' => Ok(true),
        b'N' if want == Want::Must => Err(DbError::new(
            ErrorClass::Other,
            "the server does not accept TLS (it answered the SSLRequest with N): sslmode requires it",
        )),
        b'N' => Ok(false),
        b => Err(DbError::new(
            ErrorClass::Other,
            format!("the server does not speak PostgreSQL's TLS negotiation (it answered the SSLRequest with {b:#04x})"),
        )),
    }
}

/// A refusal without TLS of a server that accepts only TLS, in the user's terms.
fn plaintext_refused(e: DbError) -> DbError {
    if e.message.contains("no pg_hba.conf entry") && e.message.contains("no encryption") {
        return DbError::new(
            e.class,
            "server requires TLS (pg_hba: no entry without encryption): add sslmode=require",
        );
    }
    e
}
