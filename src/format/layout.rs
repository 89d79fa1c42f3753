//! One table of what the format knows about each combiner: its int fields
//! in stream order, how many child nodes follow them, and which node flags
//! it may carry (spec/external.md §5). The reader derives its field layout,
//! its length checks and its flag checks from this table, and `tree`'s
//! validation its flag rules, so each rule is written once.

use super::codes::Combiner;
use super::external::{FLAG_ATTRS, FLAG_BOUNDS, FLAG_CORRECTION, FLAG_LARGE, FLAG_NAME, FLAG_WIDE};

/// One item of a node's fields, in stream order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// One int.
    Int(&'static str),
    /// One int that is the length `n` of the arrays after it (not negative).
    Len(&'static str),
    /// `k` arrays of `n` ints, read as one (their message names them
    /// together).
    Arrays(&'static str, usize),
    /// `n` distribution codes (`codes::Distribution`).
    Distribs,
    /// One array order code (`codes::Order`).
    Order,
}

/// How many child nodes follow a node's fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Children {
    None,
    One,
    /// One per item: the `n` of the node's `Len` field (STRUCT's members).
    PerItem,
    /// Two (VALUE_INDEX: the value type, then the index type).
    Two,
}

/// What the format knows of one combiner.
#[derive(Debug)]
pub struct Rule {
    pub fields: &'static [Field],
    pub children: Children,
    /// Has an MPI-4 large-count constructor: the LARGE flag may be set.
    pub large: bool,
    /// Records the lb and extent the writer's MPI reported (BOUNDS, §5.6):
    /// the constructors that place their old types at byte displacements,
    /// whose extent an MPI may round up to the members' alignment
    /// (MPI-4.1 §5.1.1's epsilon) by rules of its own.
    pub bounds: bool,
    /// A predefined type in MPI's sense (the F90 parameterized types): no
    /// name, attributes or large flag.
    pub predefined: bool,
    /// Every field is one int: no `Len` and no arrays.
    pub fixed: bool,
    /// How many ints each item of the `Len` field adds to the arrays.
    pub ints_per_item: u8,
    /// The node flags its nodes may carry (the fields above say which).
    pub flags: u32,
}

use Field::{Arrays, Distribs, Int, Len, Order};

const fn rule(fields: &'static [Field], children: Children, large: bool, bounds: bool) -> Rule {
    let (mut fixed, mut ints_per_item, mut i) = (true, 0, 0);
    while i < fields.len() {
        match fields[i] {
            Int(_) => {}
            Len(_) | Order => fixed = false,
            Arrays(_, k) => {
                fixed = false;
                ints_per_item += k as u8;
            }
            Distribs => {
                fixed = false;
                ints_per_item += 1;
            }
        }
        i += 1;
    }
    let mut flags = FLAG_NAME | FLAG_WIDE | FLAG_ATTRS;
    if large {
        flags |= FLAG_LARGE;
    }
    if bounds {
        flags |= FLAG_BOUNDS;
    }
    Rule {
        fields,
        children,
        large,
        bounds,
        predefined: false,
        fixed,
        ints_per_item,
        flags,
    }
}

/// An F90 parameterized type's rule: predefined, so WIDE is its only flag.
const fn f90(fields: &'static [Field]) -> Rule {
    Rule {
        predefined: true,
        flags: FLAG_WIDE,
        ..rule(fields, Children::None, false, false)
    }
}

const NAMED: Rule = rule(&[], Children::None, false, false);
const DUP: Rule = rule(&[], Children::One, false, false);
const CONTIGUOUS: Rule = rule(&[Int("a count")], Children::One, true, false);
const VECTOR_FIELDS: &[Field] = &[Int("a count"), Int("a blocklength"), Int("a stride")];
const VECTOR: Rule = rule(VECTOR_FIELDS, Children::One, true, false);
const HVECTOR: Rule = rule(VECTOR_FIELDS, Children::One, true, true);
const HVECTOR_INTEGER: Rule = rule(VECTOR_FIELDS, Children::One, false, true);
const INDEXED_FIELDS: &[Field] = &[Len("a count"), Arrays("blocklengths and displacements", 2)];
const INDEXED: Rule = rule(INDEXED_FIELDS, Children::One, true, false);
const HINDEXED: Rule = rule(INDEXED_FIELDS, Children::One, true, true);
const HINDEXED_INTEGER: Rule = rule(INDEXED_FIELDS, Children::One, false, true);
const BLOCK_FIELDS: &[Field] = &[
    Len("a count"),
    Int("a blocklength"),
    Arrays("displacements", 1),
];
const INDEXED_BLOCK: Rule = rule(BLOCK_FIELDS, Children::One, true, false);
const HINDEXED_BLOCK: Rule = rule(BLOCK_FIELDS, Children::One, true, true);
const STRUCT: Rule = rule(INDEXED_FIELDS, Children::PerItem, true, true);
const STRUCT_INTEGER: Rule = rule(INDEXED_FIELDS, Children::PerItem, false, true);
const SUBARRAY: Rule = rule(
    &[Len("ndims"), Arrays("sizes, subsizes and starts", 3), Order],
    Children::One,
    true,
    false,
);
const DARRAY: Rule = rule(
    &[
        Int("a size"),
        Int("a rank"),
        Len("ndims"),
        Arrays("gsizes", 1),
        Distribs,
        Arrays("dargs and psizes", 2),
        Order,
    ],
    Children::One,
    true,
    false,
);
const F90_REAL: Rule = f90(&[Int("a precision"), Int("a range")]);
const F90_INTEGER: Rule = f90(&[Int("a range")]);
const RESIZED_BASE: Rule = rule(
    &[Int("a lower bound"), Int("an extent")],
    Children::One,
    true,
    false,
);
/// Only a RESIZED level can be an extent correction (CORRECTION).
const RESIZED: Rule = Rule {
    flags: RESIZED_BASE.flags | FLAG_CORRECTION,
    ..RESIZED_BASE
};
const VALUE_INDEX: Rule = rule(&[], Children::Two, false, false);

impl Combiner {
    /// The format's rule for this combiner.
    pub fn rule(self) -> &'static Rule {
        match self {
            Combiner::Named => &NAMED,
            Combiner::Dup => &DUP,
            Combiner::Contiguous => &CONTIGUOUS,
            Combiner::Vector => &VECTOR,
            Combiner::Hvector => &HVECTOR,
            Combiner::HvectorInteger => &HVECTOR_INTEGER,
            Combiner::Indexed => &INDEXED,
            Combiner::Hindexed => &HINDEXED,
            Combiner::HindexedInteger => &HINDEXED_INTEGER,
            Combiner::IndexedBlock => &INDEXED_BLOCK,
            Combiner::HindexedBlock => &HINDEXED_BLOCK,
            Combiner::Struct => &STRUCT,
            Combiner::StructInteger => &STRUCT_INTEGER,
            Combiner::Subarray => &SUBARRAY,
            Combiner::Darray => &DARRAY,
            Combiner::F90Real | Combiner::F90Complex => &F90_REAL,
            Combiner::F90Integer => &F90_INTEGER,
            Combiner::Resized => &RESIZED,
            Combiner::ValueIndex => &VALUE_INDEX,
        }
    }
}

impl Rule {
    /// How many child nodes follow a node whose `Len` field is `n` (0 when
    /// it has none).
    #[inline]
    pub fn child_count(&self, n: usize) -> usize {
        match self.children {
            Children::None => 0,
            Children::One => 1,
            Children::Two => 2,
            Children::PerItem => n,
        }
    }

    /// The fewest bytes each of the `n` items of a `Len` field takes in a
    /// stream of int width `unit`: its ints in every array, and a child
    /// node of at least one word (a NAMED node) when there is one per item.
    #[inline]
    pub fn bytes_per_item(&self, unit: usize) -> usize {
        let child = if self.children == Children::PerItem {
            4
        } else {
            0
        };
        self.ints_per_item as usize * unit + child
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every rule with arrays has one `Len` before them; PerItem needs one.
    #[test]
    fn arrays_follow_their_length() {
        for c in Combiner::ALL {
            let r = c.rule();
            let len = r.fields.iter().position(|f| matches!(f, Len(_)));
            let first_array = r
                .fields
                .iter()
                .position(|f| matches!(f, Arrays(..) | Distribs));
            match (len, first_array) {
                (Some(l), Some(a)) => assert!(l < a, "{c:?}"),
                (None, None) => assert_ne!(r.children, Children::PerItem, "{c:?}"),
                _ => panic!("{c:?}: arrays without a length or a length without arrays"),
            }
        }
    }
}
