//! The pieces of the MySQL client/server protocol the OLTP client needs, independent of the
//! socket, from `mysql_common`: the initial handshake and its response (and the SSLRequest), the
//! two password scrambles (`mysql_native_password`, `caching_sha2_password`), auth switch, OK, ERR
//! and COM_STMT_PREPARE_OK packets, the COM_STMT_EXECUTE encoding of sysbench's parameters, and
//! SQL literals for the bulk load. Here: only the translation into perflab's errors and types.

use mysql_common::auth::plugins::caching_sha2_password::scramble_sha256;
use mysql_common::auth::plugins::mysql_native_password::scramble_native;
use mysql_common::collations::CollationId;
use mysql_common::constants::CapabilityFlags;
use mysql_common::io::ParseBuf;
use mysql_common::packets::{
    AuthPlugin, AuthSwitchRequest, ComStmtExecuteRequestBuilder, CommonOkPacket, ErrPacket, HandshakePacket, HandshakeResponse,
    OkPacketDeserializer, SslRequest, StmtPacket,
};
use mysql_common::proto::{MyDeserialize, MySerialize};
use mysql_common::Value;

use super::backend::{Arg, DbError, ErrorClass};

pub use mysql_common::constants::Command;

/// The largest payload of one packet (`MAX_PAYLOAD_LEN`); a longer one continues in the next.
pub const MAX_PAYLOAD: usize = 0xFF_FFFF;

/// utf8mb4_general_ci, the character set the connection asks for.
const CHARSET: u8 = CollationId::UTF8MB4_GENERAL_CI as u8;

/// The first byte of a command packet.
pub fn com(c: Command) -> u8 {
    c as u8
}

/// The auth response of `plugin` for `password`, or None for a plugin perflab does not speak
/// (the nonce is the handshake's 20 bytes).
pub fn auth_response(plugin: &str, password: &[u8], nonce: &[u8]) -> Option<Vec<u8>> {
    match plugin {
        "mysql_native_password" | "" => Some(scramble_native(nonce, password).map_or_else(Vec::new, |s| s.to_vec())),
        "caching_sha2_password" => {
            let mut n = [0u8; 20];
            let len = nonce.len().min(20);
            n[..len].copy_from_slice(&nonce[..len]);
            Some(scramble_sha256(&n, password).map_or_else(Vec::new, |s| s.to_vec()))
        }
        _ => None,
    }
}

/// The server's first packet, what the client needs of it.
#[derive(Debug, PartialEq)]
pub struct Handshake {
    pub capabilities: CapabilityFlags,
    /// The 20-byte nonce (both parts, without the trailing NUL).
    pub nonce: Vec<u8>,
    pub plugin: String,
    /// The server's version (MariaDB's `5.5.5-` prefix included), for the collation to ask for.
    pub version: (u16, u16, u16),
}

fn malformed(what: &str) -> DbError {
    DbError::new(ErrorClass::ConnectionLost, format!("a malformed {what} from the server"))
}

/// Parse the initial handshake (protocol 10). An ERR packet instead (too many connections, host
/// blocked) is that error.
pub fn parse_handshake(p: &[u8]) -> Result<Handshake, DbError> {
    if p.first() == Some(&0xFF) {
        return Err(parse_err(p));
    }
    if p.first() != Some(&10) {
        return Err(DbError::new(
            ErrorClass::Other,
            "the server speaks another protocol than MySQL's version 10",
        ));
    }
    let h = HandshakePacket::deserialize((), &mut ParseBuf(p)).map_err(|_| malformed("handshake"))?;
    Ok(Handshake {
        capabilities: h.capabilities(),
        nonce: h.nonce(),
        plugin: h.auth_plugin_name_str().map(|s| s.into_owned()).unwrap_or_default(),
        version: h.server_version_parsed().unwrap_or((5, 5, 3)),
    })
}

/// The capabilities this client asks for (those the server offers).
pub fn client_capabilities(server: CapabilityFlags, with_db: bool) -> CapabilityFlags {
    let mut wanted = CapabilityFlags::CLIENT_LONG_PASSWORD
        | CapabilityFlags::CLIENT_LONG_FLAG
        | CapabilityFlags::CLIENT_PROTOCOL_41
        | CapabilityFlags::CLIENT_TRANSACTIONS
        | CapabilityFlags::CLIENT_SECURE_CONNECTION
        | CapabilityFlags::CLIENT_MULTI_RESULTS
        | CapabilityFlags::CLIENT_PLUGIN_AUTH
        | CapabilityFlags::CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA;
    if with_db {
        wanted |= CapabilityFlags::CLIENT_CONNECT_WITH_DB;
    }
    wanted & server
}

/// The SSLRequest payload (the handshake response's fixed part, with CLIENT_SSL in `caps`).
pub fn ssl_request(caps: CapabilityFlags) -> Vec<u8> {
    let mut p = Vec::with_capacity(32);
    SslRequest::new(caps, MAX_PAYLOAD as u32, CHARSET).serialize(&mut p);
    p
}

/// The HandshakeResponse41 payload.
pub fn handshake_response(
    hello: &Handshake,
    caps: CapabilityFlags,
    user: &str,
    auth: &[u8],
    database: Option<&str>,
    plugin: &str,
) -> Vec<u8> {
    let db = database.filter(|_| caps.contains(CapabilityFlags::CLIENT_CONNECT_WITH_DB));
    let plugin = caps
        .contains(CapabilityFlags::CLIENT_PLUGIN_AUTH)
        .then(|| AuthPlugin::from_bytes(plugin.as_bytes()));
    let response = HandshakeResponse::new(
        Some(auth),
        hello.version,
        Some(user.as_bytes()),
        db.map(str::as_bytes),
        plugin,
        caps,
        None,
        MAX_PAYLOAD as u32,
    );
    let mut p = Vec::with_capacity(128);
    response.serialize(&mut p);
    p
}

/// An auth switch request (0xFE, plugin name, nonce): the plugin and its nonce.
pub fn parse_auth_switch(p: &[u8]) -> Result<(String, Vec<u8>), DbError> {
    let r = AuthSwitchRequest::deserialize((), &mut ParseBuf(p)).map_err(|_| malformed("auth switch request"))?;
    let plugin = String::from_utf8_lossy(r.auth_plugin().as_bytes()).into_owned();
    Ok((plugin, r.plugin_data().to_vec()))
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
    // The SQLSTATE marker is there once protocol 4.1 is agreed; an error before the handshake
    // (too many connections, host blocked) has none.
    let caps = if p.get(3) == Some(&b'#') {
        CapabilityFlags::CLIENT_PROTOCOL_41
    } else {
        CapabilityFlags::empty()
    };
    match ErrPacket::deserialize(caps, &mut ParseBuf(p)) {
        Ok(e) if e.is_error() => {
            let e = e.server_error();
            let code = e.error_code();
            DbError::new(classify(code), format!("{} (error {code})", e.message_str()))
        }
        _ => malformed("error packet"),
    }
}

/// The affected-rows count of an OK packet.
pub fn ok_affected_rows(p: &[u8]) -> u64 {
    OkPacketDeserializer::<CommonOkPacket>::deserialize(CapabilityFlags::CLIENT_PROTOCOL_41, &mut ParseBuf(p))
        .map_or(0, |ok| ok.into_inner().affected_rows())
}

/// Whether a packet ends a list of column definitions or rows (an EOF packet: 0xFE and shorter
/// than 9 bytes, which a row starting with a length-encoded 8-byte integer never is).
pub fn is_eof(p: &[u8]) -> bool {
    p.first() == Some(&0xFE) && p.len() < 9
}

/// The COM_STMT_PREPARE_OK's statement id, column and parameter counts.
pub fn parse_prepare_ok(p: &[u8]) -> Result<(u32, u16, u16), DbError> {
    let s = StmtPacket::deserialize((), &mut ParseBuf(p)).map_err(|_| malformed("COM_STMT_PREPARE answer"))?;
    Ok((s.statement_id(), s.num_columns(), s.num_params()))
}

/// The first column of a text-protocol row (None: NULL or truncated).
pub fn first_text_column(row: &[u8]) -> Option<&[u8]> {
    if row.first() == Some(&0xFB) {
        return None; // NULL (mysql_common reads the marker as an empty string)
    }
    ParseBuf(row).checked_eat_lenenc_str()
}

fn value(a: &Arg) -> Value {
    match a {
        Arg::Int(v) => Value::Int(*v),
        Arg::Text(s) => Value::Bytes(s.as_bytes().to_vec()),
    }
}

/// A COM_STMT_EXECUTE payload: statement `id`, no cursor, one iteration, the parameters (none
/// NULL) with their types (integers as LONGLONG, strings as VAR_STRING).
pub fn put_execute<'a>(buf: &mut Vec<u8>, id: u32, args: impl Iterator<Item = &'a Arg>) {
    let values: Vec<Value> = args.map(value).collect();
    let (request, _) = ComStmtExecuteRequestBuilder::new(id).build(&values);
    request.serialize(buf);
}

/// A string literal for a text query (`'` and `\` escaped, as the server's default sql_mode
/// reads them).
pub fn put_literal(out: &mut String, s: &str) {
    out.push_str(&Value::Bytes(s.as_bytes().to_vec()).as_sql(false));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_packet_limit_is_the_protocol_s_and_a_text_row_s_first_column_reads() {
        assert_eq!(MAX_PAYLOAD, mysql_common::constants::MAX_PAYLOAD_LEN);
        assert_eq!(first_text_column(&[3, b'a', b'b', b'c', 9]), Some(&b"abc"[..]));
        assert_eq!(first_text_column(&[0xFB]), None, "NULL");
        assert_eq!(first_text_column(&[0xFC, 1]), None, "truncated");
    }

    fn sha1(parts: &[&[u8]]) -> [u8; 20] {
        let mut ctx = ring::digest::Context::new(&ring::digest::SHA1_FOR_LEGACY_USE_ONLY);
        parts.iter().for_each(|p| ctx.update(p));
        ctx.finish().as_ref().try_into().unwrap()
    }

    fn sha256(parts: &[&[u8]]) -> [u8; 32] {
        let mut ctx = ring::digest::Context::new(&ring::digest::SHA256);
        parts.iter().for_each(|p| ctx.update(p));
        ctx.finish().as_ref().try_into().unwrap()
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
        assert_eq!(auth_response("mysql_native_password", b"secret", &nonce), Some(want.to_vec()));
        assert_eq!(auth_response("", b"", &nonce), Some(vec![]), "no password, empty response");
        // What the server checks: SHA1(nonce + stored) XOR response = SHA1(password), whose SHA1
        // is the stored hash.
        let stored = sha1(&[&sha1(&[b"secret"])]);
        let mask = sha1(&[&nonce, &stored]);
        let stage1: Vec<u8> = want.iter().zip(mask).map(|(a, b)| a ^ b).collect();
        assert_eq!(sha1(&[&stage1]), stored);
    }

    #[test]
    fn caching_sha2_fast_path_scramble_is_what_the_server_checks() {
        // go-sql-driver/mysql's vector for the fast path's scramble.
        let nonce = [10, 47, 74, 111, 75, 73, 34, 48, 88, 76, 114, 74, 37, 13, 3, 80, 82, 2, 23, 21];
        let response = auth_response("caching_sha2_password", b"secret", &nonce).expect("spoken");
        assert_eq!(hex(&response), "f490e76f66d9d86665ce54d98c78d0acfe2fb0b08b423da807144873d30b312c");
        assert_eq!(
            hex(&auth_response("caching_sha2_password", b"secret2", &nonce).expect("spoken")),
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
        assert_eq!(auth_response("caching_sha2_password", b"", &nonce), Some(vec![]));
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
        let caps = CapabilityFlags::CLIENT_PROTOCOL_41
            | CapabilityFlags::CLIENT_SECURE_CONNECTION
            | CapabilityFlags::CLIENT_PLUGIN_AUTH
            | CapabilityFlags::CLIENT_CONNECT_WITH_DB;
        p.extend_from_slice(&(caps.bits() as u16).to_le_bytes());
        p.extend_from_slice(&[8, 2, 0]);
        p.extend_from_slice(&((caps.bits() >> 16) as u16).to_le_bytes());
        p.push(21);
        p.extend_from_slice(&[0; 10]);
        p.extend_from_slice(b"ijklmnopqrst\0mysql_native_password\0");
        let h = parse_handshake(&p).expect("parses");
        assert_eq!(h.nonce, b"abcdefghijklmnopqrst");
        assert_eq!(h.plugin, "mysql_native_password");
        assert_eq!(client_capabilities(h.capabilities, true), caps);
        assert_eq!(h.version, (10, 11, 6));
        // The response: capabilities, max packet, utf8mb4_general_ci, 23 zero bytes, the user, the
        // scramble (one length byte: no lenenc capability here), the database, the plugin.
        let r = handshake_response(&h, caps, "bob", &[1, 2, 3], Some("sb"), "mysql_native_password");
        assert_eq!(&r[..4], &caps.bits().to_le_bytes());
        assert_eq!(r[8], 45);
        assert!(r[9..32].iter().all(|b| *b == 0));
        assert_eq!(&r[32..], b"bob\0\x03\x01\x02\x03sb\0mysql_native_password\0");
        let ssl = ssl_request(caps | CapabilityFlags::CLIENT_SSL);
        assert_eq!(ssl.len(), 32);
        assert_eq!(
            &ssl[..32],
            &handshake_response(&h, caps | CapabilityFlags::CLIENT_SSL, "", &[], Some("sb"), "x")[..32]
        );

        let mut err = vec![0xFF];
        err.extend_from_slice(&1040u16.to_le_bytes());
        err.extend_from_slice(b"#08004Too many connections");
        let e = parse_handshake(&err).expect_err("an error instead of a greeting");
        assert_eq!(e.class, ErrorClass::TooManyConnections);
        assert_eq!(e.message, "Too many connections (error 1040)");
        // MariaDB's refusal before the handshake: no SQLSTATE marker
        let mut early = vec![0xFF];
        early.extend_from_slice(&1040u16.to_le_bytes());
        early.extend_from_slice(b"Too many connections");
        assert_eq!(
            parse_handshake(&early).expect_err("refused").message,
            "Too many connections (error 1040)"
        );
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
        assert_eq!(s, "'it\\'s a\\\\b'");
    }
}
