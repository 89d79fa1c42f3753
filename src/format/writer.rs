//! The one writer of the node grammar's primitives (spec/external.md §3),
//! in either encoding: words, int fields (narrow or WIDE), and opaques
//! with their padding. The marshal traversal writes streams straight from
//! MPI's answers with these, and `external::write` writes a tree with them.

use super::external::Encoding;
use super::sink::Sink;

/// Writes a word.
#[inline]
pub fn put_u32(out: &mut Sink, enc: Encoding, v: u32) {
    out.put(&enc.word(v));
}

/// An opaque: its length, its bytes, and (XDR) zero padding to 4 bytes.
pub fn put_opaque(out: &mut Sink, enc: Encoding, bytes: &[u8]) {
    put_u32(out, enc, bytes.len() as u32);
    out.put(bytes);
    let pad = enc.padded(bytes.len()) - bytes.len();
    out.put(&[0u8; 3][..pad]);
}

/// An opaque of at most `max` bytes that `fill` writes into the room it is
/// given, returning how many it wrote (which must not exceed `max`).
pub fn put_opaque_with<E>(
    out: &mut Sink,
    enc: Encoding,
    max: usize,
    fill: impl FnOnce(&mut [u8]) -> Result<usize, E>,
) -> Result<(), E> {
    let start = out.len();
    let room = out.room(4 + enc.padded(max));
    let n = fill(&mut room[4..4 + max])?;
    room[..4].copy_from_slice(&enc.word(n as u32));
    let end = 4 + enc.padded(n);
    room[4 + n..end].fill(0);
    out.truncate(start + end);
    Ok(())
}

/// Writes `values` as int fields: 4 bytes each, or 8 when `wide` (the
/// narrow form only when every value fits 32 bits).
pub fn put_ints<T: Int>(out: &mut Sink, enc: Encoding, wide: bool, values: &[T]) {
    let unit = if wide { 8 } else { 4 };
    put_values(out.room(values.len() * unit), values, wide, enc);
}

/// An integer a field is written from: the tree's `i64`, and the types
/// get_contents returns (`int`, `MPI_Aint`, `MPI_Count`; `MPI_Aint` is
/// `long` in MPICH and `ptrdiff_t` in Open MPI).
pub trait Int: Copy {
    fn to_i64(self) -> i64;
}

impl Int for i32 {
    fn to_i64(self) -> i64 {
        self as i64
    }
}

impl Int for i64 {
    fn to_i64(self) -> i64 {
        self
    }
}

impl Int for isize {
    fn to_i64(self) -> i64 {
        self as i64
    }
}

/// Whether any value needs more than 32 bits. Written as a fold, not
/// `any`, so that the compiler vectorises it.
pub fn beyond_i32<T: Int>(v: &[T]) -> bool {
    v.iter().fold(false, |acc, &x| {
        let x = x.to_i64();
        acc | (x as i32 as i64 != x)
    })
}

/// Writes `src` as big-endian XDR ints, or hypers when `wide`; `dst` has
/// exactly the room. The narrow form is only used when every value fits.
pub fn put_values<T: Int>(dst: &mut [u8], src: &[T], wide: bool, enc: Encoding) {
    if enc == Encoding::Native {
        return put_values_in::<T, true>(dst, src, wide);
    }
    #[cfg(target_arch = "x86_64")]
    if src.len() >= 64 && std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, checked just above.
        unsafe { put_values_avx2(dst, src, wide) };
        return;
    }
    put_values_in::<T, false>(dst, src, wide)
}

/// Big-endian `put_values` compiled for AVX2, where the byte swaps
/// vectorise; long arrays (an indexed type's displacements) spend most of
/// a marshal here.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn put_values_avx2<T: Int>(dst: &mut [u8], src: &[T], wide: bool) {
    put_values_in::<T, false>(dst, src, wide)
}

/// The conversion loop, in the machine's byte order (`NATIVE`, the internal
/// representation) or big-endian (XDR).
#[inline(always)]
fn put_values_in<T: Int, const NATIVE: bool>(dst: &mut [u8], src: &[T], wide: bool) {
    if wide {
        for (d, &v) in dst.chunks_exact_mut(8).zip(src) {
            let v = v.to_i64();
            d.copy_from_slice(&if NATIVE {
                v.to_ne_bytes()
            } else {
                v.to_be_bytes()
            });
        }
    } else {
        for (d, &v) in dst.chunks_exact_mut(4).zip(src) {
            let v = v.to_i64() as i32;
            d.copy_from_slice(&if NATIVE {
                v.to_ne_bytes()
            } else {
                v.to_be_bytes()
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xdr_codec::Pack;

    /// The primitives write what an independent XDR encoder (RFC 4506)
    /// writes: ints, hypers, and opaques with their padding.
    #[test]
    fn xdr_primitives_match_xdr_codec() {
        let ints = [0i64, 1, -1, i32::MAX as i64, i32::MIN as i64, 12345];
        let hypers = [0i64, -1, i64::MAX, i64::MIN, 1 << 40];
        let opaques: [&[u8]; 5] = [b"", b"a", b"ab", b"abcd", b"abcde"];
        let mut ours = Sink::default();
        let mut theirs = Vec::new();
        put_u32(&mut ours, Encoding::Xdr, 0xdead_beef);
        0xdead_beef_u32.pack(&mut theirs).unwrap();
        put_ints(&mut ours, Encoding::Xdr, false, &ints);
        for v in ints {
            (v as i32).pack(&mut theirs).unwrap();
        }
        put_ints(&mut ours, Encoding::Xdr, true, &hypers);
        for v in hypers {
            v.pack(&mut theirs).unwrap();
        }
        for o in opaques {
            put_opaque(&mut ours, Encoding::Xdr, o);
            xdr_codec::pack_opaque_flex(o, None, &mut theirs).unwrap();
        }
        put_opaque_with(&mut ours, Encoding::Xdr, 7, |room| {
            room[..3].copy_from_slice(b"xyz");
            Ok::<_, ()>(3)
        })
        .unwrap();
        xdr_codec::pack_opaque_flex(b"xyz", None, &mut theirs).unwrap();
        assert_eq!(ours.bytes(), theirs.as_slice());
    }

    /// The internal encoding: native byte order, no padding.
    #[test]
    fn native_primitives_are_unpadded() {
        let mut ours = Sink::default();
        put_opaque(&mut ours, Encoding::Native, b"abc");
        put_ints(&mut ours, Encoding::Native, false, &[-2i64]);
        let mut expected = 3u32.to_ne_bytes().to_vec();
        expected.extend_from_slice(b"abc");
        expected.extend_from_slice(&(-2i32).to_ne_bytes());
        assert_eq!(ours.bytes(), expected.as_slice());
    }
}
