//! Where element `index` of a type's signature (and typemap: both list the
//! elements in the same order) comes from: the path down the constructor
//! tree, with the member, block and copy at each level. Found by counting,
//! level by level, never by expanding.

use crate::error::Result;
use crate::format::tree::{Kind, Node};
use crate::signature::signature_count;

/// A human-readable path to element `index` of `root`, such as
/// `root STRUCT member 1, copy 0 > VECTOR block 3, element 0 > MPI_DOUBLE`.
pub(super) fn path(root: &Node, mut index: u128) -> Result<String> {
    let mut out = String::from("root");
    let mut node = root;
    loop {
        let step = match &node.kind {
            Kind::Named(p) => {
                let basics = crate::signature::basic_types(*p)?;
                let part = match basics.as_slice() {
                    [_, _] => format!(" (part {index} of the pair)"),
                    _ => String::new(),
                };
                out.push_str(&format!(" {}{part}", p.mpi_name()));
                return Ok(out);
            }
            Kind::F90Real { .. } | Kind::F90Complex { .. } | Kind::F90Integer { .. } => {
                out.push_str(&format!(" {}", node.combiner().mpi_name()));
                return Ok(out);
            }
            Kind::Struct {
                blocklengths,
                types,
                ..
            } => {
                let mut found = None;
                for (i, (&bl, child)) in blocklengths.iter().zip(types).enumerate() {
                    let per = signature_count(child)?;
                    let n = (bl.max(0) as u128).saturating_mul(per);
                    if index < n {
                        found = Some((i, child, index / per, index % per));
                        break;
                    }
                    index -= n;
                }
                let Some((i, child, copy, rest)) = found else {
                    out.push_str(" (past the end)");
                    return Ok(out);
                };
                index = rest;
                (format!("member {i}, copy {copy}"), child)
            }
            Kind::ValueIndex { pair } => {
                let n = signature_count(&pair[0])?;
                if index < n {
                    ("value type".to_string(), &pair[0])
                } else {
                    index -= n;
                    ("index type".to_string(), &pair[1])
                }
            }
            _ => {
                let child = &node.children()[0];
                let per = signature_count(child)?;
                if per == 0 {
                    out.push_str(" (empty old type)");
                    return Ok(out);
                }
                let copy = index / per;
                index %= per;
                (where_in(node, copy), child)
            }
        };
        out.push_str(&format!(" {} {} >", node.combiner().mpi_name(), step.0));
        node = step.1;
    }
}

/// Which block and element of a one-child constructor copy `copy` of its
/// old type is.
fn where_in(node: &Node, copy: u128) -> String {
    let blocks = |bls: &mut dyn Iterator<Item = i64>| {
        let mut left = copy;
        for (j, b) in bls.enumerate() {
            let b = b.max(0) as u128;
            if left < b {
                return format!("block {j}, element {left}");
            }
            left -= b;
        }
        format!("copy {copy}")
    };
    match &node.kind {
        Kind::Vector { blocklength, .. } | Kind::Hvector { blocklength, .. }
            if *blocklength > 0 =>
        {
            let bl = *blocklength as u128;
            format!("block {}, element {}", copy / bl, copy % bl)
        }
        Kind::IndexedBlock { blocklength, .. } | Kind::HindexedBlock { blocklength, .. }
            if *blocklength > 0 =>
        {
            let bl = *blocklength as u128;
            format!("block {}, element {}", copy / bl, copy % bl)
        }
        Kind::Indexed { blocklengths, .. } | Kind::Hindexed { blocklengths, .. } => {
            blocks(&mut blocklengths.iter().copied())
        }
        _ => format!("copy {copy}"),
    }
}
