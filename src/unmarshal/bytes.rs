//! Bytes to a datatype: a stream's header checked, then the direct path
//! (`direct`), or the tree path (`build`) for what it does not take.

use crate::error::{Error, Result};
use crate::format::external::{self, Encoding};
use crate::format::Representation;
use crate::format::{compressed, internal};
use crate::marshal;
use crate::mpi::{self, Datatype};
use crate::unmarshal::{build, direct};
use std::ffi::CStr;

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
/// tree path, which also words every error. The stream's checksum and
/// header are checked once, for both paths.
fn rebuild(bytes: &[u8], enc: Encoding, typerep: &'static CStr) -> Result<Datatype> {
    let tree = match enc {
        Encoding::Xdr => {
            let opened = external::open(bytes)?;
            if let Some(built) = direct_external(opened) {
                return built.map_err(|e| *e);
            }
            crate::signature::stream::read_opened(opened)?
        }
        Encoding::Native => {
            if let Some(built) = direct_internal(bytes)? {
                return built.map_err(|e| *e);
            }
            internal::read(bytes, marshal::build_id())?
        }
    };
    build(&tree, typerep)
}

/// The direct path of an opened external stream; None when it does not
/// take the stream. Inlined: its large result, returned through memory,
/// cost 10 ns of the paper's indexed type's unmarshal.
#[inline(always)]
fn direct_external(
    opened: external::Opened<'_>,
) -> Option<std::result::Result<Datatype, Box<Error>>> {
    direct::unmarshal(
        opened.body,
        external::HEADER_LEN,
        Encoding::Xdr,
        Some(opened.hash),
    )
}

/// The internal stream's header checked, then the direct path; None when
/// that path does not take the stream.
#[inline(always)]
fn direct_internal(bytes: &[u8]) -> Result<Option<std::result::Result<Datatype, Box<Error>>>> {
    internal::check_header(bytes, marshal::build_id())?;
    Ok(direct::unmarshal(
        bytes,
        internal::HEADER_LEN,
        Encoding::Native,
        None,
    ))
}

/// The stream's header checked, then the direct path (for tests).
fn direct_path(
    bytes: &[u8],
    enc: Encoding,
) -> Result<Option<std::result::Result<Datatype, Box<Error>>>> {
    match enc {
        Encoding::Xdr => Ok(direct_external(external::open(bytes)?)),
        Encoding::Native => direct_internal(bytes),
    }
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
