//! The external representation: a portable, self-identifying XDR stream
//! (RFC 4506: big-endian, 4-byte units) holding the tree in pre-order.
//! `spec/external.md` is its byte-exact description; this module is the
//! reference implementation of it.

mod read;
mod write;

pub use read::{read, read_nodes};
pub use write::write;

/// "MXDT": the first word of every external stream.
pub const MAGIC: u32 = 0x4d58_4454;
/// The format version, in the high half of the second word.
pub const VERSION: u32 = 1;
/// Header length in bytes.
pub const HEADER_LEN: usize = 8;

/// The 8 header bytes: the magic word and the version word.
pub fn header() -> [u8; HEADER_LEN] {
    let mut h = [0u8; HEADER_LEN];
    h[..4].copy_from_slice(&MAGIC.to_be_bytes());
    h[4..].copy_from_slice(&(VERSION << 16).to_be_bytes());
    h
}

/// Node word flags (bits 16..31 of the word that starts each node).
pub const FLAG_NAME: u32 = 1 << 16;
pub const FLAG_WIDE: u32 = 1 << 17;
pub const FLAG_LARGE: u32 = 1 << 18;
pub const FLAG_ATTRS: u32 = 1 << 19;
const FLAGS_KNOWN: u32 = FLAG_NAME | FLAG_WIDE | FLAG_LARGE | FLAG_ATTRS;

/// How the node grammar is written. The external representation is XDR;
/// the internal one (`crate::internal`) has the same grammar in the
/// machine's own byte order without padding, for speed within one program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    Xdr,
    Native,
}

impl Encoding {
    pub fn word(self, v: u32) -> [u8; 4] {
        match self {
            Encoding::Xdr => v.to_be_bytes(),
            Encoding::Native => v.to_ne_bytes(),
        }
    }

    /// The bytes an opaque of `len` bytes occupies, padding included.
    pub fn padded(self, len: usize) -> usize {
        match self {
            Encoding::Xdr => len.div_ceil(4) * 4,
            Encoding::Native => len,
        }
    }
}
