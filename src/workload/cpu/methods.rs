//! The work one `cpu` operation does, per method. Each operation is a fixed amount of work, the same
//! in every perflab version carrying the same [`VERSION`]: when a method's work changes, the version
//! goes up, so that operations per second stay comparable between runs of the same version.

use std::hint::black_box;

/// The version of the methods' work; reported beside every figure of operations.
pub const VERSION: u32 = 1;

/// One kind of arithmetic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// 4 096 rounds of 64-bit multiply, add, xor-shift and one division each.
    Int,
    /// 4 096 rounds of double multiply-add and square root.
    Float,
    /// One 32 × 32 double matrix product (32 768 multiply-adds).
    Matrix,
    /// FNV-1a 64 over 16 KiB.
    Hash,
}

/// Every method, in the order `mix` runs them and reports show them.
pub const ALL: [Method; 4] = [Method::Int, Method::Float, Method::Matrix, Method::Hash];

impl Method {
    pub fn name(self) -> &'static str {
        match self {
            Method::Int => "int",
            Method::Float => "float",
            Method::Matrix => "matrix",
            Method::Hash => "hash",
        }
    }

    pub fn index(self) -> usize {
        ALL.iter().position(|m| *m == self).unwrap_or(0)
    }
}

/// What a plan or the command line asks for: one method, or all of them in turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Choice {
    One(Method),
    Mix,
}

impl Choice {
    pub fn parse(s: &str) -> Result<Choice, String> {
        if s == "mix" {
            return Ok(Choice::Mix);
        }
        ALL.iter()
            .find(|m| m.name() == s)
            .map(|m| Choice::One(*m))
            .ok_or_else(|| format!("method \"{s}\": use \"int\", \"float\", \"matrix\", \"hash\" or \"mix\""))
    }

    pub fn name(self) -> &'static str {
        match self {
            Choice::One(m) => m.name(),
            Choice::Mix => "mix",
        }
    }

    /// The method of operation number `n` of a worker.
    pub fn nth(self, n: u64) -> Method {
        match self {
            Choice::One(m) => m,
            Choice::Mix => ALL[(n % ALL.len() as u64) as usize],
        }
    }
}

/// The state one worker's operations work on (so that nothing is allocated per operation).
pub struct Scratch {
    seed: u64,
    a: Vec<f64>,
    b: Vec<f64>,
    c: Vec<f64>,
    buf: Vec<u8>,
}

const N: usize = 32;
const ROUNDS: u64 = 4096;
const HASH_BYTES: usize = 16 * 1024;

impl Scratch {
    pub fn new(seed: u64) -> Scratch {
        let mut x = seed | 1;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        Scratch {
            seed,
            a: (0..N * N).map(|_| (next() % 1000) as f64 / 1000.0).collect(),
            b: (0..N * N).map(|_| (next() % 1000) as f64 / 1000.0).collect(),
            c: vec![0.0; N * N],
            buf: (0..HASH_BYTES).map(|_| next() as u8).collect(),
        }
    }

    /// Do one operation of `m`; returns a value depending on all of it (so none is optimised away).
    pub fn run(&mut self, m: Method) -> u64 {
        self.seed = self.seed.wrapping_add(1);
        let v = match m {
            Method::Int => int(self.seed),
            Method::Float => float(self.seed),
            Method::Matrix => matrix(&self.a, &self.b, &mut self.c),
            Method::Hash => fnv1a(&self.buf, self.seed),
        };
        black_box(v)
    }
}

fn int(seed: u64) -> u64 {
    let mut x = black_box(seed) | 1;
    let mut acc = 0u64;
    for i in 0..ROUNDS {
        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        acc ^= x >> 29;
        acc = acc.rotate_left(7).wrapping_add(x / (i | 3));
    }
    acc
}

fn float(seed: u64) -> u64 {
    let mut a = 1.0 + (black_box(seed) % 7) as f64;
    let mut b = 0.5f64;
    for _ in 0..ROUNDS {
        a = a * 0.999_999_9 + b.sqrt();
        b = b * 1.000_000_1 + 0.25;
    }
    (a + b).to_bits()
}

fn matrix(a: &[f64], b: &[f64], c: &mut [f64]) -> u64 {
    for i in 0..N {
        for j in 0..N {
            let mut s = 0.0;
            for k in 0..N {
                s += a[i * N + k] * b[k * N + j];
            }
            c[i * N + j] = s;
        }
    }
    black_box(&c);
    c[N + 1].to_bits()
}

fn fnv1a(buf: &[u8], seed: u64) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64 ^ seed;
    for &byte in black_box(buf) {
        h ^= u64::from(byte);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn methods_compute_known_answers() {
        // FNV-1a 64 of "a" is af63dc4c8601ec8c (the reference's test vector).
        assert_eq!(fnv1a(b"a", 0), 0xaf63_dc4c_8601_ec8c);
        // The identity times B is B.
        let mut id = vec![0.0; N * N];
        (0..N).for_each(|i| id[i * N + i] = 1.0);
        let s = Scratch::new(3);
        let mut c = vec![0.0; N * N];
        matrix(&id, &s.b, &mut c);
        assert_eq!(c, s.b);
        // The same seed gives the same work.
        assert_eq!(int(5), int(5));
        assert_ne!(int(5), int(6));
        assert_eq!(float(5), float(5));
    }

    #[test]
    fn choices_parse_and_mix_takes_every_method_in_turn() {
        assert_eq!(Choice::parse("hash"), Ok(Choice::One(Method::Hash)));
        assert!(Choice::parse("fft").unwrap_err().contains("\"mix\""));
        let m = Choice::parse("mix").expect("mix");
        let seen: Vec<Method> = (0..4).map(|n| m.nth(n)).collect();
        assert_eq!(seen, ALL.to_vec());
        assert_eq!(Choice::One(Method::Int).nth(7), Method::Int);
    }
}
