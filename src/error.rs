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

    /// The stream ends before the item it is reading. `offset` is in the
    /// bytes the caller passed; in a compressed stream, `expanded` is the
    /// offset in the external stream it expanded to.
    #[error(
        "truncated stream: {what} at byte {offset}{} needs {needed} bytes, {left} are left",
        expanded_note(.expanded)
    )]
    Truncated {
        what: &'static str,
        offset: usize,
        needed: usize,
        left: usize,
        expanded: Option<usize>,
    },

    /// The stream holds a value the format does not allow (offsets as for
    /// `Truncated`).
    #[error("corrupt stream at byte {offset}{}: {what}", expanded_note(.expanded))]
    Corrupt {
        offset: usize,
        what: String,
        expanded: Option<usize>,
    },

    /// The stream's checksum is not that of its bytes: it was damaged
    /// after it was written (or cut short). Nothing was parsed.
    #[error(
        "checksum mismatch: the stream's CRC-32C (at byte {offset}) is {stored:#010x}, \
         its bytes give {computed:#010x}: the stream is damaged or truncated"
    )]
    Checksum {
        offset: usize,
        stored: u32,
        computed: u32,
    },

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

/// " (byte N of the expanded external stream)", or nothing.
fn expanded_note(expanded: &Option<usize>) -> String {
    match expanded {
        Some(at) => format!(" (byte {at} of the expanded external stream)"),
        None => String::new(),
    }
}

/// The library's result type.
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub(crate) fn corrupt(offset: usize, what: impl fmt::Display) -> Error {
        Error::Corrupt {
            offset,
            what: what.to_string(),
            expanded: None,
        }
    }

    /// A truncation at `offset`, `left` bytes before the end.
    pub(crate) fn truncated(
        what: &'static str,
        offset: usize,
        needed: usize,
        left: usize,
    ) -> Error {
        Error::Truncated {
            what,
            offset,
            needed,
            left,
            expanded: None,
        }
    }

    /// The error of an expanded external stream, its offset moved into the
    /// compressed bytes by `map` (the expanded one kept as detail).
    pub(crate) fn in_compressed(self, map: impl FnOnce(usize) -> usize) -> Error {
        match self {
            Error::Truncated {
                what,
                offset,
                needed,
                left,
                expanded: None,
            } => Error::Truncated {
                what,
                offset: map(offset),
                needed,
                left,
                expanded: Some(offset),
            },
            Error::Corrupt {
                offset,
                what,
                expanded: None,
            } => Error::Corrupt {
                offset: map(offset),
                what,
                expanded: Some(offset),
            },
            // A stored external stream's own checksum (MXCS).
            Error::Checksum {
                offset,
                stored,
                computed,
            } => Error::Checksum {
                offset: map(offset),
                stored,
                computed,
            },
            other => other,
        }
    }

    /// The byte offset an error of the stream names, if any.
    pub fn offset(&self) -> Option<usize> {
        match *self {
            Error::Truncated { offset, .. }
            | Error::Corrupt { offset, .. }
            | Error::Checksum { offset, .. } => Some(offset),
            _ => None,
        }
    }

    pub(crate) fn invalid(what: impl fmt::Display) -> Error {
        Error::InvalidArgument(what.to_string())
    }

    pub(crate) fn unsupported(what: impl fmt::Display) -> Error {
        Error::Unsupported(what.to_string())
    }
}
