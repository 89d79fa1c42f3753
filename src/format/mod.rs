//! The wire formats, with no MPI: the portable codes, the tree a stream
//! describes, the external (XDR) and internal (native) node grammars, the
//! compressed wrapper, and the output sink they are written to.
//! `spec/` describes these bytes; this module is their one implementation.

use crate::error::{Error, Result};
use std::ffi::CStr;

pub mod codes;
pub mod compressed;
pub mod describe;
pub mod external;
pub mod internal;
pub mod layout;
pub mod reader;
pub mod sink;
pub mod tree;
pub mod writer;

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
        Representation::from_bytes(name.as_bytes())
    }

    /// The representation a C string names, compared as bytes: the C API
    /// calls this on every marshal, so text is only built for the error.
    pub fn from_bytes(name: &[u8]) -> Result<Representation> {
        match name {
            b"external" => Ok(Representation::External),
            b"internal" => Ok(Representation::Internal),
            b"compressed" => Ok(Representation::Compressed),
            other => Err(Error::UnknownRepresentation(
                String::from_utf8_lossy(other).into_owned(),
            )),
        }
    }

    /// The name attribute callbacks receive as `typerep`.
    pub fn c_name(self) -> &'static CStr {
        match self {
            Representation::External => c"external",
            Representation::Internal => c"internal",
            Representation::Compressed => c"compressed",
        }
    }
}
