//! Datatype equivalence at five levels, weakest first:
//!
//! 1. **signature**: the same sequence of basic types (exact, not a hash);
//! 2. **typemap**: the same (basic type, displacement) sequence, lower bound
//!    and extent, and the same explicit lb/ub markers (MPI-4.1 §5.1);
//! 3. **constructor**: the same envelope/contents at every level;
//! 4. **names**: and the same names at every level;
//! 5. **attributes**: and the same marshalled attributes (canonical name
//!    and bytes) at every level.
//!
//! Comparing at a level checks every weaker level too, and reports the
//! weakest one at which the types differ, with an explanation of the first
//! difference: the element index and the path in each tree for signatures
//! and typemaps, the path and the argument for trees. Equal constructor
//! trees imply equal typemaps on one MPI, so those are decided without
//! looking at the typemap; otherwise the typemap is compared structurally
//! (`typemap`), and expanded only when the structures differ.

mod locate;
mod overlap;
mod typemap;

pub use overlap::{Entry as OverlapEntry, Overlap};

use crate::error::{Error, Result};
use crate::format::codes::Predefined;
use crate::format::external::int_fields;
use crate::format::tree::{Kind, Node};
use crate::marshal::tree as type_tree;
use crate::mpi::Datatype;
use crate::signature::Signature;

/// How strictly two datatypes are compared. The numbers are the C
/// constants `MPIX_COMPARE_*`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u32)]
pub enum Level {
    Signature = 1,
    Typemap = 2,
    Constructor = 3,
    Names = 4,
    Attributes = 5,
}

impl Level {
    pub const ALL: [Level; 5] = [
        Level::Signature,
        Level::Typemap,
        Level::Constructor,
        Level::Names,
        Level::Attributes,
    ];

    pub fn from_code(code: u32) -> Option<Level> {
        Level::ALL.iter().copied().find(|l| *l as u32 == code)
    }

    pub fn name(self) -> &'static str {
        match self {
            Level::Signature => "signature",
            Level::Typemap => "typemap",
            Level::Constructor => "constructor",
            Level::Names => "names",
            Level::Attributes => "attributes",
        }
    }
}

/// The outcome of a comparison.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Comparison {
    /// None when the types are equal at the level asked for; otherwise the
    /// weakest level at which they differ.
    pub differs_at: Option<Level>,
    /// Where they first differ (empty when equal).
    pub explanation: String,
}

impl Comparison {
    pub fn is_equal(&self) -> bool {
        self.differs_at.is_none()
    }

    fn differ(level: Level, explanation: String) -> Comparison {
        Comparison {
            differs_at: Some(level),
            explanation: format!("{} level: {explanation}", level.name()),
        }
    }
}

/// Compares `a` and `b` at `level` (and every weaker level).
pub fn compare(a: Datatype, b: Datatype, level: Level) -> Result<Comparison> {
    let (ta, tb) = (type_tree(a)?, type_tree(b)?);
    if let Some(d) = tree_difference(&ta, &tb, Detail::Constructor) {
        // The trees differ: decide the weaker levels on their own.
        if let Some(c) = signature_level(&ta, &tb)? {
            return Ok(c);
        }
        if level >= Level::Typemap {
            if let Some(c) = typemap::compare(a, &ta, b, &tb)? {
                return Ok(c);
            }
        }
        if level >= Level::Constructor {
            return Ok(Comparison::differ(Level::Constructor, d));
        }
    } else {
        for (l, detail) in [
            (Level::Names, Detail::Names),
            (Level::Attributes, Detail::Attributes),
        ] {
            if level >= l {
                if let Some(d) = tree_difference(&ta, &tb, detail) {
                    return Ok(Comparison::differ(l, d));
                }
            }
        }
    }
    Ok(Comparison {
        differs_at: None,
        explanation: String::new(),
    })
}

/// Where two type signatures first differ, for a tool that reports it in
/// its own words (the collective checker does).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignatureDifference {
    /// The element (from 0) of the first difference.
    pub index: u128,
    /// The first type's basic type there (`MPI_INT`), or "the end of the
    /// signature" when it has fewer elements.
    pub first: String,
    /// The second type's basic type there, likewise.
    pub second: String,
    /// Where that element sits in the first type's tree
    /// (`root MPI_COMBINER_STRUCT member 1, copy 0 > MPI_DOUBLE`).
    pub first_path: String,
    /// Where it sits in the second type's tree.
    pub second_path: String,
}

/// Two entries of the typemap of `count` copies of `t` (a buffer of
/// (count, datatype)) that share a byte, or None. Receiving into such a
/// buffer is erroneous (MPI-4.1 §5.1). Decided on the constructor tree's
/// structure, not the expanded typemap; where that would take more than a
/// bounded amount of work the answer is None, so a `Some` is always an
/// overlap that exists.
pub fn overlapping_entries(count: u64, t: Datatype) -> Result<Option<Overlap>> {
    overlap::find(count, t, &type_tree(t)?)
}

/// The first difference between the type signatures of `a` and `b`, or
/// None when they are equal (exactly, element by element: no hash).
pub fn signature_difference(a: Datatype, b: Datatype) -> Result<Option<SignatureDifference>> {
    signature_difference_of(&type_tree(a)?, &type_tree(b)?)
}

fn signature_difference_of(a: &Node, b: &Node) -> Result<Option<SignatureDifference>> {
    let Some(d) = Signature::new(a)?.first_difference(&Signature::new(b)?)? else {
        return Ok(None);
    };
    let side = |t: Option<crate::signature::BasicType>| match t {
        Some(t) => t.describe(),
        None => "the end of the signature".to_string(),
    };
    Ok(Some(SignatureDifference {
        index: d.index,
        first: side(d.left),
        second: side(d.right),
        first_path: locate::path(a, d.index)?,
        second_path: locate::path(b, d.index)?,
    }))
}

/// The signature level: None when the signatures are equal.
fn signature_level(a: &Node, b: &Node) -> Result<Option<Comparison>> {
    let Some(d) = signature_difference_of(a, b)? else {
        return Ok(None);
    };
    Ok(Some(Comparison::differ(
        Level::Signature,
        format!(
            "the signatures differ at element {}: {} vs {} (first type: {}; second type: {})",
            d.index, d.first, d.second, d.first_path, d.second_path
        ),
    )))
}

/// What a tree comparison looks at besides the constructors.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Detail {
    Constructor,
    Names,
    Attributes,
}

/// The first difference between two trees in pre-order, or None.
fn tree_difference(a: &Node, b: &Node, detail: Detail) -> Option<String> {
    tree_difference_at(a, b, detail, &mut String::from("root"))
}

fn tree_difference_at(a: &Node, b: &Node, detail: Detail, path: &mut String) -> Option<String> {
    let (ca, cb) = (a.combiner(), b.combiner());
    if ca != cb || named(a) != named(b) || a.correction != b.correction {
        return Some(format!(
            "at {path}: {} vs {}",
            describe_level(a),
            describe_level(b)
        ));
    }
    if a.bounds != b.bounds {
        let show = |n: &Node| match n.bounds {
            Some(b) => format!("lower bound {} and extent {}", b.lb, b.extent),
            None => "no recorded bounds".to_string(),
        };
        return Some(format!(
            "at {path}: {} has {} vs {}",
            ca.mpi_name(),
            show(a),
            show(b)
        ));
    }
    if a.large != b.large {
        return Some(format!(
            "at {path}: {} made by the {} constructor vs the {} one",
            ca.mpi_name(),
            if a.large { "large-count" } else { "classic" },
            if b.large { "large-count" } else { "classic" }
        ));
    }
    let (fa, fb) = (int_fields(a), int_fields(b));
    if fa != fb {
        let i = fa.iter().zip(&fb).position(|(x, y)| x != y);
        return Some(match i {
            Some(i) => format!(
                "at {path}: {} argument field {i} is {} vs {}",
                ca.mpi_name(),
                fa[i],
                fb[i]
            ),
            None => format!(
                "at {path}: {} has {} vs {} argument fields",
                ca.mpi_name(),
                fa.len(),
                fb.len()
            ),
        });
    }
    if detail >= Detail::Names && a.name != b.name {
        let show = |n: &Option<Vec<u8>>| match n {
            Some(n) => format!("{:?}", String::from_utf8_lossy(n)),
            None => "no name".to_string(),
        };
        return Some(format!(
            "at {path}: name {} vs {}",
            show(&a.name),
            show(&b.name)
        ));
    }
    if detail >= Detail::Attributes && a.attrs != b.attrs {
        let i = a.attrs.iter().zip(&b.attrs).position(|(x, y)| x != y);
        let show = |x: Option<&crate::format::tree::Attribute>| match x {
            Some(x) => format!(
                "{:?} ({} bytes)",
                String::from_utf8_lossy(&x.name),
                x.value.len()
            ),
            None => "none".to_string(),
        };
        let i = i.unwrap_or(a.attrs.len().min(b.attrs.len()));
        return Some(format!(
            "at {path}: attribute {i} is {} vs {}",
            show(a.attrs.get(i)),
            show(b.attrs.get(i))
        ));
    }
    for (i, (x, y)) in a.children().iter().zip(b.children()).enumerate() {
        let len = path.len();
        path.push_str(&format!(".{i}"));
        if let Some(d) = tree_difference_at(x, y, detail, path) {
            return Some(d);
        }
        path.truncate(len);
    }
    None
}

fn named(n: &Node) -> Option<Predefined> {
    match n.kind {
        Kind::Named(p) => Some(p),
        _ => None,
    }
}

/// `describe`, saying so when the level is an extent correction.
fn describe_level(n: &Node) -> String {
    if n.correction {
        let inner = n.children().first().and_then(|c| c.bounds.map(|b| (c, b)));
        return match inner {
            Some((c, b)) => format!(
                "MPI_COMBINER_RESIZED, an extent correction unmarshal added because this MPI \
                 builds the {} below it with lower bound {} and extent {} \
                 where its writer recorded others (the typemap is the original's)",
                c.combiner().mpi_name(),
                b.lb,
                b.extent
            ),
            None => "MPI_COMBINER_RESIZED, an extent correction unmarshal added \
                     (the typemap is the original's)"
                .to_string(),
        };
    }
    describe(n).to_string()
}

/// A predefined type's name, or a constructor's combiner.
fn describe(n: &Node) -> &'static str {
    match named(n) {
        Some(p) => p.mpi_name(),
        None => n.combiner().mpi_name(),
    }
}

/// An error for a level code that is none of `Level`'s.
pub fn unknown_level(code: i64) -> Error {
    Error::invalid(format!(
        "{code} is not an MPIX_COMPARE_* level (1 signature .. 5 attributes)"
    ))
}
