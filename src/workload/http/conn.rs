//! One client connection's state: connecting, idle, or busy with one request.

use super::response::Parser;
use mio::net::TcpStream;
use std::time::Instant;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// No socket; reconnect at the instant given.
    Down(Instant),
    Connecting,
    Idle,
    Busy,
}

pub struct Conn {
    pub stream: Option<TcpStream>,
    pub state: State,
    pub written: usize,
    /// When the request should have been sent (the schedule), and when it was.
    pub intended: Instant,
    pub sent: Instant,
    pub connect_started: Instant,
    pub first_byte: bool,
    /// The request counts (its intended time is inside the measured phase).
    pub measured: bool,
    pub parser: Parser,
    /// A response head that arrived in pieces, kept until it is whole (empty otherwise: reads go
    /// to the worker's one shared buffer, and only a split head is copied here).
    pub head: Vec<u8>,
    /// Responses on this connection so far.
    pub responses: u64,
}

/// The size of a worker's read buffer.
pub const BUF: usize = 64 << 10;

impl Conn {
    pub fn new(now: Instant) -> Conn {
        Conn {
            stream: None,
            state: State::Down(now),
            written: 0,
            intended: now,
            sent: now,
            connect_started: now,
            first_byte: false,
            measured: false,
            parser: Parser::default(),
            head: Vec::new(),
            responses: 0,
        }
    }
}

/// The class of a transport error, for the error table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ErrorClass {
    ConnectRefused,
    ConnectTimeout,
    Reset,
    ReadTimeout,
    /// The server closed the connection before any byte of the response.
    Closed,
    Protocol,
    BodyShort,
    Other,
    /// The TLS handshake failed (an untrusted certificate, no common protocol, ALPN refused).
    Tls,
}

impl ErrorClass {
    pub const COUNT: usize = 9;
    pub const ALL: [ErrorClass; ErrorClass::COUNT] = [
        ErrorClass::ConnectRefused,
        ErrorClass::ConnectTimeout,
        ErrorClass::Reset,
        ErrorClass::ReadTimeout,
        ErrorClass::Closed,
        ErrorClass::Protocol,
        ErrorClass::BodyShort,
        ErrorClass::Other,
        ErrorClass::Tls,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ErrorClass::ConnectRefused => "connect_refused",
            ErrorClass::ConnectTimeout => "connect_timeout",
            ErrorClass::Reset => "reset",
            ErrorClass::ReadTimeout => "read_timeout",
            ErrorClass::Closed => "closed_before_response",
            ErrorClass::Protocol => "protocol",
            ErrorClass::BodyShort => "body_short",
            ErrorClass::Other => "other",
            ErrorClass::Tls => "tls",
        }
    }

    pub fn of_io(e: &std::io::Error, connecting: bool) -> ErrorClass {
        use std::io::ErrorKind as K;
        match e.kind() {
            K::ConnectionRefused => ErrorClass::ConnectRefused,
            K::TimedOut if connecting => ErrorClass::ConnectTimeout,
            K::ConnectionReset | K::BrokenPipe | K::ConnectionAborted => ErrorClass::Reset,
            _ => ErrorClass::Other,
        }
    }
}
