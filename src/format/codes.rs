//! Portable codes: the implementation-neutral numbers the formats use for
//! combiners, predefined datatypes, array orders and distributions. Combiner
//! and datatype codes are the MPI-5.0 standard ABI values where the ABI has
//! one; the few items outside the ABI have codes of this library's own.
//! `spec/external.md` lists them all; every other value is an error.

/// A combiner, by its portable code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u16)]
pub enum Combiner {
    Named = 101,
    Dup = 102,
    Contiguous = 103,
    Vector = 104,
    Hvector = 105,
    Indexed = 106,
    Hindexed = 107,
    IndexedBlock = 108,
    HindexedBlock = 109,
    Struct = 110,
    Subarray = 111,
    Darray = 112,
    F90Real = 113,
    F90Complex = 114,
    F90Integer = 115,
    Resized = 116,
    ValueIndex = 117,
    /// The MPI-1 combiners removed in MPI-3.0 (library codes).
    HvectorInteger = 118,
    HindexedInteger = 119,
    StructInteger = 120,
}

impl Combiner {
    pub const ALL: [Combiner; 20] = [
        Combiner::Named,
        Combiner::Dup,
        Combiner::Contiguous,
        Combiner::Vector,
        Combiner::Hvector,
        Combiner::Indexed,
        Combiner::Hindexed,
        Combiner::IndexedBlock,
        Combiner::HindexedBlock,
        Combiner::Struct,
        Combiner::Subarray,
        Combiner::Darray,
        Combiner::F90Real,
        Combiner::F90Complex,
        Combiner::F90Integer,
        Combiner::Resized,
        Combiner::ValueIndex,
        Combiner::HvectorInteger,
        Combiner::HindexedInteger,
        Combiner::StructInteger,
    ];

    pub fn from_code(code: u32) -> Option<Combiner> {
        // The codes are consecutive and ALL lists them in order (tested):
        // one lookup, on every node a reader reads.
        let i = code.checked_sub(Combiner::Named as u32)? as usize;
        Combiner::ALL.get(i).copied()
    }

    /// A predefined type in MPI's sense (named or F90 parameterized):
    /// never freed, no name or attributes of its own.
    pub fn is_predefined(self) -> bool {
        matches!(
            self,
            Combiner::Named | Combiner::F90Real | Combiner::F90Complex | Combiner::F90Integer
        )
    }

    pub fn code(self) -> u32 {
        self as u32
    }

    /// The MPI name, for messages.
    pub fn mpi_name(self) -> &'static str {
        match self {
            Combiner::Named => "MPI_COMBINER_NAMED",
            Combiner::Dup => "MPI_COMBINER_DUP",
            Combiner::Contiguous => "MPI_COMBINER_CONTIGUOUS",
            Combiner::Vector => "MPI_COMBINER_VECTOR",
            Combiner::Hvector => "MPI_COMBINER_HVECTOR",
            Combiner::Indexed => "MPI_COMBINER_INDEXED",
            Combiner::Hindexed => "MPI_COMBINER_HINDEXED",
            Combiner::IndexedBlock => "MPI_COMBINER_INDEXED_BLOCK",
            Combiner::HindexedBlock => "MPI_COMBINER_HINDEXED_BLOCK",
            Combiner::Struct => "MPI_COMBINER_STRUCT",
            Combiner::Subarray => "MPI_COMBINER_SUBARRAY",
            Combiner::Darray => "MPI_COMBINER_DARRAY",
            Combiner::F90Real => "MPI_COMBINER_F90_REAL",
            Combiner::F90Complex => "MPI_COMBINER_F90_COMPLEX",
            Combiner::F90Integer => "MPI_COMBINER_F90_INTEGER",
            Combiner::Resized => "MPI_COMBINER_RESIZED",
            Combiner::ValueIndex => "MPI_COMBINER_VALUE_INDEX",
            Combiner::HvectorInteger => "MPI_COMBINER_HVECTOR_INTEGER",
            Combiner::HindexedInteger => "MPI_COMBINER_HINDEXED_INTEGER",
            Combiner::StructInteger => "MPI_COMBINER_STRUCT_INTEGER",
        }
    }
}

/// A predefined datatype, by its portable code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Predefined(pub u16);

/// Every predefined datatype the format knows: (portable code, MPI name).
/// Codes 0x201..0x2ff are the MPI-5.0 ABI's; 0x380.. are this library's.
pub const PREDEFINED: &[(u16, &str)] = &[
    (0x201, "MPI_AINT"),
    (0x202, "MPI_COUNT"),
    (0x203, "MPI_OFFSET"),
    (0x207, "MPI_PACKED"),
    (0x208, "MPI_SHORT"),
    (0x209, "MPI_INT"),
    (0x20a, "MPI_LONG"),
    (0x20b, "MPI_LONG_LONG"),
    (0x20c, "MPI_UNSIGNED_SHORT"),
    (0x20d, "MPI_UNSIGNED"),
    (0x20e, "MPI_UNSIGNED_LONG"),
    (0x20f, "MPI_UNSIGNED_LONG_LONG"),
    (0x210, "MPI_FLOAT"),
    (0x212, "MPI_C_FLOAT_COMPLEX"),
    (0x213, "MPI_CXX_FLOAT_COMPLEX"),
    (0x214, "MPI_DOUBLE"),
    (0x216, "MPI_C_DOUBLE_COMPLEX"),
    (0x217, "MPI_CXX_DOUBLE_COMPLEX"),
    (0x218, "MPI_LOGICAL"),
    (0x219, "MPI_INTEGER"),
    (0x21a, "MPI_REAL"),
    (0x21b, "MPI_COMPLEX"),
    (0x21c, "MPI_DOUBLE_PRECISION"),
    (0x21d, "MPI_DOUBLE_COMPLEX"),
    (0x21e, "MPI_CHARACTER"),
    (0x220, "MPI_LONG_DOUBLE"),
    (0x224, "MPI_C_LONG_DOUBLE_COMPLEX"),
    (0x225, "MPI_CXX_LONG_DOUBLE_COMPLEX"),
    (0x228, "MPI_FLOAT_INT"),
    (0x229, "MPI_DOUBLE_INT"),
    (0x22a, "MPI_LONG_INT"),
    (0x22b, "MPI_2INT"),
    (0x22c, "MPI_SHORT_INT"),
    (0x22d, "MPI_LONG_DOUBLE_INT"),
    (0x230, "MPI_2REAL"),
    (0x231, "MPI_2DOUBLE_PRECISION"),
    (0x232, "MPI_2INTEGER"),
    (0x238, "MPI_C_BOOL"),
    (0x239, "MPI_CXX_BOOL"),
    (0x23c, "MPI_WCHAR"),
    (0x240, "MPI_INT8_T"),
    (0x241, "MPI_UINT8_T"),
    (0x243, "MPI_CHAR"),
    (0x244, "MPI_SIGNED_CHAR"),
    (0x245, "MPI_UNSIGNED_CHAR"),
    (0x247, "MPI_BYTE"),
    (0x248, "MPI_INT16_T"),
    (0x249, "MPI_UINT16_T"),
    (0x250, "MPI_INT32_T"),
    (0x251, "MPI_UINT32_T"),
    (0x258, "MPI_INT64_T"),
    (0x259, "MPI_UINT64_T"),
    (0x2c0, "MPI_LOGICAL1"),
    (0x2c1, "MPI_INTEGER1"),
    (0x2c8, "MPI_LOGICAL2"),
    (0x2c9, "MPI_INTEGER2"),
    (0x2ca, "MPI_REAL2"),
    (0x2d0, "MPI_LOGICAL4"),
    (0x2d1, "MPI_INTEGER4"),
    (0x2d2, "MPI_REAL4"),
    (0x2d3, "MPI_COMPLEX4"),
    (0x2d8, "MPI_LOGICAL8"),
    (0x2d9, "MPI_INTEGER8"),
    (0x2da, "MPI_REAL8"),
    (0x2db, "MPI_COMPLEX8"),
    (0x2e0, "MPI_LOGICAL16"),
    (0x2e1, "MPI_INTEGER16"),
    (0x2e2, "MPI_REAL16"),
    (0x2e3, "MPI_COMPLEX16"),
    (0x2eb, "MPI_COMPLEX32"),
    (0x380, "MPI_LB"),
    (0x381, "MPI_UB"),
    (0x382, "MPI_2COMPLEX"),
    (0x383, "MPI_2DOUBLE_COMPLEX"),
    (0x384, "MPIX_C_FLOAT16"),
    (0x390, "MPI_C_COMPLEX"),
    (0x391, "MPI_LONG_LONG_INT"),
    (0x392, "MPI_CXX_COMPLEX"),
];

/// `KNOWN[code]`: whether `code` is in PREDEFINED (a table, since the
/// reader asks once per leaf).
static KNOWN: [bool; 0x400] = {
    let mut known = [false; 0x400];
    let mut i = 0;
    while i < PREDEFINED.len() {
        known[PREDEFINED[i].0 as usize] = true;
        i += 1;
    }
    known
};

impl Predefined {
    pub const LB: Predefined = Predefined(0x380);
    pub const UB: Predefined = Predefined(0x381);

    /// The code, if the format knows it.
    #[inline]
    pub fn from_code(code: u32) -> Option<Predefined> {
        let known = KNOWN.get(code as usize).copied().unwrap_or(false);
        known.then_some(Predefined(code as u16))
    }

    /// The MPI name ("MPI_INT").
    pub fn mpi_name(self) -> &'static str {
        PREDEFINED
            .binary_search_by_key(&self.0, |e| e.0)
            .map(|i| PREDEFINED[i].1)
            .unwrap_or("unknown predefined datatype")
    }

    /// `MPI_LB` or `MPI_UB`: markers, not data.
    pub fn is_marker(self) -> bool {
        self == Predefined::LB || self == Predefined::UB
    }
}

/// Array storage order of SUBARRAY and DARRAY.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Order {
    C = 0,
    Fortran = 1,
}

impl Order {
    pub fn from_code(code: i64) -> Option<Order> {
        match code {
            0 => Some(Order::C),
            1 => Some(Order::Fortran),
            _ => None,
        }
    }
}

/// Distribution of one DARRAY dimension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Distribution {
    Block = 0,
    Cyclic = 1,
    None = 2,
}

impl Distribution {
    pub fn from_code(code: i64) -> Option<Distribution> {
        match code {
            0 => Some(Distribution::Block),
            1 => Some(Distribution::Cyclic),
            2 => Some(Distribution::None),
            _ => None,
        }
    }
}

/// Portable `MPI_DISTRIBUTE_DFLT_DARG` inside a DARRAY's dargs.
pub const DFLT_DARG: i64 = -1;

/// Portable `MPI_UNDEFINED` inside an F90 combiner's p and r.
pub const UNDEFINED: i64 = -1;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn predefined_table_is_sorted_and_unique() {
        assert!(PREDEFINED.windows(2).all(|w| w[0].0 < w[1].0));
        let mut names: Vec<_> = PREDEFINED.iter().map(|e| e.1).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), PREDEFINED.len());
    }

    #[test]
    fn combiner_codes_round_trip() {
        for c in Combiner::ALL {
            assert_eq!(Combiner::from_code(c.code()), Some(c));
        }
        assert_eq!(Combiner::from_code(100), None);
        assert_eq!(Combiner::from_code(121), None);
        for code in (0..1000).chain([u32::MAX]) {
            let known = Combiner::ALL.iter().any(|c| c.code() == code);
            assert_eq!(Combiner::from_code(code).is_some(), known, "{code}");
        }
    }
}
