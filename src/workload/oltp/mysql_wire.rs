//! The pieces of the MySQL client/server protocol the OLTP client needs, independent of the
//! socket: packet framing, length-encoded integers and strings, the initial handshake and its
//! response, the two password scrambles (`mysql_native_password`, `caching_sha2_password`), OK and
//! ERR packets, and the COM_STMT_EXECUTE encoding of sysbench's parameters.

use super::backend::{Arg, DbError, ErrorClass};

/// Capability flags (the client's side of the handshake).
pub mod cap {
    pub const LONG_PASSWORD: u32 = 1;
    pub const LONG_FLAG: u32 = 1 << 2;
    pub const CONNECT_WITH_DB: u32 = 1 << 3;
    pub const PROTOCOL_41: u32 = 1 << 9;
    pub const SSL: u32 = 1 << 11;
    pub const TRANSACTIONS: u32 = 1 << 13;
    pub const SECURE_CONNECTION: u32 = 1 << 15;
    pub const MULTI_RESULTS: u32 = 1 << 17;
    pub const PLUGIN_AUTH: u32 = 1 << 19;
    pub const PLUGIN_AUTH_LENENC_CLIENT_DATA: u32 = 1 << 21;
}

/// Commands (the first byte of a command packet).
pub mod com {
    pub const QUIT: u8 = 0x01;
    pub const QUERY: u8 = 0x03;
    pub const STMT_PREPARE: u8 = 0x16;
    pub const STMT_EXECUTE: u8 = 0x17;
    pub const STMT_CLOSE: u8 = 0x19;
}

/// The largest payload of one packet; a longer one continues in the next.
pub const MAX_PAYLOAD: usize = 0xFF_FFFF;

/// utf8mb4_general_ci, the character set the connection asks for.
const CHARSET_UTF8MB4: u8 = 45;

/// Append a length-encoded integer.
pub fn put_lenenc(buf: &mut Vec<u8>, v: u64) {
    match v {
        0..=250 => buf.push(v as u8),
        251..=0xFFFF => {
            buf.push(0xFC);
            buf.extend_from_slice(&(v as u16).to_le_bytes());
        }
        0x1_0000..=0xFF_FFFF => {
            buf.push(0xFD);
            buf.extend_from_slice(&(v as u32).to_le_bytes()[..3]);
        }
        _ => {
            buf.push(0xFE);
            buf.extend_from_slice(&v.to_le_bytes());
        }
    }
}

/// Read a length-encoded integer at `*pos` (None: truncated, or the NULL marker 0xFB).
pub fn get_lenenc(b: &[u8], pos: &mut usize) -> Option<u64> {
    let first = *b.get(*pos)?;
    let width = match first {
        0..=250 => {
            *pos += 1;
            return Some(u64::from(first));
        }
        0xFC => 2,
        0xFD => 3,
        0xFE => 8,
        _ => return None,
    };
    let bytes = b.get(*pos + 1..*pos + 1 + width)?;
    let mut v = [0u8; 8];
    v[..width].copy_from_slice(bytes);
    *pos += 1 + width;
    Some(u64::from_le_bytes(v))
}

/// A length-encoded string at `*pos`.
pub fn get_lenenc_bytes<'a>(b: &'a [u8], pos: &mut usize) -> Option<&'a [u8]> {
    let n = get_lenenc(b, pos)? as usize;
    let s = b.get(*pos..*pos + n)?;
    *pos += n;
    Some(s)
}

fn sha1(parts: &[&[u8]]) -> [u8; 20] {
    let mut ctx = ring::digest::Context::new(&ring::digest::SHA1_FOR_LEGACY_USE_ONLY);
    parts.iter().for_each(|p| ctx.update(p));
    let mut out = [0; 20];
    out.copy_from_slice(ctx.finish().as_ref());
    out
}

fn sha256(parts: &[&[u8]]) -> [u8; 32] {
    let mut ctx = ring::digest::Context::new(&ring::digest::SHA256);
    parts.iter().for_each(|p| ctx.update(p));
    let mut out = [0; 32];
    out.copy_from_slice(ctx.finish().as_ref());
    out
}

/// `mysql_native_password`: SHA1(password) XOR SHA1(nonce + SHA1(SHA1(password))); empty for no
/// password.
pub fn scramble_native(password: &[u8], nonce: &[u8]) -> Vec<u8> {
    if password.is_empty() {
        return Vec::new();
    }
    let stage1 = sha1(&[password]);
    let stage2 = sha1(&[&stage1]);
    let mask = sha1(&[nonce, &stage2]);
    stage1.iter().zip(mask).map(|(a, b)| a ^ b).collect()
}

/// `caching_sha2_password`'s fast path: SHA256(password) XOR SHA256(SHA256(SHA256(password)) +
/// nonce); empty for no password.
pub fn scramble_sha2(password: &[u8], nonce: &[u8]) -> Vec<u8> {
    if password.is_empty() {
        return Vec::new();
    }
    let stage1 = sha256(&[password]);
    let stage2 = sha256(&[&stage1]);
    let mask = sha256(&[&stage2, nonce]);
    stage1.iter().zip(mask).map(|(a, b)| a ^ b).collect()
}

/// The auth response of `plugin` for `password`, or None for a plugin perflab does not speak.
pub fn auth_response(plugin: &str, password: &[u8], nonce: &[u8]) -> Option<Vec<u8>> {
    match plugin {
        "mysql_native_password" | "" => Some(scramble_native(password, nonce)),
        "caching_sha2_password" => Some(scramble_sha2(password, nonce)),
        _ => None,
    }
}

/// The server's first packet.
#[derive(Debug, PartialEq)]
pub struct Handshake {
    pub capabilities: u32,
    /// The 20-byte nonce (both parts, without the trailing NUL).
    pub nonce: Vec<u8>,
    pub plugin: String,
}

fn malformed(what: &str) -> DbError {
    DbError::new(ErrorClass::ConnectionLost, format!("a malformed {what} from the server"))
}

fn nul_terminated(b: &[u8], pos: &mut usize) -> Option<Vec<u8>> {
    let len = b.get(*pos..)?.iter().position(|c| *c == 0)?;
    let s = b[*pos..*pos + len].to_vec();
    *pos += len + 1;
    Some(s)
}

/// Parse the initial handshake (protocol 10). An ERR packet instead (too many connections, host
/// blocked) is that error.
pub fn parse_handshake(p: &[u8]) -> Result<Handshake, DbError> {
    if p.first() == Some(&0xFF) {
        return Err(parse_err(p));
    }
    let bad = || malformed("handshake");
    if p.first() != Some(&10) {
        return Err(DbError::new(
            ErrorClass::Other,
            "the server speaks another protocol than MySQL's version 10",
        ));
    }
    let mut pos = 1;
    nul_terminated(p, &mut pos).ok_or_else(bad)?; // server version
    pos += 4; // connection id
    let mut nonce = p.get(pos..pos + 8).ok_or_else(bad)?.to_vec();
    pos += 9; // + filler
    let low = u16::from_le_bytes(p.get(pos..pos + 2).ok_or_else(bad)?.try_into().map_err(|_| bad())?);
    pos += 2 + 1 + 2; // + charset, status
    let high = p.get(pos..pos + 2).map_or(0, |h| u16::from_le_bytes([h[0], h[1]]));
    let capabilities = u32::from(low) | (u32::from(high) << 16);
    pos += 2;
    let auth_len = p.get(pos).copied().unwrap_or(0) as usize;
    pos += 1 + 10; // + reserved
    if capabilities & cap::SECURE_CONNECTION != 0 {
        let n = auth_len.saturating_sub(8).max(13);
        let part2 = p.get(pos..(pos + n).min(p.len())).ok_or_else(bad)?;
        nonce.extend_from_slice(part2.strip_suffix(&[0]).unwrap_or(part2));
        pos += n;
    }
    let plugin = if capabilities & cap::PLUGIN_AUTH != 0 {
        nul_terminated(p, &mut pos)
            .or_else(|| p.get(pos..).map(<[u8]>::to_vec))
            .unwrap_or_default()
    } else {
        Vec::new()
    };
    Ok(Handshake {
        capabilities,
        nonce,
        plugin: String::from_utf8_lossy(&plugin).into_owned(),
    })
}

/// The capabilities this client asks for (those the server offers).
pub fn client_capabilities(server: u32, with_db: bool) -> u32 {
    let mut wanted = cap::LONG_PASSWORD
        | cap::LONG_FLAG
        | cap::PROTOCOL_41
        | cap::TRANSACTIONS
        | cap::SECURE_CONNECTION
        | cap::MULTI_RESULTS
        | cap::PLUGIN_AUTH
        | cap::PLUGIN_AUTH_LENENC_CLIENT_DATA;
    if with_db {
        wanted |= cap::CONNECT_WITH_DB;
    }
    wanted & server
}

/// The HandshakeResponse41 payload.
pub fn handshake_response(caps: u32, user: &str, auth: &[u8], database: Option<&str>, plugin: &str) -> Vec<u8> {
    let mut p = Vec::with_capacity(128);
    p.extend_from_slice(&caps.to_le_bytes());
    p.extend_from_slice(&(MAX_PAYLOAD as u32).to_le_bytes());
    p.push(CHARSET_UTF8MB4);
    p.extend_from_slice(&[0; 23]);
    p.extend_from_slice(user.as_bytes());
    p.push(0);
    if caps & cap::PLUGIN_AUTH_LENENC_CLIENT_DATA != 0 {
        put_lenenc(&mut p, auth.len() as u64);
        p.extend_from_slice(auth);
    } else {
        p.push(auth.len() as u8);
        p.extend_from_slice(auth);
    }
    if let (Some(db), true) = (database, caps & cap::CONNECT_WITH_DB != 0) {
        p.extend_from_slice(db.as_bytes());
        p.push(0);
    }
    if caps & cap::PLUGIN_AUTH != 0 {
        p.extend_from_slice(plugin.as_bytes());
        p.push(0);
    }
    p
}

/// An auth switch request (0xFE, plugin name, nonce): the plugin and its nonce.
pub fn parse_auth_switch(p: &[u8]) -> Result<(String, Vec<u8>), DbError> {
    let mut pos = 1;
    let plugin = nul_terminated(p, &mut pos).ok_or_else(|| malformed("auth switch request"))?;
    let data = &p[pos.min(p.len())..];
    let nonce = data.strip_suffix(&[0]).unwrap_or(data).to_vec();
    Ok((String::from_utf8_lossy(&plugin).into_owned(), nonce))
}

/// The class of a server error number.
pub fn classify(code: u16) -> ErrorClass {
    match code {
        1213 | 1205 => ErrorClass::Deadlock,
        1062 => ErrorClass::DuplicateKey,
        1040 => ErrorClass::TooManyConnections,
        // server shutdown in progress, connection killed, lost or gone away
        1053 | 1927 | 2006 | 2013 => ErrorClass::ConnectionLost,
        _ => ErrorClass::Other,
    }
}

/// An ERR packet (0xFF, code, `#` + SQLSTATE, message) as a classified error.
pub fn parse_err(p: &[u8]) -> DbError {
    let code = p.get(1..3).map_or(0, |c| u16::from_le_bytes([c[0], c[1]]));
    let mut rest = p.get(3..).unwrap_or(&[]);
    if rest.first() == Some(&b'#') && rest.len() >= 6 {
        rest = &rest[6..];
    }
    let message = String::from_utf8_lossy(rest);
    DbError::new(classify(code), format!("{message} (error {code})"))
}

/// The affected-rows count of an OK packet.
pub fn ok_affected_rows(p: &[u8]) -> u64 {
    let mut pos = 1;
    get_lenenc(p, &mut pos).unwrap_or(0)
}

/// Whether a packet ends a list of column definitions or rows (an EOF packet).
pub fn is_eof(p: &[u8]) -> bool {
    p.first() == Some(&0xFE) && p.len() < 9
}

/// The COM_STMT_PREPARE_OK's statement id, column and parameter counts.
pub fn parse_prepare_ok(p: &[u8]) -> Result<(u32, u16, u16), DbError> {
    let b = p.get(..9).ok_or_else(|| malformed("COM_STMT_PREPARE answer"))?;
    let id = u32::from_le_bytes([b[1], b[2], b[3], b[4]]);
    Ok((id, u16::from_le_bytes([b[5], b[6]]), u16::from_le_bytes([b[7], b[8]])))
}

/// MYSQL_TYPE_LONGLONG and MYSQL_TYPE_VAR_STRING, the types of sysbench's parameters.
const TYPE_LONGLONG: u8 = 0x08;
const TYPE_VAR_STRING: u8 = 0xFD;

/// A COM_STMT_EXECUTE payload: statement `id`, no cursor, one iteration, the parameters (none
/// NULL) with their types.
pub fn put_execute<'a>(buf: &mut Vec<u8>, id: u32, args: impl Iterator<Item = &'a Arg> + Clone) {
    buf.push(com::STMT_EXECUTE);
    buf.extend_from_slice(&id.to_le_bytes());
    buf.push(0); // CURSOR_TYPE_NO_CURSOR
    buf.extend_from_slice(&1u32.to_le_bytes());
    let n = args.clone().count();
    if n == 0 {
        return;
    }
    buf.extend(std::iter::repeat_n(0u8, n.div_ceil(8))); // NULL bitmap
    buf.push(1); // the types follow
    for a in args.clone() {
        buf.push(match a {
            Arg::Int(_) => TYPE_LONGLONG,
            Arg::Text(_) => TYPE_VAR_STRING,
        });
        buf.push(0); // signed
    }
    for a in args {
        match a {
            Arg::Int(v) => buf.extend_from_slice(&v.to_le_bytes()),
            Arg::Text(s) => {
                put_lenenc(buf, s.len() as u64);
                buf.extend_from_slice(s.as_bytes());
            }
        }
    }
}

/// A string literal for a text query (`'` and `\` escaped, as the server's default sql_mode reads
/// them).
pub fn put_literal(out: &mut String, s: &str) {
    out.push('\'');
    for c in s.chars() {
        match c {
            '\'' => out.push_str("''"),
            '\\' => out.push_str("\\\\"),
            '\0' => out.push_str("\\0"),
            c => out.push(c),
        }
    }
    out.push('\'');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn length_encoded_integers_round_trip_at_every_width() {
        for (v, bytes) in [
            (0u64, vec![0u8]),
            (250, vec![250]),
            (251, vec![0xFC, 251, 0]),
            (0xFFFF, vec![0xFC, 0xFF, 0xFF]),
            (0x1_0000, vec![0xFD, 0, 0, 1]),
            (0xFF_FFFF, vec![0xFD, 0xFF, 0xFF, 0xFF]),
            (0x100_0000, vec![0xFE, 0, 0, 0, 1, 0, 0, 0, 0]),
            (u64::MAX, vec![0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]),
        ] {
            let mut buf = Vec::new();
            put_lenenc(&mut buf, v);
            assert_eq!(buf, bytes, "{v}");
            let mut pos = 0;
            assert_eq!(get_lenenc(&buf, &mut pos), Some(v));
            assert_eq!(pos, buf.len());
        }
        let mut pos = 0;
        assert_eq!(get_lenenc(&[0xFC, 1], &mut pos), None, "truncated");
        assert_eq!(get_lenenc(&[0xFB], &mut pos), None, "NULL");
        let mut pos = 0;
        assert_eq!(get_lenenc_bytes(&[3, b'a', b'b', b'c', 9], &mut pos), Some(&b"abc"[..]));
        assert_eq!(pos, 4);
    }

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    #[test]
    fn native_password_scramble_matches_the_documented_vector() {
        // The server stores SHA1(SHA1(password)): the well-known `PASSWORD('password')` hash.
        assert_eq!(
            hex(&sha1(&[&sha1(&[b"password"])])).to_uppercase(),
            "2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19"
        );
        // The vector of go-sql-driver/mysql's tests (what its client sends, and MySQL accepts):
        // password "secret" against this 20-byte nonce.
        let nonce = [70, 114, 92, 94, 1, 38, 11, 116, 63, 114, 23, 101, 126, 103, 26, 95, 81, 17, 24, 21];
        let want = [
            53, 177, 140, 159, 251, 189, 127, 53, 109, 252, 172, 50, 211, 192, 240, 164, 26, 48, 207, 45,
        ];
        assert_eq!(scramble_native(b"secret", &nonce), want);
        assert!(scramble_native(b"", &nonce).is_empty(), "no password, empty response");
        // What the server checks: SHA1(nonce + stored) XOR response = SHA1(password), whose SHA1
        // is the stored hash.
        let stored = sha1(&[&sha1(&[b"secret"])]);
        let mask = sha1(&[&nonce, &stored]);
        let stage1: Vec<u8> = scramble_native(b"secret", &nonce).iter().zip(mask).map(|(a, b)| a ^ b).collect();
        assert_eq!(sha1(&[&stage1]), stored);
    }

    #[test]
    fn caching_sha2_fast_path_scramble_is_what_the_server_checks() {
        // go-sql-driver/mysql's vector for the fast path's scramble.
        let nonce = [10, 47, 74, 111, 75, 73, 34, 48, 88, 76, 114, 74, 37, 13, 3, 80, 82, 2, 23, 21];
        let response = scramble_sha2(b"secret", &nonce);
        assert_eq!(hex(&response), "f490e76f66d9d86665ce54d98c78d0acfe2fb0b08b423da807144873d30b312c");
        assert_eq!(
            hex(&scramble_sha2(b"secret2", &nonce)),
            "abc3934a012cf342e876071c8ee202de51785b430258a7a0138bc79c4d800bc6"
        );
        // The server keeps SHA256(SHA256(password)) in its cache and recovers SHA256(password).
        let cached = sha256(&[&sha256(&[b"secret"])]);
        let mask = sha256(&[&cached, &nonce]);
        let stage1: Vec<u8> = response.iter().zip(mask).map(|(a, b)| a ^ b).collect();
        assert_eq!(sha256(&[&stage1]), cached);
        assert_eq!(
            hex(&sha256(&[b"abc"])),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert!(scramble_sha2(b"", &nonce).is_empty());
        assert_eq!(auth_response("caching_sha2_password", b"secret", &nonce), Some(response));
        assert_eq!(auth_response("dialog", b"secret", &nonce), None);
    }

    #[test]
    fn handshake_and_errors_parse() {
        // A MariaDB 10.11 greeting, shortened: protocol 10, version, id, nonce part 1, filler,
        // capabilities, charset, status, upper capabilities, nonce length, reserved, part 2, plugin.
        let mut p = vec![10];
        p.extend_from_slice(b"10.11.6-MariaDB\0");
        p.extend_from_slice(&7u32.to_le_bytes());
        p.extend_from_slice(b"abcdefgh\0");
        let caps = cap::PROTOCOL_41 | cap::SECURE_CONNECTION | cap::PLUGIN_AUTH | cap::CONNECT_WITH_DB;
        p.extend_from_slice(&(caps as u16).to_le_bytes());
        p.extend_from_slice(&[8, 2, 0]);
        p.extend_from_slice(&((caps >> 16) as u16).to_le_bytes());
        p.push(21);
        p.extend_from_slice(&[0; 10]);
        p.extend_from_slice(b"ijklmnopqrst\0mysql_native_password\0");
        let h = parse_handshake(&p).expect("parses");
        assert_eq!(h.nonce, b"abcdefghijklmnopqrst");
        assert_eq!(h.plugin, "mysql_native_password");
        assert_eq!(client_capabilities(h.capabilities, true), caps);

        let mut err = vec![0xFF];
        err.extend_from_slice(&1040u16.to_le_bytes());
        err.extend_from_slice(b"#08004Too many connections");
        let e = parse_handshake(&err).expect_err("an error instead of a greeting");
        assert_eq!(e.class, ErrorClass::TooManyConnections);
        assert_eq!(e.message, "Too many connections (error 1040)");
        for (code, class) in [
            (1062, ErrorClass::DuplicateKey),
            (1213, ErrorClass::Deadlock),
            (1205, ErrorClass::Deadlock),
            (2013, ErrorClass::ConnectionLost),
            (1146, ErrorClass::Other),
        ] {
            assert_eq!(classify(code), class, "{code}");
        }
        assert_eq!(ok_affected_rows(&[0, 0xFC, 0x2C, 0x01, 0, 2, 0, 0, 0]), 300);
        assert!(is_eof(&[0xFE, 0, 0, 2, 0]));
        assert_eq!(
            parse_auth_switch(b"\xFEcaching_sha2_password\0nonce\0").expect("parses").1,
            b"nonce"
        );
    }

    #[test]
    fn execute_packets_carry_typed_parameters() {
        let mut buf = Vec::new();
        put_execute(&mut buf, 5, [Arg::Text("ab".into()), Arg::Int(-2)].iter());
        let mut want = vec![0x17, 5, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0xFD, 0, 0x08, 0, 2, b'a', b'b'];
        want.extend_from_slice(&(-2i64).to_le_bytes());
        assert_eq!(buf, want);
        let mut s = String::new();
        put_literal(&mut s, "it's a\\b");
        assert_eq!(s, "'it''s a\\\\b'");
    }
}
