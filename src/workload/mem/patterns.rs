//! memtester's pattern tests over a region split in two halves (`a`, `b`): each test writes the
//! same values into both halves (or applies the same operation to both) and counts the words that
//! differ, as memtester 4 does: stuck address, random value, xor, sub, mul, div, or, and, sequential
//! increment, solid bits, checkerboard, block sequential, walking zeros, walking ones, bit spread,
//! bit flip, 8-bit and 16-bit wide writes.
//!
//! Testing aid: the environment variable `PERFLAB_MEM_INJECT_ERROR=<pattern>` flips one bit of the
//! second half inside that pattern's test, after its writes and before its comparison, so that a test
//! can check that an error is found and named (docs/load.md).

use std::hint::black_box;

/// Every pattern, in the order they run.
pub const PATTERNS: &[&str] = &[
    "stuck_address",
    "random_value",
    "compare_xor",
    "compare_sub",
    "compare_mul",
    "compare_div",
    "compare_or",
    "compare_and",
    "sequential_increment",
    "solid_bits",
    "checkerboard",
    "block_sequential",
    "walking_zeros",
    "walking_ones",
    "bit_spread",
    "bit_flip",
    "8bit_writes",
    "16bit_writes",
];

/// The environment variable of the testing aid.
pub const INJECT_ENV: &str = "PERFLAB_MEM_INJECT_ERROR";

const ONES: u64 = u64::MAX;
const CHECKER: u64 = 0x5555_5555_5555_5555;

/// Runs the patterns over two halves.
pub struct Verifier {
    rng: u64,
    /// The pattern whose comparison gets one flipped bit (testing aid), until it happened.
    inject: Option<String>,
}

impl Verifier {
    pub fn new(seed: u64, inject: Option<String>) -> Verifier {
        Verifier { rng: seed | 1, inject }
    }

    fn rand(&mut self) -> u64 {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        self.rng
    }

    /// The testing aid: flip one bit in the middle of `b` if `name` is the pattern asked for.
    fn maybe_inject(&mut self, name: &str, b: &mut [u64]) {
        if self.inject.as_deref() == Some(name) && !b.is_empty() {
            self.inject = None;
            let mid = b.len() / 2;
            b[mid] ^= 1 << 17;
        }
    }

    /// Compare the halves (after the testing aid's flip, if due).
    fn check(&mut self, name: &str, a: &[u64], b: &mut [u64]) -> u64 {
        self.maybe_inject(name, b);
        compare(a, b)
    }

    /// Run pattern number `idx` of [`PATTERNS`]; returns the words found different, or None when
    /// `stop` said to stop between two of its passes (the test is then incomplete).
    pub fn run(&mut self, idx: usize, a: &mut [u64], b: &mut [u64], stop: &dyn Fn() -> bool) -> Option<u64> {
        let name = PATTERNS[idx];
        let mut errors = 0;
        match name {
            "stuck_address" => {
                for j in 0..16 {
                    if stop() {
                        return None;
                    }
                    // Each word holds its own address (or its complement): a word written at the
                    // wrong address holds another's.
                    let want = |base: u64, i: usize| {
                        let addr = base.wrapping_add(8 * i as u64);
                        if (j + i).is_multiple_of(2) {
                            addr
                        } else {
                            !addr
                        }
                    };
                    let (ba, bb) = (a.as_ptr() as u64, b.as_ptr() as u64);
                    fill(a, |i| want(ba, i));
                    fill(b, |i| want(bb, i));
                    self.maybe_inject(name, b);
                    for (buf, base) in [(&*a, ba), (&*b, bb)] {
                        errors += black_box(buf).iter().enumerate().filter(|(i, v)| **v != want(base, *i)).count() as u64;
                    }
                }
            }
            "random_value" => {
                let seed = self.rand();
                let mut r = seed | 1;
                both(a, b, |_| {
                    r ^= r << 13;
                    r ^= r >> 7;
                    r ^= r << 17;
                    r
                });
                errors += self.check(name, a, b);
            }
            "compare_xor" | "compare_sub" | "compare_mul" | "compare_div" | "compare_or" | "compare_and" => {
                let q = self.rand();
                let op: fn(u64, u64) -> u64 = match name {
                    "compare_xor" => |v, q| v ^ q,
                    "compare_sub" => |v, q| v.wrapping_sub(q),
                    "compare_mul" => |v, q| v.wrapping_mul(q),
                    "compare_div" => |v, q| v / q.max(1),
                    "compare_or" => |v, q| v | q,
                    _ => |v, q| v & q,
                };
                a.iter_mut().for_each(|v| *v = op(*v, q));
                b.iter_mut().for_each(|v| *v = op(*v, q));
                errors += self.check(name, a, b);
            }
            "sequential_increment" => {
                let q = self.rand();
                both(a, b, |i| (i as u64).wrapping_add(q));
                errors += self.check(name, a, b);
            }
            "solid_bits" => {
                for j in 0..64 {
                    if stop() {
                        return None;
                    }
                    let q = if j % 2 == 0 { ONES } else { 0 };
                    both(a, b, |i| if i.is_multiple_of(2) { q } else { !q });
                    errors += self.check(name, a, b);
                }
            }
            "checkerboard" => {
                for j in 0..64 {
                    if stop() {
                        return None;
                    }
                    let q = if j % 2 == 0 { CHECKER } else { !CHECKER };
                    both(a, b, |i| if i.is_multiple_of(2) { q } else { !q });
                    errors += self.check(name, a, b);
                }
            }
            "block_sequential" => {
                for j in 0..256u64 {
                    if stop() {
                        return None;
                    }
                    let q = j * 0x0101_0101_0101_0101;
                    both(a, b, |_| q);
                    errors += self.check(name, a, b);
                }
            }
            "walking_zeros" | "walking_ones" => {
                let invert = name == "walking_zeros";
                for j in 0..128 {
                    if stop() {
                        return None;
                    }
                    let bit = if j < 64 { 1u64 << j } else { 1u64 << (127 - j) };
                    let q = if invert { !bit } else { bit };
                    both(a, b, |_| q);
                    errors += self.check(name, a, b);
                }
            }
            "bit_spread" => {
                for j in 0..128u32 {
                    if stop() {
                        return None;
                    }
                    let q = if j < 64 {
                        (1u64 << j) | 1u64.checked_shl(j + 2).unwrap_or(0)
                    } else {
                        (1u64 << (127 - j)) | 1u64.checked_shl(129 - j).unwrap_or(0)
                    };
                    both(a, b, |i| if i.is_multiple_of(2) { q } else { !q });
                    errors += self.check(name, a, b);
                }
            }
            "bit_flip" => {
                for k in 0..64 {
                    if stop() {
                        return None;
                    }
                    let mut q = 1u64 << k;
                    for _ in 0..8 {
                        q = !q;
                        both(a, b, |i| if i.is_multiple_of(2) { q } else { !q });
                        errors += self.check(name, a, b);
                    }
                }
            }
            _ => {
                // 8- and 16-bit wide writes: `a` word by word, `b` in narrow stores of the same values.
                let width = if name == "8bit_writes" { 1 } else { 2 };
                for _ in 0..2 {
                    if stop() {
                        return None;
                    }
                    let seed = self.rand();
                    let mut r = seed | 1;
                    fill(a, |_| {
                        r ^= r << 13;
                        r ^= r >> 7;
                        r ^= r << 17;
                        r
                    });
                    narrow_copy(a, b, width);
                    errors += self.check(name, a, b);
                }
            }
        }
        Some(errors)
    }
}

fn fill(buf: &mut [u64], mut f: impl FnMut(usize) -> u64) {
    for (i, v) in buf.iter_mut().enumerate() {
        *v = f(i);
    }
    black_box(buf);
}

fn both(a: &mut [u64], b: &mut [u64], mut f: impl FnMut(usize) -> u64) {
    for (i, (x, y)) in a.iter_mut().zip(b.iter_mut()).enumerate() {
        let v = f(i);
        *x = v;
        *y = v;
    }
    black_box(a);
    black_box(b);
}

/// Words that differ between the halves.
fn compare(a: &[u64], b: &[u64]) -> u64 {
    black_box(a).iter().zip(black_box(b)).filter(|(x, y)| x != y).count() as u64
}

/// Copy `a` into `b` with stores of `width` bytes (1 or 2).
fn narrow_copy(a: &[u64], b: &mut [u64], width: usize) {
    let bytes = b.len() * 8;
    // SAFETY: `b` is an exclusively borrowed slice of `b.len()` u64s, that is `bytes` initialised
    // bytes; u8 has alignment 1 and every byte value is a valid u8, and the view lives only inside
    // this function, while `b` is not otherwise used.
    let out: &mut [u8] = unsafe { std::slice::from_raw_parts_mut(b.as_mut_ptr().cast::<u8>(), bytes) };
    for (i, w) in a.iter().enumerate() {
        let src = w.to_ne_bytes();
        let dst = &mut out[i * 8..i * 8 + 8];
        if width == 1 {
            for k in 0..8 {
                dst[k] = black_box(src[k]);
            }
        } else {
            for k in (0..8).step_by(2) {
                let half = u16::from_ne_bytes([src[k], src[k + 1]]);
                dst[k..k + 2].copy_from_slice(&black_box(half).to_ne_bytes());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sound_memory_passes_every_pattern() {
        let (mut a, mut b) = (vec![0u64; 512], vec![0u64; 512]);
        let mut v = Verifier::new(7, None);
        for (i, name) in PATTERNS.iter().enumerate() {
            assert_eq!(v.run(i, &mut a, &mut b, &|| false), Some(0), "{name}");
        }
    }

    #[test]
    fn a_stopped_pattern_is_incomplete() {
        let (mut a, mut b) = (vec![0u64; 64], vec![0u64; 64]);
        let bit_flip = PATTERNS.iter().position(|p| *p == "bit_flip").expect("bit_flip");
        assert_eq!(Verifier::new(1, None).run(bit_flip, &mut a, &mut b, &|| true), None);
    }

    #[test]
    fn an_injected_error_is_found_by_its_pattern_and_none_before() {
        for (i, name) in PATTERNS.iter().enumerate() {
            let (mut a, mut b) = (vec![0u64; 64], vec![0u64; 64]);
            let mut v = Verifier::new(3, Some(name.to_string()));
            let found: Vec<u64> = (0..PATTERNS.len())
                .map(|k| v.run(k, &mut a, &mut b, &|| false).expect("not stopped"))
                .collect();
            assert!(found[i] >= 1, "{name}: {found:?}");
            assert!(found[..i].iter().all(|e| *e == 0), "{name}: {found:?}");
        }
    }
}
