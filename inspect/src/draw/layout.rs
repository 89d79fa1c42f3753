//! The typemap of a tree as structure, never expanded: basic elements,
//! explicit bound markers, sequences at byte offsets, and repetitions
//! (count copies at a byte stride). A contiguous type of 10^9 elements is
//! one repetition; an indexed type's regular blocks become repetitions too.
//! The extents of old types come from the local MPI (`mpi::extents`).

use crate::mpi::{self, Extents};
use mpix_marshal::describe;
use mpix_marshal::{Distribution, Kind, Node, Order, Predefined, Representation};
use std::collections::HashMap;
use std::ops::ControlFlow;

/// A piece of typemap, its displacements relative to where it is placed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shape {
    /// One basic element: its type's label and its size in bytes, and the
    /// predefined type it is (None for Fortran kinds and value-index types).
    Elem {
        label: String,
        size: i64,
        basic: Option<Predefined>,
    },
    /// An explicit MPI_LB (false) or MPI_UB (true) marker.
    Marker { upper: bool },
    /// Pieces at byte offsets, in typemap order.
    Seq(Vec<(i64, Shape)>),
    /// `count` copies of `body`, each `stride` bytes after the last, made
    /// by the constructor `level` names ("VECTOR"; "" for a block, or
    /// regular pieces found repeating).
    Repeat {
        count: i64,
        stride: i64,
        body: Box<Shape>,
        level: &'static str,
    },
}

impl Shape {
    fn empty() -> Shape {
        Shape::Seq(Vec::new())
    }

    /// `count` copies at `stride`, simplified: none is empty, one is the body.
    pub fn repeat(count: i64, stride: i64, body: Shape) -> Shape {
        match count {
            c if c <= 0 => Shape::empty(),
            1 => body,
            _ if body == Shape::empty() => body,
            _ => Shape::Repeat {
                count,
                stride,
                body: Box::new(body),
                level: "",
            },
        }
    }

    /// The shape with its outermost repetition, if it has none yet, named
    /// after the constructor `node` that made it.
    fn named_by(mut self, node: &Node) -> Shape {
        if let Shape::Repeat { level, .. } = &mut self {
            if level.is_empty() {
                let name = node.combiner().mpi_name();
                *level = name.strip_prefix("MPI_COMBINER_").unwrap_or(name);
            }
        }
        self
    }

    /// Pieces at offsets: nested sequences flattened, empty pieces dropped,
    /// and runs of equal pieces at a constant stride made repetitions.
    pub fn seq(items: Vec<(i64, Shape)>) -> Shape {
        let mut flat: Vec<(i64, Shape)> = Vec::new();
        for (at, s) in items {
            match s {
                Shape::Seq(inner) => flat.extend(inner.into_iter().map(|(o, x)| (at + o, x))),
                s => flat.push((at, s)),
            }
        }
        // Runs of one piece at a constant stride, then runs of a short
        // group of pieces (an indexed type's blocks of lengths 1, 2, 3, 1,
        // 2, 3, ...) at a constant stride.
        let mut out = periodic(flat, 1);
        for period in 2..=MAX_PERIOD {
            if out.len() >= 2 * period {
                out = periodic(out, period);
            }
        }
        if out.len() == 1 && out[0].0 == 0 {
            return out.pop().map(|(_, s)| s).unwrap_or_else(Shape::empty);
        }
        Shape::Seq(out)
    }

    /// The bytes the shape's elements cover, from its placement: None when
    /// it has none.
    pub fn span(&self) -> Option<(i64, i64)> {
        match self {
            Shape::Elem { size, .. } => Some((0, *size)),
            Shape::Marker { .. } => Some((0, 0)),
            Shape::Seq(items) => items
                .iter()
                .filter_map(|(at, s)| s.span().map(|(lo, hi)| (at + lo, at + hi)))
                .reduce(|a, b| (a.0.min(b.0), a.1.max(b.1))),
            Shape::Repeat {
                count,
                stride,
                body,
                ..
            } => body.span().map(|(lo, hi)| {
                let last = (count - 1).saturating_mul(*stride);
                (lo + last.min(0), hi + last.max(0))
            }),
        }
    }

    /// How many pieces drawing it in full takes (a contiguous run of one
    /// type is one), saturating.
    pub fn pieces(&self) -> u64 {
        match self {
            Shape::Elem { .. } | Shape::Marker { .. } => 1,
            Shape::Seq(items) => items
                .iter()
                .map(|(_, s)| s.pieces())
                .fold(0, u64::saturating_add),
            Shape::Repeat { .. } if self.run().is_some() => 1,
            Shape::Repeat { count, body, .. } => (*count as u64).saturating_mul(body.pieces()),
        }
    }

    /// A repetition of one element with no gap: (label, element size, count).
    pub fn run(&self) -> Option<(&str, i64, i64)> {
        match self {
            Shape::Repeat {
                count,
                stride,
                body,
                ..
            } => match body.as_ref() {
                Shape::Elem { label, size, .. } if size == stride => Some((label, *size, *count)),
                _ => None,
            },
            _ => None,
        }
    }

    /// Calls `f` with each basic element (its displacement from `base` and
    /// the element) in typemap order, until `f` breaks: never expands more
    /// than it visits, so the first elements of 10^9 are quick.
    pub fn for_each_elem<B>(
        &self,
        base: i64,
        f: &mut dyn FnMut(i64, &Shape) -> ControlFlow<B>,
    ) -> ControlFlow<B> {
        match self {
            Shape::Elem { .. } => f(base, self),
            Shape::Marker { .. } => ControlFlow::Continue(()),
            Shape::Seq(items) => items
                .iter()
                .try_for_each(|(at, x)| x.for_each_elem(base.saturating_add(*at), f)),
            Shape::Repeat {
                count,
                stride,
                body,
                ..
            } => (0..*count).try_for_each(|i| {
                body.for_each_elem(base.saturating_add(i.saturating_mul(*stride)), f)
            }),
        }
    }

    /// The outermost repetition: its offset from the shape's origin and
    /// itself (in a sequence, the one of most copies; ties: the first).
    pub fn outermost_repeat(&self) -> Option<(i64, &Shape)> {
        match self {
            Shape::Repeat { .. } => Some((0, self)),
            Shape::Seq(items) => {
                let mut best: Option<(i64, &Shape)> = None;
                for (at, x) in items {
                    if let Some((o, r)) = x.outermost_repeat() {
                        let copies = |s: &Shape| match s {
                            Shape::Repeat { count, .. } => *count,
                            _ => 0,
                        };
                        if best.map_or(true, |(_, b)| copies(r) > copies(b)) {
                            best = Some((at + o, r));
                        }
                    }
                }
                best
            }
            _ => None,
        }
    }

    /// The number of basic elements of each label, in order of first
    /// appearance.
    pub fn census(&self, mult: u128, out: &mut Vec<(String, u128)>) {
        match self {
            Shape::Elem { label, .. } => match out.iter_mut().find(|(l, _)| l == label) {
                Some((_, n)) => *n = n.saturating_add(mult),
                None => out.push((label.clone(), mult)),
            },
            Shape::Marker { .. } => {}
            Shape::Seq(items) => items.iter().for_each(|(_, s)| s.census(mult, out)),
            Shape::Repeat { count, body, .. } => {
                body.census(mult.saturating_mul(*count as u128), out)
            }
        }
    }
}

/// The longest group of pieces found repeating in a sequence.
const MAX_PERIOD: usize = 8;

/// `items` with every stretch of at least two copies of a group of
/// `period` pieces, each copy a constant stride after the last, made one
/// repetition.
fn periodic(items: Vec<(i64, Shape)>, period: usize) -> Vec<(i64, Shape)> {
    let same = |a: usize, b: usize, items: &[(i64, Shape)]| {
        let stride = items[b].0 - items[a].0;
        (0..period)
            .all(|j| items[b + j].1 == items[a + j].1 && items[b + j].0 - items[a + j].0 == stride)
    };
    let mut out = Vec::with_capacity(items.len());
    let mut i = 0;
    while i < items.len() {
        let mut copies = 1;
        if i + 2 * period <= items.len() {
            let stride = items[i + period].0 - items[i].0;
            while i + (copies + 1) * period <= items.len()
                && same(i + (copies - 1) * period, i + copies * period, &items)
                && items[i + copies * period].0 - items[i + (copies - 1) * period].0 == stride
            {
                copies += 1;
            }
        }
        if copies >= 2 {
            let at = items[i].0;
            let stride = items[i + period].0 - at;
            let group: Vec<(i64, Shape)> = items[i..i + period]
                .iter()
                .map(|(o, x)| (o - at, x.clone()))
                .collect();
            let body = if period == 1 {
                group
                    .into_iter()
                    .next()
                    .map(|(_, x)| x)
                    .unwrap_or_else(Shape::empty)
            } else {
                Shape::Seq(group)
            };
            out.push((at, Shape::repeat(copies as i64, stride, body)));
            i += copies * period;
        } else {
            out.push(items[i].clone());
            i += 1;
        }
    }
    out
}

/// Builds shapes, asking the local MPI for each distinct old type's extents once.
#[derive(Default)]
pub struct Builder {
    seen: HashMap<Vec<u8>, Extents>,
}

type R<T> = std::result::Result<T, mpix_marshal::Error>;

impl Builder {
    pub fn extents(&mut self, node: &Node) -> R<Extents> {
        let key = mpix_marshal::write(Representation::External, node)?;
        if let Some(e) = self.seen.get(&key) {
            return Ok(*e);
        }
        let e = mpi::extents(node)?;
        self.seen.insert(key, e);
        Ok(e)
    }

    fn extent(&mut self, node: &Node) -> R<i64> {
        Ok(self.extents(node)?.extent)
    }

    /// `blocklength` copies of `old` placed one extent apart.
    fn block(&mut self, blocklength: i64, old: &Node) -> R<Shape> {
        let e = self.extent(old)?;
        let s = self.shape(old)?;
        Ok(Shape::repeat(blocklength, e, s))
    }

    pub fn shape(&mut self, node: &Node) -> R<Shape> {
        Ok(self.unnamed_shape(node)?.named_by(node))
    }

    fn unnamed_shape(&mut self, node: &Node) -> R<Shape> {
        Ok(match &node.kind {
            Kind::Named(p) if p.is_marker() => Shape::Marker {
                upper: *p == Predefined::UB,
            },
            Kind::Named(p) => Shape::Elem {
                label: p.mpi_name().to_string(),
                size: self.extents(node)?.size,
                basic: Some(*p),
            },
            Kind::F90Real { .. } | Kind::F90Complex { .. } | Kind::F90Integer { .. } => {
                let args: Vec<String> = describe::arguments(&node.kind)
                    .into_iter()
                    .map(|(a, v)| format!("{a}={v}"))
                    .collect();
                Shape::Elem {
                    label: format!("{}({})", describe::title(node), args.join(", ")),
                    size: self.extents(node)?.size,
                    basic: None,
                }
            }
            Kind::ValueIndex { .. } => Shape::Elem {
                label: describe::title(node).to_string(),
                size: self.extents(node)?.size,
                basic: None,
            },
            Kind::Dup(old) | Kind::Resized { old, .. } => self.shape(old)?,
            Kind::Contiguous { count, old } => self.block(*count, old)?,
            Kind::Vector {
                count,
                blocklength,
                stride,
                old,
            } => {
                let e = self.extent(old)?;
                Shape::repeat(
                    *count,
                    stride.saturating_mul(e),
                    self.block(*blocklength, old)?,
                )
            }
            Kind::Hvector {
                count,
                blocklength,
                stride,
                old,
                ..
            } => Shape::repeat(*count, *stride, self.block(*blocklength, old)?),
            Kind::Indexed {
                blocklengths,
                displacements,
                old,
            } => {
                let e = self.extent(old)?;
                self.blocks(blocklengths, displacements, e, old)?
            }
            Kind::Hindexed {
                blocklengths,
                displacements,
                old,
                ..
            } => self.blocks(blocklengths, displacements, 1, old)?,
            Kind::IndexedBlock {
                blocklength,
                displacements,
                old,
            } => {
                let e = self.extent(old)?;
                let b = vec![*blocklength; displacements.len()];
                self.blocks(&b, displacements, e, old)?
            }
            Kind::HindexedBlock {
                blocklength,
                displacements,
                old,
            } => {
                let b = vec![*blocklength; displacements.len()];
                self.blocks(&b, displacements, 1, old)?
            }
            Kind::Struct {
                blocklengths,
                displacements,
                types,
                ..
            } => {
                let mut items = Vec::with_capacity(types.len());
                for ((b, d), t) in blocklengths.iter().zip(displacements).zip(types) {
                    items.push((*d, self.block(*b, t)?));
                }
                Shape::seq(items)
            }
            Kind::Subarray {
                sizes,
                subsizes,
                starts,
                order,
                old,
            } => {
                let e = self.extent(old)?;
                let dims: Vec<(i64, Vec<(i64, i64)>)> = sizes
                    .iter()
                    .zip(subsizes)
                    .zip(starts)
                    .map(|((g, s), st)| (*g, vec![(*st, *s)]))
                    .collect();
                let inner = self.shape(old)?;
                grid(dims, *order, e, inner)
            }
            Kind::Darray {
                rank,
                gsizes,
                distribs,
                dargs,
                psizes,
                order,
                old,
                ..
            } => {
                let e = self.extent(old)?;
                // The process grid is row-major whatever the array order.
                let mut coords = vec![0; psizes.len()];
                let mut r = *rank;
                for (c, p) in coords.iter_mut().zip(psizes).rev() {
                    *c = r % p.max(&1);
                    r /= p.max(&1);
                }
                let dims = (0..gsizes.len())
                    .map(|i| {
                        let runs = owned(gsizes[i], distribs[i], dargs[i], psizes[i], coords[i]);
                        (gsizes[i], runs)
                    })
                    .collect();
                let inner = self.shape(old)?;
                grid_runs(dims, *order, e, inner)
            }
        })
    }

    fn blocks(&mut self, lens: &[i64], disps: &[i64], unit: i64, old: &Node) -> R<Shape> {
        let e = self.extent(old)?;
        let body = self.shape(old)?;
        let items = lens
            .iter()
            .zip(disps)
            .filter(|(b, _)| **b > 0)
            .map(|(b, d)| (d.saturating_mul(unit), Shape::repeat(*b, e, body.clone())))
            .collect();
        Ok(Shape::seq(items))
    }
}

/// The runs a darray's process owns in one dimension, as compact pieces:
/// (first index, element count, repeat count, repeat stride in indices).
type Runs = Vec<(i64, i64, i64, i64)>;

fn owned(g: i64, d: Distribution, darg: i64, p: i64, c: i64) -> Runs {
    let p = p.max(1);
    match d {
        Distribution::None => vec![(0, g, 1, 0)],
        Distribution::Block => {
            let b = if darg == -1 { (g + p - 1) / p } else { darg };
            let start = c * b;
            let end = (start + b).min(g);
            if start < end {
                vec![(start, end - start, 1, 0)]
            } else {
                vec![]
            }
        }
        Distribution::Cyclic => {
            let k = if darg == -1 { 1 } else { darg };
            let first = c * k;
            if first >= g {
                return vec![];
            }
            let cycle = p * k;
            let blocks = (g - first + cycle - 1) / cycle;
            let last = first + (blocks - 1) * cycle;
            let last_len = k.min(g - last);
            if last_len == k {
                vec![(first, k, blocks, cycle)]
            } else {
                let mut v = vec![];
                if blocks > 1 {
                    v.push((first, k, blocks - 1, cycle));
                }
                v.push((last, last_len, 1, 0));
                v
            }
        }
    }
}

/// A subarray: one run per dimension.
fn grid(dims: Vec<(i64, Vec<(i64, i64)>)>, order: Order, e: i64, inner: Shape) -> Shape {
    let dims = dims
        .into_iter()
        .map(|(g, runs)| (g, runs.into_iter().map(|(s, n)| (s, n, 1, 0)).collect()))
        .collect();
    grid_runs(dims, order, e, inner)
}

/// An array of `inner` (extent `e`) with global sizes and per dimension the
/// runs selected, in C or Fortran order: nested repetitions, the fastest
/// dimension innermost.
fn grid_runs(mut dims: Vec<(i64, Runs)>, order: Order, e: i64, inner: Shape) -> Shape {
    if order == Order::Fortran {
        dims.reverse();
    }
    // Strides, fastest dimension last.
    let mut strides = vec![e; dims.len()];
    for i in (0..dims.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1].saturating_mul(dims[i + 1].0);
    }
    let mut shape = inner;
    for (i, (_, runs)) in dims.iter().enumerate().rev() {
        let s = strides[i];
        let items = runs
            .iter()
            .map(|&(first, n, reps, every)| {
                (
                    first.saturating_mul(s),
                    Shape::repeat(
                        reps,
                        every.saturating_mul(s),
                        Shape::repeat(n, s, shape.clone()),
                    ),
                )
            })
            .collect();
        shape = Shape::seq(items);
    }
    shape
}
