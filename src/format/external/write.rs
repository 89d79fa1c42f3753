//! Tree → external bytes.

use super::{header, FLAG_ATTRS, FLAG_BOUNDS, FLAG_CORRECTION, FLAG_LARGE, FLAG_NAME, FLAG_WIDE};
use crate::error::Result;
use crate::format::tree::{Kind, Node};
use crate::signature::{self, HashKind};
use xdr_codec::Pack;

/// Appends the external stream of `tree` to `out`. The header's signature
/// hash is computed from the tree, so a tree whose signature cannot be
/// computed (a negative count, say: one `tree::validate` refuses) is an error.
pub fn write(tree: &Node, out: &mut Vec<u8>) -> Result<()> {
    let hash = signature::signature_hash(tree, HashKind::DEFAULT)?;
    out.extend_from_slice(&header(hash));
    node(tree, out);
    Ok(())
}

fn put_u32(out: &mut Vec<u8>, v: u32) {
    // Writing into a Vec cannot fail.
    let _ = v.pack(out);
}

/// Writes one integer field in the node's width.
fn put_int(out: &mut Vec<u8>, wide: bool, v: i64) {
    if wide {
        let _ = v.pack(out);
    } else {
        let _ = (v as i32).pack(out);
    }
}

fn put_ints(out: &mut Vec<u8>, wide: bool, v: &[i64]) {
    for &x in v {
        put_int(out, wide, x);
    }
}

fn node(n: &Node, out: &mut Vec<u8>) {
    let fields = int_fields(n);
    let wide = fields.iter().any(|&v| i32::try_from(v).is_err());
    let mut word = n.combiner().code();
    if n.name.is_some() {
        word |= FLAG_NAME;
    }
    if wide {
        word |= FLAG_WIDE;
    }
    if n.large {
        word |= FLAG_LARGE;
    }
    if !n.attrs.is_empty() {
        word |= FLAG_ATTRS;
    }
    if n.bounds.is_some() {
        word |= FLAG_BOUNDS;
    }
    if n.correction {
        word |= FLAG_CORRECTION;
    }
    if let Kind::Named(p) = n.kind {
        put_u32(out, word | (p.0 as u32) << 16);
        return;
    }
    put_u32(out, word);
    if let Some(name) = &n.name {
        let _ = xdr_codec::pack_opaque_flex(name, None, out);
    }
    if !n.attrs.is_empty() {
        put_u32(out, n.attrs.len() as u32);
        for a in &n.attrs {
            let _ = xdr_codec::pack_opaque_flex(&a.name, None, out);
            let _ = xdr_codec::pack_opaque_flex(&a.value, None, out);
        }
    }
    put_ints(out, wide, &fields);
    for child in n.children() {
        node(child, out);
    }
}

/// The node's integer fields in stream order (spec/external.md, "Payloads"),
/// its recorded bounds (§5.6) last.
pub fn int_fields(n: &Node) -> Vec<i64> {
    let mut v = combiner_fields(n);
    if let Some(b) = n.bounds {
        v.extend([b.lb, b.extent]);
    }
    v
}

/// The fields of the node's constructor call, in stream order.
fn combiner_fields(n: &Node) -> Vec<i64> {
    match &n.kind {
        Kind::Named(_) | Kind::Dup(_) | Kind::ValueIndex { .. } => vec![],
        Kind::F90Real { p, r } | Kind::F90Complex { p, r } => vec![*p, *r],
        Kind::F90Integer { r } => vec![*r],
        Kind::Contiguous { count, .. } => vec![*count],
        Kind::Vector {
            count,
            blocklength,
            stride,
            ..
        }
        | Kind::Hvector {
            count,
            blocklength,
            stride,
            ..
        } => vec![*count, *blocklength, *stride],
        Kind::Indexed {
            blocklengths,
            displacements,
            ..
        }
        | Kind::Hindexed {
            blocklengths,
            displacements,
            ..
        }
        | Kind::Struct {
            blocklengths,
            displacements,
            ..
        } => {
            let mut v = Vec::with_capacity(1 + 2 * blocklengths.len());
            v.push(blocklengths.len() as i64);
            v.extend_from_slice(blocklengths);
            v.extend_from_slice(displacements);
            v
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
            let mut v = Vec::with_capacity(2 + displacements.len());
            v.push(displacements.len() as i64);
            v.push(*blocklength);
            v.extend_from_slice(displacements);
            v
        }
        Kind::Subarray {
            sizes,
            subsizes,
            starts,
            order,
            ..
        } => {
            let mut v = Vec::with_capacity(2 + 3 * sizes.len());
            v.push(sizes.len() as i64);
            v.extend_from_slice(sizes);
            v.extend_from_slice(subsizes);
            v.extend_from_slice(starts);
            v.push(*order as i64);
            v
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
            let mut v = Vec::with_capacity(4 + 4 * gsizes.len());
            v.extend_from_slice(&[*size, *rank, gsizes.len() as i64]);
            v.extend_from_slice(gsizes);
            v.extend(distribs.iter().map(|&d| d as i64));
            v.extend_from_slice(dargs);
            v.extend_from_slice(psizes);
            v.push(*order as i64);
            v
        }
        Kind::Resized { lb, extent, .. } => vec![*lb, *extent],
    }
}
