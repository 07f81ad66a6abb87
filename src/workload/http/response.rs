//! An incremental HTTP/1.1 response parser: the head with httparse, then the body framed by
//! Content-Length, chunked encoding, or the connection's end. Body bytes are counted, never copied.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Body {
    Length(u64),
    Chunked(Chunk),
    UntilEof,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Chunk {
    /// Reading the hex size line (value so far, past a `;` extension?).
    Size(u64, bool),
    Data(u64),
    /// The CRLF after a chunk's data: bytes left to skip.
    DataEnd(u8),
    /// Trailer lines after the last chunk: length of the current line.
    Trailer(usize),
}

/// The outcome of feeding bytes.
#[derive(Debug, PartialEq, Eq)]
pub enum Fed {
    /// Need more bytes; all given were used.
    More,
    /// The response is complete; `used` bytes of the input belonged to it.
    Done { used: usize },
}

#[derive(Debug, Default)]
pub struct Parser {
    body: Option<Body>,
    pub status: u16,
    /// The server will close the connection after this response.
    pub close: bool,
    pub body_bytes: u64,
    head_request: bool,
}

pub const MAX_HEAD: usize = 64 << 10;

impl Parser {
    /// Ready for the next response (`head`: the request was HEAD, so no body follows).
    pub fn reset(&mut self, head: bool) {
        *self = Parser {
            head_request: head,
            ..Parser::default()
        };
    }

    pub fn in_head(&self) -> bool {
        self.body.is_none()
    }

    /// Try to parse the head from `buf`; Ok(Some(head_len)) when complete. Only the framing headers
    /// are looked at, and nothing is allocated.
    pub fn parse_head(&mut self, buf: &[u8]) -> Result<Option<usize>, String> {
        Ok(Head::parse(buf)?.map(|h| self.apply(h)))
    }

    /// As [`Parser::parse_head`], but a head byte-for-byte equal to the one in `cache` takes its
    /// parse from there (equal bytes parse equal), and a new head that is small replaces it.
    pub fn parse_head_cached(&mut self, buf: &[u8], cache: &mut HeadCache) -> Result<Option<usize>, String> {
        if let Some(h) = cache.head {
            if buf.len() >= cache.bytes.len() && buf[..cache.bytes.len()] == cache.bytes[..] {
                return Ok(Some(self.apply(h)));
            }
        }
        let Some(h) = Head::parse(buf)? else { return Ok(None) };
        if h.len <= HeadCache::MAX {
            cache.bytes.clear();
            cache.bytes.extend_from_slice(&buf[..h.len]);
            cache.head = Some(h);
        }
        Ok(Some(self.apply(h)))
    }

    /// Feed the bytes of one read from the connection: the head through `cache` when this read
    /// holds all of it (the usual case), else gathered in `head` across reads (at most
    /// [`MAX_HEAD`] bytes), then the body. `Done { used }` counts the bytes of `data` that belong to
    /// the response.
    pub fn feed_read(&mut self, data: &[u8], head: &mut Vec<u8>, cache: &mut HeadCache) -> Result<Fed, String> {
        if !self.in_head() {
            return self.feed_body(data);
        }
        let body_from = if head.is_empty() {
            match self.parse_head_cached(data, cache)? {
                Some(h) => h,
                None => {
                    head.extend_from_slice(data);
                    return Ok(Fed::More);
                }
            }
        } else {
            let before = head.len();
            head.extend_from_slice(&data[..data.len().min(MAX_HEAD.saturating_sub(before))]);
            match self.parse_head(head)? {
                Some(h) => {
                    head.clear();
                    // The bytes of this read that follow the head start the body.
                    h - before
                }
                None if head.len() >= MAX_HEAD => return Err("response head larger than 64 KiB".into()),
                None => return Ok(Fed::More),
            }
        };
        Ok(match self.feed_body(&data[body_from..])? {
            Fed::Done { used } => Fed::Done { used: body_from + used },
            Fed::More => Fed::More,
        })
    }

    /// Take a parsed head's framing; returns its length.
    fn apply(&mut self, h: Head) -> usize {
        self.status = h.status;
        self.close = h.close;
        let no_body = self.head_request || h.status == 204 || h.status == 304 || (100..200).contains(&h.status);
        self.body = Some(if no_body {
            Body::Length(0)
        } else if h.chunked {
            Body::Chunked(Chunk::Size(0, false))
        } else if let Some(l) = h.length {
            Body::Length(l)
        } else {
            self.close = true;
            Body::UntilEof
        });
        h.len
    }

    /// Feed body bytes (after the head).
    pub fn feed_body(&mut self, data: &[u8]) -> Result<Fed, String> {
        let Some(body) = self.body.as_mut() else {
            return Err("body before head".into());
        };
        match body {
            Body::Length(left) => {
                let take = (*left).min(data.len() as u64);
                *left -= take;
                self.body_bytes += take;
                Ok(if *left == 0 { Fed::Done { used: take as usize } } else { Fed::More })
            }
            Body::UntilEof => {
                self.body_bytes += data.len() as u64;
                Ok(Fed::More)
            }
            Body::Chunked(state) => {
                let mut i = 0;
                while i < data.len() {
                    match state {
                        Chunk::Size(v, ext) => {
                            let b = data[i];
                            i += 1;
                            match b {
                                b'\n' => *state = if *v == 0 { Chunk::Trailer(0) } else { Chunk::Data(*v) },
                                b'\r' => {}
                                b';' => *ext = true,
                                _ if *ext => {}
                                _ => {
                                    let d = (b as char).to_digit(16).ok_or("invalid chunk size")? as u64;
                                    *v = v.checked_mul(16).and_then(|x| x.checked_add(d)).ok_or("chunk size overflow")?;
                                }
                            }
                        }
                        Chunk::Data(left) => {
                            let take = (*left).min((data.len() - i) as u64);
                            *left -= take;
                            i += take as usize;
                            self.body_bytes += take;
                            if *left == 0 {
                                *state = Chunk::DataEnd(2);
                            }
                        }
                        Chunk::DataEnd(left) => {
                            i += 1;
                            *left -= 1;
                            if *left == 0 {
                                *state = Chunk::Size(0, false);
                            }
                        }
                        Chunk::Trailer(len) => {
                            let b = data[i];
                            i += 1;
                            match b {
                                b'\n' if *len == 0 => return Ok(Fed::Done { used: i }),
                                b'\n' => *len = 0,
                                b'\r' => {}
                                _ => *len += 1,
                            }
                        }
                    }
                }
                Ok(Fed::More)
            }
        }
    }

    /// The connection ended: is the response complete?
    pub fn at_eof(&self) -> Result<(), &'static str> {
        match self.body {
            Some(Body::UntilEof) => Ok(()),
            Some(Body::Length(0)) => Ok(()),
            Some(_) => Err("body_short"),
            None => Err("closed"),
        }
    }
}

/// What a response head says about framing: all the parser keeps of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Head {
    len: usize,
    status: u16,
    /// HTTP/1.0 without keep-alive, or `Connection: close`.
    close: bool,
    length: Option<u64>,
    chunked: bool,
}

impl Head {
    fn parse(buf: &[u8]) -> Result<Option<Head>, String> {
        // Only the first 64 KiB can be the head, however the bytes arrived (gathered across reads,
        // they are cut there): a longer head is refused the same way in one read or in many.
        let buf = &buf[..buf.len().min(MAX_HEAD)];
        let mut headers = [std::mem::MaybeUninit::<httparse::Header>::uninit(); 64];
        let mut resp = httparse::Response::new(&mut []);
        let len = match httparse::ParserConfig::default().parse_response_with_uninit_headers(&mut resp, buf, &mut headers) {
            Ok(httparse::Status::Complete(n)) => n,
            Ok(httparse::Status::Partial) if buf.len() >= MAX_HEAD => return Err("response head larger than 64 KiB".into()),
            Ok(httparse::Status::Partial) => return Ok(None),
            Err(e) => return Err(format!("invalid response head: {e}")),
        };
        let mut h = Head {
            len,
            status: resp.code.unwrap_or(0),
            close: resp.version == Some(0),
            length: None,
            chunked: false,
        };
        for f in resp.headers.iter() {
            // Dispatch on the name's length first: most headers are skipped after one comparison.
            match f.name.len() {
                14 if f.name.eq_ignore_ascii_case("content-length") => {
                    let v = std::str::from_utf8(f.value).ok().and_then(|v| v.trim().parse::<u64>().ok());
                    h.length = Some(v.ok_or("invalid Content-Length")?);
                }
                17 if f.name.eq_ignore_ascii_case("transfer-encoding") => h.chunked = contains_token(f.value, b"chunked"),
                10 if f.name.eq_ignore_ascii_case("connection") => {
                    if contains_token(f.value, b"close") {
                        h.close = true;
                    } else if contains_token(f.value, b"keep-alive") {
                        h.close = false;
                    }
                }
                _ => {}
            }
        }
        Ok(Some(h))
    }
}

/// The last response head a worker parsed, kept byte for byte with its parse. A server repeats its
/// head exactly from one response to the next (until its Date header ticks over), so most heads
/// are recognised by one comparison instead of being parsed again.
#[derive(Debug, Default)]
pub struct HeadCache {
    bytes: Vec<u8>,
    head: Option<Head>,
}

impl HeadCache {
    /// Heads longer than this are not kept.
    const MAX: usize = 1024;
}

/// `word` (lower case) occurs in `value`, ignoring ASCII case.
fn contains_token(value: &[u8], word: &[u8]) -> bool {
    value.windows(word.len()).any(|w| w.eq_ignore_ascii_case(word))
}

#[cfg(test)]
#[path = "response_fuzz.rs"]
mod fuzz;

#[cfg(test)]
mod tests {
    use super::*;

    fn whole(p: &mut Parser, bytes: &[u8]) -> Fed {
        let h = p.parse_head(bytes).expect("head").expect("complete");
        p.feed_body(&bytes[h..]).expect("body")
    }

    #[test]
    fn content_length_and_keepalive() {
        let mut p = Parser::default();
        assert_eq!(
            whole(&mut p, b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"),
            Fed::Done { used: 5 }
        );
        assert_eq!((p.status, p.close, p.body_bytes), (200, false, 5));
    }

    #[test]
    fn chunked_in_pieces() {
        let mut p = Parser::default();
        let msg = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n4\r\nWiki\r\n5;x=1\r\npedia\r\n0\r\n\r\n";
        let h = p.parse_head(msg).expect("ok").expect("complete");
        let body = &msg[h..];
        let mut done = false;
        for chunk in body.chunks(3) {
            if let Fed::Done { .. } = p.feed_body(chunk).expect("ok") {
                done = true;
            }
        }
        assert!(done);
        assert_eq!((p.body_bytes, p.close), (9, true));
    }

    #[test]
    fn connection_header_in_any_case() {
        let mut p = Parser::default();
        assert_eq!(
            whole(&mut p, b"HTTP/1.1 200 OK\r\nCONNECTION: Close\r\ncontent-length: 0\r\n\r\n"),
            Fed::Done { used: 0 }
        );
        assert!(p.close);
        p.reset(false);
        assert_eq!(
            whole(&mut p, b"HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 2\r\n\r\nok"),
            Fed::Done { used: 2 }
        );
        assert!(!p.close);
        p.reset(false);
        let h = p
            .parse_head(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, CHUNKED\r\n\r\n")
            .expect("ok")
            .expect("complete");
        assert_eq!(h, 53);
        assert_eq!(p.feed_body(b"0\r\n\r\n"), Ok(Fed::Done { used: 5 }));
    }

    #[test]
    fn short_body_and_partial_head() {
        let mut p = Parser::default();
        assert_eq!(p.parse_head(b"HTTP/1.1 200 OK\r\nContent-Le"), Ok(None));
        assert_eq!(whole(&mut p, b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"), Fed::More);
        assert_eq!(p.at_eof(), Err("body_short"));
    }

    #[test]
    fn cached_heads_parse_as_fresh_ones() {
        let a = b"HTTP/1.1 200 OK\r\nDate: Mon, 23 Nov 2026 11:00:00 GMT\r\nContent-Length: 3\r\n\r\nabc";
        let b = b"HTTP/1.1 200 OK\r\nDate: Mon, 23 Nov 2026 11:00:01 GMT\r\nConnection: close\r\n\r\nxyz";
        let mut cache = HeadCache::default();
        for (bytes, head_request) in [
            (&a[..], false),
            (&a[..], false),
            (&a[..], true),
            (&b[..], false),
            (&b[..], false),
            (&a[..], false),
        ] {
            let (mut fresh, mut cached) = (Parser::default(), Parser::default());
            fresh.reset(head_request);
            cached.reset(head_request);
            let f = fresh.parse_head(bytes).expect("ok").expect("complete");
            let c = cached.parse_head_cached(bytes, &mut cache).expect("ok").expect("complete");
            assert_eq!(f, c);
            assert_eq!(fresh.feed_body(&bytes[f..]), cached.feed_body(&bytes[c..]));
            assert_eq!(
                (fresh.status, fresh.close, fresh.body_bytes),
                (cached.status, cached.close, cached.body_bytes)
            );
            assert_eq!(cache.bytes, bytes[..f]);
        }
        // A head that only starts like the cached one is parsed, not taken from the cache.
        let mut p = Parser::default();
        assert_eq!(p.parse_head_cached(&a[..20], &mut cache), Ok(None));
        let bad = b"HTTP/1.1 200 OK\r\nDate: Mon, 23 Nov 2026 11:00:00 GMT\r\nContent-Length: x\r\n\r\n";
        assert!(p.parse_head_cached(bad, &mut cache).is_err());
        // Long heads are parsed but not kept.
        let long = format!("HTTP/1.1 204 No Content\r\nX-Pad: {}\r\n\r\n", "p".repeat(2000));
        assert_eq!(p.parse_head_cached(long.as_bytes(), &mut cache), Ok(Some(long.len())));
        assert_eq!(cache.bytes, a[..a.len() - 3]);
    }
}
