//! Type signatures: counts, hashes and an exact compressed form, computed
//! over the combiner tree without ever expanding the typemap.
//!
//! The type signature of a datatype is its typemap without displacements:
//! the sequence of basic types it moves (`MPI_LB`/`MPI_UB` contribute
//! nothing). Two communicating sides must have matching signatures; Gropp
//! (2000) proposed sending a hash of the signature to check that cheaply,
//! and Langou et al. (2005) studied which hash families do it well. Every
//! function here is a monoid homomorphism folded over the tree
//! ([`fold`]), so a count k of a subtree costs O(1) or O(log k):
//! `contiguous(10^12, MPI_INT)` hashes in well under a microsecond.
//!
//! * [`signature_count`]: the number of basic elements, exact (u128).
//! * [`signature_hash`]: one of the [`HashKind`] families, each as its paper
//!   defines it (`spec/signature.md` specifies them bit for bit).
//! * [`signature_summary`]: count, hash and whether `MPI_BYTE`/`MPI_PACKED`
//!   occur, in one walk, and [`Summary::check`], Gropp's matching rule.
//! * [`signature_prefix_hash`], [`signature_prefix_summary`]: the same of
//!   the first n elements of `count` copies (a receive that takes fewer
//!   elements than it allows), by descending the tree ([`prefix`]); and
//!   [`Summary::check_receive`], Gropp's rule for point to point.
//! * [`Signature`]: the exact signature in a compressed form, with its runs
//!   and the index of the first difference between two signatures.
//!
//! Basic types, aliases, pairs and F90 types: see [`basic`].

pub mod basic;
pub mod checksum;
pub mod crc;
pub(crate) mod darray;
pub mod default64;
mod exact;
pub mod fold;
pub mod gf;
pub mod gropp;
pub mod prefix;
pub mod stream;

#[cfg(test)]
mod tests;

pub use basic::{basic_types, BasicType};
pub use checksum::{MmmBs1, XorBs1};
pub use crc::{crc32, crc32_combine, Crc32};
pub use default64::Default64;
pub use exact::{first_difference, Difference, Runs, Signature};
pub use fold::{fold, repeat_by_doubling, Count, SignatureMonoid, Untyped};
pub use gf::Gfd;
pub use gropp::Gropp;
pub use prefix::fold_prefix;

use crate::error::{Error, Result};
use crate::format::tree::Node;

/// Calls the generic function `$f::<family>($a, $b)` for a `HashKind`.
macro_rules! dispatch {
    ($kind:expr, $f:ident, $a:expr, $b:expr) => {
        match $kind {
            HashKind::Gropp => $f::<Gropp>($a, $b),
            HashKind::XorBs1 => $f::<XorBs1<16, 2>>($a, $b),
            HashKind::MmmBs1 => $f::<MmmBs1<16, 2>>($a, $b),
            HashKind::Gfd8 => $f::<Gfd<8, 4>>($a, $b),
            HashKind::Gfd16 => $f::<Gfd<16, 2>>($a, $b),
            HashKind::Crc32 => $f::<Crc32>($a, $b),
            HashKind::Default64 => $f::<Default64>($a, $b),
        }
    };
}

/// A signature hash family. The numeric codes are stable (they are the C
/// constants `MPIX_HASH_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum HashKind {
    /// Gropp 2000: (α, n) with xor and 32-bit circular shift; 32 bits.
    Gropp = 1,
    /// Langou et al. 2005, xor-bs1 (w = 16, m = 2); 32 bits.
    XorBs1 = 2,
    /// Langou et al. 2005, mmm-bs1 (w = 16, m = 2); 32 bits.
    MmmBs1 = 3,
    /// Langou et al. 2005, gfd over GF(2^8), m = 4; 32 bits.
    Gfd8 = 4,
    /// Langou et al. 2005, gfd over GF(2^16), m = 2; 32 bits.
    Gfd16 = 5,
    /// CRC-32 (0x04C11DB7) of the signature's byte string; 32 bits.
    Crc32 = 6,
    /// Polynomial hash modulo 2^61 - 1, the library default; 61 bits.
    Default64 = 7,
}

impl HashKind {
    pub const ALL: [HashKind; 7] = [
        HashKind::Gropp,
        HashKind::XorBs1,
        HashKind::MmmBs1,
        HashKind::Gfd8,
        HashKind::Gfd16,
        HashKind::Crc32,
        HashKind::Default64,
    ];

    /// The default family (the one the external stream carries).
    pub const DEFAULT: HashKind = HashKind::Default64;

    pub fn code(self) -> u32 {
        self as u32
    }

    pub fn from_code(code: u32) -> Option<HashKind> {
        HashKind::ALL.iter().copied().find(|k| k.code() == code)
    }

    /// A short name ("gfd8").
    pub fn name(self) -> &'static str {
        match self {
            HashKind::Gropp => "gropp",
            HashKind::XorBs1 => "xor-bs1",
            HashKind::MmmBs1 => "mmm-bs1",
            HashKind::Gfd8 => "gfd8",
            HashKind::Gfd16 => "gfd16",
            HashKind::Crc32 => "crc32",
            HashKind::Default64 => "default64",
        }
    }

    /// How many low bits of the u64 the family uses.
    pub fn bits(self) -> u32 {
        match self {
            HashKind::Default64 => 61,
            _ => 32,
        }
    }

    /// The hash of the concatenation of two signatures, from their hashes
    /// and element counts: the papers' σ(X) ⊙ σ(Y). O(1) for every family
    /// but CRC-32 and the default, which need B^|Y| (O(log |Y|)).
    pub fn concat(self, x: (u64, u128), y: (u64, u128)) -> u64 {
        fn go<H: SignatureHash>(x: (u64, u128), y: (u64, u128)) -> u64 {
            H::from_parts(x.0, x.1)
                .concat(&H::from_parts(y.0, y.1))
                .value()
        }
        dispatch!(self, go, x, y)
    }

    /// The hash of a signature repeated k times, from its hash and count.
    pub fn repeat(self, x: (u64, u128), k: u128) -> u64 {
        fn go<H: SignatureHash>(x: (u64, u128), k: u128) -> u64 {
            H::from_parts(x.0, x.1).repeat(k).value()
        }
        dispatch!(self, go, x, k)
    }

    /// The hash of a single basic type.
    pub fn basic(self, b: BasicType) -> u64 {
        fn go<H: SignatureHash>(b: BasicType, _: ()) -> u64 {
            H::basic(b).value()
        }
        dispatch!(self, go, b, ())
    }
}

/// A hash family: a signature monoid with a value.
pub trait SignatureHash: SignatureMonoid {
    const KIND: HashKind;
    /// The hash, in the low `KIND.bits()` bits.
    fn value(&self) -> u64;
    /// The fold state of a signature from its hash and element count (what
    /// a message header would carry: Gropp's (α, n), Langou's (f, n)).
    fn from_parts(value: u64, count: u128) -> Self;
}

/// The hash of `node`'s type signature in family `kind`.
pub fn signature_hash(node: &Node, kind: HashKind) -> Result<u64> {
    fn go<H: SignatureHash>(node: &Node, _: ()) -> Result<u64> {
        Ok(fold::<H>(node)?.value())
    }
    dispatch!(kind, go, node, ())
}

/// The number of basic elements in `node`'s type signature. An error when
/// it exceeds u128 (it can exceed 2^64 for valid large-count types).
pub fn signature_count(node: &Node) -> Result<u128> {
    fold::<Count>(node)?.0.ok_or_else(overflow)
}

fn overflow() -> Error {
    Error::unsupported("the type signature has more than 2^128 - 1 elements")
}

/// Count, hash and untyped flags of one signature, from one walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Summary {
    pub kind: HashKind,
    pub count: u128,
    pub hash: u64,
    /// The signature holds an `MPI_BYTE`.
    pub byte: bool,
    /// The signature holds an `MPI_PACKED`.
    pub packed: bool,
}

/// The outcome of comparing a sender's and a receiver's summaries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Same count and same hash: the signatures match unless the hash
    /// collides.
    Match,
    /// The signatures certainly differ.
    Mismatch,
    /// One side moves `MPI_BYTE` or `MPI_PACKED`: as Gropp §4 prescribes,
    /// no conclusion is drawn from the hash (MPI_BYTE turns signature
    /// matching off; MPI_PACKED is checked through the packed buffer).
    Unchecked,
    /// Point to point: the message has more elements than the receive
    /// allows (MPI reports it as MPI_ERR_TRUNCATE).
    Truncated,
}

/// The hash in family `kind` of the first `n` basic elements of `count`
/// consecutive copies of `node`'s signature: what a receive of `count`
/// copies of `node` that takes `n` elements must match. `n = 0` gives the
/// empty signature's hash; `n = count × signature_count(node)` gives
/// `signature_hash` of `contiguous(count, node)`. An error when `n` is
/// longer than that signature.
pub fn signature_prefix_hash(node: &Node, count: u128, n: u128, kind: HashKind) -> Result<u64> {
    fn go<H: SignatureHash>(node: &Node, (count, n): (u128, u128)) -> Result<u64> {
        Ok(fold_prefix::<H>(node, count, n)?.value())
    }
    dispatch!(kind, go, node, (count, n))
}

/// Count, hash (family `kind`) and untyped flags of `node`'s signature.
pub fn signature_summary(node: &Node, kind: HashKind) -> Result<Summary> {
    summarize(node, None, kind)
}

/// The summary of the first `n` basic elements of `count` consecutive
/// copies of `node`'s signature (its count is `n`; its flags say whether
/// `MPI_BYTE` or `MPI_PACKED` occur among those elements). Errors as for
/// [`signature_prefix_hash`].
pub fn signature_prefix_summary(
    node: &Node,
    count: u128,
    n: u128,
    kind: HashKind,
) -> Result<Summary> {
    summarize(node, Some((count, n)), kind)
}

/// The summary of the whole signature, or of a prefix (count, n).
fn summarize(node: &Node, prefix: Option<(u128, u128)>, kind: HashKind) -> Result<Summary> {
    type Folded = (Option<u128>, u64, Untyped);
    fn go<H: SignatureHash>(node: &Node, prefix: Option<(u128, u128)>) -> Result<Folded> {
        let ((count, flags), h) = match prefix {
            None => fold::<((Count, Untyped), H)>(node)?,
            Some((count, n)) => fold_prefix::<((Count, Untyped), H)>(node, count, n)?,
        };
        Ok((count.0, h.value(), flags))
    }
    let (count, hash, flags) = dispatch!(kind, go, node, prefix)?;
    Ok(Summary {
        kind,
        count: count.ok_or_else(overflow)?,
        hash,
        byte: flags.byte,
        packed: flags.packed,
    })
}

impl Summary {
    /// Gropp's check of a sender's summary against a receiver's, for a
    /// message that fills the receive type exactly. Summaries of different
    /// families are an error.
    pub fn check(&self, other: &Summary) -> Result<Verdict> {
        if self.kind != other.kind {
            return Err(Error::invalid(format!(
                "summaries of different hash families ({} and {})",
                self.kind.name(),
                other.kind.name()
            )));
        }
        if self.byte || self.packed || other.byte || other.packed {
            return Ok(Verdict::Unchecked);
        }
        if self.count == other.count && self.hash == other.hash {
            Ok(Verdict::Match)
        } else {
            Ok(Verdict::Mismatch)
        }
    }

    /// Gropp's check for point to point: `self` is the sender's summary,
    /// the receive posted `count` copies of `recv`. The message may fill
    /// only part of the receive, so the sender's signature is checked
    /// against the receive's first `self.count` elements
    /// ([`signature_prefix_summary`], in `self`'s family); a message longer
    /// than the receive is `Truncated`.
    pub fn check_receive(&self, recv: &Node, count: u128) -> Result<Verdict> {
        let per_copy = fold::<Count>(recv)?.0;
        if prefix::check_length(count, per_copy, self.count).is_err() {
            return Ok(Verdict::Truncated);
        }
        self.check(&signature_prefix_summary(
            recv, count, self.count, self.kind,
        )?)
    }
}
