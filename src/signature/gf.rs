//! Langou et al.'s gfd checksums (§3.4): Theorem 1's checksum over the
//! Galois field GF(2^w), m checksums of w bits.
//!
//! ⊕ is xor and ⊗ the field product, done with logarithm tables as in
//! Plank's Reed–Solomon tutorial (the paper's reference [4]), with Plank's
//! primitive polynomials: x^8 + x^4 + x^3 + x^2 + 1 (0x11d) for w = 8 and
//! x^16 + x^12 + x^3 + x + 1 (0x1100b) for w = 16. The element x (the
//! integer 2) generates the multiplicative group in both.
//!
//! Checksum j (1..=m) uses α_j = x^j, stored in bits w·(j-1)..w·j:
//! f_j(X) = ⊕_i v(x_i) ⊗ α_j^(n-i), and f_j(XY) = f_j(X) ⊗ α_j^|Y| ⊕ f_j(Y).
//! Since α_j^e = x^(j·e mod (2^w - 1)) is a table lookup, concatenation is
//! O(1), and k copies are O(1) by the geometric sum (the paper's eq. (9)):
//! f ⊗ (β^k ⊕ 1) ⊘ (β ⊕ 1) with β = α_j^|X|, or f ⊗ (k mod 2) when β = 1.
//!
//! A basic type's value is the field element x^(97·s mod (2^w - 1)), s its
//! ordinal: a bijection onto the non-zero elements (97 is prime to 255 and
//! to 65535) that spreads the values over the field. With the ordinals
//! themselves (at most 6 bits), multiplying by x^j does not reduce for the
//! first w - 6 positions, so on short signatures gfd16 would be xor-bs1
//! (the paper's panel: 0.09 % collisions at 32 bits instead of 0.00 %,
//! 31 % at 16 bits instead of about 5 %).

use super::basic::BasicType;
use super::fold::SignatureMonoid;
use super::{HashKind, SignatureHash};
use std::sync::OnceLock;

/// GF(2^w) by logarithm tables.
pub struct Field {
    /// 2^w - 1, the order of the multiplicative group.
    pub q: u32,
    /// exp[i] = x^i for i in 0..2q (doubled so a sum of two logs indexes it).
    exp: Vec<u16>,
    /// log[a] for a != 0.
    log: Vec<u32>,
}

impl Field {
    fn new(w: u32, poly: u32) -> Field {
        let q = (1u32 << w) - 1;
        let mut exp = vec![0u16; 2 * q as usize];
        let mut log = vec![0u32; q as usize + 1];
        let mut a = 1u32;
        for i in 0..q {
            exp[i as usize] = a as u16;
            exp[(i + q) as usize] = a as u16;
            log[a as usize] = i;
            a <<= 1;
            if a >> w != 0 {
                a ^= poly;
            }
        }
        assert_eq!(a, 1, "x generates GF(2^{w})* under {poly:#x}");
        Field { q, exp, log }
    }

    /// GF(2^8) with 0x11d.
    pub fn gf8() -> &'static Field {
        static F: OnceLock<Field> = OnceLock::new();
        F.get_or_init(|| Field::new(8, 0x11d))
    }

    /// GF(2^16) with 0x1100b.
    pub fn gf16() -> &'static Field {
        static F: OnceLock<Field> = OnceLock::new();
        F.get_or_init(|| Field::new(16, 0x1100b))
    }

    pub fn for_width(w: u32) -> &'static Field {
        match w {
            8 => Field::gf8(),
            16 => Field::gf16(),
            _ => panic!("gfd is defined here for w = 8 and w = 16"),
        }
    }

    #[inline]
    pub fn mul(&self, a: u16, b: u16) -> u16 {
        if a == 0 || b == 0 {
            0
        } else {
            self.exp[(self.log[a as usize] + self.log[b as usize]) as usize]
        }
    }

    /// a / b for b != 0.
    #[inline]
    pub fn div(&self, a: u16, b: u16) -> u16 {
        debug_assert!(b != 0);
        if a == 0 {
            0
        } else {
            self.exp[(self.log[a as usize] + self.q - self.log[b as usize]) as usize]
        }
    }

    /// x^e.
    #[inline]
    pub fn x_pow(&self, e: u128) -> u16 {
        self.exp[(e % self.q as u128) as usize]
    }

    /// x^e for a small e (no 128-bit division on the hot path).
    #[inline]
    pub fn x_pow_small(&self, e: u64) -> u16 {
        self.exp[(e % self.q as u64) as usize]
    }
}

/// A basic type's value is x^(SPREAD · ordinal).
pub const SPREAD: u64 = 97;

/// gfd(w = W, m = M): `Gfd8` is `Gfd<8, 4>`, `Gfd16` is `Gfd<16, 2>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gfd<const W: u32, const M: usize> {
    pub f: [u16; M],
    /// The element count modulo 2^W - 1 (α_j^(2^W - 1) = 1).
    pub n: u32,
}

impl<const W: u32, const M: usize> Gfd<W, M> {
    #[inline]
    fn field() -> &'static Field {
        Field::for_width(W)
    }

    /// The m checksums packed, checksum 1 in the low W bits.
    pub fn packed(&self) -> u64 {
        self.f
            .iter()
            .enumerate()
            .fold(0u64, |acc, (j, &x)| acc | (x as u64) << (W as usize * j))
    }

    pub fn from_packed(value: u64, count: u128) -> Self {
        let mask = (1u64 << W) - 1;
        let q = Self::field().q as u128;
        Gfd {
            f: std::array::from_fn(|j| ((value >> (W as usize * j)) & mask) as u16),
            n: (count % q) as u32,
        }
    }
}

impl<const W: u32, const M: usize> SignatureMonoid for Gfd<W, M> {
    fn empty() -> Self {
        Gfd { f: [0; M], n: 0 }
    }
    fn basic(b: BasicType) -> Self {
        let gf = Self::field();
        let s = b.small_value(gf.q as u64);
        let v = gf.x_pow_small(SPREAD * s);
        Gfd { f: [v; M], n: 1 }
    }
    #[inline]
    fn concat(&self, next: &Self) -> Self {
        let gf = Self::field();
        Gfd {
            f: std::array::from_fn(|j| {
                let shift = gf.x_pow_small((j as u64 + 1) * next.n as u64);
                gf.mul(self.f[j], shift) ^ next.f[j]
            }),
            n: ((self.n as u64 + next.n as u64) % gf.q as u64) as u32,
        }
    }
    fn repeat(&self, k: u128) -> Self {
        let gf = Self::field();
        let q = gf.q as u64;
        let kq = (k % q as u128) as u64;
        Gfd {
            f: std::array::from_fn(|j| {
                let e = (j as u64 + 1) * self.n as u64 % q;
                let beta = gf.x_pow_small(e);
                let sum = if beta == 1 {
                    (k & 1) as u16
                } else {
                    gf.div(gf.x_pow_small(e * kq) ^ 1, beta ^ 1)
                };
                gf.mul(self.f[j], sum)
            }),
            n: (self.n as u64 * kq % q) as u32,
        }
    }
}

impl SignatureHash for Gfd<8, 4> {
    const KIND: HashKind = HashKind::Gfd8;
    fn value(&self) -> u64 {
        self.packed()
    }
    fn from_parts(value: u64, count: u128) -> Self {
        Gfd::from_packed(value, count)
    }
}

impl SignatureHash for Gfd<16, 2> {
    const KIND: HashKind = HashKind::Gfd16;
    fn value(&self) -> u64 {
        self.packed()
    }
    fn from_parts(value: u64, count: u128) -> Self {
        Gfd::from_packed(value, count)
    }
}
