//! HTTPS for `perflab http`: the rustls client configuration (ring provider; trust from `--cacert`
//! or webpki-roots; `--insecure` accepts any certificate), ALPN, and TLS error classes.

use super::conn::ErrorClass;
use crate::error::usage;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{ring, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
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
                .with_custom_certificate_verifier(Arc::new(AcceptAny(provider)))
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

/// `--insecure`: any certificate, any name. Signatures are still checked, so the handshake is real.
#[derive(Debug)]
struct AcceptAny(Arc<CryptoProvider>);

impl ServerCertVerifier for AcceptAny {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// The class of an error during the TLS handshake: resets stay resets, everything else is `tls`.
pub fn handshake_error(e: &std::io::Error) -> ErrorClass {
    match ErrorClass::of_io(e, false) {
        ErrorClass::Reset => ErrorClass::Reset,
        _ => ErrorClass::Tls,
    }
}
