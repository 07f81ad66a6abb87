//! Testing aid: HTTPS for the event-loop model (`--tls-cert`, `--tls-key`), with ALPN `h2` and
//! `http/1.1`. rustls with the ring provider.

use crate::error::usage;
use rustls::pki_types::pem::{self, PemObject};
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use std::path::Path;
use std::sync::Arc;

/// A TLS acceptor from a PEM certificate chain and a PEM private key.
pub fn acceptor(cert: &Path, key: &Path) -> anyhow::Result<tokio_rustls::TlsAcceptor> {
    let read = |p: &Path, what: &str| std::fs::read(p).map_err(|e| usage(format!("cannot read {what} {}: {e}", p.display())));
    let pem = read(cert, "--tls-cert")?;
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<_, _>>()
        .map_err(|e| usage(format!("--tls-cert {}: not a PEM certificate file: {e}", cert.display())))?;
    if chain.is_empty() {
        return Err(usage(format!("--tls-cert {}: no PEM certificate in the file", cert.display())));
    }
    let pem = read(key, "--tls-key")?;
    let key_der = PrivateKeyDer::from_pem_slice(&pem).map_err(|e| match e {
        pem::Error::NoItemsFound => usage(format!("--tls-key {}: no PEM private key in the file", key.display())),
        e => usage(format!("--tls-key {}: not a PEM key file: {e}", key.display())),
    })?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| anyhow::anyhow!("TLS set-up: {e}"))?
        .with_no_client_auth()
        .with_single_cert(chain, key_der)
        .map_err(|e| usage(format!("--tls-cert/--tls-key: {e}")))?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(tokio_rustls::TlsAcceptor::from(Arc::new(config)))
}
