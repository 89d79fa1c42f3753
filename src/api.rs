//! The safe Rust API. The C functions in `capi` are thin wrappers over it.

use crate::decode::decode;
use crate::encode::encode;
use crate::error::{Error, Result};
use crate::external;
use crate::mpi::{self, Datatype};
use crate::scratch::with_buffer;
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
        return Err(Error::invalid(
            "MPI is not initialized (or already finalized)",
        ));
    }
    rep.require_available()
}

/// Appends the stream of `datatype` to `out`.
fn marshal_append(rep: Representation, datatype: Datatype, out: &mut Vec<u8>) -> Result<()> {
    ready(rep)?;
    if datatype == mpi::local().datatype_null() {
        return Err(Error::invalid("the datatype is MPI_DATATYPE_NULL"));
    }
    decode(datatype, out)
}

/// Marshals `datatype` into a new buffer.
pub fn marshal(rep: Representation, datatype: Datatype) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    marshal_append(rep, datatype, &mut out)?;
    Ok(out)
}

thread_local! {
    /// Where `marshal_into` builds a stream before copying it out, so the
    /// caller's buffer is written only on success; reused across calls.
    static STAGING: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Marshals `datatype` into `out`, returning the number of bytes written.
/// When `out` is too small nothing is written and the error says how many
/// bytes are needed.
pub fn marshal_into(rep: Representation, datatype: Datatype, out: &mut [u8]) -> Result<usize> {
    with_buffer(&STAGING, |staging| {
        staging.clear();
        marshal_append(rep, datatype, staging)?;
        let n = staging.len();
        if n > out.len() {
            return Err(Error::BufferTooSmall {
                needed: n,
                given: out.len(),
            });
        }
        out[..n].copy_from_slice(staging);
        if staging.capacity() > 1 << 20 {
            *staging = Vec::new(); // do not keep a huge buffer per thread
        }
        Ok(n)
    })
}

/// An upper bound of the bytes `marshal` produces for `datatype` (for the
/// external representation, the exact number).
pub fn marshal_size(rep: Representation, datatype: Datatype) -> Result<usize> {
    with_buffer(&STAGING, |staging| {
        staging.clear();
        marshal_append(rep, datatype, staging)?;
        Ok(staging.len())
    })
}

/// Rebuilds a datatype from marshalled bytes. A predefined type comes back
/// as the predefined handle itself; any other is a new handle, not
/// committed, that the caller frees with `MPI_Type_free`.
pub fn unmarshal(rep: Representation, bytes: &[u8]) -> Result<Datatype> {
    ready(rep)?;
    encode(&external::read(bytes)?)
}

/// The constructor tree of a datatype: its envelope/contents at every
/// level, with names (the parsed form of its external stream).
pub fn type_tree(datatype: Datatype) -> Result<Node> {
    external::read(&marshal(Representation::External, datatype)?)
}
