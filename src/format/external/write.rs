//! Tree → external bytes, with the format's one writer (`format::writer`).

use super::{
    header, named_word, Encoding, FLAG_ATTRS, FLAG_BOUNDS, FLAG_CORRECTION, FLAG_LARGE, FLAG_NAME,
    FLAG_WIDE,
};
use crate::format::sink::Sink;
use crate::format::tree::{Kind, Node};
use crate::format::writer::{self, beyond_i32};

/// Appends the external stream of `tree` to `out`, with `hash` (the tree's
/// default signature hash, `signature::stream::write` computes it) in its
/// header and its checksum last.
pub fn write_hashed(tree: &Node, hash: u64, out: &mut Vec<u8>) {
    let mut sink = Sink::default();
    sink.put(&header(hash));
    node(tree, &mut sink);
    super::seal(&mut sink, 0);
    out.extend_from_slice(sink.bytes());
}

fn node(n: &Node, out: &mut Sink) {
    const XDR: Encoding = Encoding::Xdr;
    let fields = int_fields(n);
    let wide = beyond_i32(&fields);
    let flags = [
        (n.name.is_some(), FLAG_NAME),
        (wide, FLAG_WIDE),
        (n.large, FLAG_LARGE),
        (!n.attrs.is_empty(), FLAG_ATTRS),
        (n.bounds.is_some(), FLAG_BOUNDS),
        (n.correction, FLAG_CORRECTION),
    ];
    let word = flags
        .iter()
        .filter(|(set, _)| *set)
        .fold(n.combiner().code(), |word, (_, flag)| word | flag);
    if let Kind::Named(p) = n.kind {
        writer::put_u32(out, XDR, named_word(p));
        return;
    }
    writer::put_u32(out, XDR, word);
    if let Some(name) = &n.name {
        writer::put_opaque(out, XDR, name);
    }
    if !n.attrs.is_empty() {
        writer::put_u32(out, XDR, n.attrs.len() as u32);
        for a in &n.attrs {
            writer::put_opaque(out, XDR, &a.name);
            writer::put_opaque(out, XDR, &a.value);
        }
    }
    writer::put_ints(out, XDR, wide, &fields);
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
