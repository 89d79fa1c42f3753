//! The library's default hash: a polynomial hash modulo the Mersenne prime
//! p = 2^61 - 1 (Theorem 1 of Langou et al. over the field Z/p).
//!
//! H(x_1 … x_n) = Σ_i v(x_i) · B^(n-i) mod p, with B = 0x02eae6a95e1de11a,
//! a primitive root modulo p (so B^k = 1 only for k ≡ 0 mod p - 1), and
//! v(x) = 1 + splitmix64(key(x) xor DOMAIN) mod (p - 1), never 0.
//!
//! The fold carries (H, B^n): concatenation is H(XY) = H(X)·B^|Y| + H(Y),
//! two multiplications modulo p, O(1); k copies are O(log k) by doubling.
//! Two different signatures of at most n elements collide for at most n of
//! the p - 1 possible bases, and the values of the basic types are spread
//! over all of Z/p, so there is no small structure for MPI's regular
//! signatures to hit (unlike the shift families, whose repetition periods
//! are w). Reduction modulo 2^61 - 1 is a shift and an add, so the hash
//! costs a few nanoseconds per node on any 64-bit machine, with no tables
//! and no carry-less multiply. The value is H, below 2^61.

use super::basic::{splitmix64, BasicType};
use super::fold::SignatureMonoid;
use super::{HashKind, SignatureHash};

/// The modulus, 2^61 - 1.
pub const P: u64 = crate::format::external::HASH_MODULUS;
/// The base, a primitive root modulo P.
pub const BASE: u64 = 0x02ea_e6a9_5e1d_e11a;
/// Xored into a basic type's key before mixing ("mpixsig1").
pub const DOMAIN: u64 = 0x6d70_6978_7369_6731;

/// a·b mod P for a, b < P.
#[inline]
pub const fn mul_mod(a: u64, b: u64) -> u64 {
    let z = a as u128 * b as u128;
    let s = (z as u64 & P) + (z >> 61) as u64;
    if s >= P {
        s - P
    } else {
        s
    }
}

/// a + b mod P for a, b < P.
#[inline]
pub const fn add_mod(a: u64, b: u64) -> u64 {
    let s = a + b;
    if s >= P {
        s - P
    } else {
        s
    }
}

/// b^e mod P.
pub fn pow_mod(mut b: u64, mut e: u128) -> u64 {
    let mut r = 1;
    while e != 0 {
        if e & 1 == 1 {
            r = mul_mod(r, b);
        }
        b = mul_mod(b, b);
        e >>= 1;
    }
    r
}

/// Repetitions of one basic type looked up rather than computed.
const SMALL: usize = 256;

/// For k < SMALL: (1 + B + … + B^(k−1), B^k) mod P, the factor k copies
/// of one basic type multiply its value by, and their power.
static BASIC_REPEATS: [(u64, u64); SMALL] = {
    let mut t = [(0, 1); SMALL];
    let mut k = 1;
    while k < SMALL {
        let (s, power) = t[k - 1];
        t[k] = (add_mod(s, power), mul_mod(power, BASE));
        k += 1;
    }
    t
};

/// (H, B^n mod P).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Default64 {
    pub h: u64,
    pub power: u64,
}

impl Default64 {
    /// The value of one basic type, in 1..P.
    pub fn basic_value(b: BasicType) -> u64 {
        1 + splitmix64(b.key() ^ DOMAIN) % (P - 1)
    }
}

impl SignatureMonoid for Default64 {
    fn empty() -> Self {
        Default64 { h: 0, power: 1 }
    }
    fn basic(b: BasicType) -> Self {
        Default64 {
            h: Default64::basic_value(b),
            power: BASE,
        }
    }
    #[inline]
    fn concat(&self, next: &Self) -> Self {
        Default64 {
            h: add_mod(mul_mod(self.h, next.power), next.h),
            power: mul_mod(self.power, next.power),
        }
    }
    /// k copies, reading k from its top bit down. With m the part of k
    /// read so far and X = B^n, it keeps S = 1 + X + … + X^(m−1) and X^m:
    /// doubling m is S += S·X^m and squaring X^m, adding one is S += X^m
    /// and X^m·X; then H = h·S. Two or three multiplications per bit of
    /// k, where generic doubling takes four to six (the hash of every
    /// unmarshal and first marshal repeats at nearly every level).
    fn repeat(&self, k: u128) -> Self {
        if k == 0 {
            return Self::empty();
        }
        if self.power == BASE && k < SMALL as u128 {
            // One basic type, a few times: the commonest repetition.
            let (s, power) = BASIC_REPEATS[k as usize];
            return Default64 {
                h: mul_mod(self.h, s),
                power,
            };
        }
        let x = self.power;
        let (mut s, mut xm) = (1, x);
        for i in (0..127 - k.leading_zeros()).rev() {
            s = add_mod(s, mul_mod(s, xm));
            xm = mul_mod(xm, xm);
            if (k >> i) & 1 == 1 {
                s = add_mod(s, xm);
                xm = mul_mod(xm, x);
            }
        }
        Default64 {
            h: mul_mod(self.h, s),
            power: xm,
        }
    }
}

impl SignatureHash for Default64 {
    const KIND: HashKind = HashKind::Default64;
    fn value(&self) -> u64 {
        self.h
    }
    fn from_parts(value: u64, count: u128) -> Self {
        Default64 {
            h: value % P,
            power: pow_mod(BASE, count % (P as u128 - 1)),
        }
    }
}

/// The prime factors of P - 1 = 2^61 - 2, for the primitivity check.
pub const FACTORS_OF_P_MINUS_1: [u64; 12] = [2, 3, 5, 7, 11, 13, 31, 41, 61, 151, 331, 1321];
