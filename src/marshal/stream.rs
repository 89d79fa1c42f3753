//! Marshalling's entry: a datatype's stream in the representation asked
//! for, built in this thread's buffer and handed to the caller's closure,
//! so that a caller's buffer is written only on success; and the tree of
//! a datatype, the parsed form of its external stream.

use super::{predefined, write_stream, PREDEFINED_MAX};
use crate::error::{Error, Result};
use crate::format::external::{self, Encoding};
use crate::format::sink::Sink;
use crate::format::tree::Node;
use crate::format::{compressed, internal, Representation};
use crate::mpi::{self, Datatype};
use crate::scratch::with_buffer;

/// This build's id in internal streams (`format::internal::build_id` of
/// the MPI library, its MPI version and this library's version).
pub fn build_id() -> u16 {
    static ID: std::sync::OnceLock<u16> = std::sync::OnceLock::new();
    *ID.get_or_init(|| {
        let l = &mpi::local().constants;
        internal::build_id(&format!(
            "{}|{}.{}|{}|{}",
            mpi::library_version(),
            l.version,
            l.subversion,
            l.is_open_mpi,
            env!("CARGO_PKG_VERSION")
        ))
    })
}

/// The constructor tree of a datatype: its envelope/contents at every
/// level, with names.
pub fn tree(datatype: Datatype) -> Result<Node> {
    with_stream(
        Representation::External,
        datatype,
        crate::signature::stream::read,
    )
}

/// Writes the stream of `datatype` into this thread's sink and runs `f`
/// on the bytes.
pub fn with_stream<R>(
    rep: Representation,
    datatype: Datatype,
    f: impl FnOnce(&[u8]) -> Result<R>,
) -> Result<R> {
    mpi::ready()?;
    if datatype == mpi::local().datatype_null() {
        return Err(Error::invalid("the datatype is MPI_DATATYPE_NULL"));
    }
    // A predefined type: straight to `f` (or the compressor), without the
    // sink, which costs more than the whole stream.
    if let Some(p) = mpi::local().predefined(datatype) {
        let (header, at, enc) = match rep {
            Representation::Internal => (&internal::header(build_id())[..], None, Encoding::Native),
            _ => (
                &external::header(0)[..],
                Some(external::HASH_AT),
                Encoding::Xdr,
            ),
        };
        let mut stream = [0u8; PREDEFINED_MAX];
        let n = if at.is_some() {
            sealed_predefined(p, header, &mut stream)?
        } else {
            predefined(p, header, at, enc, &mut stream)?
        };
        return if rep == Representation::Compressed {
            compressed_then(&stream[..n], f)
        } else {
            f(&stream[..n])
        };
    }
    with_buffer(&SINK, |sink| {
        sink.clear();
        let result = match rep {
            Representation::External | Representation::Compressed => {
                // The hash is written once the traversal has computed it.
                let header = external::header(0);
                let at = Some(external::HASH_AT);
                write_stream(
                    datatype,
                    sink,
                    &header,
                    at,
                    Encoding::Xdr,
                    rep.c_name(),
                    true,
                )
            }
            Representation::Internal => {
                let header = internal::header(build_id());
                write_stream(
                    datatype,
                    sink,
                    &header,
                    None,
                    Encoding::Native,
                    rep.c_name(),
                    false,
                )
            }
        };
        let result = result.and_then(|()| {
            if rep == Representation::Compressed {
                compressed_then(sink.bytes(), f)
            } else {
                f(sink.bytes())
            }
        });
        sink.trim();
        result
    })
}

/// The external stream of the predefined type `p`, its checksum included:
/// a function of its code alone, so each thread keeps the ones it wrote
/// (in a small table indexed by code) and copies them, the checksum with
/// them: computing a CRC cost a predefined marshal a third of its time.
fn sealed_predefined(
    p: crate::format::codes::Predefined,
    header: &[u8],
    out: &mut [u8; PREDEFINED_MAX],
) -> Result<usize> {
    const SLOTS: usize = 64;
    type Slot = (u32, [u8; PREDEFINED_MAX]);
    thread_local! {
        static SEALED: std::cell::RefCell<[Slot; SLOTS]> =
            const { std::cell::RefCell::new([(u32::MAX, [0; PREDEFINED_MAX]); SLOTS]) };
    }
    let key = u32::from(p.0);
    let slot = p.0 as usize % SLOTS;
    let hit = SEALED.with_borrow(|t| (t[slot].0 == key).then(|| t[slot].1));
    if let Some(stream) = hit {
        *out = stream;
        return Ok(PREDEFINED_MAX);
    }
    let n = predefined(p, header, Some(external::HASH_AT), Encoding::Xdr, out)?;
    let crc = external::checksum(&out[..n]);
    out[n..n + external::CHECKSUM_LEN].copy_from_slice(&crc.to_be_bytes());
    debug_assert_eq!(n + external::CHECKSUM_LEN, PREDEFINED_MAX);
    SEALED.with_borrow_mut(|t| t[slot] = (key, *out));
    Ok(PREDEFINED_MAX)
}

/// Compresses the external stream `external` into this thread's PACKED
/// buffer and runs `f` on the bytes.
fn compressed_then<R>(external: &[u8], f: impl FnOnce(&[u8]) -> Result<R>) -> Result<R> {
    with_buffer(&PACKED, |packed| {
        packed.clear();
        compressed::compress(external, packed)?;
        let r = f(packed.bytes());
        packed.trim();
        r
    })
}

thread_local! {
    /// Where a stream is built before it is copied out, so the caller's
    /// buffer is written only on success; reused across calls.
    static SINK: std::cell::RefCell<Sink> = std::cell::RefCell::new(Sink::default());
    /// Where a compressed stream is built from the external one in SINK.
    static PACKED: std::cell::RefCell<Sink> = std::cell::RefCell::new(Sink::default());
}
