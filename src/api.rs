//! The safe Rust API. The C functions in `capi` are thin wrappers over it.

use crate::decode::decode;
use crate::encode::encode;
use crate::error::{Error, Result};
use crate::external;
use crate::mpi::{self, Datatype};
use crate::tree::Node;

/// How a datatype is represented as bytes (the paper's `typerep`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Representation {
    /// Portable XDR stream, readable by any MPI implementation.
    External,
    /// Fastest form, readable only within the same parallel program.
    Internal,
    /// zlib-compressed external stream.
    Compressed,
}

impl Representation {
    /// Parses a `typerep` string: "external", "internal" or "compressed".
    pub fn parse(name: &str) -> Result<Representation> {
        match name {
            "external" => Ok(Representation::External),
            "internal" => Ok(Representation::Internal),
            "compressed" => Ok(Representation::Compressed),
            other => Err(Error::UnknownRepresentation(other.to_string())),
        }
    }

    fn require_available(self) -> Result<()> {
        match self {
            Representation::External => Ok(()),
            Representation::Internal => Err(Error::unsupported(
                "the \"internal\" representation is not available in this version of mpix-marshal; use \"external\"",
            )),
            Representation::Compressed => Err(Error::unsupported(
                "the \"compressed\" representation is not available in this version of mpix-marshal; use \"external\"",
            )),
        }
    }
}

fn ready(rep: Representation) -> Result<()> {
    if !mpi::is_initialized() {
        return Err(Error::invalid("MPI is not initialized (or already finalized)"));
    }
    rep.require_available()
}

fn tree_of(datatype: Datatype) -> Result<Node> {
    if datatype == mpi::local().datatype_null() {
        return Err(Error::invalid("the datatype is MPI_DATATYPE_NULL"));
    }
    decode(datatype)
}

/// Marshals `datatype` into a new buffer.
pub fn marshal(rep: Representation, datatype: Datatype) -> Result<Vec<u8>> {
    ready(rep)?;
    let tree = tree_of(datatype)?;
    let mut out = Vec::new();
    external::write(&tree, &mut out);
    Ok(out)
}

/// Marshals `datatype` into `out`, returning the number of bytes written.
/// When `out` is too small nothing is written and the error says how many
/// bytes are needed.
pub fn marshal_into(rep: Representation, datatype: Datatype, out: &mut [u8]) -> Result<usize> {
    let bytes = marshal(rep, datatype)?;
    if bytes.len() > out.len() {
        return Err(Error::BufferTooSmall {
            needed: bytes.len(),
            given: out.len(),
        });
    }
    out[..bytes.len()].copy_from_slice(&bytes);
    Ok(bytes.len())
}

/// An upper bound of the bytes `marshal` produces for `datatype` (for the
/// external representation, the exact number).
pub fn marshal_size(rep: Representation, datatype: Datatype) -> Result<usize> {
    ready(rep)?;
    Ok(external::size(&tree_of(datatype)?))
}

/// Rebuilds a datatype from marshalled bytes. A predefined type comes back
/// as the predefined handle itself; any other is a new handle, not
/// committed, that the caller frees with `MPI_Type_free`.
pub fn unmarshal(rep: Representation, bytes: &[u8]) -> Result<Datatype> {
    ready(rep)?;
    encode(&external::read(bytes)?)
}

/// Decodes a datatype into its constructor tree (no bytes involved).
pub fn type_tree(datatype: Datatype) -> Result<Node> {
    ready(Representation::External)?;
    tree_of(datatype)
}
