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
    pub tree: Node,
}

/// The magic words (the first four bytes).
const EXTERNAL: &[u8; 4] = b"MXDT";
const COMPRESSED: [(&[u8; 4], &str); 4] = [
    (b"MXDP", "varints"),
    (b"MXDV", "deflated"),
    (b"MXDS", "stored"),
    (b"MXDZ", "deflated (version 1)"),
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
        });
    };
    if magic == EXTERNAL {
        return Ok(Representation::External);
    }
    if COMPRESSED.iter().any(|(m, _)| magic == *m) {
        return Ok(Representation::Compressed);
    }
    if magic == internal_magic() {
        return Ok(Representation::Internal);
    }
    Err(mpix_marshal::Error::Corrupt {
        offset: 0,
        what: format!(
            "the magic word {:02x} {:02x} {:02x} {:02x} is none of an mpix-marshal stream's \
             (\"MXDT\" external, \"MXDP\"/\"MXDV\"/\"MXDS\" compressed, \"MXDI\" internal)",
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
    let tree = mpix_marshal::read(rep, &bytes).map_err(stream_err)?;
    let magic = bytes.get(..4).unwrap_or_default();
    let form = COMPRESSED
        .iter()
        .find(|(m, _)| magic == *m)
        .map(|(_, f)| *f)
        .filter(|_| rep == Representation::Compressed);
    let version = version(rep, form, &bytes, &tree);
    Ok(Stream {
        path: path.to_path_buf(),
        bytes,
        rep,
        form,
        version,
        tree,
    })
}

/// The format version a stream's header states: the top three bits of the
/// external header's hyper (for a compressed stream, of the external stream
/// it holds), the internal header's version byte.
fn version(rep: Representation, form: Option<&str>, bytes: &[u8], tree: &Node) -> u32 {
    let hyper_version = |b: &[u8]| b.first().map_or(0, |x| u32::from(x >> 5));
    match (rep, form) {
        (Representation::Internal, _) => bytes.get(4).map_or(0, |v| u32::from(*v)),
        (Representation::External, _) => hyper_version(&bytes[4..]),
        (_, Some("varints")) => hyper_version(&bytes[4..]),
        (_, Some("stored")) => hyper_version(bytes.get(12..).unwrap_or_default()),
        // Deflated: the version of the external stream it expands to, which
        // the reader accepted, is the one this library writes.
        _ => mpix_marshal::write(Representation::External, tree)
            .map_or(0, |ext| hyper_version(&ext[4..])),
    }
}
