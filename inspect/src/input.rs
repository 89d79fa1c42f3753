//! Reading a stream: from a file or standard input, its representation
//! recognised by its magic word (spec/external.md §4, spec/internal.md §2,
//! spec/compressed.md §2), parsed into its tree by the library.

use crate::cli::Rep;
use crate::error::{Error, Result};
use mpix_marshal::{Node, Representation};
use std::io::Read;
use std::path::{Path, PathBuf};

/// A stream read and parsed.
pub struct Stream {
    pub path: PathBuf,
    pub bytes: Vec<u8>,
    pub rep: Representation,
    /// How a compressed stream is stored: "varints", "deflated", "stored".
    pub form: Option<&'static str>,
    /// The format version its header states.
    pub version: u32,
    /// Its checksum, verified; None when its version has none (or, for
    /// the internal representation, never does).
    pub checksum: Option<u32>,
    pub tree: Node,
}

/// The magic words (the first four bytes): with a checksum ("MXC"), and
/// of the versions before it ("MXD").
const EXTERNAL: [&[u8; 4]; 2] = [b"MXCT", b"MXDT"];
const COMPRESSED: [(&[u8; 4], &str); 7] = [
    (b"MXCP", "varints"),
    (b"MXCV", "deflated"),
    (b"MXCS", "stored"),
    (b"MXDP", "varints"),
    (b"MXDV", "deflated"),
    (b"MXDS", "stored"),
    (b"MXDZ", "deflated (version 1)"),
];
/// The checksummed magic words: a word one bit from one of them is that
/// representation's, damaged (its checksum then says so).
const CHECKSUMMED: [(&[u8; 4], Representation); 4] = [
    (b"MXCT", Representation::External),
    (b"MXCP", Representation::Compressed),
    (b"MXCV", Representation::Compressed),
    (b"MXCS", Representation::Compressed),
];
/// The internal magic "MXDI" in the machine's byte order.
fn internal_magic() -> [u8; 4] {
    0x4d58_4449u32.to_ne_bytes()
}

/// The bytes of `path` ("-": standard input).
pub fn read_bytes(path: &Path) -> Result<Vec<u8>> {
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    if path == Path::new("-") {
        let mut v = Vec::new();
        std::io::stdin().read_to_end(&mut v).map_err(io)?;
        Ok(v)
    } else {
        std::fs::read(path).map_err(io)
    }
}

/// The representation a stream's magic word names, or an error that says
/// what the file starts with.
pub fn detect(bytes: &[u8]) -> std::result::Result<Representation, mpix_marshal::Error> {
    let Some(magic) = bytes.get(..4) else {
        return Err(mpix_marshal::Error::Truncated {
            what: "the magic word",
            offset: 0,
            needed: 4,
            left: bytes.len(),
            expanded: None,
        });
    };
    if EXTERNAL.iter().any(|m| magic == *m) {
        return Ok(Representation::External);
    }
    if COMPRESSED.iter().any(|(m, _)| magic == *m) {
        return Ok(Representation::Compressed);
    }
    if magic == internal_magic() {
        return Ok(Representation::Internal);
    }
    // A damaged magic word: the representation whose checksum then fails.
    let distance =
        |m: &[u8; 4]| -> u32 { m.iter().zip(magic).map(|(a, b)| (a ^ b).count_ones()).sum() };
    if let Some((_, rep)) = CHECKSUMMED.iter().find(|(m, _)| distance(m) <= 1) {
        return Ok(*rep);
    }
    Err(mpix_marshal::Error::Corrupt {
        offset: 0,
        expanded: None,
        what: format!(
            "the magic word {:02x} {:02x} {:02x} {:02x} is none of an mpix-marshal stream's \
             (\"MXCT\"/\"MXDT\" external, \"MXCP\"/\"MXCV\"/\"MXCS\"/\"MXDP\"/\"MXDV\"/\"MXDS\" compressed, \"MXDI\" internal)",
            magic[0], magic[1], magic[2], magic[3]
        ),
    })
}

pub fn representation(rep: Rep) -> Representation {
    match rep {
        Rep::External => Representation::External,
        Rep::Internal => Representation::Internal,
        Rep::Compressed => Representation::Compressed,
    }
}

pub fn rep_name(rep: Representation) -> &'static str {
    match rep {
        Representation::External => "external",
        Representation::Internal => "internal",
        Representation::Compressed => "compressed",
    }
}

/// Reads and parses the stream at `path`.
pub fn open(path: &Path, from: Option<Rep>) -> Result<Stream> {
    let bytes = read_bytes(path)?;
    parse(path, bytes, from)
}

/// Parses `bytes`, read from `path`.
pub fn parse(path: &Path, bytes: Vec<u8>, from: Option<Rep>) -> Result<Stream> {
    let stream_err = |source| Error::Stream {
        path: path.to_path_buf(),
        source,
    };
    let rep = match from {
        Some(r) => representation(r),
        None => detect(&bytes).map_err(stream_err)?,
    };
    let checksum = mpix_marshal::stream_checksum(rep, &bytes).map_err(stream_err)?;
    let tree = mpix_marshal::read(rep, &bytes).map_err(stream_err)?;
    let magic = bytes.get(..4).unwrap_or_default();
    let form = COMPRESSED
        .iter()
        .find(|(m, _)| magic == *m)
        .map(|(_, f)| *f)
        .filter(|_| rep == Representation::Compressed);
    let version = version(rep, form, &bytes, checksum.is_some());
    Ok(Stream {
        path: path.to_path_buf(),
        bytes,
        rep,
        form,
        version,
        checksum,
        tree,
    })
}

/// The format version a stream's header states: the top three bits of the
/// external header's hyper (for a compressed stream, of the external stream
/// it holds), the internal header's version byte.
fn version(rep: Representation, form: Option<&str>, bytes: &[u8], checksummed: bool) -> u32 {
    let hyper_version = |b: &[u8]| b.first().map_or(0, |x| u32::from(x >> 5));
    match (rep, form) {
        (Representation::Internal, _) => bytes.get(4).map_or(0, |v| u32::from(*v)),
        (Representation::External, _) => hyper_version(&bytes[4..]),
        (_, Some("varints")) => hyper_version(&bytes[4..]),
        (_, Some("stored")) => hyper_version(bytes.get(12..).unwrap_or_default()),
        // Deflated: the external stream it expands to, which the reader
        // accepted, is of version 5 in a checksummed form, else 4.
        _ if checksummed => 5,
        _ => 4,
    }
}
