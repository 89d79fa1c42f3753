//! `convert --to external|compressed IN OUT`: the same tree written in
//! another representation, without MPI (the library writes the very bytes
//! `MPIX_Type_marshal` would).

use crate::cli::OutRep;
use crate::error::{Error, Result};
use crate::input::Stream;
use mpix_marshal::Representation;
use std::io::Write;
use std::path::Path;

pub fn bytes(s: &Stream, to: OutRep) -> Result<Vec<u8>> {
    let rep = match to {
        OutRep::External => Representation::External,
        OutRep::Compressed => Representation::Compressed,
    };
    Ok(mpix_marshal::write(rep, &s.tree)?)
}

/// Writes `bytes` to `path` ("-": standard output).
pub fn write_out(path: &Path, bytes: &[u8]) -> Result<()> {
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    if path == Path::new("-") {
        let mut out = std::io::stdout().lock();
        out.write_all(bytes).and_then(|()| out.flush()).map_err(io)
    } else {
        std::fs::write(path, bytes).map_err(io)
    }
}
