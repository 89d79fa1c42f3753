//! The command's errors: each says what failed and on which file, in words
//! a person can act on (the library's own messages give byte offsets).

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The stream is not one this library reads, or is corrupt.
    #[error("{path}: {source}")]
    Stream {
        path: PathBuf,
        source: mpix_marshal::Error,
    },
    /// `check --strict`: a valid stream without a checksum (`what` says
    /// which, with its path).
    #[error("{what}; --strict refuses a stream without a checksum (convert it to write one)")]
    Unchecked { path: PathBuf, what: String },
    /// The local MPI could not start, or refused a call.
    #[error("MPI: {0}")]
    Mpi(String),
    /// A data file read through a type (`dump --data`) is short, or
    /// cannot be read in the representation asked for.
    #[error("{path}: {what}")]
    Data { path: PathBuf, what: String },
    /// The library refused an operation on a valid stream.
    #[error("{0}")]
    Library(#[from] mpix_marshal::Error),
}

impl Error {
    /// Whether the error is the stream's fault (corrupt, truncated, damaged, or
    /// describing a type no MPI accepts), rather than the file system's
    /// or the MPI's.
    pub fn is_invalid_stream(&self) -> bool {
        matches!(
            self,
            Error::Stream {
                source: mpix_marshal::Error::Corrupt { .. }
                    | mpix_marshal::Error::Truncated { .. }
                    | mpix_marshal::Error::Checksum { .. }
                    | mpix_marshal::Error::InvalidArgument(_),
                ..
            }
        )
    }
}

pub type Result<T> = std::result::Result<T, Error>;
