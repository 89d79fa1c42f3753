//! The internal representation: the external node grammar in the
//! machine's byte order without padding, behind a header that identifies
//! the producing build. Only a process of the same parallel program (same
//! MPI library, same mpix-marshal, same byte order and pointer size) reads
//! it; any other producer's stream is refused, never misread.

use crate::error::{Error, Result};
use crate::format::external::{self, Encoding};
use crate::format::tree::Node;
use std::sync::OnceLock;

/// "MXDI", written in the machine's byte order: a reader of the other
/// byte order sees "IDXM".
pub const MAGIC: u32 = 0x4d58_4449;
/// The internal format's version.
pub const VERSION: u8 = 3;
pub const HEADER_LEN: usize = 8;

/// magic (4, native order), version (1), pointer size (1), build id (2).
pub fn header() -> [u8; HEADER_LEN] {
    let mut h = [0u8; HEADER_LEN];
    h[..4].copy_from_slice(&MAGIC.to_ne_bytes());
    h[4] = VERSION;
    h[5] = std::mem::size_of::<usize>() as u8;
    h[6..].copy_from_slice(&build_id().to_ne_bytes());
    h
}

/// A 16-bit digest of what must match between writer and reader: the MPI
/// library's version string and MPI version, and this library's version.
fn build_id() -> u16 {
    static ID: OnceLock<u16> = OnceLock::new();
    *ID.get_or_init(|| {
        let l = &crate::mpi::local().constants;
        let text = format!(
            "{}|{}.{}|{}|{}",
            crate::mpi::library_version(),
            l.version,
            l.subversion,
            l.is_open_mpi,
            env!("CARGO_PKG_VERSION")
        );
        // FNV-1a, folded to 16 bits.
        let mut h: u32 = 0x811c_9dc5;
        for b in text.bytes() {
            h = (h ^ b as u32).wrapping_mul(0x0100_0193);
        }
        (h ^ (h >> 16)) as u16
    })
}

/// Parses an internal stream.
pub fn read(bytes: &[u8]) -> Result<Node> {
    check_header(bytes)?;
    external::read_nodes(bytes, HEADER_LEN, Encoding::Native)
}

/// Checks that `bytes` starts with this build's internal header.
pub fn check_header(bytes: &[u8]) -> Result<()> {
    if bytes.len() < HEADER_LEN {
        return Err(Error::Truncated {
            what: "the internal header",
            offset: 0,
            needed: HEADER_LEN,
            left: bytes.len(),
        });
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
    let mine = header();
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
