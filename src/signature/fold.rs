//! Folding a monoid over the combiner tree, never expanding the typemap.
//!
//! Every signature function here (the element count, each hash family, the
//! flags) is a monoid homomorphism from signatures under concatenation: it
//! has a value for the empty signature and for one basic type, and the value
//! of a concatenation follows from the values of the parts. The tree then
//! gives the signature as
//!
//! * NAMED, F90: its basic types;
//! * DUP, RESIZED: the old type's signature (markers and bounds carry none);
//! * CONTIGUOUS, (H)VECTOR, (H)INDEXED, (H)INDEXED_BLOCK, SUBARRAY, DARRAY:
//!   the old type's signature repeated k times, where k is the number of
//!   old-type elements the constructor selects (count × blocklength, the sum
//!   of the blocklengths, the product of the subsizes, the elements one rank
//!   owns). Displacements and order only move data; they never reorder the
//!   signature, since a typemap's signature is read in constructor order;
//! * STRUCT: the concatenation, in member order, of each member's signature
//!   repeated blocklength times;
//! * VALUE_INDEX: the value type's, then the index type's.
//!
//! A repetition costs what the monoid's `repeat` costs (O(1) or O(log k)),
//! so the fold costs O(nodes + struct members + indexed blocks).

use super::basic::{basic_types, BasicType};
use super::darray::Darray;
use crate::error::{Error, Result};
use crate::format::codes::Predefined;
use crate::format::tree::{Kind, Node, MAX_DEPTH};

/// A function of type signatures that composes: the value of a
/// concatenation from the values of the parts.
pub trait SignatureMonoid: Clone {
    /// The value of the empty signature (the identity of `concat`).
    fn empty() -> Self;
    /// The value of a signature of one basic type.
    fn basic(b: BasicType) -> Self;
    /// The value of `self`'s signature followed by `next`'s.
    fn concat(&self, next: &Self) -> Self;
    /// The value of `self`'s signature repeated `k` times. The default is
    /// binary doubling, O(log k); families override it where their paper
    /// gives a closed form.
    fn repeat(&self, k: u128) -> Self {
        repeat_by_doubling(self, k)
    }
}

/// `x` concatenated `k` times, in O(log k) concatenations (Gropp §3.1).
/// Powers of one element commute, so the order of the doubling steps does
/// not matter.
pub fn repeat_by_doubling<M: SignatureMonoid>(x: &M, mut k: u128) -> M {
    let mut result = M::empty();
    if k == 0 {
        return result;
    }
    let mut power = x.clone();
    loop {
        if k & 1 == 1 {
            result = result.concat(&power);
        }
        k >>= 1;
        if k == 0 {
            return result;
        }
        power = power.concat(&power);
    }
}

/// The value of `node`'s type signature under the monoid `M`.
///
/// Errors: a tree deeper than `tree::MAX_DEPTH`, a negative count, an
/// unknown predefined code, or DARRAY arguments no MPI accepts. Messages
/// start with the node's path (`root.1.0`).
pub fn fold<M: SignatureMonoid>(node: &Node) -> Result<M> {
    walk(node, &mut Monoid::<M>(std::marker::PhantomData))
}

/// What a walk of the tree computes: a value per signature, built from
/// basic types by concatenation and repetition. The monoid folds and the
/// exact signature's builder are both algebras.
pub(crate) trait Algebra {
    type V;
    fn empty(&mut self) -> Self::V;
    fn basic(&mut self, b: BasicType) -> Result<Self::V>;
    /// The concatenation of `parts`, in order (taken out of the slice).
    fn seq(&mut self, parts: &mut [Self::V]) -> Result<Self::V>;
    fn repeat(&mut self, x: Self::V, k: u128) -> Result<Self::V>;
    /// Sees the value of each node the walk finishes (a leaf or a
    /// constructor), before its parent uses it. Most algebras ignore it;
    /// the prefix descent (`prefix`) keeps every node's value.
    fn visited(&mut self, _node: &Node, _value: &Self::V) {}
}

pub(crate) struct Monoid<M>(pub(crate) std::marker::PhantomData<M>);

impl<M: SignatureMonoid> Algebra for Monoid<M> {
    type V = M;
    fn empty(&mut self) -> M {
        M::empty()
    }
    fn basic(&mut self, b: BasicType) -> Result<M> {
        Ok(M::basic(b))
    }
    fn seq(&mut self, parts: &mut [M]) -> Result<M> {
        Ok(match parts {
            [] => M::empty(),
            [one] => one.clone(),
            [first, rest @ ..] => rest.iter().fold(first.clone(), |acc, p| acc.concat(p)),
        })
    }
    fn repeat(&mut self, x: M, k: u128) -> Result<M> {
        Ok(x.repeat(k))
    }
}

/// One constructor node being walked: its children (and a STRUCT's
/// blocklengths, to skip empty members), which child is next, and where its
/// children's values start in the shared value stack.
struct Frame<'a> {
    node: &'a Node,
    children: &'a [Node],
    blocklengths: Option<&'a [i64]>,
    next: usize,
    parts: usize,
}

/// Walks the tree bottom-up with explicit stacks on the heap, so that the
/// machine stack stays flat whatever the depth (`MAX_DEPTH` bounds it).
pub(crate) fn walk<A: Algebra>(root: &Node, alg: &mut A) -> Result<A::V> {
    let mut frames: Vec<Frame> = Vec::with_capacity(16);
    let mut parts: Vec<A::V> = Vec::with_capacity(16);
    let mut pending = Some(root);
    loop {
        if let Some(node) = pending.take() {
            if frames.len() >= MAX_DEPTH {
                return Err(at(
                    &frames,
                    Error::invalid(format!("the tree is deeper than {MAX_DEPTH} levels")),
                ));
            }
            match leaf(node, alg) {
                Some(v) => {
                    let v = v.map_err(|e| at(&frames, e))?;
                    alg.visited(node, &v);
                    parts.push(v)
                }
                None => {
                    let blocklengths = match &node.kind {
                        Kind::Struct {
                            blocklengths,
                            types,
                            ..
                        } => {
                            if blocklengths.len() != types.len() {
                                return Err(at(
                                    &frames,
                                    Error::invalid(
                                        "MPI_COMBINER_STRUCT: blocklengths and types differ in length",
                                    ),
                                ));
                            }
                            Some(blocklengths.as_slice())
                        }
                        _ => None,
                    };
                    frames.push(Frame {
                        node,
                        children: node.children(),
                        blocklengths,
                        next: 0,
                        parts: parts.len(),
                    })
                }
            }
        }
        let Some(top) = frames.last_mut() else {
            return Ok(parts.pop().expect("the root's value"));
        };
        match next_child(top) {
            Ok(Some(i)) => {
                top.next = i + 1;
                pending = Some(&top.children[i]);
                continue;
            }
            Ok(None) => {}
            Err(e) => return Err(at_node(&frames, e)),
        }
        let frame = frames.pop().expect("a frame");
        let value = finish(frame.node, &mut parts[frame.parts..], alg);
        parts.truncate(frame.parts);
        match value {
            Ok(v) => {
                alg.visited(frame.node, &v);
                parts.push(v)
            }
            Err(e) => {
                frames.push(frame);
                return Err(at_node(&frames, e));
            }
        }
    }
}

/// The value of a leaf (NAMED, F90), or None for a constructor.
fn leaf<A: Algebra>(node: &Node, alg: &mut A) -> Option<Result<A::V>> {
    let b = match &node.kind {
        Kind::Named(p) => return Some(named(*p, alg)),
        Kind::F90Real { p, r } => BasicType::F90Real { p: *p, r: *r },
        Kind::F90Complex { p, r } => BasicType::F90Complex { p: *p, r: *r },
        Kind::F90Integer { r } => BasicType::F90Integer { r: *r },
        _ => return None,
    };
    Some(alg.basic(b))
}

/// The value of a predefined type (a pair type is two basic types).
pub(crate) fn named_value<M: SignatureMonoid>(p: Predefined) -> Result<M> {
    named(p, &mut Monoid::<M>(std::marker::PhantomData))
}

fn named<A: Algebra>(p: Predefined, alg: &mut A) -> Result<A::V> {
    let b = basic_types(p)?;
    match b.as_slice() {
        [] => Ok(alg.empty()),
        [x] => alg.basic(*x),
        [x, y] => {
            let mut pair = [alg.basic(*x)?, alg.basic(*y)?];
            alg.seq(&mut pair)
        }
        _ => unreachable!("a predefined type has at most two basic types"),
    }
}

/// The index of the next child of `frame` to walk: a STRUCT skips members
/// of blocklength 0 (they contribute nothing).
#[inline]
fn next_child(frame: &Frame) -> Result<Option<usize>> {
    let from = frame.next;
    match frame.blocklengths {
        Some(blocklengths) => {
            for (i, &b) in blocklengths.iter().enumerate().skip(from) {
                if b != 0 {
                    count_arg(b, || "MPI_COMBINER_STRUCT", "blocklength")?;
                    return Ok(Some(i));
                }
            }
            Ok(None)
        }
        None => Ok((from < frame.children.len()).then_some(from)),
    }
}

/// A constructor's value from its walked children's values.
fn finish<A: Algebra>(node: &Node, parts: &mut [A::V], alg: &mut A) -> Result<A::V> {
    match &node.kind {
        Kind::Struct { blocklengths, .. } => {
            let mut members = blocklengths.iter().filter(|&&b| b != 0);
            for part in parts.iter_mut() {
                let b = *members.next().expect("one part per member") as u128;
                if b != 1 {
                    let v = std::mem::replace(part, alg.empty());
                    *part = alg.repeat(v, b)?;
                }
            }
            alg.seq(parts)
        }
        Kind::ValueIndex { .. } => alg.seq(parts),
        _ => {
            let mut acc = std::mem::replace(&mut parts[0], alg.empty());
            let mut failed = None;
            for_each_repetition(node, &mut |k| {
                if failed.is_none() {
                    let v = std::mem::replace(&mut acc, alg.empty());
                    match alg.repeat(v, k) {
                        Ok(r) => acc = r,
                        Err(e) => failed = Some(e),
                    }
                }
            })?;
            match failed {
                Some(e) => Err(e),
                None => Ok(acc),
            }
        }
    }
}

/// `e` located at the node the innermost frame is walking into.
fn at(frames: &[Frame], e: Error) -> Error {
    let mut path = String::from("root");
    for f in frames {
        path.push_str(&format!(".{}", f.next - 1));
    }
    locate(e, &path)
}

/// `e` located at the innermost frame's own node.
fn at_node(frames: &[Frame], e: Error) -> Error {
    at(&frames[..frames.len() - 1], e)
}

fn locate(e: Error, path: &str) -> Error {
    match e {
        Error::InvalidArgument(m) => Error::InvalidArgument(format!("{path}: {m}")),
        Error::Unsupported(m) => Error::Unsupported(format!("{path}: {m}")),
        other => other,
    }
}

/// `v` as a count of `combiner`'s argument `arg` (the message is built
/// only on failure).
#[inline]
fn count_arg(v: i64, combiner: impl Fn() -> &'static str, arg: &str) -> Result<u128> {
    if v >= 0 {
        Ok(v as u128)
    } else {
        Err(Error::invalid(format!(
            "{}: {arg} {v} is negative",
            combiner()
        )))
    }
}

/// Calls `f` with factors whose product is the number of old-type elements
/// a one-child constructor selects (no call for DUP and RESIZED, which
/// select the old type once). Factors are multiplied together while the
/// product fits a u128, so most constructors make one call.
#[inline(never)]
pub(crate) fn for_each_repetition(node: &Node, f: &mut dyn FnMut(u128)) -> Result<()> {
    let mut product = Factors::new(f);
    let mut factor = |k: u128| product.push(k);
    let what = || node.combiner().mpi_name();
    let nn = |v: i64, arg: &str| count_arg(v, what, arg);
    match &node.kind {
        Kind::Dup(_) | Kind::Resized { .. } => {}
        Kind::Contiguous { count, .. } => factor(nn(*count, "count")?),
        Kind::Vector {
            count, blocklength, ..
        }
        | Kind::Hvector {
            count, blocklength, ..
        } => {
            factor(nn(*count, "count")?);
            factor(nn(*blocklength, "blocklength")?);
        }
        Kind::Indexed { blocklengths, .. } | Kind::Hindexed { blocklengths, .. } => {
            let mut sum: u128 = 0;
            for &b in blocklengths {
                // At most 2^64 blocks of at most 2^63: the sum fits.
                sum += nn(b, "blocklength")?;
            }
            factor(sum);
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
            factor(nn(*blocklength, "blocklength")?);
            factor(displacements.len() as u128);
        }
        Kind::Subarray { subsizes, .. } => {
            if subsizes.is_empty() {
                return Err(Error::invalid(format!(
                    "{}: ndims must be at least 1",
                    what()
                )));
            }
            for &s in subsizes {
                factor(nn(s, "subsize")?);
            }
        }
        Kind::Darray {
            size,
            rank,
            gsizes,
            distribs,
            dargs,
            psizes,
            ..
        } => {
            Darray {
                size: *size,
                rank: *rank,
                gsizes,
                distribs,
                dargs,
                psizes,
            }
            .for_each_local_count(&mut factor)?;
        }
        Kind::Named(_)
        | Kind::F90Real { .. }
        | Kind::F90Complex { .. }
        | Kind::F90Integer { .. }
        | Kind::Struct { .. }
        | Kind::ValueIndex { .. } => {
            unreachable!("not a one-child constructor")
        }
    }
    product.finish();
    Ok(())
}

/// Repetition factors multiplied together while the product fits a u128;
/// each full product goes to `f`. A repetition by the product is then the
/// repetitions by its factors, whatever their size (a saturated product
/// would describe another signature).
pub(crate) struct Factors<'a> {
    product: u128,
    f: &'a mut dyn FnMut(u128),
}

impl<'a> Factors<'a> {
    pub fn new(f: &'a mut dyn FnMut(u128)) -> Factors<'a> {
        Factors { product: 1, f }
    }

    pub fn push(&mut self, k: u128) {
        match self.product.checked_mul(k) {
            Some(p) => self.product = p,
            None => {
                (self.f)(self.product);
                self.product = k;
            }
        }
    }

    /// Hands over what is left (nothing when it is 1).
    pub fn finish(self) {
        if self.product != 1 {
            (self.f)(self.product);
        }
    }
}

/// The number of basic elements; `None` once it exceeds `u128::MAX`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Count(pub Option<u128>);

impl SignatureMonoid for Count {
    fn empty() -> Self {
        Count(Some(0))
    }
    fn basic(_: BasicType) -> Self {
        Count(Some(1))
    }
    fn concat(&self, next: &Self) -> Self {
        Count(self.0.zip(next.0).and_then(|(a, b)| a.checked_add(b)))
    }
    fn repeat(&self, k: u128) -> Self {
        Count(match (self.0, k) {
            (_, 0) | (Some(0), _) => Some(0),
            (a, k) => a.and_then(|a| a.checked_mul(k)),
        })
    }
}

/// Whether the signature holds an `MPI_BYTE` or an `MPI_PACKED` anywhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Untyped {
    pub byte: bool,
    pub packed: bool,
}

impl SignatureMonoid for Untyped {
    fn empty() -> Self {
        Untyped::default()
    }
    fn basic(b: BasicType) -> Self {
        Untyped {
            byte: b == BasicType::Predefined(Predefined(0x247)),
            packed: b == BasicType::Predefined(Predefined(0x207)),
        }
    }
    fn concat(&self, next: &Self) -> Self {
        Untyped {
            byte: self.byte || next.byte,
            packed: self.packed || next.packed,
        }
    }
    fn repeat(&self, k: u128) -> Self {
        if k == 0 {
            Untyped::default()
        } else {
            *self
        }
    }
}

/// Two functions of the signature computed in one walk.
impl<A: SignatureMonoid, B: SignatureMonoid> SignatureMonoid for (A, B) {
    fn empty() -> Self {
        (A::empty(), B::empty())
    }
    fn basic(b: BasicType) -> Self {
        (A::basic(b), B::basic(b))
    }
    fn concat(&self, next: &Self) -> Self {
        (self.0.concat(&next.0), self.1.concat(&next.1))
    }
    fn repeat(&self, k: u128) -> Self {
        (self.0.repeat(k), self.1.repeat(k))
    }
}
