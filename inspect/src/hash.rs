//! `hash [--kind K] FILE`: the type signature's hash in any family of
//! spec/signature.md, computed over the tree (never the typemap), with the
//! number of basic elements.

use crate::cli::Kind;
use crate::error::Result;
use crate::input::Stream;
use mpix_marshal::HashKind;
use std::fmt::Write;

fn families(k: Kind) -> Vec<HashKind> {
    match k {
        Kind::Gropp => vec![HashKind::Gropp],
        Kind::XorBs1 => vec![HashKind::XorBs1],
        Kind::MmmBs1 => vec![HashKind::MmmBs1],
        Kind::Gfd8 => vec![HashKind::Gfd8],
        Kind::Gfd16 => vec![HashKind::Gfd16],
        Kind::Crc32 => vec![HashKind::Crc32],
        Kind::Default64 => vec![HashKind::Default64],
        Kind::All => HashKind::ALL.to_vec(),
    }
}

/// One line per family: "gfd8 0x1234abcd"; a single family prints its
/// value alone, for scripts.
pub fn text(s: &Stream, k: Kind) -> Result<String> {
    let kinds = families(k);
    let mut out = String::new();
    for kind in &kinds {
        let h = mpix_marshal::tree_signature_hash(&s.tree, *kind)?;
        let digits = if kind.bits() > 32 { 16 } else { 8 };
        if kinds.len() == 1 {
            let _ = writeln!(out, "{h:#0w$x}", w = digits + 2);
        } else {
            let _ = writeln!(out, "{:<10} {h:#0w$x}", kind.name(), w = digits + 2);
        }
    }
    if kinds.len() > 1 {
        let n = mpix_marshal::tree_signature_count(&s.tree)?;
        let _ = writeln!(out, "{:<10} {n}", "elements");
    }
    Ok(out)
}
