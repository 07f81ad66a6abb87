//! A small blocking client of the Kubernetes API for `perflab dist k8s --apply`: one HTTP/1.1
//! request per connection (`Connection: close`), over TLS with rustls (ring) as the kubeconfig
//! says (its certificate authority or `insecure-skip-tls-verify`, a client certificate or a bearer
//! token), or plain HTTP for an `http://` server. Answers are read whole (chunked or not); an
//! answer that is not 2xx becomes one line naming the verb and the resource.

use super::kubeconfig::{io_words, Target};
use crate::error::usage;
use crate::util::tls::AnyCertificate;
use rustls::crypto::ring;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::{ClientConfig, RootCertStore};
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::Arc;
use std::time::Duration;

/// The largest answer read (a segment's log holds its store).
const MAX_ANSWER: u64 = 256 << 20;

pub struct Api {
    pub target: Target,
    host: String,
    port: u16,
    authority: String,
    prefix: String,
    tls: Option<(Arc<ClientConfig>, ServerName<'static>)>,
}

/// An answer: its status and its body.
pub struct Answer {
    pub status: u16,
    pub body: Vec<u8>,
}

impl Api {
    pub fn new(target: Target) -> anyhow::Result<Api> {
        let bad = || {
            usage(format!(
                "the server of context {} is not an https:// URL: {}",
                target.context, target.server
            ))
        };
        let uri: http::Uri = target.server.parse().map_err(|_| bad())?;
        let https = match uri.scheme_str() {
            Some("https") => true,
            Some("http") => false,
            _ => return Err(bad()),
        };
        let host = uri.host().ok_or_else(bad)?.to_string();
        let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
        let authority = uri.authority().ok_or_else(bad)?.to_string();
        let prefix = uri.path().trim_end_matches('/').to_string();
        let bare = host.trim_start_matches('[').trim_end_matches(']').to_string();
        let tls = if https {
            let name = ServerName::try_from(bare.clone()).map_err(|_| bad())?;
            Some((Arc::new(client_config(&target)?), name))
        } else {
            None
        };
        Ok(Api {
            target,
            host: bare,
            port,
            authority,
            prefix,
            tls,
        })
    }

    /// `method path` with an optional body (its content type), the answer whole.
    pub fn call(&self, method: &str, path: &str, body: Option<(&str, &[u8])>) -> anyhow::Result<Answer> {
        let unreachable = |why: String| {
            anyhow::anyhow!(
                "cannot reach the Kubernetes API server {} (context {}): {why}",
                self.target.server,
                self.target.context
            )
        };
        let addrs: Vec<_> = (self.host.as_str(), self.port)
            .to_socket_addrs()
            .map_err(|_| unreachable("its name does not resolve".into()))?
            .collect();
        let mut tried = unreachable("its name does not resolve".into());
        let mut tcp = None;
        for addr in addrs {
            match TcpStream::connect_timeout(&addr, Duration::from_secs(10)) {
                Ok(t) => {
                    tcp = Some(t);
                    break;
                }
                Err(e) => tried = unreachable(io_words(&e)),
            }
        }
        let tcp = tcp.ok_or(tried)?;
        tcp.set_read_timeout(Some(Duration::from_secs(60)))?;
        tcp.set_write_timeout(Some(Duration::from_secs(60)))?;
        let mut head = format!(
            "{method} {}{path} HTTP/1.1\r\nHost: {}\r\nUser-Agent: perflab/{}\r\nAccept: application/json, */*\r\nConnection: close\r\n",
            self.prefix,
            self.authority,
            env!("CARGO_PKG_VERSION")
        );
        if let Some(t) = &self.target.token {
            head.push_str(&format!("Authorization: Bearer {t}\r\n"));
        }
        let (ctype, bytes) = body.unwrap_or(("", b""));
        if body.is_some() {
            head.push_str(&format!("Content-Type: {ctype}\r\nContent-Length: {}\r\n", bytes.len()));
        }
        head.push_str("\r\n");
        let mut raw = Vec::new();
        let talk = |s: &mut dyn ReadWrite, raw: &mut Vec<u8>| -> std::io::Result<()> {
            s.write_all(head.as_bytes())?;
            s.write_all(bytes)?;
            s.flush()?;
            match Read::take(&mut *s, MAX_ANSWER).read_to_end(raw) {
                // A server that closes without TLS's close_notify: the answer says how long it is.
                Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Ok(()),
                r => r.map(|_| ()),
            }
        };
        let done = match &self.tls {
            Some((config, name)) => {
                let conn = rustls::ClientConnection::new(config.clone(), name.clone())?;
                let mut s = rustls::StreamOwned::new(conn, tcp);
                talk(&mut s, &mut raw)
            }
            None => {
                let mut s = tcp;
                talk(&mut s, &mut raw)
            }
        };
        if let Err(e) = done {
            let why = match e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>()) {
                Some(rustls::Error::InvalidCertificate(_)) => {
                    "its certificate is not one the kubeconfig's certificate-authority signed for that name".to_string()
                }
                Some(_) => "the TLS handshake failed".to_string(),
                None => io_words(&e),
            };
            return Err(unreachable(why));
        }
        parse(&raw).ok_or_else(|| unreachable("its answer is not HTTP".into()))
    }
}

trait ReadWrite: Read + Write {}
impl<T: Read + Write> ReadWrite for T {}

/// The status and the body of a whole HTTP/1.1 answer.
fn parse(raw: &[u8]) -> Option<Answer> {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut resp = httparse::Response::new(&mut headers);
    let httparse::Status::Complete(at) = resp.parse(raw).ok()? else {
        return None;
    };
    let header = |n: &str| {
        resp.headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case(n))
            .map(|h| String::from_utf8_lossy(h.value).trim().to_ascii_lowercase())
    };
    let rest = &raw[at..];
    let body = if header("transfer-encoding").is_some_and(|t| t.contains("chunked")) {
        dechunk(rest)?
    } else if let Some(n) = header("content-length").and_then(|n| n.parse::<usize>().ok()) {
        rest.get(..n)?.to_vec()
    } else {
        rest.to_vec()
    };
    Some(Answer { status: resp.code?, body })
}

fn dechunk(mut rest: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let line_end = rest.windows(2).position(|w| w == b"\r\n")?;
        let size_text = std::str::from_utf8(&rest[..line_end]).ok()?;
        let size = usize::from_str_radix(size_text.split(';').next()?.trim(), 16).ok()?;
        rest = &rest[line_end + 2..];
        if size == 0 {
            return Some(out);
        }
        out.extend_from_slice(rest.get(..size)?);
        rest = rest.get(size + 2..)?;
    }
}

fn client_config(t: &Target) -> anyhow::Result<ClientConfig> {
    let provider = Arc::new(ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| anyhow::anyhow!("TLS set-up: {e}"))?;
    let builder = if t.insecure {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AnyCertificate(provider)))
    } else {
        let mut roots = RootCertStore::empty();
        match &t.ca {
            Some(pem) => {
                let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(pem).collect::<Result<_, _>>().map_err(|_| {
                    usage(format!(
                        "the certificate-authority of context {} is not a PEM certificate",
                        t.context
                    ))
                })?;
                let (added, _) = roots.add_parsable_certificates(certs);
                if added == 0 {
                    return Err(usage(format!(
                        "the certificate-authority of context {} holds no usable certificate",
                        t.context
                    )));
                }
            }
            None => roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
        }
        builder.with_root_certificates(roots)
    };
    let mut config = match &t.client {
        None => builder.with_no_client_auth(),
        Some((cert, key)) => {
            let bad = |what: &str| usage(format!("the client-{what} of context {} is not PEM", t.context));
            let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(cert)
                .collect::<Result<_, _>>()
                .map_err(|_| bad("certificate"))?;
            let key = PrivateKeyDer::from_pem_slice(key).map_err(|_| bad("key"))?;
            builder.with_client_auth_cert(chain, key).map_err(|_| {
                usage(format!(
                    "the client certificate and key of context {} do not go together",
                    t.context
                ))
            })?
        }
    };
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

#[cfg(test)]
mod tests {
    #[test]
    fn answers_are_read_whole_chunked_or_not() {
        let a = super::parse(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}").unwrap();
        assert_eq!((a.status, a.body.as_slice()), (200, &b"{}"[..]));
        let a = super::parse(b"HTTP/1.1 403 Forbidden\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n").unwrap();
        assert_eq!((a.status, a.body.as_slice()), (403, &b"abcde"[..]));
        assert!(super::parse(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab").is_none());
        assert!(super::parse(b"garbage").is_none());
    }
}
