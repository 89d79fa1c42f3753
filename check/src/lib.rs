//! mpix-check: a correctness library that catches inconsistent MPI
//! collective calls, with exact diagnostics.
//!
//! Loaded with `LD_PRELOAD` (or linked before the MPI library), it
//! interposes the collective calls through the MPI profiling interface and
//! checks, before each call, that the ranks agree on the call, its root,
//! op and `MPI_IN_PLACE` use, and that their type signatures match (by the
//! signature hashes of mpix-marshal, O(1) per call once a type's hash is
//! cached on it). When ranks disagree, it fetches the other rank's type,
//! marshalled, and reports the first differing element and where it sits
//! in each type's tree. See docs/mpix-check.md.
//!
//! The modules, in layers: each imports only from its own layer or below,
//! and no import cycle (both checked by `tests/layers.rs`).
//!
//! 1. `entry`: the interposed `MPI_` functions, generated from the table
//!    of calls (`check/calls.txt`) by the build script, with their shapes
//!    and hand-written bodies.
//! 2. The checks: `check` (collective calls; `batch`: their verification
//!    in batches; `arrays`: their counts and datatypes arrays), `p2p` (point to point:
//!    channels, companions, receive matching, persistent requests,
//!    completion; `p2p::lost`: lost messages at `MPI_Finalize`),
//!    `datatypes` (misuse of a datatype argument itself), `rma` and `io`
//!    (one-sided and file calls' datatypes).
//! 3. The waits: `polled` (blocking calls posted nonblocking and polled),
//!    `watchdog` (a wait past the timeout asks and reports).
//! 4. `hang` (where a thread waits; the wait-for graph and its report),
//!    `inside` (the batched call a rank is inside, told over TCP by a
//!    helper thread), `sig` (type signatures and their differences).
//! 5. `mpi`: the MPI edge, every `PMPI_` call (`mpi::channel`: the status
//!    channel's bytes; `mpi::errhandler`: the checker's error handler).
//! 6. Pure data and state: `record`, `digest` (what ranks exchange),
//!    `report` (reports, configuration), `site` (call sites), `names`
//!    (communicator names), `order` (the order of blocking calls across
//!    communicators), `waiting` (the check a thread waits in),
//!    `wire` (the status channel's words), `threads`, `internal`,
//!    `types` (the datatypes the program made, committed and freed),
//!    `slots` (the maps by request handle of the message path),
//!    `forwarded` (waits, before an abort, for stderr to be read by the
//!    process manager).

#![deny(unsafe_op_in_unsafe_fn)]
// The ABI's constants are `const`, mpi-sys's `extern static`s (read in
// `unsafe`): one source serves both.
#![cfg_attr(feature = "abi", allow(unused_unsafe))]

/// The MPI bindings: the library's own (`mpix_marshal::sys`), so that
/// the checker and the library it links are built on the same ones; the
/// ABI's lack the `PMPI_` names, declared here from the table of calls.
pub(crate) mod sys {
    pub use mpix_marshal::sys::*;
    #[cfg(feature = "abi")]
    #[allow(clippy::all)]
    mod pmpi {
        use super::*;
        use std::ffi::{c_char, c_int, c_void};
        include!(concat!(env!("OUT_DIR"), "/pmpi.rs"));
    }
    #[cfg(feature = "abi")]
    pub use pmpi::*;
}

pub mod arrays;
pub mod batch;
pub mod check;
pub mod datatypes;
pub mod digest;
mod entry;
pub mod forwarded;
pub mod hang;
pub mod inside;
pub mod internal;
pub mod io;
pub mod mpi;
pub mod names;
pub mod order;
pub mod p2p;
pub mod polled;
pub mod record;
pub mod report;
pub mod rma;
pub mod sig;
pub mod site;
pub mod slots;
pub mod threads;
pub mod types;
pub mod waiting;
pub mod watchdog;
pub mod wire;
