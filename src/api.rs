//! The safe Rust API. The C functions in `capi` are thin wrappers over it.

use crate::error::{Error, Result};
use crate::format::external::{self, Encoding};
use crate::format::tree::Node;
pub use crate::format::Representation;
use crate::format::{compressed, internal};
use crate::marshal::cache;
use crate::marshal::{self};
use crate::mpi::{self, Datatype};
use crate::signature::{self, HashKind};
use crate::unmarshal::build;
use crate::unmarshal::direct;
use std::ffi::CStr;

/// Marshals `datatype` into a new buffer.
pub fn marshal(rep: Representation, datatype: Datatype) -> Result<Vec<u8>> {
    marshal::with_stream(rep, datatype, |bytes| Ok(bytes.to_vec()))
}

/// Marshals `datatype` into `out`, returning the number of bytes written.
/// When `out` is too small nothing is written and the error says how many
/// bytes are needed.
pub fn marshal_into(rep: Representation, datatype: Datatype, out: &mut [u8]) -> Result<usize> {
    marshal::with_stream(rep, datatype, |bytes| {
        let (n, given) = (bytes.len(), out.len());
        let dst = out
            .get_mut(..n)
            .ok_or(Error::BufferTooSmall { needed: n, given })?;
        dst.copy_from_slice(bytes);
        Ok(n)
    })
}

/// An upper bound of the bytes `marshal` produces for `datatype` (for the
/// external representation, the exact number).
pub fn marshal_size(rep: Representation, datatype: Datatype) -> Result<usize> {
    marshal::with_stream(rep, datatype, |bytes| Ok(bytes.len()))
}

/// Rebuilds a datatype from marshalled bytes. A predefined type comes back
/// as the predefined handle itself; any other is a new handle, not
/// committed, that the caller frees with `MPI_Type_free`.
pub fn unmarshal(rep: Representation, bytes: &[u8]) -> Result<Datatype> {
    mpi::ready()?;
    let typerep = rep.c_name();
    match rep {
        Representation::External => rebuild(bytes, Encoding::Xdr, typerep),
        Representation::Internal => rebuild(bytes, Encoding::Native, typerep),
        Representation::Compressed => {
            compressed::expand(bytes, |external| rebuild(external, Encoding::Xdr, typerep))
        }
    }
}

/// An external (`Xdr`) or internal (`Native`) stream rebuilt: by the
/// direct path (`crate::unmarshal::direct`) when it takes the stream, else by the
/// tree path, which also words every error.
fn rebuild(bytes: &[u8], enc: Encoding, typerep: &'static CStr) -> Result<Datatype> {
    if let Some(built) = direct_path(bytes, enc)? {
        return built.map_err(|e| *e);
    }
    let tree = match enc {
        Encoding::Xdr => crate::signature::stream::read(bytes)?,
        Encoding::Native => internal::read(bytes, marshal::build_id())?,
    };
    build(&tree, typerep)
}

/// The stream's header checked, then the direct path; None when that path
/// does not take the stream. Inlined: its large result, returned through
/// memory, cost 10 ns of the paper's indexed type's unmarshal.
#[inline(always)]
fn direct_path(
    bytes: &[u8],
    enc: Encoding,
) -> Result<Option<std::result::Result<Datatype, Box<Error>>>> {
    Ok(match enc {
        Encoding::Xdr => {
            let hash = external::header_hash(bytes)?;
            direct::unmarshal(bytes, external::HEADER_LEN, enc, Some(hash))
        }
        Encoding::Native => {
            internal::check_header(bytes, marshal::build_id())?;
            direct::unmarshal(bytes, internal::HEADER_LEN, enc, None)
        }
    })
}

/// The direct unmarshal alone: None when `unmarshal` would take the tree
/// path for this stream (not covered, or not valid), else what it built.
/// For tests, which check that the two paths agree.
#[doc(hidden)]
pub fn unmarshal_direct(rep: Representation, bytes: &[u8]) -> Option<Result<Datatype>> {
    mpi::ready().ok()?;
    let built = match rep {
        Representation::External => direct_path(bytes, Encoding::Xdr),
        Representation::Internal => direct_path(bytes, Encoding::Native),
        Representation::Compressed => {
            compressed::expand(bytes, |external| direct_path(external, Encoding::Xdr))
        }
    };
    built.ok().flatten().map(|b| b.map_err(|e| *e))
}

/// Parses a stream of any representation into its tree, without building
/// a datatype.
pub fn read(rep: Representation, bytes: &[u8]) -> Result<Node> {
    match rep {
        Representation::External => crate::signature::stream::read(bytes),
        Representation::Internal => internal::read(bytes, marshal::build_id()),
        Representation::Compressed => compressed::expand(bytes, crate::signature::stream::read),
    }
}

/// Writes a tree (from `read` or `type_tree`) as a stream, without MPI:
/// the external stream, or the compressed one made from it, byte for byte
/// what `marshal` writes for a type of this tree. The internal
/// representation is written from a datatype only (`marshal`), so it is
/// refused here.
pub fn write(rep: Representation, tree: &Node) -> Result<Vec<u8>> {
    // A tree built by hand passes the gate every read tree has passed.
    crate::format::tree::validate(tree)?;
    let mut external = Vec::new();
    crate::signature::stream::write(tree, &mut external)?;
    match rep {
        Representation::External => Ok(external),
        Representation::Compressed => {
            let mut out = crate::format::sink::Sink::default();
            compressed::compress(&external, &mut out)?;
            Ok(out.bytes().to_vec())
        }
        Representation::Internal => Err(Error::unsupported(
            "an internal stream is written from a datatype (marshal), not from a tree",
        )),
    }
}

/// The constructor tree of a datatype: its envelope/contents at every
/// level, with names (the parsed form of its external stream).
pub fn type_tree(datatype: Datatype) -> Result<Node> {
    marshal::tree(datatype)
}

/// The default signature hash (`HashKind::DEFAULT`) of the type a stream
/// holds, without rebuilding it. External and compressed streams carry it
/// in their header, which alone is read (and trusted: `read` and
/// `unmarshal` check it against the tree); an internal stream's tree is
/// parsed and hashed.
pub fn stream_signature_hash(rep: Representation, bytes: &[u8]) -> Result<u64> {
    match rep {
        Representation::External => external::header_hash(bytes),
        Representation::Compressed => compressed::expand(bytes, external::header_hash),
        Representation::Internal => signature::signature_hash(
            &internal::read(bytes, marshal::build_id())?,
            HashKind::DEFAULT,
        ),
    }
}

/// The hash of `datatype`'s type signature in family `kind`
/// (`spec/signature.md`). Computed over the constructor tree, never by
/// expanding the typemap, and kept on the type: asking again is a lookup.
pub fn signature_hash(datatype: Datatype, kind: HashKind) -> Result<u64> {
    signature_figure(
        datatype,
        |s| s.hashes[kind.code() as usize],
        |tree| signature::signature_hash(tree, kind),
        |s, v| s.hashes[kind.code() as usize] = Some(v),
    )
}

/// The number of basic elements in `datatype`'s type signature (exact;
/// it may exceed 2^64 for large-count types). Kept on the type like the hashes.
pub fn signature_count(datatype: Datatype) -> Result<u128> {
    signature_figure(
        datatype,
        |s| s.count,
        signature::signature_count,
        |s, v| s.count = Some(v),
    )
}

/// A signature figure of `datatype`: from its cache entry if there, else
/// computed from its tree and kept. Predefined types are not cached (their
/// tree costs nothing).
fn signature_figure<T: Copy>(
    datatype: Datatype,
    cached: impl Fn(&cache::Signature) -> Option<T>,
    compute: impl FnOnce(&Node) -> Result<T>,
    keep: impl FnOnce(&mut cache::Signature, T),
) -> Result<T> {
    mpi::ready()?;
    // As in marshal_with: refused here, before MPI_Type_get_attr sees the
    // null handle and raises MPI_ERR_TYPE (fatal by default). Issue 5,
    // tests/errors.rs.
    if datatype == mpi::local().datatype_null() {
        return Err(Error::invalid("the datatype is MPI_DATATYPE_NULL"));
    }
    if let Some(p) = mpi::local().predefined(datatype) {
        return compute(&Node::named(p));
    }
    let entry = cache::entry_or_attach(datatype)?;
    if let Some(v) = entry.and_then(|e| cached(&e.signature())) {
        return Ok(v);
    }
    let v = compute(&type_tree(datatype)?)?;
    if let Some(e) = entry {
        e.update_signature(|s| keep(s, v));
    }
    Ok(v)
}
