//! The external representation: a portable, self-identifying XDR stream
//! (RFC 4506: big-endian, 4-byte units) holding the tree in pre-order.
//! `spec/external.md` is its byte-exact description; this module is the
//! reference implementation of it.

mod read;
mod write;

pub use read::{open, read_nodes, Opened};

pub use write::int_fields;
pub use write::write_hashed;

/// "MXCT": the first word of an external stream of version 5, which ends
/// with a checksum. It differs from "MXDT" in 3 bits (spec/external.md §4).
pub const MAGIC: u32 = 0x4d58_4354;
/// "MXDT": the first word of a version-4 stream, which has no checksum.
pub const MAGIC_V4: u32 = 0x4d58_4454;
/// The format version, in the top 3 bits of the header's hyper.
pub const VERSION: u32 = 5;
/// The last version without a checksum, still read.
pub const VERSION_V4: u32 = 4;
/// The checksum's length: a CRC-32C of every byte before it, big-endian,
/// ends a version-5 stream.
pub const CHECKSUM_LEN: usize = 4;
/// Header length in bytes: the magic word, then a hyper holding the version
/// (top 3 bits) and the signature hash (low 61 bits).
pub const HEADER_LEN: usize = 12;
/// Where the header's hyper starts.
pub const HASH_AT: usize = 4;
/// The header's signature hash is below this prime, 2^61 - 1 (the
/// default hash family's modulus, spec/signature.md).
pub const HASH_MODULUS: u64 = (1 << 61) - 1;

/// A NAMED node's one word: the combiner code, and the predefined type's
/// code in the high half (§5.2).
pub(crate) fn named_word(p: crate::format::codes::Predefined) -> u32 {
    crate::format::codes::Combiner::Named.code() | u32::from(p.0) << 16
}

/// The checksum of `bytes` (CRC-32C, spec/external.md §4.1).
#[inline]
pub fn checksum(bytes: &[u8]) -> u32 {
    crc32c::crc32c(bytes)
}

/// Whether `word` is a checksummed magic word or one bit away from
/// `magic`: such a stream must pass its checksum before anything else is
/// read, so that no single flipped bit makes it pass for a stream
/// without one (the magic words without a checksum are 3 bits away).
pub fn near(word: u32, magic: u32) -> bool {
    (word ^ magic).count_ones() <= 1
}

/// Appends the checksum of the stream that starts at byte `start` of
/// `out` (a version-5 stream whose last node is written).
pub fn seal(out: &mut crate::format::sink::Sink, start: usize) {
    let crc = checksum(&out.bytes()[start..]);
    out.put(&crc.to_be_bytes());
}

/// Rewrites the last 4 bytes of a checksummed stream (external version 5
/// or compressed version 4) as the checksum of the others: for tests and
/// fuzzing, which alter a stream and want the reader past its checksum.
pub fn reseal(bytes: &mut [u8]) {
    let n = bytes.len() - CHECKSUM_LEN;
    let crc = checksum(&bytes[..n]);
    bytes[n..].copy_from_slice(&crc.to_be_bytes());
}

/// The header's hyper for a signature hash (below 2^61), big-endian.
pub fn version_and_hash(hash: u64) -> [u8; 8] {
    (u64::from(VERSION) << 61 | hash).to_be_bytes()
}

/// The 12 header bytes for a type of default signature hash `hash`
/// (`signature::Default64`).
pub fn header(hash: u64) -> [u8; HEADER_LEN] {
    let mut h = [0u8; HEADER_LEN];
    h[..4].copy_from_slice(&MAGIC.to_be_bytes());
    h[HASH_AT..].copy_from_slice(&version_and_hash(hash));
    h
}

/// The signature hash an external stream's header carries, once its
/// checksum (if it has one) and header are checked; the nodes are not
/// read: what a reader compares with the hash of the type it expects,
/// without rebuilding it.
pub fn header_hash(bytes: &[u8]) -> crate::Result<u64> {
    Ok(open(bytes)?.hash)
}

/// Node word flags (bits 16..31 of the word that starts each node).
pub const FLAG_NAME: u32 = 1 << 16;
pub const FLAG_WIDE: u32 = 1 << 17;
pub const FLAG_LARGE: u32 = 1 << 18;
pub const FLAG_ATTRS: u32 = 1 << 19;
pub const FLAG_BOUNDS: u32 = 1 << 20;
pub const FLAG_CORRECTION: u32 = 1 << 21;
pub(crate) const FLAGS_KNOWN: u32 =
    FLAG_NAME | FLAG_WIDE | FLAG_LARGE | FLAG_ATTRS | FLAG_BOUNDS | FLAG_CORRECTION;

/// How the node grammar is written. The external representation is XDR;
/// the internal one (`crate::format::internal`) has the same grammar in the
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
