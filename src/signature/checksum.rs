//! Langou, Bosilca, Fagg and Dongarra's bit-shift checksums (EuroPVM/MPI
//! 2005, §3.2–3.3): xor-bs1 and mmm-bs1, m checksums of w bits each.
//!
//! Both are Theorem 1's checksum f(X) = ⊕_i x_i ⊗ α^(n-i) over a ring E of
//! w-bit words, with the concatenation σ(X) ⊙ σ(Y) = (f(X) ⊗ α^|Y| ⊕ f(Y)):
//!
//! * xor-bs1: ⊕ is xor, ⊗ α^s a circular left shift of the w-bit word by s;
//! * mmm-bs1: E is the integers modulo 2^w - 1, ⊕ addition and ⊗
//!   multiplication modulo 2^w - 1; multiplying by 2^s is again a w-bit
//!   circular shift by s, on representatives 0..2^w - 2.
//!
//! The paper leaves how its m checksums differ to its software; here
//! checksum j (1..=m) uses α_j = 2^j, a shift by j per element (the
//! Reed–Solomon pattern of distinct evaluation points), and is stored in
//! bits w·(j-1)..w·j of the value. A basic type's value is its ordinal
//! (F90: `small_value`), the same in every checksum.

use super::basic::BasicType;
use super::fold::SignatureMonoid;
use super::gropp::gcd32;
use super::{HashKind, SignatureHash};

#[inline]
fn rotl<const W: u32>(x: u16, s: u32) -> u16 {
    let s = s % W;
    if s == 0 {
        return x;
    }
    let mask = (1u32 << W) - 1;
    let x = x as u32;
    (((x << s) | (x >> (W - s))) & mask) as u16
}

/// The m checksums packed into one word, checksum 1 lowest.
fn pack<const W: u32, const M: usize>(f: &[u16; M]) -> u64 {
    f.iter()
        .enumerate()
        .fold(0u64, |acc, (j, &x)| acc | (x as u64) << (W as usize * j))
}

fn unpack<const W: u32, const M: usize>(value: u64) -> [u16; M] {
    let mask = (1u64 << W) - 1;
    std::array::from_fn(|j| ((value >> (W as usize * j)) & mask) as u16)
}

/// xor-bs1(w = W, m = M): the hash kind `XorBs1` is `XorBs1<16, 2>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct XorBs1<const W: u32, const M: usize> {
    pub f: [u16; M],
    /// The element count modulo W (all a concatenation needs of it).
    pub n: u8,
}

impl<const W: u32, const M: usize> SignatureMonoid for XorBs1<W, M> {
    fn empty() -> Self {
        XorBs1 { f: [0; M], n: 0 }
    }
    fn basic(b: BasicType) -> Self {
        let v = b.small_value((1 << W) - 1) as u16;
        XorBs1 { f: [v; M], n: 1 }
    }
    #[inline]
    fn concat(&self, next: &Self) -> Self {
        XorBs1 {
            f: std::array::from_fn(|j| {
                rotl::<W>(self.f[j], (j as u32 + 1) * next.n as u32) ^ next.f[j]
            }),
            n: ((self.n as u32 + next.n as u32) % W) as u8,
        }
    }
    /// k copies: copy c is shifted by c·t (t = j·n mod W), shifts that repeat
    /// with period W / gcd(t, W), and a full period xors to a fixed word;
    /// O(W) per checksum, independent of k.
    fn repeat(&self, k: u128) -> Self {
        XorBs1 {
            f: std::array::from_fn(|j| {
                let t = ((j as u32 + 1) * self.n as u32) % W;
                let period = W / gcd32(t, W);
                let word =
                    |count: u32| (0..count).fold(0u16, |acc, c| acc ^ rotl::<W>(self.f[j], c * t));
                let tail = word((k % period as u128) as u32);
                if (k / period as u128) & 1 == 1 {
                    word(period) ^ tail
                } else {
                    tail
                }
            }),
            n: ((self.n as u128 * (k % W as u128)) % W as u128) as u8,
        }
    }
}

impl SignatureHash for XorBs1<16, 2> {
    const KIND: HashKind = HashKind::XorBs1;
    fn value(&self) -> u64 {
        pack::<16, 2>(&self.f)
    }
    fn from_parts(value: u64, count: u128) -> Self {
        XorBs1 {
            f: unpack::<16, 2>(value),
            n: (count % 16) as u8,
        }
    }
}

impl<const W: u32, const M: usize> XorBs1<W, M> {
    /// The m checksums packed, checksum 1 in the low W bits.
    pub fn packed(&self) -> u64 {
        pack::<W, M>(&self.f)
    }
}

/// mmm-bs1(w = W, m = M): the hash kind `MmmBs1` is `MmmBs1<16, 2>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MmmBs1<const W: u32, const M: usize> {
    /// Each in 0..2^W - 1 (2^W - 1 itself, the other zero, never appears).
    pub f: [u16; M],
    pub n: u8,
}

impl<const W: u32, const M: usize> MmmBs1<W, M> {
    const Q: u32 = (1 << W) - 1;

    #[inline]
    fn add(a: u16, b: u16) -> u16 {
        let s = a as u32 + b as u32;
        (if s >= Self::Q { s - Self::Q } else { s }) as u16
    }

    /// The m checksums packed, checksum 1 in the low W bits.
    pub fn packed(&self) -> u64 {
        pack::<W, M>(&self.f)
    }
}

impl<const W: u32, const M: usize> SignatureMonoid for MmmBs1<W, M> {
    fn empty() -> Self {
        MmmBs1 { f: [0; M], n: 0 }
    }
    fn basic(b: BasicType) -> Self {
        // Values 1..=2^W - 2: 2^W - 1 is zero modulo 2^W - 1.
        let v = b.small_value(Self::Q as u64 - 1) as u16;
        MmmBs1 { f: [v; M], n: 1 }
    }
    #[inline]
    fn concat(&self, next: &Self) -> Self {
        MmmBs1 {
            f: std::array::from_fn(|j| {
                Self::add(
                    rotl::<W>(self.f[j], (j as u32 + 1) * next.n as u32),
                    next.f[j],
                )
            }),
            n: ((self.n as u32 + next.n as u32) % W) as u8,
        }
    }
    /// k copies: f ⊗ (1 + β + … + β^(k-1)) with β = 2^(j·n); β's powers
    /// repeat with period W / gcd(j·n, W), so the sum is (k div L) times a
    /// full period plus a partial one: O(W), independent of k (Langou's
    /// eq. (8) for n = 1).
    fn repeat(&self, k: u128) -> Self {
        MmmBs1 {
            f: std::array::from_fn(|j| {
                let t = ((j as u32 + 1) * self.n as u32) % W;
                let period = W / gcd32(t, W);
                let sum = |count: u32| {
                    (0..count).fold(0u16, |acc, c| Self::add(acc, rotl::<W>(self.f[j], c * t)))
                };
                let tail = sum((k % period as u128) as u32);
                let times = ((k / period as u128) % Self::Q as u128) as u64;
                let full = (sum(period) as u64 * times % Self::Q as u64) as u16;
                Self::add(full, tail)
            }),
            n: ((self.n as u128 * (k % W as u128)) % W as u128) as u8,
        }
    }
}

impl SignatureHash for MmmBs1<16, 2> {
    const KIND: HashKind = HashKind::MmmBs1;
    fn value(&self) -> u64 {
        pack::<16, 2>(&self.f)
    }
    fn from_parts(value: u64, count: u128) -> Self {
        MmmBs1 {
            f: unpack::<16, 2>(value),
            n: (count % 16) as u8,
        }
    }
}
