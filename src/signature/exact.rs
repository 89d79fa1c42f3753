//! The exact type signature in a compressed form, for exact comparison.
//!
//! A signature is stored as a small DAG of three kinds of items, hash-consed
//! so that equal items are one item:
//!
//! * `Basic(b)`: one element;
//! * `Repeat(body, k)`: the body's sequence k ≥ 2 times (never of a Repeat);
//! * `Seq(items)`: a concatenation of at least two items, none a Seq, no
//!   two neighbours with the same base (they are merged into a Repeat), and
//!   not itself a power of a shorter list (that becomes a Repeat of the
//!   shorter Seq).
//!
//! Every one-child constructor is a Repeat of its old type (displacements
//! only move data), a STRUCT a Seq, so the DAG has at most one item per
//! tree node and struct member, whatever the counts.
//!
//! [`Signature::first_difference`] finds the first index where two
//! signatures differ without expanding repeats when it can: equal items
//! (same id) at the same phase are skipped whole, and two repeats with
//! periods p and q are decided on their first p + q - gcd(p, q) elements,
//! since by the Fine–Wilf theorem two sequences of periods p and q that
//! agree that long agree everywhere both are defined. Comparing two
//! signatures costs about the size of their DAGs when they share structure
//! or are periodic in the same way, and at worst the number of runs of
//! basic types up to the first difference.

use super::basic::BasicType;
use super::fold::{walk, Algebra};
use crate::error::{Error, Result};
use crate::format::tree::Node;
use std::collections::HashMap;

type Id = u32;

#[derive(Debug, Clone, Copy)]
enum Item {
    Basic(BasicType),
    Repeat {
        body: Id,
        count: u128,
        len: u128,
    },
    /// Children in `Arena::kids[start..end]`.
    Seq {
        start: u32,
        end: u32,
        len: u128,
    },
}

/// A child of a Seq and the offset just past it within the Seq.
#[derive(Debug, Clone, Copy)]
struct Kid {
    id: Id,
    end: u128,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Key {
    Basic(BasicType),
    Repeat(Id, u128),
    Seq(Box<[Id]>),
}

#[derive(Debug, Clone, Default)]
struct Arena {
    items: Vec<Item>,
    kids: Vec<Kid>,
    intern: HashMap<Key, Id>,
}

fn too_long() -> Error {
    Error::unsupported("the type signature has more than 2^128 - 1 elements")
}

impl Arena {
    fn len(&self, id: Id) -> u128 {
        match self.items[id as usize] {
            Item::Basic(_) => 1,
            Item::Repeat { len, .. } | Item::Seq { len, .. } => len,
        }
    }

    fn intern(&mut self, key: Key, make: impl FnOnce(&mut Arena) -> Item) -> Id {
        if let Some(&id) = self.intern.get(&key) {
            return id;
        }
        let item = make(self);
        let id = self.items.len() as Id;
        self.items.push(item);
        self.intern.insert(key, id);
        id
    }

    fn basic(&mut self, b: BasicType) -> Id {
        self.intern(Key::Basic(b), |_| Item::Basic(b))
    }

    /// `x` repeated k times; None when k is 0.
    fn repeat(&mut self, x: Id, k: u128) -> Result<Option<Id>> {
        if k == 0 {
            return Ok(None);
        }
        if k == 1 {
            return Ok(Some(x));
        }
        let (body, count) = match self.items[x as usize] {
            Item::Repeat { body, count, .. } => (body, count.checked_mul(k).ok_or_else(too_long)?),
            _ => (x, k),
        };
        let len = count.checked_mul(self.len(body)).ok_or_else(too_long)?;
        Ok(Some(self.intern(Key::Repeat(body, count), |_| {
            Item::Repeat { body, count, len }
        })))
    }

    /// The concatenation of `parts`, normalised; None when empty.
    fn seq(&mut self, parts: &[Id]) -> Result<Option<Id>> {
        // Flatten nested Seqs and merge neighbours with the same base.
        let mut runs: Vec<(Id, u128)> = Vec::with_capacity(parts.len());
        let mut push = |arena: &Arena, id: Id| -> Result<()> {
            let (base, m) = match arena.items[id as usize] {
                Item::Repeat { body, count, .. } => (body, count),
                _ => (id, 1),
            };
            match runs.last_mut() {
                Some(last) if last.0 == base => {
                    last.1 = last.1.checked_add(m).ok_or_else(too_long)?;
                }
                _ => runs.push((base, m)),
            }
            Ok(())
        };
        for &id in parts {
            if let Item::Seq { start, end, .. } = self.items[id as usize] {
                for k in start..end {
                    push(self, self.kids[k as usize].id)?;
                }
            } else {
                push(self, id)?;
            }
        }
        if runs.is_empty() {
            return Ok(None);
        }
        // A list that is a power of a shorter one becomes a Repeat of it.
        let period = smallest_period(&runs);
        let reps = (runs.len() / period) as u128;
        runs.truncate(period);
        let mut ids = Vec::with_capacity(runs.len());
        for &(base, m) in &runs {
            ids.push(self.repeat(base, m)?.expect("m >= 1"));
        }
        let one = if ids.len() == 1 {
            ids[0]
        } else {
            let mut len: u128 = 0;
            for &id in &ids {
                len = len.checked_add(self.len(id)).ok_or_else(too_long)?;
            }
            let key = Key::Seq(ids.clone().into_boxed_slice());
            self.intern(key, |arena| {
                let start = arena.kids.len() as u32;
                let mut end = 0u128;
                for &id in &ids {
                    end += arena.len(id);
                    arena.kids.push(Kid { id, end });
                }
                Item::Seq {
                    start,
                    end: arena.kids.len() as u32,
                    len,
                }
            })
        };
        self.repeat(one, reps)
    }

    /// Copies `other`'s item `id` (and what it refers to) into this arena,
    /// children first, with an explicit stack.
    fn import(&mut self, other: &Arena, id: Id, memo: &mut HashMap<Id, Id>) -> Result<Id> {
        let mut stack = vec![id];
        while let Some(&top) = stack.last() {
            if memo.contains_key(&top) {
                stack.pop();
                continue;
            }
            let needed: Vec<Id> = match other.items[top as usize] {
                Item::Basic(_) => vec![],
                Item::Repeat { body, .. } => vec![body],
                Item::Seq { start, end, .. } => other.kids[start as usize..end as usize]
                    .iter()
                    .map(|k| k.id)
                    .collect(),
            };
            let missing: Vec<Id> = needed
                .iter()
                .copied()
                .filter(|c| !memo.contains_key(c))
                .collect();
            if !missing.is_empty() {
                stack.extend(missing);
                continue;
            }
            let mine = match other.items[top as usize] {
                Item::Basic(b) => self.basic(b),
                Item::Repeat { body, count, .. } => {
                    self.repeat(memo[&body], count)?.expect("count >= 2")
                }
                Item::Seq { .. } => {
                    let parts: Vec<Id> = needed.iter().map(|c| memo[c]).collect();
                    self.seq(&parts)?.expect("a Seq is not empty")
                }
            };
            memo.insert(top, mine);
            stack.pop();
        }
        Ok(memo[&id])
    }

    /// The element at `index` < len(id).
    fn get(&self, mut id: Id, mut index: u128) -> BasicType {
        loop {
            match self.items[id as usize] {
                Item::Basic(b) => return b,
                Item::Repeat { body, .. } => {
                    index %= self.len(body);
                    id = body;
                }
                Item::Seq { start, end, .. } => {
                    let kids = &self.kids[start as usize..end as usize];
                    let k = kids.partition_point(|kid| kid.end <= index);
                    if k > 0 {
                        index -= kids[k - 1].end;
                    }
                    id = kids[k].id;
                }
            }
        }
    }
}

/// The arena builds signatures in the tree walk: None is the empty one.
impl Algebra for Arena {
    type V = Option<Id>;
    fn empty(&mut self) -> Option<Id> {
        None
    }
    fn basic(&mut self, b: BasicType) -> Result<Option<Id>> {
        Ok(Some(Arena::basic(self, b)))
    }
    fn seq(&mut self, parts: &mut [Option<Id>]) -> Result<Option<Id>> {
        let ids: Vec<Id> = parts.iter().flatten().copied().collect();
        Arena::seq(self, &ids)
    }
    fn repeat(&mut self, x: Option<Id>, k: u128) -> Result<Option<Id>> {
        match x {
            Some(x) => Arena::repeat(self, x, k),
            None => Ok(None),
        }
    }
}

/// The smallest p dividing runs.len() such that runs is a power of its
/// first p entries (the prefix function of Knuth, Morris and Pratt).
fn smallest_period(runs: &[(Id, u128)]) -> usize {
    let n = runs.len();
    let mut fail = vec![0usize; n];
    for i in 1..n {
        let mut k = fail[i - 1];
        while k > 0 && runs[i] != runs[k] {
            k = fail[k - 1];
        }
        if runs[i] == runs[k] {
            k += 1;
        }
        fail[i] = k;
    }
    let p = n - fail[n - 1];
    if n % p == 0 {
        p
    } else {
        n
    }
}

/// An exact type signature, compressed.
#[derive(Debug, Clone)]
pub struct Signature {
    arena: Arena,
    root: Option<Id>,
}

/// Where two signatures first differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Difference {
    /// The element index (from 0) of the first difference.
    pub index: u128,
    /// The first signature's element there; None when it has ended.
    pub left: Option<BasicType>,
    /// The second signature's element there; None when it has ended.
    pub right: Option<BasicType>,
}

impl Signature {
    /// The exact signature of `node`, in O(nodes + struct members + indexed
    /// blocks) time and space, whatever the counts.
    pub fn new(node: &Node) -> Result<Signature> {
        let mut arena = Arena::default();
        let root = walk(node, &mut arena)?;
        Ok(Signature { arena, root })
    }

    /// The number of elements.
    pub fn len(&self) -> u128 {
        self.root.map_or(0, |r| self.arena.len(r))
    }

    pub fn is_empty(&self) -> bool {
        self.root.is_none()
    }

    /// The number of items of the compressed form.
    pub fn compressed_size(&self) -> usize {
        self.arena.items.len() + self.arena.kids.len()
    }

    /// The element at `index`, if the signature is that long.
    pub fn get(&self, index: u128) -> Option<BasicType> {
        let root = self.root?;
        (index < self.arena.len(root)).then(|| self.arena.get(root, index))
    }

    /// Maximal runs of one basic type, in order: `contiguous(10^12,
    /// MPI_INT)` is one run.
    pub fn runs(&self) -> Runs<'_> {
        Runs {
            arena: &self.arena,
            stack: self
                .root
                .map(|r| Frame::Repeat { body: r, left: 1 })
                .into_iter()
                .collect(),
            pending: None,
        }
    }

    /// Where `self` and `other` first differ; None when they are equal.
    /// A signature that is a proper prefix of the other differs at its end.
    pub fn first_difference(&self, other: &Signature) -> Result<Option<Difference>> {
        let mut arena = self.arena.clone();
        let b = match other.root {
            Some(r) => Some(arena.import(&other.arena, r, &mut HashMap::new())?),
            None => None,
        };
        compare(&arena, self.root, b)
    }
}

/// Where the signatures of `a` and `b` first differ; None when equal.
pub fn first_difference(a: &Node, b: &Node) -> Result<Option<Difference>> {
    let mut arena = Arena::default();
    let ra = walk(a, &mut arena)?;
    let rb = walk(b, &mut arena)?;
    compare(&arena, ra, rb)
}

fn compare(arena: &Arena, a: Option<Id>, b: Option<Id>) -> Result<Option<Difference>> {
    let la = a.map_or(0, |r| arena.len(r));
    let lb = b.map_or(0, |r| arena.len(r));
    let common = la.min(lb);
    let at = |root: Option<Id>, len: u128, i: u128| (i < len).then(|| arena.get(root.unwrap(), i));
    let found = match (a, b) {
        (Some(x), Some(y)) => Cmp { arena }.diff(x, 0, y, 0, common),
        _ => None,
    };
    let index = match found {
        Some(i) => i,
        None if la == lb => return Ok(None),
        None => common,
    };
    Ok(Some(Difference {
        index,
        left: at(a, la, index),
        right: at(b, lb, index),
    }))
}

struct Cmp<'a> {
    arena: &'a Arena,
}

/// Which side of a comparison a split walks the pieces of.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Left,
    Right,
}

/// A comparison of `[off, off + len)` of a Seq or Repeat item (`id`, on
/// `side`) against the other side's `other` from `other_off`, piece by
/// piece; `base` is where the range starts in the whole comparison.
struct Split {
    side: Side,
    id: Id,
    off: u128,
    len: u128,
    done: u128,
    /// The next child of a Seq.
    kid: usize,
    other: Id,
    other_off: u128,
    base: u128,
}

/// What comparing two items over a range comes to without looking inside.
enum Step {
    Equal,
    DiffersAt(u128),
    /// Walk the pieces of `id` on `side` over the first `len` elements
    /// (the whole range, or a Fine–Wilf window of it).
    Split {
        side: Side,
        len: u128,
    },
}

impl Cmp<'_> {
    /// The first i < len with x[xo + i] != y[yo + i]. Iterative: a stack of
    /// splits, each walking the pieces of one side's item in order, so the
    /// first difference found is the first one.
    fn diff(&self, x: Id, xo: u128, y: Id, yo: u128, len: u128) -> Option<u128> {
        let mut stack: Vec<Split> = Vec::new();
        let mut task = Some((x, xo, y, yo, len, 0u128));
        loop {
            if let Some((x, xo, y, yo, len, base)) = task.take() {
                match self.step(x, xo, y, yo, len) {
                    Step::Equal => {}
                    Step::DiffersAt(i) => return Some(base + i),
                    Step::Split { side, len } => {
                        let (id, off, other, other_off) = match side {
                            Side::Left => (x, xo, y, yo),
                            Side::Right => (y, yo, x, xo),
                        };
                        let kid = match self.arena.items[id as usize] {
                            Item::Seq { start, end, .. } => self.arena.kids
                                [start as usize..end as usize]
                                .partition_point(|k| k.end <= off),
                            _ => 0,
                        };
                        stack.push(Split {
                            side,
                            id,
                            off,
                            len,
                            done: 0,
                            kid,
                            other,
                            other_off,
                            base,
                        });
                    }
                }
            }
            let top = stack.last_mut()?;
            if top.done == top.len {
                stack.pop();
                continue;
            }
            // The next piece of the top split.
            let at = top.off + top.done;
            let (piece, piece_off, n) = match self.arena.items[top.id as usize] {
                Item::Seq { start, end, .. } => {
                    let kids = &self.arena.kids[start as usize..end as usize];
                    let k = top.kid;
                    top.kid += 1;
                    let begin = if k == 0 { 0 } else { kids[k - 1].end };
                    (
                        kids[k].id,
                        at - begin,
                        (kids[k].end - at).min(top.len - top.done),
                    )
                }
                Item::Repeat { body, .. } => {
                    let lb = self.arena.len(body);
                    let o = at % lb;
                    (body, o, (lb - o).min(top.len - top.done))
                }
                Item::Basic(_) => unreachable!("a basic item is never split"),
            };
            let other_at = top.other_off + top.done;
            let base = top.base + top.done;
            top.done += n;
            task = Some(match top.side {
                Side::Left => (piece, piece_off, top.other, other_at, n, base),
                Side::Right => (top.other, other_at, piece, piece_off, n, base),
            });
        }
    }

    fn step(&self, x: Id, xo: u128, y: Id, yo: u128, len: u128) -> Step {
        if len == 0 || (x == y && xo == yo) {
            return Step::Equal;
        }
        let whole = |side| Step::Split { side, len };
        match (self.arena.items[x as usize], self.arena.items[y as usize]) {
            (Item::Seq { .. }, _) => whole(Side::Left),
            (_, Item::Seq { .. }) => whole(Side::Right),
            (Item::Basic(a), Item::Basic(b)) => {
                if a == b {
                    Step::Equal
                } else {
                    Step::DiffersAt(0)
                }
            }
            (Item::Repeat { .. }, Item::Basic(_)) => whole(Side::Left),
            (Item::Basic(_), Item::Repeat { .. }) => whole(Side::Right),
            (Item::Repeat { body: p, .. }, Item::Repeat { body: q, .. }) => {
                let (lp, lq) = (self.arena.len(p), self.arena.len(q));
                if p == q && xo % lp == yo % lq {
                    return Step::Equal;
                }
                // Fine–Wilf: agreeing on p + q - gcd(p, q) elements settles
                // the rest. Split the side with the longer period: at most
                // four pieces of it cover the window.
                let bound = lp.checked_add(lq).map_or(u128::MAX, |s| s - gcd(lp, lq));
                let side = if lp >= lq { Side::Left } else { Side::Right };
                Step::Split {
                    side,
                    len: len.min(bound),
                }
            }
        }
    }
}

fn gcd(a: u128, b: u128) -> u128 {
    let (mut a, mut b) = (a, b);
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The runs of a signature: (basic type, how many in a row), maximal.
pub struct Runs<'a> {
    arena: &'a Arena,
    stack: Vec<Frame>,
    pending: Option<(BasicType, u128)>,
}

enum Frame {
    Seq { next: u32, end: u32 },
    Repeat { body: Id, left: u128 },
}

impl Runs<'_> {
    /// The next run of one item (not yet merged with its neighbours).
    fn atom(&mut self) -> Option<(BasicType, u128)> {
        let arena = self.arena;
        loop {
            let id = match self.stack.last_mut()? {
                Frame::Seq { next, end } => {
                    if next == end {
                        self.stack.pop();
                        continue;
                    }
                    *next += 1;
                    arena.kids[*next as usize - 1].id
                }
                Frame::Repeat { body, left } => {
                    if *left == 0 {
                        self.stack.pop();
                        continue;
                    }
                    *left -= 1;
                    *body
                }
            };
            match arena.items[id as usize] {
                Item::Basic(b) => return Some((b, 1)),
                Item::Repeat { body, count, .. } => {
                    if let Item::Basic(b) = arena.items[body as usize] {
                        return Some((b, count));
                    }
                    self.stack.push(Frame::Repeat { body, left: count });
                }
                Item::Seq { start, end, .. } => self.stack.push(Frame::Seq { next: start, end }),
            }
        }
    }
}

impl Iterator for Runs<'_> {
    type Item = (BasicType, u128);

    fn next(&mut self) -> Option<(BasicType, u128)> {
        let (b, mut n) = self.pending.take().or_else(|| self.atom())?;
        while let Some((c, m)) = self.atom() {
            if c == b {
                n += m;
            } else {
                self.pending = Some((c, m));
                break;
            }
        }
        Some((b, n))
    }
}
