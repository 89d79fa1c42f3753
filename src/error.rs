//! The library's errors. Inside Rust they are this enum; at the C edge each
//! variant has a kind (`capi::error::ErrorKind::of`), and each kind an MPI
//! error class the library registers, except an MPI call's own error, which
//! keeps MPI's code.

use std::fmt;

/// Everything that can go wrong when marshalling or unmarshalling.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The representation name is not one this library knows.
    #[error(
        "unknown type representation {0:?}: expected \"external\", \"internal\" or \"compressed\""
    )]
    UnknownRepresentation(String),

    /// The output buffer cannot hold the marshalled type; nothing was written.
    #[error(
        "output buffer too small: the marshalled type needs {needed} bytes, the buffer has {given}"
    )]
    BufferTooSmall { needed: usize, given: usize },

    /// The stream ends before the item it is reading.
    #[error("truncated stream: {what} at byte {offset} needs {needed} bytes, {left} are left")]
    Truncated {
        what: &'static str,
        offset: usize,
        needed: usize,
        left: usize,
    },

    /// The stream holds a value the format does not allow.
    #[error("corrupt stream at byte {offset}: {what}")]
    Corrupt { offset: usize, what: String },

    /// The stream or type is well formed, but the local MPI cannot build or
    /// describe it (a removed construct, large counts on an MPI-3 library).
    #[error("not supported by this MPI: {0}")]
    Unsupported(String),

    /// A caller's argument, or a decoded value that no MPI constructor accepts.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),

    /// A marshalled attribute's callback failed or broke its contract.
    #[error("attribute {name:?}: {what}")]
    Attribute { name: String, what: String },

    /// A type exchange message is malformed or forged, or refers to an
    /// identifier the receiver never cached (`MPIX_Type_recv`, `_bcast`).
    #[error("type exchange: {0}")]
    Exchange(String),

    /// An MPI call the library made failed; `code` is MPI's own error code.
    #[error("{call} failed: {message} (MPI error code {code})")]
    Mpi {
        call: &'static str,
        code: i32,
        message: String,
    },
}

/// The library's result type.
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub(crate) fn corrupt(offset: usize, what: impl fmt::Display) -> Error {
        Error::Corrupt {
            offset,
            what: what.to_string(),
        }
    }

    pub(crate) fn invalid(what: impl fmt::Display) -> Error {
        Error::InvalidArgument(what.to_string())
    }

    pub(crate) fn unsupported(what: impl fmt::Display) -> Error {
        Error::Unsupported(what.to_string())
    }
}
