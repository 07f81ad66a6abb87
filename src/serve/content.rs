//! What the server answers: routes, prebuilt bodies, delays, the testing aids.

use bytes::Bytes;
use std::sync::RwLock;
use std::time::{Duration, Instant};

/// A per-request delay: none, fixed (`20ms`), uniform (`uniform:5ms-15ms`) or exponential (`exp:10ms`).
#[derive(Clone, Debug, PartialEq)]
pub enum Delay {
    None,
    Fixed(Duration),
    Uniform(Duration, Duration),
    Exp(Duration),
}

impl Delay {
    pub fn parse(s: &str) -> Result<Delay, String> {
        let d = crate::util::duration::parse;
        if let Some(r) = s.strip_prefix("uniform:") {
            let (a, b) = r.split_once('-').ok_or("uniform delay: write uniform:5ms-15ms")?;
            let (a, b) = (d(a)?, d(b)?);
            if b < a {
                return Err("uniform delay: the upper bound is below the lower".into());
            }
            return Ok(Delay::Uniform(a, b));
        }
        if let Some(m) = s.strip_prefix("exp:") {
            return Ok(Delay::Exp(d(m)?));
        }
        let v = d(s)?;
        Ok(if v.is_zero() { Delay::None } else { Delay::Fixed(v) })
    }

    /// Draw one delay.
    pub fn draw(&self) -> Duration {
        use crate::util::rng::with_thread;
        match self {
            Delay::None => Duration::ZERO,
            Delay::Fixed(d) => *d,
            Delay::Uniform(a, b) => {
                let (a, b) = (a.as_secs_f64(), b.as_secs_f64());
                Duration::from_secs_f64(if b > a { a + (b - a) * with_thread(|r| r.unit()) } else { a })
            }
            Delay::Exp(m) => Duration::from_secs_f64(-m.as_secs_f64() * with_thread(|r| r.unit()).ln()),
        }
    }
}

/// A global pause: `at` after start, every response waits until `at + length`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stall {
    pub at: Duration,
    pub length: Duration,
}

impl Stall {
    /// How long a response that is ready now must wait.
    pub fn wait(&self, started: Instant) -> Duration {
        let t = started.elapsed();
        if t >= self.at && t < self.at + self.length {
            self.at + self.length - t
        } else {
            Duration::ZERO
        }
    }
}

/// Largest body `/bytes/N` serves.
pub const MAX_BODY: usize = 256 << 20;

/// Bodies, built once and shared: slices of one buffer that grows to the largest size asked for.
pub struct Content {
    root: usize,
    buf: RwLock<Bytes>,
}

pub enum Route {
    Body(Bytes),
    NotFound,
    TooLarge,
}

impl Content {
    pub fn new(root: usize) -> Content {
        Content {
            root,
            buf: RwLock::new(fill(root.max(64 << 10))),
        }
    }

    pub fn route(&self, path: &str) -> Route {
        let path = path.split('?').next().unwrap_or(path);
        let n = if path == "/" {
            self.root
        } else if let Some(n) = path.strip_prefix("/bytes/").and_then(|n| n.parse::<usize>().ok()) {
            n
        } else {
            return Route::NotFound;
        };
        if n > MAX_BODY {
            return Route::TooLarge;
        }
        Route::Body(self.bytes(n))
    }

    fn bytes(&self, n: usize) -> Bytes {
        if let Ok(b) = self.buf.read() {
            if b.len() >= n {
                return b.slice(..n);
            }
        }
        let mut w = match self.buf.write() {
            Ok(w) => w,
            Err(p) => p.into_inner(),
        };
        if w.len() < n {
            *w = fill(n.next_power_of_two().min(MAX_BODY));
        }
        w.slice(..n)
    }
}

fn fill(n: usize) -> Bytes {
    let pattern = b"perflab serves these bytes. ";
    Bytes::from((0..n).map(|i| pattern[i % pattern.len()]).collect::<Vec<u8>>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_and_delays() {
        let c = Content::new(37);
        assert!(matches!(c.route("/"), Route::Body(b) if b.len() == 37));
        assert!(matches!(c.route("/bytes/1000000"), Route::Body(b) if b.len() == 1_000_000));
        assert!(matches!(c.route("/nope"), Route::NotFound));
        assert_eq!(Delay::parse("20ms"), Ok(Delay::Fixed(Duration::from_millis(20))));
        assert_eq!(
            Delay::parse("uniform:5ms-15ms"),
            Ok(Delay::Uniform(Duration::from_millis(5), Duration::from_millis(15)))
        );
        assert!(Delay::parse("uniform:15ms-5ms").is_err());
    }
}
