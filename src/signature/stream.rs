//! External streams whole: a tree with its default signature hash in the
//! header. The format module reads and writes the bytes; the hash that
//! ties them to the tree is this module's.

use super::{signature_hash, HashKind};
use crate::error::{Error, Result};
use crate::format::external::{self, Encoding, HASH_AT, HEADER_LEN};
use crate::format::tree::{validate, Node};

/// Parses a whole external stream, once its checksum holds, and checks
/// that the header's signature hash is the tree's.
pub fn read(bytes: &[u8]) -> Result<Node> {
    read_opened(external::open(bytes)?)
}

/// `read` of a stream already opened (its checksum and header checked).
pub fn read_opened(opened: external::Opened<'_>) -> Result<Node> {
    let hash = opened.hash;
    let root = external::read_nodes(opened.body, HEADER_LEN, Encoding::Xdr)?;
    // A tree whose signature cannot be computed breaks a rule of §9: say which.
    let actual =
        signature_hash(&root, HashKind::DEFAULT).map_err(|e| validate(&root).err().unwrap_or(e))?;
    if actual != hash {
        return Err(Error::corrupt(
            HASH_AT,
            format!("the header's signature hash {hash:#018x} is not the type's ({actual:#018x})"),
        ));
    }
    Ok(root)
}

/// Appends the external stream of `tree` to `out`. A tree whose signature
/// cannot be computed (a negative count, say: one `tree::validate`
/// refuses) is an error.
pub fn write(tree: &Node, out: &mut Vec<u8>) -> Result<()> {
    let hash = signature_hash(tree, HashKind::DEFAULT)?;
    external::write_hashed(tree, hash, out);
    Ok(())
}
