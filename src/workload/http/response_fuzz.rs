//! Fuzz harness for the response parser, run by `cargo test` with a fixed seed and a bounded number
//! of cases (`PERFLAB_FUZZ_CASES`, `PERFLAB_FUZZ_SECS` and `PERFLAB_FUZZ_SEED` as for the other
//! harnesses; `bench/fuzz.sh` runs it longer). Responses are generated with every framing (length,
//! chunked with extensions and trailers, until the connection's end, no body), odd header values,
//! long heads and extra bytes after the response, then one byte may be flipped. Properties: no
//! panic, and the response split into reads at every point (and byte by byte, and at random
//! points, and with the head cache holding another head) parses exactly as in one read: the same
//! error, or the same end, status, connection close and body size.

use super::*;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use std::time::Instant;

#[derive(Clone, Debug, PartialEq)]
enum Outcome {
    Error(String),
    Done {
        used: usize,
        status: u16,
        close: bool,
        body: u64,
    },
    Open {
        at_eof: Result<(), &'static str>,
        in_head: bool,
        status: u16,
        close: bool,
        body: u64,
    },
}

/// Feed `bytes` as reads ending at `cuts` (then the rest), as the worker does.
fn drive(bytes: &[u8], cuts: &[usize], head_request: bool, cache: &mut HeadCache) -> Outcome {
    let mut p = Parser::default();
    p.reset(head_request);
    let mut head = Vec::new();
    let mut consumed = 0;
    let mut start = 0;
    for end in cuts.iter().copied().chain([bytes.len()]) {
        let end = end.min(bytes.len());
        if end <= start {
            continue;
        }
        let data = &bytes[start..end];
        match p.feed_read(data, &mut head, cache) {
            Err(e) => return Outcome::Error(e),
            Ok(Fed::Done { used }) => {
                return Outcome::Done {
                    used: consumed + used,
                    status: p.status,
                    close: p.close,
                    body: p.body_bytes,
                }
            }
            Ok(Fed::More) => consumed += data.len(),
        }
        start = end;
    }
    Outcome::Open {
        at_eof: p.at_eof(),
        in_head: p.in_head(),
        status: p.status,
        close: p.close,
        body: p.body_bytes,
    }
}

#[derive(Clone, Debug)]
struct Message {
    bytes: Vec<u8>,
    head_request: bool,
    cuts: Vec<usize>,
    /// A head parsed before this response (the cache of a worker that served other responses).
    previous: Vec<u8>,
}

fn header() -> impl Strategy<Value = String> {
    prop_oneof![
        (0u64..100).prop_map(|n| format!("Content-Length: {n}")),
        prop::sample::select(vec![
            "Content-Length: abc",
            "Content-Length:  7 ",
            "Content-Length: -1",
            "Content-Length: 18446744073709551616",
            "content-length: 0",
            "Transfer-Encoding: chunked",
            "Transfer-Encoding: gzip, CHUNKED",
            "transfer-encoding: identity",
            "Connection: close",
            "Connection: keep-alive",
            "CONNECTION: Keep-Alive, Upgrade",
            "Date: Mon, 23 Nov 2026 11:00:00 GMT",
            "X-Empty:",
            "X-Colon: a:b:c",
            "Bad Header: space in name",
        ])
        .prop_map(String::from),
        (0usize..300).prop_map(|n| format!("X-Pad: {}", "p".repeat(n))),
    ]
}

/// A chunked body: sizes in hex (either case, maybe with an extension), data, the last chunk and
/// trailers.
fn chunked(sizes: &[usize], upper: bool, ext: bool, trailer: bool) -> Vec<u8> {
    let mut out = Vec::new();
    for &n in sizes {
        let size = if upper { format!("{n:X}") } else { format!("{n:x}") };
        out.extend_from_slice(size.as_bytes());
        if ext {
            out.extend_from_slice(b";name=value");
        }
        out.extend_from_slice(b"\r\n");
        out.extend(std::iter::repeat_n(b'd', n));
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"0\r\n");
    if trailer {
        out.extend_from_slice(b"X-Trailer: yes\r\n");
    }
    out.extend_from_slice(b"\r\n");
    out
}

fn messages() -> impl Strategy<Value = Message> {
    let status = prop::sample::select(vec![200u16, 204, 304, 100, 101, 404, 500, 999]);
    let body = (
        prop::collection::vec(0usize..40, 0..6),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        0usize..120,
    );
    let flip = prop::option::weighted(0.3, (any::<prop::sample::Index>(), any::<u8>()));
    (
        (any::<bool>(), status, prop::collection::vec(header(), 0..8), any::<bool>()),
        body,
        (prop::collection::vec(any::<u8>(), 0..16), flip, any::<bool>()),
        (prop::collection::vec(any::<prop::sample::Index>(), 0..6), 0u8..4),
    )
        .prop_map(
            |((http10, status, headers, huge), (sizes, upper, ext, trailer, raw_len), (tail, flip, head_request), (cuts, prev))| {
                let mut m = format!("HTTP/1.{} {status} Reason\r\n", if http10 { 0 } else { 1 }).into_bytes();
                for h in &headers {
                    m.extend_from_slice(h.as_bytes());
                    m.extend_from_slice(b"\r\n");
                }
                if huge {
                    // Around the 64 KiB limit on a head.
                    m.extend_from_slice(format!("X-Huge: {}\r\n", "h".repeat(MAX_HEAD - 40 + raw_len)).as_bytes());
                }
                m.extend_from_slice(b"\r\n");
                let head = m.clone();
                if headers.iter().any(|h| h.to_ascii_lowercase().contains("chunked")) {
                    m.extend(chunked(&sizes, upper, ext, trailer));
                } else {
                    m.extend(std::iter::repeat_n(b'b', raw_len));
                }
                m.extend(tail);
                if let Some((at, byte)) = flip {
                    let i = at.index(m.len());
                    m[i] = byte;
                }
                let cuts = {
                    let mut c: Vec<usize> = cuts.iter().map(|i| i.index(m.len() + 1)).collect();
                    c.sort_unstable();
                    c
                };
                let previous = match prev {
                    0 => Vec::new(),
                    1 => head.clone(),
                    2 => b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n".to_vec(),
                    _ => {
                        // The same head but for its last header byte.
                        let mut h = head.clone();
                        if h.len() > 4 {
                            let i = h.len() - 5;
                            h[i] ^= 1;
                        }
                        h
                    }
                };
                Message {
                    bytes: m,
                    head_request,
                    cuts,
                    previous,
                }
            },
        )
}

fn same_in_every_split(m: Message) -> Result<(), TestCaseError> {
    let fresh = || HeadCache::default();
    let primed = || {
        let mut c = HeadCache::default();
        let _ = Parser::default().parse_head_cached(&m.previous, &mut c);
        c
    };
    let whole = drive(&m.bytes, &[], m.head_request, &mut fresh());
    let n = m.bytes.len();
    // Every point for messages of ordinary size; a head near 64 KiB gets a sample of points.
    let points: Vec<usize> = if n <= 4096 {
        (1..n).collect()
    } else {
        (1..n).step_by(n / 97 + 1).collect()
    };
    for i in points {
        let split = drive(&m.bytes, &[i], m.head_request, &mut fresh());
        prop_assert_eq!(&split, &whole, "split at {}", i);
    }
    if n <= 4096 {
        let bytewise: Vec<usize> = (1..n).collect();
        prop_assert_eq!(&drive(&m.bytes, &bytewise, m.head_request, &mut fresh()), &whole, "byte by byte");
    }
    prop_assert_eq!(
        &drive(&m.bytes, &m.cuts, m.head_request, &mut fresh()),
        &whole,
        "cut at {:?}",
        m.cuts
    );
    prop_assert_eq!(
        &drive(&m.bytes, &m.cuts, m.head_request, &mut primed()),
        &whole,
        "with a cached head"
    );
    prop_assert_eq!(
        &drive(&m.bytes, &[], m.head_request, &mut primed()),
        &whole,
        "one read, cached head"
    );
    Ok(())
}

fn env<T: std::str::FromStr>(name: &str) -> Option<T> {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok())
}

/// Run `test` on values of `strategy` with the budget the environment gives (see the module doc).
fn budget<S>(target: &str, default_cases: u32, strategy: S, test: impl Fn(S::Value) -> Result<(), TestCaseError>)
where
    S: Strategy,
    S::Value: std::fmt::Debug,
{
    let seed: u64 = env("PERFLAB_FUZZ_SEED").unwrap_or(0x0070_6572_666c_6162);
    let secs: Option<f64> = env("PERFLAB_FUZZ_SECS");
    let cases: u32 = env("PERFLAB_FUZZ_CASES").unwrap_or(if secs.is_some() { 500 } else { default_cases });
    let start = Instant::now();
    let mut total = 0u64;
    for round in 0u64.. {
        let config = Config {
            cases,
            failure_persistence: None,
            max_shrink_iters: 4096,
            ..Config::default()
        };
        let mut bytes = [0u8; 32];
        bytes[..8].copy_from_slice(&seed.wrapping_add(round).to_le_bytes());
        let mut runner = TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &bytes));
        if let Err(e) = runner.run(&strategy, &test) {
            panic!("fuzz {target}: {e} (PERFLAB_FUZZ_SEED={seed}, round {round})");
        }
        total += u64::from(cases);
        if secs.is_none_or(|s| start.elapsed().as_secs_f64() >= s) {
            break;
        }
    }
    eprintln!("fuzz {target}: {total} cases in {:.1} s, 0 failures", start.elapsed().as_secs_f64());
}

#[test]
fn a_response_split_anywhere_parses_as_in_one_read() {
    budget("http response", 300, messages(), same_in_every_split);
}

#[test]
fn arbitrary_bytes_split_anywhere_parse_as_in_one_read() {
    let bytes = prop::collection::vec(any::<u8>(), 0..400);
    budget("http response bytes", 300, (bytes, any::<bool>()), |(b, head)| {
        let whole = drive(&b, &[], head, &mut HeadCache::default());
        for i in 1..b.len() {
            prop_assert_eq!(&drive(&b, &[i], head, &mut HeadCache::default()), &whole, "split at {}", i);
        }
        Ok(())
    });
}
