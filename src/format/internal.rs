//! The internal representation: the external node grammar in the
//! machine's byte order without padding, behind a header that identifies
//! the producing build. Only a process of the same parallel program (same
//! MPI library, same mpix-marshal, same byte order and pointer size) reads
//! it; any other producer's stream is refused, never misread. The build's
//! identity comes from the caller (`marshal::build_id`): this module knows
//! no MPI.

use crate::error::{Error, Result};
use crate::format::external::{self, Encoding};
use crate::format::tree::Node;

/// "MXDI", written in the machine's byte order: a reader of the other
/// byte order sees "IDXM".
pub const MAGIC: u32 = 0x4d58_4449;
/// The internal format's version.
pub const VERSION: u8 = 3;
pub const HEADER_LEN: usize = 8;

/// magic (4, native order), version (1), pointer size (1), build id (2).
pub fn header(build: u16) -> [u8; HEADER_LEN] {
    let mut h = [0u8; HEADER_LEN];
    h[..4].copy_from_slice(&MAGIC.to_ne_bytes());
    h[4] = VERSION;
    h[5] = std::mem::size_of::<usize>() as u8;
    h[6..].copy_from_slice(&build.to_ne_bytes());
    h
}

/// The build id of a build whose identity is `identity` (spec/internal.md
/// §2: the MPI library's version string and MPI version, the
/// implementation, and this library's version): FNV-1a, folded to 16 bits.
pub fn build_id(identity: &str) -> u16 {
    let mut h: u32 = 0x811c_9dc5;
    for b in identity.bytes() {
        h = (h ^ b as u32).wrapping_mul(0x0100_0193);
    }
    (h ^ (h >> 16)) as u16
}

/// Parses an internal stream.
pub fn read(bytes: &[u8], build: u16) -> Result<Node> {
    check_header(bytes, build)?;
    external::read_nodes(bytes, HEADER_LEN, Encoding::Native)
}

/// Checks that `bytes` starts with the internal header of build `build`.
pub fn check_header(bytes: &[u8], build: u16) -> Result<()> {
    if bytes.len() < HEADER_LEN {
        return Err(Error::truncated(
            "the internal header",
            0,
            HEADER_LEN,
            bytes.len(),
        ));
    }
    let magic = u32::from_ne_bytes(bytes[..4].try_into().unwrap());
    if magic != MAGIC {
        let what = if magic == MAGIC.swap_bytes() {
            "an internal stream written on a machine of the other byte order".to_string()
        } else {
            format!("not an mpix-marshal internal stream (first word {magic:#010x})")
        };
        return Err(Error::corrupt(0, what));
    }
    let mine = header(build);
    if bytes[4] != mine[4] {
        return Err(Error::corrupt(
            4,
            format!(
                "internal format version {} (this library reads version {VERSION})",
                bytes[4]
            ),
        ));
    }
    if bytes[5] != mine[5] {
        return Err(Error::corrupt(
            5,
            format!(
                "written by a build with {}-byte pointers, this one has {}",
                bytes[5], mine[5]
            ),
        ));
    }
    if bytes[6..8] != mine[6..8] {
        return Err(Error::corrupt(
            6,
            "written by another MPI library or mpix-marshal build: the internal representation is only read within one parallel program (use \"external\")",
        ));
    }
    Ok(())
}
