//! Packed columns: a trial's series of f64 values as one blob, bit-exact.
//!
//! Format (`f64-xor-shuffle-deflate`): each value's IEEE-754 bits XOR the previous value's bits
//! (the first XOR 0), the 8-byte words are split into 8 planes (all first bytes, then all second
//! bytes, …; little-endian), and the planes are compressed with DEFLATE (RFC 1951, raw). A value
//! that repeats becomes eight zero bytes, and slowly changing values share their high bytes, so
//! monitor series shrink to a few bytes per value. Decoding reverses each step exactly.

use flate2::write::DeflateEncoder;
use flate2::{Compression, Decompress, FlushDecompress, Status};
use std::cell::RefCell;
use std::io::Write;

/// Encode `values` (any f64, NaN payloads included) into a blob.
pub fn encode_f64(values: &[f64]) -> Vec<u8> {
    let n = values.len();
    let mut planes = vec![0u8; n * 8];
    let mut prev = 0u64;
    for (i, v) in values.iter().enumerate() {
        let bits = v.to_bits();
        let x = (bits ^ prev).to_le_bytes();
        prev = bits;
        for (b, byte) in x.iter().enumerate() {
            planes[b * n + i] = *byte;
        }
    }
    let mut enc = DeflateEncoder::new(Vec::with_capacity(n + 16), Compression::default());
    // Writing into a Vec cannot fail.
    let _ = enc.write_all(&planes);
    enc.finish().unwrap_or_default()
}

thread_local! {
    /// One inflater per thread, reset for each blob: a report decodes tens of thousands of short
    /// series, and a fresh inflater's state is larger than most of them.
    static INFLATE: RefCell<Decompress> = RefCell::new(Decompress::new(false));
}

/// Inflate a raw DEFLATE `blob` that must hold exactly `len` bytes.
fn inflate_exact(blob: &[u8], len: usize) -> anyhow::Result<Vec<u8>> {
    // One byte of room more than expected tells a longer stream from an exact one.
    let mut out = Vec::with_capacity(len + 1);
    INFLATE.with(|d| {
        let mut d = d.borrow_mut();
        d.reset(false);
        loop {
            let (in_before, out_before) = (d.total_in(), out.len());
            let rest = blob.get(in_before as usize..).unwrap_or_default();
            let status = d
                .decompress_vec(rest, &mut out, FlushDecompress::Finish)
                .map_err(|_| anyhow::anyhow!("a packed series is damaged: its compressed bytes do not decode"))?;
            if status == Status::StreamEnd || out.len() > len {
                return Ok(());
            }
            if d.total_in() == in_before && out.len() == out_before {
                anyhow::bail!("a packed series is damaged: it ends early");
            }
        }
    })?;
    if out.len() != len {
        anyhow::bail!("a packed series holds {} bytes, not the {len} expected", out.len());
    }
    Ok(out)
}

/// DEFLATE never makes more than 1032 bytes of one: a count of values beyond that for the blob's
/// size is damage, refused before any memory is set aside for it.
const MAX_INFLATE_RATIO: usize = 1032;

/// Decode a blob of `n` values written by [`encode_f64`].
pub fn decode_f64(blob: &[u8], n: usize) -> anyhow::Result<Vec<f64>> {
    if n.checked_mul(8)
        .is_none_or(|bytes| bytes > blob.len().saturating_mul(MAX_INFLATE_RATIO).saturating_add(64))
    {
        anyhow::bail!("a packed series is damaged: {n} values cannot fit in its {} bytes", blob.len());
    }
    let planes = inflate_exact(blob, n * 8).map_err(|e| anyhow::anyhow!("{e} (a series of {n} values)"))?;
    let mut out = Vec::with_capacity(n);
    let mut prev = 0u64;
    for i in 0..n {
        let mut x = [0u8; 8];
        for (b, byte) in x.iter_mut().enumerate() {
            *byte = planes[b * n + i];
        }
        prev ^= u64::from_le_bytes(x);
        out.push(f64::from_bits(prev));
    }
    Ok(out)
}

/// A presence bitmap: bit i (LSB first in each byte) set when sample i has a value.
pub fn encode_bits(present: &[bool]) -> Vec<u8> {
    let mut out = vec![0u8; present.len().div_ceil(8)];
    for (i, p) in present.iter().enumerate() {
        if *p {
            out[i / 8] |= 1 << (i % 8);
        }
    }
    out
}

/// Whether sample `i` has a value in a bitmap of [`encode_bits`] (absent bits are unset).
pub fn bit(bits: &[u8], i: usize) -> bool {
    bits.get(i / 8).is_some_and(|b| b & (1 << (i % 8)) != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_come_back_bit_for_bit() {
        let vals = [
            0.0,
            -0.0,
            1.5,
            1.5,
            f64::MIN_POSITIVE,
            f64::MAX,
            f64::from_bits(0x7ff8_0000_dead_beef),
            1e-300,
            123456.789,
        ];
        let back = decode_f64(&encode_f64(&vals), vals.len()).unwrap();
        assert_eq!(
            back.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            vals.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        );
        assert!(decode_f64(&encode_f64(&[]), 0).unwrap().is_empty());
    }

    #[test]
    fn a_wrong_count_is_an_error() {
        let blob = encode_f64(&[1.0, 2.0]);
        assert!(decode_f64(&blob, 3).is_err());
        assert!(decode_f64(&blob, 1).is_err());
        assert!(decode_f64(b"not deflate", 2).is_err());
    }

    #[test]
    fn repeated_values_pack_small() {
        let vals = vec![42.0; 1000];
        assert!(encode_f64(&vals).len() < 100, "{}", encode_f64(&vals).len());
    }

    #[test]
    fn bitmap() {
        let p = [true, false, true, true, false, false, false, false, true];
        let b = encode_bits(&p);
        assert_eq!(b.len(), 2);
        assert_eq!((0..p.len()).map(|i| bit(&b, i)).collect::<Vec<_>>(), p);
    }
}
