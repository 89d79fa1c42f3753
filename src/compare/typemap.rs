//! The typemap level: two types have the same typemap when they list the
//! same basic types at the same displacements in the same order, with the
//! same lower bound and extent and the same explicit lb/ub markers (which
//! decide the bounds of any type later built from them).
//!
//! Each type's typemap is described by a [`Layout`]: basic types, runs
//! (`Repeat`: k copies of a body at a stride) and sequences of placed
//! items, built from the constructor tree and the extents MPI reports for
//! each level. Building normalizes as it goes (a repeat of a repeat that
//! continues it is one repeat; regularly placed equal items in a sequence
//! become a repeat), so types built in different ways usually get equal
//! layouts, decided without expansion: `contiguous(2^20, contiguous(2^20,
//! MPI_INT))` and `vector(2^20, 2^20, 2^20, MPI_INT)` are both 2^40 ints at
//! stride 4. When the layouts differ, both are expanded in lockstep into
//! runs of equally spaced elements, and the first differing element is
//! reported: the cost is then the number of runs up to that element, or of
//! the whole typemap if the two are equal after all.

use super::{locate, Comparison, Level};
use crate::error::{Error, Result};
use crate::format::codes::{Distribution, Order, Predefined, DFLT_DARG};
use crate::format::tree::{Kind, Node};
use crate::mpi::{self, Contents, Datatype};
use crate::signature::fold::for_each_repetition;
use crate::signature::{basic_types, BasicType};

/// The typemap of a type, structurally. Offsets and strides are in bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Layout {
    Empty,
    Basic(BasicType),
    /// `count` ≥ 2 copies of the body, copy i at i × stride.
    Repeat(Box<Layout>, u128, i128),
    /// Items at offsets, in typemap order: at least two, or one whose
    /// offset is not 0; never an Empty or a Seq.
    Seq(Vec<(i128, Layout)>),
}

/// None when `a` and `b` (trees `ta`, `tb`) have the same typemap.
pub(super) fn compare(
    a: Datatype,
    ta: &Node,
    b: Datatype,
    tb: &Node,
) -> Result<Option<Comparison>> {
    let differ = |why: String| Ok(Some(Comparison::differ(Level::Typemap, why)));
    let (ga, gb) = (mpi::geometry(a)?, mpi::geometry(b)?);
    if (ga.lb, ga.extent) != (gb.lb, gb.extent) {
        return differ(format!(
            "lower bound {} and extent {} vs lower bound {} and extent {}",
            ga.lb, ga.extent, gb.lb, gb.extent
        ));
    }
    let (ma, mb) = (markers(ta)?, markers(tb)?);
    if ma != mb {
        let show = |m: (bool, bool)| match m {
            (false, false) => "no explicit bound markers",
            (true, false) => "an explicit lower-bound marker only",
            (false, true) => "an explicit upper-bound marker only",
            (true, true) => "explicit lower- and upper-bound markers",
        };
        return differ(format!("{} vs {}", show(ma), show(mb)));
    }
    let (la, lb) = (layout(a, ta, 0)?, layout(b, tb, 0)?);
    if la == lb {
        return Ok(None);
    }
    match first_difference(&la, &lb) {
        None => Ok(None),
        Some((index, x, y)) => {
            let show = |e: Option<(BasicType, i128)>| match e {
                Some((b, d)) => format!("{} at byte {d}", b.describe()),
                None => "the end of the typemap".to_string(),
            };
            differ(format!(
                "the typemaps differ at element {index}: {} vs {} (first type: {}; second type: {})",
                show(x),
                show(y),
                locate::path(ta, index)?,
                locate::path(tb, index)?
            ))
        }
    }
}

/// Whether the typemap holds an explicit lower-bound and upper-bound
/// marker: `MPI_LB`/`MPI_UB`, or a resize (which SUBARRAY and DARRAY are,
/// by their definition in the standard), in a part that is used at least once.
fn markers(node: &Node) -> Result<(bool, bool)> {
    Ok(match &node.kind {
        Kind::Named(p) => (*p == Predefined::LB, *p == Predefined::UB),
        Kind::Resized { .. } | Kind::Subarray { .. } | Kind::Darray { .. } => (true, true),
        Kind::F90Real { .. } | Kind::F90Complex { .. } | Kind::F90Integer { .. } => (false, false),
        Kind::ValueIndex { .. } => (false, false),
        Kind::Struct {
            blocklengths,
            types,
            ..
        } => {
            let mut m = (false, false);
            for (&bl, child) in blocklengths.iter().zip(types) {
                if bl > 0 {
                    let c = markers(child)?;
                    m = (m.0 || c.0, m.1 || c.1);
                }
            }
            m
        }
        _ => {
            let mut used = true;
            for_each_repetition(node, &mut |k| used &= k > 0)?;
            if used {
                markers(&node.children()[0])?
            } else {
                (false, false)
            }
        }
    })
}

/// The layout of `t`, whose tree is `node`; the extents of inner levels
/// come from MPI, through the handles get_contents returns.
pub(super) fn layout(t: Datatype, node: &Node, depth: usize) -> Result<Layout> {
    if depth > crate::format::tree::MAX_DEPTH {
        return Err(Error::unsupported("the type is nested too deeply"));
    }
    match &node.kind {
        Kind::Named(p) => return named(*p),
        Kind::F90Real { p, r } => return Ok(Layout::Basic(BasicType::F90Real { p: *p, r: *r })),
        Kind::F90Complex { p, r } => {
            return Ok(Layout::Basic(BasicType::F90Complex { p: *p, r: *r }))
        }
        Kind::F90Integer { r } => return Ok(Layout::Basic(BasicType::F90Integer { r: *r })),
        Kind::ValueIndex { .. } => {
            return Err(Error::unsupported(
                "typemap comparison of MPI_Type_get_value_index types",
            ))
        }
        _ => {}
    }
    let env = mpi::envelope(t)?;
    // The children free themselves when this level is done, on error too.
    let kids = mpi::contents_owned(t, &env, &mut Contents::default())?;
    let children = node.children();
    if kids.len() != children.len() {
        return Err(Error::unsupported(
            "MPI_Type_get_contents disagrees with the type's tree",
        ));
    }
    let mut parts = Vec::with_capacity(children.len());
    for (h, child) in kids.iter().zip(children) {
        parts.push((
            layout(h.get(), child, depth + 1)?,
            mpi::geometry(h.get())?.extent as i128,
        ));
    }
    build(node, parts)
}

fn named(p: Predefined) -> Result<Layout> {
    let basics = basic_types(p)?;
    Ok(match basics.as_slice() {
        [] => Layout::Empty,
        [x] => Layout::Basic(*x),
        [x, y] => {
            // A pair type is a struct of two: the second starts after the
            // first (MPI_DOUBLE_INT's int at 8, MPI_SHORT_INT's at 4).
            let first = match x {
                BasicType::Predefined(q) => mpi::local()
                    .datatype(*q)
                    .ok_or_else(|| Error::unsupported("a pair of a type this MPI lacks"))?,
                _ => return Err(Error::unsupported("a pair of F90 types")),
            };
            let size = mpi::geometry(first)?.size as i128;
            seq(vec![(0, Layout::Basic(*x)), (size, Layout::Basic(*y))])
        }
        _ => unreachable!("a predefined type has at most two basic types"),
    })
}

/// A constructor's layout from its children's layouts and extents.
fn build(node: &Node, mut parts: Vec<(Layout, i128)>) -> Result<Layout> {
    let count =
        |v: i64| u128::try_from(v).map_err(|_| Error::invalid(format!("negative count {v}")));
    let one = |parts: &mut Vec<(Layout, i128)>| parts.pop().expect("one old type");
    Ok(match &node.kind {
        Kind::Dup(_) | Kind::Resized { .. } => one(&mut parts).0,
        Kind::Contiguous { count: n, .. } => {
            let (x, e) = one(&mut parts);
            repeat(x, count(*n)?, e)
        }
        Kind::Vector {
            count: n,
            blocklength,
            stride,
            ..
        }
        | Kind::Hvector {
            count: n,
            blocklength,
            stride,
            ..
        } => {
            let (x, e) = one(&mut parts);
            let bytes = if matches!(node.kind, Kind::Vector { .. }) {
                *stride as i128 * e
            } else {
                *stride as i128
            };
            repeat(repeat(x, count(*blocklength)?, e), count(*n)?, bytes)
        }
        Kind::Indexed {
            blocklengths,
            displacements,
            ..
        }
        | Kind::Hindexed {
            blocklengths,
            displacements,
            ..
        } => {
            let (x, e) = one(&mut parts);
            let unit = if matches!(node.kind, Kind::Indexed { .. }) {
                e
            } else {
                1
            };
            let mut items = Vec::with_capacity(blocklengths.len());
            for (&bl, &d) in blocklengths.iter().zip(displacements) {
                items.push((d as i128 * unit, repeat(x.clone(), count(bl)?, e)));
            }
            seq(items)
        }
        Kind::IndexedBlock {
            blocklength,
            displacements,
            ..
        }
        | Kind::HindexedBlock {
            blocklength,
            displacements,
            ..
        } => {
            let (x, e) = one(&mut parts);
            let unit = if matches!(node.kind, Kind::IndexedBlock { .. }) {
                e
            } else {
                1
            };
            let block = repeat(x, count(*blocklength)?, e);
            seq(displacements
                .iter()
                .map(|&d| (d as i128 * unit, block.clone()))
                .collect())
        }
        Kind::Struct {
            blocklengths,
            displacements,
            ..
        } => {
            let mut items = Vec::with_capacity(parts.len());
            for ((x, e), (&bl, &d)) in parts
                .into_iter()
                .zip(blocklengths.iter().zip(displacements))
            {
                items.push((d as i128, repeat(x, count(bl)?, e)));
            }
            seq(items)
        }
        Kind::Subarray {
            sizes,
            subsizes,
            starts,
            order,
            ..
        } => {
            let (mut x, mut stride) = one(&mut parts);
            for k in fastest_first(sizes.len(), *order) {
                x = shift(
                    starts[k] as i128 * stride,
                    repeat(x, count(subsizes[k])?, stride),
                );
                stride *= sizes[k] as i128;
            }
            x
        }
        Kind::Darray {
            size,
            rank,
            gsizes,
            distribs,
            dargs,
            psizes,
            order,
            ..
        } => {
            let (mut x, mut stride) = one(&mut parts);
            // Row-major coordinates of the rank in the process grid.
            let mut coords = vec![0i64; gsizes.len()];
            let (mut left, mut rest) = (*size, *rank);
            for (i, c) in coords.iter_mut().enumerate() {
                left /= psizes[i].max(1);
                *c = rest / left.max(1);
                rest %= left.max(1);
            }
            for k in fastest_first(gsizes.len(), *order) {
                x = owned(
                    x,
                    stride,
                    gsizes[k],
                    distribs[k],
                    dargs[k],
                    psizes[k],
                    coords[k],
                )?;
                stride *= gsizes[k] as i128;
            }
            x
        }
        Kind::Named(_)
        | Kind::F90Real { .. }
        | Kind::F90Complex { .. }
        | Kind::F90Integer { .. }
        | Kind::ValueIndex { .. } => unreachable!("handled by layout"),
    })
}

/// Dimensions from the fastest-varying to the slowest.
fn fastest_first(n: usize, order: Order) -> Vec<usize> {
    match order {
        Order::C => (0..n).rev().collect(),
        Order::Fortran => (0..n).collect(),
    }
}

/// The elements of one darray dimension that coordinate `coord` owns, in
/// increasing index order, each a copy of `x` at `stride` per index.
fn owned(
    x: Layout,
    stride: i128,
    gsize: i64,
    distrib: Distribution,
    darg: i64,
    psize: i64,
    coord: i64,
) -> Result<Layout> {
    let g = gsize as i128;
    let run =
        |x: Layout, from: i128, n: i128| shift(from * stride, repeat(x, n.max(0) as u128, stride));
    Ok(match distrib {
        Distribution::None => run(x, 0, g),
        Distribution::Block => {
            let p = psize as i128;
            let b = if darg == DFLT_DARG {
                (g + p - 1) / p
            } else {
                darg as i128
            };
            let start = b * coord as i128;
            run(x, start, (g - start).clamp(0, b))
        }
        Distribution::Cyclic => {
            let b = if darg == DFLT_DARG { 1 } else { darg as i128 };
            let (p, c) = (psize as i128, coord as i128);
            let blocks = (g + b - 1) / b;
            // My blocks are c, c + p, ...; all are full but maybe the last
            // block of the dimension.
            let mine = if c < blocks {
                (blocks - 1 - c) / p + 1
            } else {
                0
            };
            let last = c + (mine - 1) * p;
            let last_len = if mine > 0 { (g - last * b).min(b) } else { 0 };
            let full = if last_len < b { mine - 1 } else { mine };
            let block = repeat(x.clone(), b as u128, stride);
            let mut items = vec![(
                c * b * stride,
                repeat(block, full.max(0) as u128, p * b * stride),
            )];
            if mine > 0 && last_len < b {
                items.push((0, run(x, last * b, last_len)));
            }
            seq(items)
        }
    })
}

/// `x` moved by `offset` bytes.
fn shift(offset: i128, x: Layout) -> Layout {
    match x {
        Layout::Empty => Layout::Empty,
        x if offset == 0 => x,
        Layout::Seq(items) => {
            Layout::Seq(items.into_iter().map(|(o, y)| (o + offset, y)).collect())
        }
        x => Layout::Seq(vec![(offset, x)]),
    }
}

/// `k` copies of `x` at `stride`, normalized.
pub(super) fn repeat(x: Layout, k: u128, stride: i128) -> Layout {
    match (x, k) {
        (_, 0) | (Layout::Empty, _) => Layout::Empty,
        (x, 1) => x,
        // A repeat that this repeat continues: one longer repeat.
        (Layout::Repeat(body, c, s), k)
            if c as i128 * s == stride && c.checked_mul(k).is_some() =>
        {
            Layout::Repeat(body, c * k, s)
        }
        // A moved item: move the repeat instead.
        (Layout::Seq(mut items), k) if items.len() == 1 => {
            let (o, y) = items.pop().expect("one item");
            shift(o, repeat(y, k, stride))
        }
        (x, k) => Layout::Repeat(Box::new(x), k, stride),
    }
}

/// A sequence of placed items, flattened and with regular neighbours merged.
fn seq(items: Vec<(i128, Layout)>) -> Layout {
    let mut out: Vec<(i128, Layout)> = Vec::with_capacity(items.len());
    for (o, x) in items {
        match x {
            Layout::Empty => {}
            Layout::Seq(inner) => {
                for (o2, y) in inner {
                    push(&mut out, o + o2, y);
                }
            }
            x => push(&mut out, o, x),
        }
    }
    match out.len() {
        0 => Layout::Empty,
        1 => {
            let (o, x) = out.pop().expect("one item");
            shift(o, x)
        }
        _ => Layout::Seq(out),
    }
}

/// A view of an item as `count` copies of a body at a stride (None for one copy).
fn as_runs(x: &Layout) -> [(&Layout, u128, Option<i128>); 2] {
    match x {
        Layout::Repeat(body, c, s) => [(body, *c, Some(*s)), (x, 1, None)],
        x => [(x, 1, None), (x, 1, None)],
    }
}

/// Appends `(o, x)` to `out`, merged into the last item when the two are
/// copies of one body continuing one stride.
fn push(out: &mut Vec<(i128, Layout)>, o: i128, x: Layout) {
    if let Some((o1, last)) = out.last() {
        let mut merged = None;
        'found: for (b1, c1, s1) in as_runs(last) {
            for (b2, c2, s2) in as_runs(&x) {
                if b1 != b2 {
                    continue;
                }
                let gap = o - o1;
                let stride = match (s1, s2) {
                    (None, None) => Some(gap),
                    (Some(s), None) if gap == c1 as i128 * s => Some(s),
                    (None, Some(s)) if gap == s => Some(s),
                    (Some(s), Some(t)) if s == t && gap == c1 as i128 * s => Some(s),
                    _ => None,
                };
                if let (Some(s), Some(n)) = (stride, c1.checked_add(c2)) {
                    merged = Some(Layout::Repeat(Box::new(b1.clone()), n, s));
                    break 'found;
                }
            }
        }
        if let Some(m) = merged {
            out.last_mut().expect("a last item").1 = m;
            return;
        }
    }
    out.push((o, x));
}

/// `n` elements of one basic type, element j at `disp + j × step`.
#[derive(Clone, Copy)]
pub(super) struct Run {
    pub(super) b: BasicType,
    pub(super) disp: i128,
    pub(super) n: u128,
    pub(super) step: i128,
}

enum Frame<'a> {
    Repeat {
        body: &'a Layout,
        count: u128,
        stride: i128,
        next: u128,
        base: i128,
    },
    Seq {
        items: &'a [(i128, Layout)],
        next: usize,
        base: i128,
    },
}

/// The runs of a layout in typemap order, with an explicit stack.
pub(super) struct Runs<'a> {
    stack: Vec<Frame<'a>>,
    root: Option<(&'a Layout, i128)>,
}

impl<'a> Runs<'a> {
    pub(super) fn new(l: &'a Layout) -> Runs<'a> {
        Runs {
            stack: Vec::new(),
            root: Some((l, 0)),
        }
    }

    /// Enters `l` at `base`: a run when it is one, else a frame.
    fn enter(&mut self, l: &'a Layout, base: i128) -> Option<Run> {
        match l {
            Layout::Empty => None,
            Layout::Basic(b) => Some(Run {
                b: *b,
                disp: base,
                n: 1,
                step: 0,
            }),
            Layout::Repeat(body, count, stride) => {
                if let Layout::Basic(b) = **body {
                    return Some(Run {
                        b,
                        disp: base,
                        n: *count,
                        step: *stride,
                    });
                }
                self.stack.push(Frame::Repeat {
                    body,
                    count: *count,
                    stride: *stride,
                    next: 0,
                    base,
                });
                None
            }
            Layout::Seq(items) => {
                self.stack.push(Frame::Seq {
                    items,
                    next: 0,
                    base,
                });
                None
            }
        }
    }
}

impl Iterator for Runs<'_> {
    type Item = Run;

    fn next(&mut self) -> Option<Run> {
        if let Some((l, base)) = self.root.take() {
            if let Some(r) = self.enter(l, base) {
                return Some(r);
            }
        }
        loop {
            let (l, base) = match self.stack.last_mut()? {
                Frame::Repeat {
                    body,
                    count,
                    stride,
                    next,
                    base,
                } => {
                    if *next == *count {
                        self.stack.pop();
                        continue;
                    }
                    let at = *base + *next as i128 * *stride;
                    *next += 1;
                    (*body, at)
                }
                Frame::Seq { items, next, base } => {
                    let Some((o, l)) = items.get(*next) else {
                        self.stack.pop();
                        continue;
                    };
                    *next += 1;
                    (l, *base + o)
                }
            };
            if let Some(r) = self.enter(l, base) {
                return Some(r);
            }
        }
    }
}

type Element = Option<(BasicType, i128)>;

/// The first element where two layouts differ: its index and each side's
/// element there (None past the end); None when they are equal.
fn first_difference(a: &Layout, b: &Layout) -> Option<(u128, Element, Element)> {
    let (mut ra, mut rb) = (Runs::new(a), Runs::new(b));
    let (mut x, mut y) = (ra.next(), rb.next());
    let mut index: u128 = 0;
    loop {
        match (x, y) {
            (None, None) => return None,
            (Some(p), None) => return Some((index, Some((p.b, p.disp)), None)),
            (None, Some(q)) => return Some((index, None, Some((q.b, q.disp)))),
            (Some(mut p), Some(mut q)) => {
                if p.b != q.b || p.disp != q.disp {
                    return Some((index, Some((p.b, p.disp)), Some((q.b, q.disp))));
                }
                let m = p.n.min(q.n);
                if m > 1 && p.step != q.step {
                    let (d1, d2) = (p.disp + p.step, q.disp + q.step);
                    return Some((index + 1, Some((p.b, d1)), Some((q.b, d2))));
                }
                index += m;
                p.n -= m;
                q.n -= m;
                p.disp += m as i128 * p.step;
                q.disp += m as i128 * q.step;
                x = if p.n == 0 { ra.next() } else { Some(p) };
                y = if q.n == 0 { rb.next() } else { Some(q) };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int() -> Layout {
        Layout::Basic(BasicType::Predefined(Predefined(0x209)))
    }

    #[test]
    fn regular_pieces_normalize_to_one_repeat() {
        // contiguous(2^20, contiguous(2^20, int)) and vector(2^20, 2^20, 2^20, int)
        let a = repeat(repeat(int(), 1 << 20, 4), 1 << 20, 4 << 20);
        let b = repeat(repeat(int(), 1 << 20, 4), 1 << 20, 4 << 20);
        assert_eq!(a, Layout::Repeat(Box::new(int()), 1 << 40, 4));
        assert_eq!(a, b);
        // indexed {2,2,2} at {0,5,10} ints == vector(3, 2, 5, int)
        let idx = seq((0..3).map(|i| (i * 20, repeat(int(), 2, 4))).collect());
        let vec = repeat(repeat(int(), 2, 4), 3, 20);
        assert_eq!(idx, vec);
        // three placed ints == contiguous(3, int)
        let s = seq(vec![(0, int()), (4, int()), (8, int())]);
        assert_eq!(s, repeat(int(), 3, 4));
    }

    #[test]
    fn expansion_finds_the_first_difference() {
        let a = repeat(int(), 10, 4);
        let mut items: Vec<(i128, Layout)> = (0..10).map(|i| (i * 4, int())).collect();
        assert_eq!(first_difference(&a, &Layout::Seq(items.clone())), None);
        items[7].0 = 100;
        let (i, x, y) = first_difference(&a, &Layout::Seq(items)).unwrap();
        assert_eq!(i, 7);
        assert_eq!(x.unwrap().1, 28);
        assert_eq!(y.unwrap().1, 100);
        // different steps: the second element differs
        let (i, _, _) = first_difference(&a, &repeat(int(), 10, 8)).unwrap();
        assert_eq!(i, 1);
        // one ends first
        let (i, _, y) = first_difference(&a, &repeat(int(), 9, 4)).unwrap();
        assert_eq!((i, y), (9, None));
    }
}
