//! A test CA and certificates made by the test with Debian's `openssl`, in a scratch directory:
//! `ca.pem` (the CA), `server.crt`/`server.key` (issued by it for `localhost` only), `other-ca.pem`
//! (a second CA that signed nothing the servers show), `client.crt`/`client.key` (a client
//! certificate for the user `bench`, issued by the CA).

use std::path::{Path, PathBuf};
use std::process::Command;

pub struct Certs {
    pub dir: tempfile::TempDir,
}

impl Certs {
    /// The certificates, or None (said loudly) when `openssl` is missing.
    pub fn make() -> Option<Certs> {
        if Command::new("openssl").arg("version").output().is_err() {
            crate::common::skip_unless_required("openssl is not installed (Debian package `openssl`)");
            return None;
        }
        let dir = tempfile::Builder::new().prefix("perflab-tls-").tempdir().expect("scratch dir");
        let d = dir.path();
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
        for ca in ["ca", "other-ca"] {
            run(
                d,
                &[
                    &["req", "-x509"][..],
                    &ec,
                    &["-keyout", &format!("{ca}.key"), "-out", &format!("{ca}.pem")],
                    &["-days", "2", "-subj", &format!("/CN=perflab test {ca}")],
                    &[
                        "-addext",
                        "basicConstraints=critical,CA:TRUE",
                        "-addext",
                        "keyUsage=critical,keyCertSign,cRLSign",
                    ],
                ]
                .concat(),
            );
        }
        std::fs::write(
            d.join("server.ext"),
            "subjectAltName=DNS:localhost\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n",
        )
        .expect("write ext");
        std::fs::write(
            d.join("client.ext"),
            "basicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=clientAuth\n",
        )
        .expect("write ext");
        for (name, cn) in [("server", "localhost"), ("client", "certified")] {
            run(
                d,
                &[
                    &["req"][..],
                    &ec,
                    &[
                        "-keyout",
                        &format!("{name}.key"),
                        "-out",
                        &format!("{name}.csr"),
                        "-subj",
                        &format!("/CN={cn}"),
                    ],
                ]
                .concat(),
            );
            run(
                d,
                &[
                    "x509",
                    "-req",
                    "-in",
                    &format!("{name}.csr"),
                    "-CA",
                    "ca.pem",
                    "-CAkey",
                    "ca.key",
                    "-CAcreateserial",
                    "-out",
                    &format!("{name}.crt"),
                    "-days",
                    "2",
                    "-extfile",
                    &format!("{name}.ext"),
                ],
            );
        }
        Some(Certs { dir })
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Copy the server's certificate and key into `to`, owned by `uid`/`gid` (the key 0600).
    pub fn install_server(&self, to: &Path, uid: u32, gid: u32) -> (PathBuf, PathBuf) {
        use std::os::unix::fs::PermissionsExt;
        let (crt, key) = (to.join("server.crt"), to.join("server.key"));
        for (from, dest, mode) in [
            ("server.crt", &crt, 0o644),
            ("server.key", &key, 0o600),
            ("ca.pem", &to.join("ca.pem"), 0o644),
        ] {
            std::fs::copy(self.path(from), dest).expect("copy certificate");
            std::os::unix::fs::chown(dest, Some(uid), Some(gid)).expect("chown certificate");
            std::fs::set_permissions(dest, std::fs::Permissions::from_mode(mode)).expect("chmod certificate");
        }
        (crt, key)
    }
}

fn run(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl").args(args).current_dir(dir).output().expect("run openssl");
    assert!(out.status.success(), "openssl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}
