//! The external representation: a portable, self-identifying XDR stream
//! (RFC 4506: big-endian, 4-byte units) holding the tree in pre-order.
//! `spec/external.md` is its byte-exact description; this module is the
//! reference implementation of it.

mod read;
mod write;

pub use read::read;
pub use write::write;

/// "MXDT": the first word of every external stream.
pub const MAGIC: u32 = 0x4d58_4454;
/// The format version, in the high half of the second word.
pub const VERSION: u32 = 1;
/// Header length in bytes.
pub const HEADER_LEN: usize = 8;

/// Node word flags (bits 16..31 of the word that starts each node).
pub const FLAG_NAME: u32 = 1 << 16;
pub const FLAG_WIDE: u32 = 1 << 17;
pub const FLAG_LARGE: u32 = 1 << 18;
pub const FLAG_ATTRS: u32 = 1 << 19;
const FLAGS_KNOWN: u32 = FLAG_NAME | FLAG_WIDE | FLAG_LARGE | FLAG_ATTRS;
