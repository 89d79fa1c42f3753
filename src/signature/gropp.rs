//! Gropp's hash (EuroPVM/MPI 2000, §3): the tuple (α, n) with
//! (α, n) ⊕ (β, m) = (α xor rotl(β, n), n + m) on 32-bit words.
//!
//! The first element is not rotated and the i-th (from 0) is rotated left
//! by i mod 32: α = xor over i of rotl32(v(x_i), i mod 32). The rotation
//! is a true circular shift of the 32-bit word by n mod 32; MPE's collchk
//! wrote it as `alpha >> (sizeof(unsigned) - n)`, which shifts by a byte
//! count and is undefined for n > 4: that is not reproduced.
//!
//! Basic values are odd, as MPE made them after consecutive integers gave
//! ~25 % collisions on pairs (Falzone et al. §3.1), and "medium" (below
//! 2^16), the operand class Gropp's Table 1 found better than small
//! integers: v = 2·((s · 0x5bd1) mod 2^15) + 1 with s the ordinal, a
//! bijection of 1..2^15 - 1 onto odd values spread over 16 bits. On the
//! benchmark's panel G this gives 9 % collisions where consecutive odd
//! values give 59 %.

use super::basic::BasicType;
use super::fold::SignatureMonoid;
use super::{HashKind, SignatureHash};

/// The odd multiplier that spreads ordinals over 15 bits.
pub const SPREAD: u64 = 0x5bd1;

/// (α, n mod 32): all a concatenation needs of n.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gropp {
    pub alpha: u32,
    /// The element count modulo the word size.
    pub shift: u8,
}

impl Gropp {
    /// The value of one basic type: 2·((s · 0x5bd1) mod 2^15) + 1, s its
    /// ordinal (F90: `small_value` in 128..=2^15 - 1).
    pub fn basic_value(b: BasicType) -> u32 {
        let s = b.small_value((1 << 15) - 1);
        (2 * ((s * SPREAD) % (1 << 15)) + 1) as u32
    }
}

impl SignatureMonoid for Gropp {
    fn empty() -> Self {
        Gropp { alpha: 0, shift: 0 }
    }
    fn basic(b: BasicType) -> Self {
        Gropp {
            alpha: Gropp::basic_value(b),
            shift: 1,
        }
    }
    #[inline]
    fn concat(&self, next: &Self) -> Self {
        Gropp {
            alpha: self.alpha ^ next.alpha.rotate_left(self.shift as u32),
            shift: (self.shift + next.shift) % 32,
        }
    }
    /// Copy c of k is rotated by c·n; those rotations repeat with period
    /// L = 32 / gcd(n, 32), and a full period xors to a fixed word, so k
    /// copies cost at most 2L ≤ 64 rotations: O(1), the same value as
    /// Gropp's O(log k) doubling.
    fn repeat(&self, k: u128) -> Self {
        let n = self.shift as u32;
        let period = 32 / gcd32(n, 32);
        let word =
            |count: u32| (0..count).fold(0u32, |acc, c| acc ^ self.alpha.rotate_left((c * n) % 32));
        let tail = word((k % period as u128) as u32);
        let alpha = if (k / period as u128) & 1 == 1 {
            word(period) ^ tail
        } else {
            tail
        };
        Gropp {
            alpha,
            shift: ((n as u128 * (k % 32)) % 32) as u8,
        }
    }
}

impl SignatureHash for Gropp {
    const KIND: HashKind = HashKind::Gropp;
    fn value(&self) -> u64 {
        self.alpha as u64
    }
    fn from_parts(value: u64, count: u128) -> Self {
        Gropp {
            alpha: value as u32,
            shift: (count % 32) as u8,
        }
    }
}

pub(crate) fn gcd32(a: u32, b: u32) -> u32 {
    if b == 0 {
        a
    } else {
        gcd32(b, a % b)
    }
}
