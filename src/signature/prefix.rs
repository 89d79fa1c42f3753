//! Prefix signatures: a monoid's value on the first n basic elements of
//! `count` consecutive copies of a type's signature.
//!
//! A receive may take fewer elements than its (count, datatype) allows, so
//! a receiver compares the sender's hash with the hash of that prefix
//! (Gropp 2000 §4). The prefix is found by descending the tree, never by
//! expanding it: at a node whose signature is its members' signatures in
//! order (a struct's members, each repeated blocklength times; a one-child
//! constructor's child, repeated), whole members are taken with `repeat`,
//! then the descent continues into the one member the prefix ends inside.
//! Every node's full value comes from one walk (`fold::walk`), kept per
//! node, so the whole costs O(nodes + struct members) for that walk plus
//! O(depth · (log count + members of a struct on the path)) for the
//! descent.

use super::basic::basic_types;
use super::fold::{walk, Algebra, Count, Monoid, SignatureMonoid};
use crate::error::{Error, Result};
use crate::format::tree::{Kind, Node};
use crate::signature::BasicType;
use std::collections::HashMap;
use std::iter::once;

/// The value under `M` of the first `n` basic elements of `count`
/// consecutive copies of `node`'s signature. `n = 0` gives `M::empty()`;
/// `n` = the whole length gives the fold of `contiguous(count, node)`.
///
/// Errors: those of `fold`, and `n` beyond `count` × the signature's
/// element count.
pub fn fold_prefix<M: SignatureMonoid>(node: &Node, count: u128, n: u128) -> Result<M> {
    let values = Values::<M>::of(node)?;
    check_length(count, values.get(node)?.0 .0, n)?;
    let mut acc = M::empty();
    let mut next = take(once((Some(count), node)), n, &values, &mut acc)?;
    while let Some((node, rest)) = next {
        next = match &node.kind {
            // Only a pair type has a strict prefix of more than nothing.
            Kind::Named(p) => {
                for b in basic_types(*p)?.as_slice().iter().take(small(rest)) {
                    acc = acc.concat(&M::basic(*b));
                }
                None
            }
            Kind::Struct {
                blocklengths,
                types,
                ..
            } => {
                // The walk checked the lengths and that no blocklength is
                // negative; empty members were not walked, nor are they here.
                let members = blocklengths
                    .iter()
                    .zip(types)
                    .filter(|(&b, _)| b != 0)
                    .map(|(&b, t)| (Some(b as u128), t));
                take(members, rest, &values, &mut acc)?
            }
            Kind::ValueIndex { pair } => {
                take(pair.iter().map(|t| (Some(1), t)), rest, &values, &mut acc)?
            }
            // A one-child constructor repeats its child: how many times
            // does not matter, since the prefix ends inside the node.
            _ => match node.children() {
                [old] => take(once((None, old)), rest, &values, &mut acc)?,
                _ => return Err(lost()),
            },
        };
    }
    Ok(acc)
}

/// An error unless `n` ≤ `count` × `per_copy` (`None`: more elements than
/// a u128 holds, so any `n` fits).
pub(crate) fn check_length(count: u128, per_copy: Option<u128>, n: u128) -> Result<()> {
    let Some(c) = per_copy else { return Ok(()) };
    match c.checked_mul(count) {
        Some(total) if n > total => Err(Error::invalid(format!(
            "a prefix of {n} elements is longer than the signature of {count} copies of \
             {c} elements ({total})"
        ))),
        _ => Ok(()),
    }
}

/// Takes the first `rest` elements of the concatenation of `members`,
/// each a node repeated some number of times (`None`: more than the prefix
/// needs), into `acc`. Returns the member the prefix ends inside and how
/// many of its elements remain, or None when the prefix ends at a member's
/// boundary.
fn take<'a, M: SignatureMonoid>(
    members: impl Iterator<Item = (Option<u128>, &'a Node)>,
    mut rest: u128,
    values: &Values<M>,
    acc: &mut M,
) -> Result<Option<(&'a Node, u128)>> {
    for (copies, member) in members {
        if rest == 0 {
            return Ok(None);
        }
        let (count, value) = values.get(member)?;
        // A member of more than 2^128 - 1 elements holds the whole prefix.
        let Some(c) = count.0 else {
            return Ok(Some((member, rest)));
        };
        if c == 0 {
            continue;
        }
        let whole = rest / c;
        match copies {
            // k · c ≤ whole · c ≤ rest: no overflow.
            Some(k) if k <= whole => {
                *acc = acc.concat(&value.repeat(k));
                rest -= k * c;
            }
            _ => {
                if whole > 0 {
                    *acc = acc.concat(&value.repeat(whole));
                }
                rest %= c;
                return Ok((rest > 0).then_some((member, rest)));
            }
        }
    }
    if rest == 0 {
        Ok(None)
    } else {
        Err(lost())
    }
}

/// A count that came from a node of at most two elements.
fn small(n: u128) -> usize {
    n.min(2) as usize
}

/// The descent left the signature: a bug, since the length was checked
/// against the same counts.
fn lost() -> Error {
    Error::invalid("the prefix descent ran past the signature (a bug in mpix-marshal)")
}

/// The element count and value of every node of one tree, from one walk,
/// by node address (the tree is borrowed for as long as this lives).
struct Values<M> {
    by_node: HashMap<*const Node, (Count, M)>,
}

impl<M: SignatureMonoid> Values<M> {
    fn of(root: &Node) -> Result<Values<M>> {
        let mut keep = Keep {
            inner: Monoid::<(Count, M)>(std::marker::PhantomData),
            by_node: HashMap::new(),
        };
        walk(root, &mut keep)?;
        Ok(Values {
            by_node: keep.by_node,
        })
    }

    fn get(&self, node: &Node) -> Result<&(Count, M)> {
        self.by_node.get(&(node as *const Node)).ok_or_else(lost)
    }
}

/// The monoid fold of (count, M), keeping each node's value on the way.
struct Keep<M> {
    inner: Monoid<(Count, M)>,
    by_node: HashMap<*const Node, (Count, M)>,
}

impl<M: SignatureMonoid> Algebra for Keep<M> {
    type V = (Count, M);
    fn empty(&mut self) -> Self::V {
        self.inner.empty()
    }
    fn basic(&mut self, b: BasicType) -> Result<Self::V> {
        self.inner.basic(b)
    }
    fn seq(&mut self, parts: &mut [Self::V]) -> Result<Self::V> {
        self.inner.seq(parts)
    }
    fn repeat(&mut self, x: Self::V, k: u128) -> Result<Self::V> {
        self.inner.repeat(x, k)
    }
    fn visited(&mut self, node: &Node, value: &Self::V) {
        self.by_node.insert(node as *const Node, value.clone());
    }
}
