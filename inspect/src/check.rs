//! `check FILE`: verifies the stream's checksum, reads the stream with the
//! library's strict reader (every format rule, the header's signature hash
//! against the tree), then rebuilds the type on the local MPI, which
//! refuses arguments no MPI constructor accepts. (Reading the stream,
//! `input::parse`, did the first two.)

use crate::error::Error;
use crate::input::{rep_name, Stream};
use crate::mpi;

/// What `check` found in a stream that was read.
pub enum Verdict {
    /// Valid, and rebuilt on this MPI (or rebuilding was not asked for).
    Valid(String),
    /// Valid as a stream, but this MPI lacks a construct it uses: a note.
    ValidNotHere(String),
    /// The stream describes a type no MPI builds, or (`--strict`) has no
    /// checksum.
    Invalid(Error),
}

pub fn verdict(s: &Stream, rebuild: bool, strict: bool) -> Verdict {
    let form = s.form.map(|f| format!(" ({f})")).unwrap_or_default();
    let checksum = match s.checksum {
        Some(crc) => format!("checksum CRC-32C {crc:#010x} verified"),
        None => "no checksum".to_string(),
    };
    let what = format!(
        "{}: valid {}{form} stream, format version {}, {} bytes, {checksum}, root {}",
        s.path.display(),
        rep_name(s.rep),
        s.version,
        s.bytes.len(),
        mpix_marshal::describe::title(&s.tree)
    );
    if strict && s.checksum.is_none() {
        return Verdict::Invalid(Error::Unchecked {
            path: s.path.clone(),
            what,
        });
    }
    if !rebuild {
        return Verdict::Valid(what);
    }
    match mpi::rebuilds(&s.tree) {
        Ok(()) => Verdict::Valid(format!("{what}; rebuilt on this MPI")),
        Err(e @ mpix_marshal::Error::InvalidArgument(_)) => Verdict::Invalid(Error::Stream {
            path: s.path.clone(),
            source: e,
        }),
        Err(e) => Verdict::ValidNotHere(format!("{what}; this MPI cannot rebuild it: {e}")),
    }
}
