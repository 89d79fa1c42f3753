//! Where element `index` of one copy of a type sits in its constructor
//! tree, in short words: `member 1 > [2]` is copy 2 of the block of struct
//! member 1. Found by counting signature elements level by level (the
//! library's counts, cached per node), never by expanding.

use mpix_marshal::testing::signature::basic_types;
use mpix_marshal::{Kind, Node, Order};
use std::collections::HashMap;

type R<T> = std::result::Result<T, mpix_marshal::Error>;

/// Finds element paths in one tree.
pub struct Locator<'a> {
    root: &'a Node,
    counts: HashMap<*const Node, u128>,
}

impl<'a> Locator<'a> {
    pub fn new(root: &'a Node) -> Locator<'a> {
        Locator {
            root,
            counts: HashMap::new(),
        }
    }

    fn count(&mut self, n: &Node) -> R<u128> {
        if let Some(c) = self.counts.get(&(n as *const Node)) {
            return Ok(*c);
        }
        let c = mpix_marshal::tree_signature_count(n)?;
        self.counts.insert(n as *const Node, c);
        Ok(c)
    }

    /// The steps down to signature element `index` of the root, and how
    /// many signature elements the leaf reached holds (2 for a pair type:
    /// the next leaf starts that many elements later).
    pub fn path(&mut self, mut index: u128) -> R<(Vec<String>, u128)> {
        let mut steps = Vec::new();
        let mut node = self.root;
        loop {
            let next: &Node = match &node.kind {
                Kind::Named(p) => return Ok((steps, basic_types(*p)?.as_slice().len() as u128)),
                Kind::F90Real { .. }
                | Kind::F90Complex { .. }
                | Kind::F90Integer { .. }
                | Kind::ValueIndex { .. } => return Ok((steps, self.count(node)?)),
                Kind::Dup(old) | Kind::Resized { old, .. } => old,
                Kind::Struct {
                    blocklengths,
                    types,
                    ..
                } => {
                    let mut found = None;
                    for (i, (&bl, child)) in blocklengths.iter().zip(types).enumerate() {
                        let per = self.count(child)?;
                        let n = (bl.max(0) as u128).saturating_mul(per);
                        if index < n {
                            found = Some((i, bl, child, index / per, index % per));
                            break;
                        }
                        index -= n;
                    }
                    let Some((i, bl, child, copy, rest)) = found else {
                        return Err(past_end());
                    };
                    steps.push(format!("member {i}"));
                    if bl > 1 {
                        steps.push(format!("[{copy}]"));
                    }
                    index = rest;
                    child
                }
                _ => {
                    let child = &node.children()[0];
                    let per = self.count(child)?;
                    if per == 0 {
                        return Err(past_end());
                    }
                    steps.extend(copy_steps(&node.kind, index / per));
                    index %= per;
                    child
                }
            };
            node = next;
        }
    }
}

fn past_end() -> mpix_marshal::Error {
    mpix_marshal::Error::InvalidArgument("an element index past the type's end".into())
}

/// The steps naming copy `copy` of the old type of a one-child constructor:
/// its block and place in the block, its array index, or its number.
fn copy_steps(kind: &Kind, copy: u128) -> Vec<String> {
    let in_block = |block: u128, e: u128, len: i64| {
        let mut v = vec![format!("block {block}")];
        if len > 1 {
            v.push(format!("[{e}]"));
        }
        v
    };
    match kind {
        Kind::Vector { blocklength, .. }
        | Kind::Hvector { blocklength, .. }
        | Kind::IndexedBlock { blocklength, .. }
        | Kind::HindexedBlock { blocklength, .. }
            if *blocklength > 0 =>
        {
            let bl = *blocklength as u128;
            in_block(copy / bl, copy % bl, *blocklength)
        }
        Kind::Indexed { blocklengths, .. } | Kind::Hindexed { blocklengths, .. } => {
            let mut left = copy;
            for (j, &b) in blocklengths.iter().enumerate() {
                let n = b.max(0) as u128;
                if left < n {
                    return in_block(j as u128, left, b);
                }
                left -= n;
            }
            vec![format!("[{copy}]")]
        }
        Kind::Subarray {
            subsizes,
            starts,
            order,
            ..
        } => vec![array_index(copy, subsizes, starts, *order)],
        _ => vec![format!("[{copy}]")],
    }
}

/// Copy `copy` (in typemap order) of a subarray as its index in the full
/// array: "[row, column]".
fn array_index(mut copy: u128, subsizes: &[i64], starts: &[i64], order: Order) -> String {
    let mut idx = vec![0i128; subsizes.len()];
    let dims: Vec<usize> = match order {
        Order::C => (0..subsizes.len()).rev().collect(),
        Order::Fortran => (0..subsizes.len()).collect(),
    };
    for k in dims {
        let n = subsizes[k].max(1) as u128;
        idx[k] = (copy % n) as i128 + i128::from(starts[k]);
        copy /= n;
    }
    let parts: Vec<String> = idx.iter().map(i128::to_string).collect();
    format!("[{}]", parts.join(", "))
}
