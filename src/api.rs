//! The safe Rust API. The C functions in `capi` are thin wrappers over it.

use crate::error::{Error, Result};
use crate::format::codes::Predefined;
use crate::format::external;
use crate::format::tree::Node;
pub use crate::format::Representation;
use crate::format::{compressed, internal};
use crate::marshal::cache;
use crate::marshal::{self};
use crate::mpi::{self, Datatype};
use crate::signature::{self, HashKind};

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
    crate::unmarshal::bytes::unmarshal(rep, bytes)
}

/// The direct unmarshal alone: None when `unmarshal` would take the tree
/// path for this stream (not covered, or not valid), else what it built.
/// For tests, which check that the two paths agree.
#[doc(hidden)]
pub fn unmarshal_direct(rep: Representation, bytes: &[u8]) -> Option<Result<Datatype>> {
    crate::unmarshal::bytes::unmarshal_direct(rep, bytes)
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

/// The checksum of an external or compressed stream, verified against its
/// bytes (a mismatch is `Error::Checksum`); None for a stream of a version
/// without one (external version 4, compressed version 3) and for the
/// internal representation, which has none. Nothing past the checksum and
/// the header is read.
pub fn stream_checksum(rep: Representation, bytes: &[u8]) -> Result<Option<u32>> {
    match rep {
        Representation::External => Ok(external::open(bytes)?.checksum),
        Representation::Compressed => Ok(compressed::open(bytes)?.checksum),
        Representation::Internal => Ok(None),
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
    if let Some(p) = signature_subject(datatype)? {
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

/// `datatype` checked as the subject of a signature figure: MPI is
/// ready and the handle is not null. Some(code) for a predefined type
/// (whose tree is one node, not cached), None for a derived one.
fn signature_subject(datatype: Datatype) -> Result<Option<Predefined>> {
    mpi::ready()?;
    // As in marshal_with: refused here, before MPI_Type_get_attr sees the
    // null handle and raises MPI_ERR_TYPE (fatal by default). Issue 5,
    // tests/errors.rs.
    if datatype == mpi::local().datatype_null() {
        return Err(Error::invalid("the datatype is MPI_DATATYPE_NULL"));
    }
    Ok(mpi::local().predefined(datatype))
}

/// The hash in family `kind` of the first `n` basic elements of `count`
/// consecutive copies of `datatype`'s signature: what a receive of
/// (`count`, `datatype`) that takes `n` elements must match
/// (`spec/signature.md` §5.1). An error when `n` exceeds `count` ×
/// `signature_count(datatype)`. A prefix of whole copies is the type's
/// kept hash repeated (O(log n)); any other descends the type's tree
/// (O(nodes + depth · log count)), never expanding it.
pub fn signature_prefix_hash(
    datatype: Datatype,
    count: u128,
    n: u128,
    kind: HashKind,
) -> Result<u64> {
    // A signature beyond u128 elements has no kept count: the tree decides.
    if let Ok(per_copy) = signature_count(datatype) {
        signature::prefix::check_length(count, Some(per_copy), n)?;
        if per_copy > 0 && n > 0 && n % per_copy == 0 {
            let whole = signature_hash(datatype, kind)?;
            return Ok(kind.repeat((whole, per_copy), n / per_copy));
        }
    }
    signature::signature_prefix_hash(&signature_tree(datatype)?, count, n, kind)
}

/// The summary (count n, hash in family `kind`, whether `MPI_BYTE` or
/// `MPI_PACKED` occur) of the first `n` basic elements of `count`
/// consecutive copies of `datatype`'s signature: what a point-to-point
/// check compares with the sender's summary (`Summary::check`, Gropp's
/// rule; the flags cover only the elements received). Errors as for
/// `signature_prefix_hash`; computed from the type's tree each time.
pub fn signature_prefix_summary(
    datatype: Datatype,
    count: u128,
    n: u128,
    kind: HashKind,
) -> Result<signature::Summary> {
    signature::signature_prefix_summary(&signature_tree(datatype)?, count, n, kind)
}

/// The tree of a signature figure's subject (one node for a predefined type).
fn signature_tree(datatype: Datatype) -> Result<Node> {
    match signature_subject(datatype)? {
        Some(p) => Ok(Node::named(p)),
        None => type_tree(datatype),
    }
}

/// A type received by `recv_type`: the new handle (the caller's to free,
/// unless predefined) and where it came from.
#[derive(Debug, Clone, Copy)]
pub struct ReceivedType {
    pub datatype: Datatype,
    /// The sender's rank and the message's tag (wildcards resolved).
    pub source: i32,
    pub tag: i32,
    /// The full status of the exchange's message.
    pub status: crate::mpi::comm::Status,
}

/// Sends `datatype` to rank `dest` of `comm` with `tag`: its description
/// the first time this process sends it to `dest` on `comm` (and after
/// an eviction), else only its identifier (spec/exchange.md). The first
/// exchange call on a communicator is collective over it.
pub fn send_type(
    datatype: Datatype,
    dest: i32,
    tag: i32,
    comm: crate::mpi::comm::Comm,
) -> Result<()> {
    own("MPIX_Type_send", || {
        crate::exchange::send(datatype, dest, tag, comm)
    })
}

/// Receives a type sent with `send_type` (or `MPIX_Type_send`); `source`
/// and `tag` may be `MPI_ANY_SOURCE` and `MPI_ANY_TAG`.
pub fn recv_type(source: i32, tag: i32, comm: crate::mpi::comm::Comm) -> Result<ReceivedType> {
    let (datatype, status) = own("MPIX_Type_recv", || {
        crate::exchange::recv(source, tag, comm)
    })?;
    Ok(ReceivedType {
        datatype,
        source: status.MPI_SOURCE,
        tag: status.MPI_TAG,
        status,
    })
}

/// Sets up the type exchange of `comm` now: collective over `comm`, as the
/// first exchange call on a communicator is anyway (it duplicates `comm`
/// twice). A program calls it where its other collectives are, so that a
/// later first send, reference or receive need not be collective.
pub fn setup_type_exchange(comm: crate::mpi::comm::Comm) -> Result<()> {
    own("MPIX_Type_exchange_setup", || crate::exchange::setup(comm))
}

/// The portable code of a predefined datatype (`MPI_INT`, …); `None` for a
/// derived type or a null handle. A predefined type needs no exchange: its
/// code names it in any process, of any MPI.
pub fn predefined_code(datatype: Datatype) -> Option<Predefined> {
    crate::mpi::local().predefined(datatype)
}

/// This MPI's handle of the predefined type `code` names, if it has one.
pub fn predefined_datatype(code: Predefined) -> Option<Datatype> {
    crate::mpi::local().datatype(code)
}

/// The size of a type reference (`type_reference`), in bytes.
pub const TYPE_REFERENCE_SIZE: usize = crate::exchange::wire::REFERENCE_LEN;

/// A reference to `datatype` for the caller to carry to rank `dest` of
/// `comm` in its own message (an active message's header, say), where
/// `resolve_type` turns it back into the type: the type's description
/// travels to `dest` the first time, on the exchange's own channel,
/// exactly as for `send_type`. Each reference must be resolved once, by
/// `dest`. For `MPI_PROC_NULL`, 16 zero bytes.
pub fn type_reference(
    datatype: Datatype,
    dest: i32,
    comm: crate::mpi::comm::Comm,
) -> Result<[u8; TYPE_REFERENCE_SIZE]> {
    own("MPIX_Type_reference", || {
        crate::exchange::reference(datatype, dest, comm)
    })
}

/// The committed type a reference from rank `source` of `comm` names,
/// lent by the exchange's cache: the same handle every time, valid until
/// given back with `release_type` (never `MPI_Type_free`).
pub fn resolve_type(
    reference: &[u8],
    source: i32,
    comm: crate::mpi::comm::Comm,
) -> Result<Datatype> {
    own("MPIX_Type_resolve", || {
        crate::exchange::resolve(reference, source, comm)
    })
}

/// The type a reference from rank `source` of `comm` names, lent as
/// `resolve_type` lends it, without counting the reference as received:
/// for a reference sent more than once whose count travels with one of
/// its uses (the checker's batches name a type's reference once per
/// batch). Fails as `resolve_type` does, and when the sender evicted the
/// entry and every counted use of it has come.
pub fn resolve_type_uncounted(
    reference: &[u8],
    source: i32,
    comm: crate::mpi::comm::Comm,
) -> Result<Datatype> {
    own("MPIX_Type_resolve", || {
        crate::exchange::resolve_uncounted(reference, source, comm)
    })
}

/// Counts a reference from rank `source` of `comm` as received, as
/// `resolve_type` does, without making or lending its type (a receiver
/// that needs the type only for a report resolves only then: each
/// reference is still counted once, by one of the two).
pub fn consume_reference(
    reference: &[u8],
    source: i32,
    comm: crate::mpi::comm::Comm,
) -> Result<()> {
    own("MPIX_Type_resolve", || {
        crate::exchange::consume(reference, source, comm)
    })
}

/// Gives back a type `resolve_type` lent.
pub fn release_type(datatype: Datatype) -> Result<()> {
    own("MPIX_Type_release", || {
        crate::exchange::release_lent(datatype)
    })
}

/// Broadcasts the root's `datatype` (ignored elsewhere): the root gets its
/// own handle back, every other rank a new one it frees.
pub fn bcast_type(datatype: Datatype, root: i32, comm: crate::mpi::comm::Comm) -> Result<Datatype> {
    own("MPIX_Type_bcast", || {
        crate::exchange::bcast(datatype, root, comm)
    })
}

/// The bound on the types cached per communicator and peer, for the
/// communicators the exchange is first used on from now on (default 64,
/// or `MPIX_TYPE_CACHE_LIMIT`).
pub fn set_type_cache_limit(limit: usize) -> Result<()> {
    crate::exchange::set_cache_limit(limit)
}

/// What this process's type exchange has sent so far.
pub fn exchange_counters() -> crate::exchange::Counters {
    crate::exchange::counters()
}

/// Runs one of the type exchange's operations, `name` in the C API, as
/// the library's own MPI calls (`crate::mpi::own_calls`), so that a PMPI
/// tool passes them by.
fn own<R>(name: &'static str, f: impl FnOnce() -> R) -> R {
    crate::mpi::own_calls::operation(name, f)
}

/// For a PMPI tool linked with the library (mpix-check): whether the
/// calling thread is inside one of the library's own operations, whose
/// MPI calls (the type exchange's duplicates, messages and frees) are not
/// the program's. The tool should pass such calls straight to MPI.
#[inline]
pub fn in_library_operation() -> bool {
    crate::mpi::own_calls::active()
}

/// For a PMPI tool linked with the library: the library operation the
/// program called (`"MPIX_Type_send"`, …) when the calling thread is at
/// that operation's collective point: the duplication of the program's
/// communicator by the type exchange's first call on it, a collective of
/// the program's that the tool should check under this name. Its new
/// communicator is the library's own.
#[inline]
pub fn library_collective_point() -> Option<&'static str> {
    crate::mpi::own_calls::exposed()
}

/// For a PMPI tool linked with the library: runs `f` (the tool's own use
/// of the library) so that [`in_library_operation`] is true inside it.
pub fn as_library_operation<R>(f: impl FnOnce() -> R) -> R {
    crate::mpi::own_calls::within(f)
}
