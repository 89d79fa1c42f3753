//! The basic types: the elements of a type signature.
//!
//! A type signature is the typemap without its displacements: the sequence
//! of *basic* types a datatype moves. This file turns a predefined datatype
//! into its basic types and gives every basic type the numbers the hash
//! families use (`spec/signature.md`, "Basic types").
//!
//! * Most predefined types are one basic type.
//! * The pair types (`MPI_FLOAT_INT`, `MPI_2INT`, `MPI_2REAL`, …) are two:
//!   the MPI standard defines them as structs or contiguous pairs of two
//!   basic types, so `MPI_2INT` has the signature of `(MPI_INT, MPI_INT)`.
//! * `MPI_LB` and `MPI_UB` are markers and contribute nothing.
//! * Aliases the MPI standard defines as the same type
//!   (`MPI_LONG_LONG_INT` = `MPI_LONG_LONG`, `MPI_C_COMPLEX` =
//!   `MPI_C_FLOAT_COMPLEX`, and `MPI_CXX_COMPLEX`, Open MPI's name for
//!   `MPI_CXX_FLOAT_COMPLEX`) are folded into the canonical type, so the
//!   signature does not depend on which name an implementation's handle
//!   decodes to. Types the standard keeps apart (`MPI_INT` and
//!   `MPI_INT32_T`, `MPI_INTEGER` and `MPI_INTEGER4`, `MPI_DOUBLE` and
//!   `MPI_REAL8`) stay apart even where they share a representation: type
//!   matching in MPI is by type, not by size.
//! * `MPI_BYTE` and `MPI_PACKED` are basic types of their own, each with its
//!   own value, so the hash stays a pure, composable function of the
//!   signature. What the papers say about them (Gropp §4: "MPI_BYTE
//!   explicitly turns off type signature matching and is best handled with
//!   a reserved hash value"; MPI_PACKED is checked through the packed
//!   buffer's header) is a rule of the *check*, not of the hash: see
//!   [`super::Summary`] and [`super::Verdict`].
//! * An F90 parameterized type (`MPI_Type_create_f90_real(p, r)`, …) is one
//!   basic type whose identity is (kind, p, r).

use crate::error::{Error, Result};
use crate::format::codes::Predefined;

/// One element of a type signature.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BasicType {
    /// A canonical predefined basic type: never a pair, a marker or an alias.
    Predefined(Predefined),
    /// `MPI_Type_create_f90_real(p, r)`; p or r may be `UNDEFINED` (-1).
    F90Real { p: i64, r: i64 },
    /// `MPI_Type_create_f90_complex(p, r)`.
    F90Complex { p: i64, r: i64 },
    /// `MPI_Type_create_f90_integer(r)`.
    F90Integer { r: i64 },
}

/// The canonical basic types and their ordinals. The ordinal is the
/// number every hash family starts from; this table is frozen: a new basic
/// type gets the next free ordinal, and no ordinal is ever reused.
/// Ordinals stay below 128, the start of the range F90 types map into.
pub const BASIC_ORDINALS: &[(u16, u16)] = &[
    (0x201, 1),  // MPI_AINT
    (0x202, 2),  // MPI_COUNT
    (0x203, 3),  // MPI_OFFSET
    (0x207, 4),  // MPI_PACKED
    (0x208, 5),  // MPI_SHORT
    (0x209, 6),  // MPI_INT
    (0x20a, 7),  // MPI_LONG
    (0x20b, 8),  // MPI_LONG_LONG
    (0x20c, 9),  // MPI_UNSIGNED_SHORT
    (0x20d, 10), // MPI_UNSIGNED
    (0x20e, 11), // MPI_UNSIGNED_LONG
    (0x20f, 12), // MPI_UNSIGNED_LONG_LONG
    (0x210, 13), // MPI_FLOAT
    (0x212, 14), // MPI_C_FLOAT_COMPLEX
    (0x213, 15), // MPI_CXX_FLOAT_COMPLEX
    (0x214, 16), // MPI_DOUBLE
    (0x216, 17), // MPI_C_DOUBLE_COMPLEX
    (0x217, 18), // MPI_CXX_DOUBLE_COMPLEX
    (0x219, 19), // MPI_INTEGER
    (0x218, 20), // MPI_LOGICAL
    (0x21a, 21), // MPI_REAL
    (0x21b, 22), // MPI_COMPLEX
    (0x21c, 23), // MPI_DOUBLE_PRECISION
    (0x21d, 24), // MPI_DOUBLE_COMPLEX
    (0x220, 25), // MPI_LONG_DOUBLE
    (0x224, 26), // MPI_C_LONG_DOUBLE_COMPLEX
    (0x225, 27), // MPI_CXX_LONG_DOUBLE_COMPLEX
    (0x238, 28), // MPI_C_BOOL
    (0x239, 29), // MPI_CXX_BOOL
    (0x23c, 30), // MPI_WCHAR
    (0x240, 31), // MPI_INT8_T
    (0x241, 32), // MPI_UINT8_T
    (0x243, 33), // MPI_CHAR
    (0x244, 34), // MPI_SIGNED_CHAR
    (0x245, 35), // MPI_UNSIGNED_CHAR
    (0x247, 36), // MPI_BYTE
    (0x248, 37), // MPI_INT16_T
    (0x249, 38), // MPI_UINT16_T
    (0x250, 39), // MPI_INT32_T
    (0x251, 40), // MPI_UINT32_T
    (0x258, 41), // MPI_INT64_T
    (0x259, 42), // MPI_UINT64_T
    (0x2c1, 43), // MPI_INTEGER1
    (0x2c0, 44), // MPI_LOGICAL1
    (0x21e, 45), // MPI_CHARACTER
    (0x2c9, 46), // MPI_INTEGER2
    (0x2c8, 47), // MPI_LOGICAL2
    (0x2ca, 48), // MPI_REAL2
    (0x2d1, 49), // MPI_INTEGER4
    (0x2d0, 50), // MPI_LOGICAL4
    (0x2d2, 51), // MPI_REAL4
    (0x2d3, 52), // MPI_COMPLEX4
    (0x2d9, 53), // MPI_INTEGER8
    (0x2d8, 54), // MPI_LOGICAL8
    (0x2da, 55), // MPI_REAL8
    (0x2db, 56), // MPI_COMPLEX8
    (0x2e1, 57), // MPI_INTEGER16
    (0x2e2, 58), // MPI_REAL16
    (0x2e3, 59), // MPI_COMPLEX16
    (0x2eb, 60), // MPI_COMPLEX32
    (0x384, 61), // MPIX_C_FLOAT16
    (0x2e0, 62), // MPI_LOGICAL16
];

/// Predefined types that are two basic types: (pair, first, second).
pub const PAIRS: &[(u16, u16, u16)] = &[
    (0x228, 0x210, 0x209), // MPI_FLOAT_INT = (MPI_FLOAT, MPI_INT)
    (0x229, 0x214, 0x209), // MPI_DOUBLE_INT = (MPI_DOUBLE, MPI_INT)
    (0x22a, 0x20a, 0x209), // MPI_LONG_INT = (MPI_LONG, MPI_INT)
    (0x22b, 0x209, 0x209), // MPI_2INT = (MPI_INT, MPI_INT)
    (0x22c, 0x208, 0x209), // MPI_SHORT_INT = (MPI_SHORT, MPI_INT)
    (0x22d, 0x220, 0x209), // MPI_LONG_DOUBLE_INT = (MPI_LONG_DOUBLE, MPI_INT)
    (0x230, 0x21a, 0x21a), // MPI_2REAL = (MPI_REAL, MPI_REAL)
    (0x231, 0x21c, 0x21c), // MPI_2DOUBLE_PRECISION
    (0x232, 0x219, 0x219), // MPI_2INTEGER = (MPI_INTEGER, MPI_INTEGER)
    (0x382, 0x21b, 0x21b), // MPI_2COMPLEX = (MPI_COMPLEX, MPI_COMPLEX)
    (0x383, 0x21d, 0x21d), // MPI_2DOUBLE_COMPLEX
];

/// Names the MPI standard defines as the same type: (alias, canonical).
pub const ALIASES: &[(u16, u16)] = &[
    (0x390, 0x212), // MPI_C_COMPLEX = MPI_C_FLOAT_COMPLEX
    (0x391, 0x20b), // MPI_LONG_LONG_INT = MPI_LONG_LONG
    (0x392, 0x213), // MPI_CXX_COMPLEX (Open MPI) = MPI_CXX_FLOAT_COMPLEX
];

/// The basic types of one predefined type, by code (a table, since the
/// folds ask once per leaf).
#[derive(Clone, Copy)]
struct Expansion {
    /// 0, 1 or 2 basic types; `UNKNOWN` for a code the format lacks.
    n: u8,
    a: u16,
    b: u16,
}

const UNKNOWN: u8 = u8::MAX;
const TABLE_LEN: usize = 0x400;

static EXPANSIONS: [Expansion; TABLE_LEN] = {
    let mut t = [Expansion {
        n: UNKNOWN,
        a: 0,
        b: 0,
    }; TABLE_LEN];
    let mut i = 0;
    while i < BASIC_ORDINALS.len() {
        let c = BASIC_ORDINALS[i].0;
        t[c as usize] = Expansion { n: 1, a: c, b: 0 };
        i += 1;
    }
    let mut i = 0;
    while i < PAIRS.len() {
        let (c, a, b) = PAIRS[i];
        t[c as usize] = Expansion { n: 2, a, b };
        i += 1;
    }
    let mut i = 0;
    while i < ALIASES.len() {
        let (c, a) = ALIASES[i];
        t[c as usize] = Expansion { n: 1, a, b: 0 };
        i += 1;
    }
    t[Predefined::LB.0 as usize] = Expansion { n: 0, a: 0, b: 0 };
    t[Predefined::UB.0 as usize] = Expansion { n: 0, a: 0, b: 0 };
    t
};

static ORDINALS: [u16; TABLE_LEN] = {
    let mut t = [0u16; TABLE_LEN];
    let mut i = 0;
    while i < BASIC_ORDINALS.len() {
        t[BASIC_ORDINALS[i].0 as usize] = BASIC_ORDINALS[i].1;
        i += 1;
    }
    t
};

/// The basic types of a predefined type, in order (none for `MPI_LB` and
/// `MPI_UB`, two for a pair type). Aliases come back as their canonical
/// type. An error for a code the format does not know.
#[inline]
pub fn basic_types(p: Predefined) -> Result<Basics> {
    let e = EXPANSIONS
        .get(p.0 as usize)
        .copied()
        .filter(|e| e.n != UNKNOWN)
        .ok_or_else(|| Error::invalid(format!("unknown predefined datatype code {:#x}", p.0)))?;
    let basic = |c: u16| BasicType::Predefined(Predefined(c));
    Ok(Basics {
        len: e.n,
        items: [basic(e.a), basic(e.b)],
    })
}

/// Zero, one or two basic types (what one predefined type stands for).
#[derive(Debug, Clone, Copy)]
pub struct Basics {
    len: u8,
    items: [BasicType; 2],
}

impl Basics {
    pub fn as_slice(&self) -> &[BasicType] {
        &self.items[..self.len as usize]
    }
}

impl BasicType {
    /// The 64-bit key every family value derives from: the ordinal for a
    /// predefined type; for an F90 type, its kind tag in bits 62..63 and
    /// p + 1 and r + 1 (masked to 31 bits) in bits 31..61 and 0..30.
    pub fn key(self) -> u64 {
        let f90 = |tag: u64, p: i64, r: i64| {
            let m = 0x7fff_ffffu64;
            (tag << 62) | ((p.wrapping_add(1) as u64 & m) << 31) | (r.wrapping_add(1) as u64 & m)
        };
        match self {
            BasicType::Predefined(p) => ORDINALS.get(p.0 as usize).copied().unwrap_or(0) as u64,
            BasicType::F90Real { p, r } => f90(1, p, r),
            BasicType::F90Complex { p, r } => f90(2, p, r),
            BasicType::F90Integer { r } => f90(3, -1, r),
        }
    }

    /// The value of this basic type in a family whose values are the
    /// integers 1..=`max`: the ordinal for a predefined type (1..=127), and
    /// for an F90 type 128 + splitmix64(key) mod (max - 127), so F90 types
    /// never take a predefined type's value.
    #[inline]
    pub fn small_value(self, max: u64) -> u64 {
        let k = self.key();
        if k < FIRST_F90_VALUE {
            k
        } else {
            FIRST_F90_VALUE + splitmix64(k) % (max - (FIRST_F90_VALUE - 1))
        }
    }

    /// The MPI name ("MPI_INT") or a description of the F90 type.
    pub fn describe(self) -> String {
        match self {
            BasicType::Predefined(p) => p.mpi_name().to_string(),
            BasicType::F90Real { p, r } => format!("MPI_Type_create_f90_real({p}, {r})"),
            BasicType::F90Complex { p, r } => format!("MPI_Type_create_f90_complex({p}, {r})"),
            BasicType::F90Integer { r } => format!("MPI_Type_create_f90_integer({r})"),
        }
    }
}

/// Values below this are predefined ordinals; F90 types start here.
pub const FIRST_F90_VALUE: u64 = 128;

/// The SplitMix64 output function applied to `x` + the golden gamma
/// (Steele, Lea and Flood 2014): a fixed, well-mixed 64-bit permutation.
#[inline]
pub fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::codes::PREDEFINED;

    #[test]
    fn every_known_code_expands() {
        for &(code, name) in PREDEFINED {
            let b = basic_types(Predefined(code)).unwrap_or_else(|e| panic!("{name}: {e}"));
            let n = b.as_slice().len();
            let pair = PAIRS.iter().any(|p| p.0 == code);
            let marker = Predefined(code).is_marker();
            assert_eq!(
                n,
                if marker {
                    0
                } else if pair {
                    2
                } else {
                    1
                },
                "{name}"
            );
            for x in b.as_slice() {
                assert!((1..FIRST_F90_VALUE).contains(&x.key()), "{name}");
            }
        }
        assert!(basic_types(Predefined(0x204)).is_err());
        assert!(basic_types(Predefined(0x3ff)).is_err());
        assert!(basic_types(Predefined(0xffff)).is_err());
    }

    #[test]
    fn ordinals_are_distinct_small_and_cover_the_non_pairs() {
        let mut ords: Vec<u16> = BASIC_ORDINALS.iter().map(|e| e.1).collect();
        ords.sort();
        ords.dedup();
        assert_eq!(ords.len(), BASIC_ORDINALS.len());
        assert!(ords.iter().all(|&o| (1..128).contains(&o)));
        for &(code, name) in PREDEFINED {
            let categorised = BASIC_ORDINALS.iter().any(|e| e.0 == code)
                || PAIRS.iter().any(|e| e.0 == code)
                || ALIASES.iter().any(|e| e.0 == code)
                || Predefined(code).is_marker();
            assert!(
                categorised,
                "{name} is neither basic, pair, alias nor marker"
            );
        }
    }

    #[test]
    fn aliases_fold_into_their_canonical_type() {
        let one = |c: u16| basic_types(Predefined(c)).unwrap().as_slice()[0];
        assert_eq!(one(0x391), one(0x20b));
        assert_eq!(one(0x390), one(0x212));
        assert_eq!(one(0x392), one(0x213));
        assert_ne!(one(0x209), one(0x250), "MPI_INT and MPI_INT32_T stay apart");
    }

    #[test]
    fn f90_values_stay_out_of_the_predefined_range() {
        for p in [-1, 0, 1, 6, 15, 33] {
            for r in [-1, 0, 30, 307, 4931] {
                for b in [
                    BasicType::F90Real { p, r },
                    BasicType::F90Complex { p, r },
                    BasicType::F90Integer { r },
                ] {
                    for max in [255, 65534, 65535, (1 << 31) - 1, u32::MAX as u64] {
                        let v = b.small_value(max);
                        assert!((FIRST_F90_VALUE..=max).contains(&v), "{b:?} {max}");
                    }
                }
            }
        }
        let a = BasicType::F90Real { p: 6, r: 30 };
        let b = BasicType::F90Complex { p: 6, r: 30 };
        assert_ne!(a.key(), b.key());
    }
}
