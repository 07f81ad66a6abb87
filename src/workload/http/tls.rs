//! HTTPS for `perflab http`: the rustls client configuration (ring provider; trust from `--cacert`
//! or webpki-roots; `--insecure` accepts any certificate), ALPN, and TLS error classes.

use super::conn::ErrorClass;
use crate::error::usage;
use crate::util::tls::AnyCertificate;
use rustls::crypto::ring;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{ClientConfig, RootCertStore};
use std::sync::Arc;

/// What a connection needs to start TLS.
#[derive(Clone, Debug)]
pub struct Client {
    pub config: Arc<ClientConfig>,
    /// The name the server's certificate must carry (a DNS name or an IP address).
    pub name: ServerName<'static>,
}

impl Client {
    /// `h2`: offer only `h2` by ALPN (the server must agree); otherwise only `http/1.1`.
    pub fn new(host: &str, insecure: bool, cacert: Option<&str>, h2: bool) -> anyhow::Result<Client> {
        let provider = Arc::new(ring::default_provider());
        let builder = ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| anyhow::anyhow!("TLS set-up: {e}"))?;
        let mut config = if insecure {
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(AnyCertificate(provider)))
                .with_no_client_auth()
        } else {
            builder.with_root_certificates(roots(cacert)?).with_no_client_auth()
        };
        config.alpn_protocols = vec![if h2 { b"h2".to_vec() } else { b"http/1.1".to_vec() }];
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let name = ServerName::try_from(host.to_string()).map_err(|e| usage(format!("`{host}` is not a valid TLS server name: {e}")))?;
        Ok(Client {
            config: Arc::new(config),
            name,
        })
    }
}

/// The trusted roots: the PEM certificates of `--cacert`, or the Mozilla roots of webpki-roots.
fn roots(cacert: Option<&str>) -> anyhow::Result<RootCertStore> {
    let mut store = RootCertStore::empty();
    let Some(path) = cacert else {
        store.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        return Ok(store);
    };
    let pem = crate::util::fs::read_bounded(std::path::Path::new(path), 16 << 20)
        .map_err(|e| usage(format!("cannot read --cacert {path}: {e}")))?;
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<_, _>>()
        .map_err(|e| usage(format!("--cacert {path}: not a PEM certificate file: {e}")))?;
    if certs.is_empty() {
        return Err(usage(format!("--cacert {path}: no PEM certificate in the file")));
    }
    for c in certs {
        store
            .add(c)
            .map_err(|e| usage(format!("--cacert {path}: unusable certificate: {e}")))?;
    }
    Ok(store)
}

/// The class of an error during the TLS handshake: resets stay resets, everything else is `tls`.
pub fn handshake_error(e: &std::io::Error) -> ErrorClass {
    match ErrorClass::of_io(e, false) {
        ErrorClass::Reset => ErrorClass::Reset,
        _ => ErrorClass::Tls,
    }
}
