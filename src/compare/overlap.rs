//! Overlapping entries. MPI allows a datatype whose typemap has two
//! entries at overlapping bytes, but makes receiving into one erroneous
//! (MPI-4.1 §5.1: "the use of such a datatype in a receive operation is
//! erroneous"). This finds such a pair on the type's [`Layout`] (runs of
//! copies at a stride and placed items, built from the constructor tree),
//! not on its expanded typemap:
//!
//! - copies of a body whose bytes form one interval overlap exactly when
//!   the stride is shorter than the interval (vectors, contiguous runs,
//!   blocks of indexed types, dimensions of subarrays);
//! - placed items (struct members, indexed blocks) are sorted by their
//!   spans and only those whose spans meet are looked at more closely;
//! - a body with holes is compared byte range by byte range, with the
//!   copies it can meet, while it has at most [`PARTS`] ranges and the
//!   comparisons cost at most [`BUDGET`] steps.
//!
//! Past that bound the question is left open and nothing is reported: a
//! report must be an overlap that exists. Once one is found, the typemap
//! is walked (in runs) to the first two entries that hold its byte, to
//! name them by their element index and tree path.

use super::locate;
use super::typemap::{self, layout, Layout, Runs};
use crate::error::{Error, Result};
use crate::format::codes::UNDEFINED;
use crate::format::tree::Node;
use crate::mpi::{self, f90, Datatype};
use crate::signature::{signature_count, BasicType};
use std::collections::HashMap;
use std::ffi::c_int;

/// The most byte ranges a part's footprint is listed with.
const PARTS: usize = 4096;

/// The most range steps spent comparing parts whose spans interleave.
const BUDGET: u128 = 1 << 20;

/// The most typemap runs walked to name the two entries.
const RUNS: u64 = 1 << 24;

/// Two entries of the typemap of `count` copies of a type that share a byte.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Overlap {
    /// The byte (from the buffer's start) both entries hold.
    pub byte: i128,
    /// The two entries, in typemap order; None when the typemap is too
    /// long to walk to them.
    pub entries: Option<[Entry; 2]>,
}

/// One entry of the typemap of `count` copies of a type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Its index in the typemap of all the copies.
    pub index: u128,
    /// The copy it is in, and where in that copy's constructor tree it
    /// comes from (as `compare` names elements: `root MPI_COMBINER_… >`).
    pub copy: u128,
    pub path: String,
    /// Its basic type (`MPI_INT`) and displacement in bytes.
    pub basic: String,
    pub displacement: i128,
}

/// The first overlap found in `count` copies of `t` (whose tree is
/// `tree`), or None: none, or none decidable within the bounds above.
pub(super) fn find(count: u64, t: Datatype, tree: &Node) -> Result<Option<Overlap>> {
    let extent = mpi::geometry(t)?.extent as i128;
    let l = typemap::repeat(layout(t, tree, 0)?, count as u128, extent);
    let mut sizes = Sizes::default();
    let Some(byte) = overlap(&l, &mut sizes)? else {
        return Ok(None);
    };
    let per = signature_count(tree)?.max(1);
    let entry = |(index, b, displacement): Held| -> Result<Entry> {
        Ok(Entry {
            index,
            copy: index / per,
            path: locate::path(tree, index % per)?,
            basic: b.describe(),
            displacement,
        })
    };
    let entries = match holding(&l, byte, &mut sizes)? {
        Some([a, b]) => Some([entry(a)?, entry(b)?]),
        None => None,
    };
    Ok(Some(Overlap { byte, entries }))
}

/// The bytes of one part: its span, and its byte ranges (sorted, apart)
/// when there are at most `PARTS` of them.
#[derive(Debug, Clone)]
struct Foot {
    lo: i128,
    hi: i128,
    ranges: Option<Vec<(i128, i128)>>,
}

impl Foot {
    fn empty() -> Foot {
        Foot {
            lo: 0,
            hi: 0,
            ranges: Some(vec![]),
        }
    }

    fn is_empty(&self) -> bool {
        self.ranges.as_ref().is_some_and(|r| r.is_empty())
    }

    /// One range with no hole.
    fn dense(&self) -> bool {
        self.ranges.as_ref().is_some_and(|r| r.len() == 1)
    }

    fn shifted(&self, by: i128) -> Foot {
        Foot {
            lo: self.lo + by,
            hi: self.hi + by,
            ranges: self
                .ranges
                .as_ref()
                .map(|r| r.iter().map(|&(a, b)| (a + by, b + by)).collect()),
        }
    }
}

/// What was found in one part: a byte two of its entries share, or its bytes.
enum Found {
    At(i128),
    Foot(Foot),
}

/// The byte of a first overlap found in `l`, or None.
fn overlap(l: &Layout, sizes: &mut Sizes) -> Result<Option<i128>> {
    Ok(match walk(l, sizes)? {
        Found::At(x) => Some(x),
        Found::Foot(_) => None,
    })
}

fn walk(l: &Layout, sizes: &mut Sizes) -> Result<Found> {
    match l {
        Layout::Empty => Ok(Found::Foot(Foot::empty())),
        Layout::Basic(b) => {
            let n = sizes.of(*b)?;
            Ok(Found::Foot(Foot {
                lo: 0,
                hi: n,
                ranges: Some(if n > 0 { vec![(0, n)] } else { vec![] }),
            }))
        }
        Layout::Repeat(body, count, stride) => match walk(body, sizes)? {
            Found::At(x) => Ok(Found::At(x)),
            Found::Foot(f) => Ok(copies(&f, *count, *stride)),
        },
        Layout::Seq(items) => {
            let mut feet = Vec::with_capacity(items.len());
            for (o, x) in items {
                match walk(x, sizes)? {
                    Found::At(x) => return Ok(Found::At(x + o)),
                    Found::Foot(f) => feet.push(f.shifted(*o)),
                }
            }
            Ok(placed(feet))
        }
    }
}

/// `count` copies of a part with footprint `f`, copy k at k × `stride`.
fn copies(f: &Foot, count: u128, stride: i128) -> Found {
    if f.is_empty() || count < 2 {
        return Found::Foot(f.clone());
    }
    let width = f.hi - f.lo;
    let step = stride.abs();
    if step < width {
        if stride == 0 {
            return Found::At(f.lo);
        }
        if f.dense() {
            // Copy 1 starts (or ends) inside copy 0.
            return Found::At(if stride > 0 { f.lo + stride } else { f.lo });
        }
        if let Some(r) = &f.ranges {
            // Copy k can meet copy 0 only while k × step < width.
            let meets = (width - 1) / step;
            let last = meets.min(count as i128 - 1);
            if last as u128 * r.len() as u128 <= BUDGET {
                for k in 1..=last {
                    if let Some(x) = shared(r, &f.shifted(k * stride).ranges.unwrap_or_default()) {
                        return Found::At(x);
                    }
                }
            }
        }
    }
    let last = ((count - 1).min(i128::MAX as u128) as i128).saturating_mul(stride);
    let (lo, hi) = (
        f.lo.saturating_add(last.min(0)),
        f.hi.saturating_add(last.max(0)),
    );
    let ranges = match &f.ranges {
        Some(r) if step >= width && count.saturating_mul(r.len() as u128) <= PARTS as u128 => {
            let mut all: Vec<(i128, i128)> = (0..count as i128)
                .flat_map(|k| {
                    r.iter()
                        .map(move |&(a, b)| (a + k * stride, b + k * stride))
                })
                .collect();
            all.sort_unstable();
            Some(merged(all))
        }
        Some(r) if r.len() == 1 && step == width => Some(vec![(lo, hi)]),
        _ => None,
    };
    Found::Foot(Foot { lo, hi, ranges })
}

/// Parts placed side by side (their footprints already moved into place).
fn placed(mut feet: Vec<Foot>) -> Found {
    feet.retain(|f| !f.is_empty());
    if feet.is_empty() {
        return Found::Foot(Foot::empty());
    }
    feet.sort_by_key(|f| (f.lo, f.hi));
    // Sweep by span: a part can meet only the earlier ones still open.
    // Parts whose spans interleave are compared range by range, within a
    // budget of range steps (past it, the rest is left open).
    let mut open: Vec<usize> = vec![];
    let mut budget = BUDGET;
    for i in 0..feet.len() {
        open.retain(|&j| feet[j].hi > feet[i].lo);
        for &j in &open {
            if let (Some(a), Some(b)) = (&feet[j].ranges, &feet[i].ranges) {
                let cost = (a.len() + b.len()) as u128;
                if cost > budget {
                    continue;
                }
                budget -= cost;
                if let Some(x) = shared(a, b) {
                    return Found::At(x);
                }
            }
        }
        open.push(i);
    }
    let lo = feet.iter().map(|f| f.lo).min().unwrap_or(0);
    let hi = feet.iter().map(|f| f.hi).max().unwrap_or(0);
    let mut all = vec![];
    let mut listed = true;
    for f in &feet {
        match &f.ranges {
            Some(r) if all.len() + r.len() <= PARTS => all.extend_from_slice(r),
            _ => listed = false,
        }
    }
    let ranges = listed.then(|| {
        all.sort_unstable();
        merged(all)
    });
    Found::Foot(Foot { lo, hi, ranges })
}

/// The first byte two sorted lists of ranges share.
fn shared(a: &[(i128, i128)], b: &[(i128, i128)]) -> Option<i128> {
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        let lo = a[i].0.max(b[j].0);
        if lo < a[i].1.min(b[j].1) {
            return Some(lo);
        }
        if a[i].1 <= b[j].1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    None
}

/// Sorted ranges with touching ones joined.
fn merged(sorted: Vec<(i128, i128)>) -> Vec<(i128, i128)> {
    let mut out: Vec<(i128, i128)> = Vec::with_capacity(sorted.len());
    for (a, b) in sorted {
        match out.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

type Held = (u128, BasicType, i128);

/// The first two entries (in typemap order) that hold `byte`: index,
/// basic type, displacement. None past `RUNS` runs.
fn holding(l: &Layout, byte: i128, sizes: &mut Sizes) -> Result<Option<[Held; 2]>> {
    let mut found: Vec<Held> = vec![];
    let mut index: u128 = 0;
    for (walked, run) in Runs::new(l).enumerate() {
        if walked as u64 > RUNS {
            return Ok(None);
        }
        let size = sizes.of(run.b)?;
        for j in holders(run.disp, run.n, run.step, size, byte) {
            found.push((index + j, run.b, run.disp + j as i128 * run.step));
            if found.len() == 2 {
                return Ok(Some([found[0], found[1]]));
            }
        }
        index += run.n;
    }
    Ok(None)
}

/// The first two j < n with disp + j × step ≤ byte < disp + j × step + size.
fn holders(disp: i128, n: u128, step: i128, size: i128, byte: i128) -> Vec<u128> {
    let holds = |j: u128| {
        let at = disp + j as i128 * step;
        at <= byte && byte < at + size
    };
    if step == 0 {
        return (0..n.min(2)).filter(|&j| holds(j)).collect();
    }
    // The j whose element starts at or before the byte, nearest to it.
    let near = (byte - disp).div_euclid(step).clamp(0, n as i128 - 1) as u128;
    let reach = (size / step.abs() + 1) as u128;
    let from = near.saturating_sub(reach);
    let to = (near + reach).min(n - 1);
    (from..=to).filter(|&j| holds(j)).take(2).collect()
}

/// Sizes of basic types in bytes, asked of MPI once each.
#[derive(Default)]
struct Sizes(HashMap<BasicType, i128>);

impl Sizes {
    fn of(&mut self, b: BasicType) -> Result<i128> {
        if let Some(&n) = self.0.get(&b) {
            return Ok(n);
        }
        let n = mpi::geometry(handle(b)?)?.size as i128;
        self.0.insert(b, n);
        Ok(n)
    }
}

/// The MPI handle of a basic type.
fn handle(b: BasicType) -> Result<Datatype> {
    let l = mpi::local();
    let u = l.constants.undefined;
    let local = |v: i64| if v == UNDEFINED { u } else { v as c_int };
    let made = match b {
        BasicType::Predefined(q) => {
            return l
                .datatype(q)
                .ok_or_else(|| Error::unsupported("a basic type this MPI lacks"))
        }
        BasicType::F90Real { p, r } => f90::create(f90::F90::Real, local(p), local(r), u),
        BasicType::F90Complex { p, r } => f90::create(f90::F90::Complex, local(p), local(r), u),
        BasicType::F90Integer { r } => f90::create(f90::F90::Integer, u, local(r), u),
    };
    made.map_err(|_| Error::unsupported("a Fortran kind this MPI lacks"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn foot(r: &[(i128, i128)]) -> Foot {
        Foot {
            lo: r.first().map_or(0, |x| x.0),
            hi: r.last().map_or(0, |x| x.1),
            ranges: Some(r.to_vec()),
        }
    }

    fn at(f: Found) -> Option<i128> {
        match f {
            Found::At(x) => Some(x),
            Found::Foot(_) => None,
        }
    }

    #[test]
    fn dense_copies_overlap_when_the_stride_is_short() {
        let int = foot(&[(0, 4)]);
        assert_eq!(at(copies(&int, 10, 4)), None);
        assert_eq!(at(copies(&int, 10, 3)), Some(3));
        assert_eq!(at(copies(&int, 10, -2)), Some(0));
        assert_eq!(at(copies(&int, 2, 0)), Some(0));
        assert_eq!(at(copies(&int, 1, 0)), None);
        // Contiguous copies of a dense part stay one range.
        let Found::Foot(f) = copies(&int, 10, 4) else {
            panic!()
        };
        assert_eq!(f.ranges, Some(vec![(0, 40)]));
    }

    #[test]
    fn copies_with_holes_may_interleave() {
        // Two ints 8 apart: copies at 4 fill the holes; at 8 they meet.
        let pair = foot(&[(0, 4), (8, 12)]);
        assert_eq!(at(copies(&pair, 2, 4)), None);
        assert_eq!(at(copies(&pair, 3, 4)), Some(8));
        assert_eq!(at(copies(&pair, 2, 8)), Some(8));
    }

    #[test]
    fn placed_parts_meet_only_where_their_bytes_do() {
        let int = |o| foot(&[(o, o + 4)]);
        assert_eq!(at(placed(vec![int(8), int(0), int(4)])), None);
        assert_eq!(at(placed(vec![int(0), int(10), int(2)])), Some(2));
        // Spans that meet, bytes that do not.
        let holes = foot(&[(0, 4), (12, 16)]);
        assert_eq!(at(placed(vec![holes.clone(), int(4), int(8)])), None);
        assert_eq!(at(placed(vec![holes, int(14)])), Some(14));
    }

    #[test]
    fn the_holders_of_a_byte_are_found_by_arithmetic() {
        assert_eq!(holders(0, 1 << 40, 4, 4, 4_000_002), vec![1_000_000]);
        assert_eq!(holders(0, 10, 2, 4, 6), vec![2, 3]);
        assert_eq!(holders(0, 10, -2, 4, -6), vec![3, 4]);
        assert_eq!(holders(100, 10, 4, 4, 0), Vec::<u128>::new());
    }
}
