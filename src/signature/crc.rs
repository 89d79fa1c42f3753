//! CRC-32 of the signature (Langou et al. §3.5 compare with
//! CRC-04C11DB7): the standard CRC-32 (ISO-HDLC, as zlib's `crc32`:
//! polynomial 0x04C11DB7 bit-reflected, initial value and final xor
//! 0xFFFFFFFF) of the byte string in which each basic type is 4 bytes, its
//! `small_value(2^32 - 1)` big-endian.
//!
//! A CRC concatenates with a combine step: appending n bytes to a message
//! is the GF(2)-linear map M^n on the 32-bit register, M the one-zero-byte
//! map, and crc(AB) = M^|B|(crc(A)) ⊕ crc(B) (the initial value and final
//! xor cancel). `crc32_combine` computes M^n as a 32×32 GF(2) matrix by
//! repeated squaring, as zlib's `crc32_combine` did. Inside the fold the
//! map M^n, which is multiplication by x^(8n) modulo the polynomial, is
//! carried in that compact form next to the CRC, so a concatenation is
//! O(1) and k copies O(log k) by doubling.

use super::basic::BasicType;
use super::fold::SignatureMonoid;
use super::{HashKind, SignatureHash};

/// The CRC-32 polynomial 0x04C11DB7, bit-reflected (bit 31 is x^0).
pub const POLY: u32 = 0xedb8_8320;

/// x^0 in the reflected representation.
const ONE: u32 = 1 << 31;

static TABLE: [u32; 256] = {
    let mut t = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 { (c >> 1) ^ POLY } else { c >> 1 };
            k += 1;
        }
        t[i] = c;
        i += 1;
    }
    t
};

/// The standard CRC-32 of `bytes`, byte by byte (the naive reference).
pub fn crc32(bytes: &[u8]) -> u32 {
    crc32_update(0, bytes)
}

/// Continues a standard CRC-32 `crc` with more bytes.
pub fn crc32_update(crc: u32, bytes: &[u8]) -> u32 {
    let mut c = !crc;
    for &b in bytes {
        c = TABLE[((c ^ b as u32) & 0xff) as usize] ^ (c >> 8);
    }
    !c
}

/// a·b mod P, both in the reflected representation.
#[inline]
pub fn mul_mod_p(a: u32, b: u32) -> u32 {
    // Bit 31 - i of `a` is the coefficient of x^i. Horner from x^31 down,
    // one byte of `a` at a time: p = p·x^8 + a_k(x)·b, where p·x^8 mod P
    // is one step of the byte table and a_k(x)·b takes eight shifts of b.
    let mut product = 0u32;
    for k in (0..4).rev() {
        product = TABLE[(product & 0xff) as usize] ^ (product >> 8);
        let byte = (a >> (8 * (3 - k))) & 0xff; // coefficients of x^(8k)..x^(8k+7)
        let mut shifted = b;
        // x^(8k + t) for t = 0..7 is bit 7 - t of `byte` (reflected).
        for t in 0..8 {
            let bit = (byte >> (7 - t)) & 1;
            product ^= shifted & 0u32.wrapping_sub(bit);
            shifted = (shifted >> 1) ^ (POLY & 0u32.wrapping_sub(shifted & 1));
        }
    }
    product
}

/// x^(8n) mod P: the map of appending n zero bytes, in compact form.
pub fn x8n_mod_p(mut n: u128) -> u32 {
    let mut result = ONE;
    let mut square = ONE >> 8; // x^8
    while n != 0 {
        if n & 1 == 1 {
            result = mul_mod_p(result, square);
        }
        square = mul_mod_p(square, square);
        n >>= 1;
    }
    result
}

/// A 32×32 matrix over GF(2) acting on the CRC register: column i is the
/// image of bit i.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Gf2Matrix(pub [u32; 32]);

impl Gf2Matrix {
    pub const IDENTITY: Gf2Matrix = {
        let mut c = [0u32; 32];
        let mut i = 0;
        while i < 32 {
            c[i] = 1 << i;
            i += 1;
        }
        Gf2Matrix(c)
    };

    /// The map of one zero byte through the table-driven register update.
    pub fn zero_byte() -> Gf2Matrix {
        Gf2Matrix(std::array::from_fn(|i| {
            let s = 1u32 << i;
            TABLE[(s & 0xff) as usize] ^ (s >> 8)
        }))
    }

    pub fn apply(&self, v: u32) -> u32 {
        let mut out = 0;
        let mut v = v;
        let mut i = 0;
        while v != 0 {
            if v & 1 != 0 {
                out ^= self.0[i];
            }
            v >>= 1;
            i += 1;
        }
        out
    }

    /// self ∘ other (apply `other` first).
    pub fn after(&self, other: &Gf2Matrix) -> Gf2Matrix {
        Gf2Matrix(std::array::from_fn(|i| self.apply(other.0[i])))
    }

    /// The map of `n` zero bytes: M^n by repeated squaring.
    pub fn zero_bytes(mut n: u128) -> Gf2Matrix {
        let mut result = Gf2Matrix::IDENTITY;
        let mut square = Gf2Matrix::zero_byte();
        while n != 0 {
            if n & 1 == 1 {
                result = result.after(&square);
            }
            n >>= 1;
            if n != 0 {
                square = square.after(&square);
            }
        }
        result
    }
}

/// The standard CRC-32 of A‖B from crc(A), crc(B) and |B| in bytes, with
/// GF(2) matrix powers: O(log len2) matrix squarings.
pub fn crc32_combine(crc1: u32, crc2: u32, len2: u128) -> u32 {
    Gf2Matrix::zero_bytes(len2).apply(crc1) ^ crc2
}

/// Bytes per basic type in the CRC's byte string.
pub const RECORD: usize = 4;

/// The 4-byte record of one basic type.
#[inline]
pub fn record(b: BasicType) -> [u8; RECORD] {
    (b.small_value(u32::MAX as u64) as u32).to_be_bytes()
}

/// (crc, x^(8·bytes) mod P).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Crc32 {
    pub crc: u32,
    /// The map of appending this signature's bytes, x^(8·4n) mod P.
    pub shift: u32,
}

/// x^(8·4) mod P: the shift of one basic type's record.
/// P = x^32 + p(x) and POLY is p(x) reflected, so x^32 mod P = POLY.
const RECORD_SHIFT: u32 = POLY;

impl SignatureMonoid for Crc32 {
    fn empty() -> Self {
        Crc32 { crc: 0, shift: ONE }
    }
    fn basic(b: BasicType) -> Self {
        Crc32 {
            crc: crc32(&record(b)),
            shift: RECORD_SHIFT,
        }
    }
    #[inline]
    fn concat(&self, next: &Self) -> Self {
        Crc32 {
            crc: mul_mod_p(next.shift, self.crc) ^ next.crc,
            shift: mul_mod_p(self.shift, next.shift),
        }
    }
}

impl SignatureHash for Crc32 {
    const KIND: HashKind = HashKind::Crc32;
    fn value(&self) -> u64 {
        self.crc as u64
    }
    fn from_parts(value: u64, count: u128) -> Self {
        // 4 bytes per element: x^(32·count), powering x^32 by count's
        // bits (4·count itself could overflow).
        let mut shift = ONE;
        let mut square = RECORD_SHIFT;
        let mut n = count;
        while n != 0 {
            if n & 1 == 1 {
                shift = mul_mod_p(shift, square);
            }
            square = mul_mod_p(square, square);
            n >>= 1;
        }
        Crc32 {
            crc: value as u32,
            shift,
        }
    }
}
