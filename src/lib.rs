//! mpix-marshal: marshal any MPI datatype into bytes and back.
//!
//! The library implements the `MPIX_Type_marshal` extension proposed by
//! Kimpe, Goodell and Ross ("MPI Datatype Marshalling: A Case Study in
//! Datatype Equivalence", EuroMPI 2010). The modules follow the data:
//!
//! * `format`: the wire formats and the tree they describe, no MPI,
//! * `mpi`: the only module that calls MPI (and the C shim),
//! * `marshal`: MPI datatype → bytes or tree (envelope/contents calls,
//!   the per-type cache, attributes),
//! * `unmarshal`: bytes or tree → new MPI datatype (constructor calls),
//! * `signature`: signature counts and hashes over the tree; `compare`:
//!   equivalence of two datatypes at five levels,
//! * `api`: the safe Rust API below, and `capi`: the C API at the edge.
//!
//! The modules are private; this page is the Rust API. (`testing` exposes
//! internals to the crate's own tests, fuzz targets and benches only.)

// Every unsafe operation sits in an unsafe block that says why it is sound.
#![deny(unsafe_op_in_unsafe_fn)]
#![deny(clippy::undocumented_unsafe_blocks)]

mod api;
mod callbacks;
mod capi;
mod compare;
mod error;
mod exchange;
mod format;
mod marshal;
mod mpi;
mod scratch;
mod signature;
mod unmarshal;

pub use api::{
    as_library_operation, bcast_type, consume_reference, exchange_counters, in_library_operation,
    library_collective_point, marshal, marshal_into, marshal_size, predefined_code,
    predefined_datatype, read, recv_type, release_type, resolve_type, resolve_type_uncounted,
    send_type, set_type_cache_limit, setup_type_exchange, signature_count, signature_hash,
    signature_prefix_hash, signature_prefix_summary, stream_checksum, stream_signature_hash,
    type_reference, type_tree, unmarshal, write, ReceivedType, Representation, TYPE_REFERENCE_SIZE,
};
pub use compare::{
    compare, overlapping_entries, signature_difference, Comparison, Level, Overlap, OverlapEntry,
    SignatureDifference,
};
pub use error::{Error, Result};
pub use exchange::Counters as ExchangeCounters;
pub use format::codes::{Combiner, Distribution, Order, Predefined};
pub use format::describe;
pub use format::tree::{Attribute, Bounds, Kind, Node};
pub use mpi::built_for::{built_for as mpi_built_for, mismatch as mpi_mismatch, MpiMismatch};
pub use mpi::comm::{Comm, Status};
/// The MPI bindings the library is built on (mpi-sys's, or the MPI-5
/// ABI's with the `abi` feature), for the checker (`check/`), which
/// interposes MPI calls with the same bindings. Not a stable API.
#[doc(hidden)]
pub use mpi::sys;
pub use mpi::Datatype;
pub use signature::{
    signature_count as tree_signature_count, signature_hash as tree_signature_hash,
    signature_prefix_hash as tree_signature_prefix_hash,
    signature_prefix_summary as tree_signature_prefix_summary,
    signature_summary as tree_signature_summary, HashKind, Summary, Verdict,
};

/// Internals for this crate's tests, fuzz targets and benches: not part of
/// the API, and may change in any release.
#[doc(hidden)]
pub mod testing {
    pub use crate::format::{codes, compressed, internal, sink, tree};
    pub mod external {
        pub use crate::format::external::*;
        pub use crate::signature::stream::{read, write};
    }
    pub mod api {
        pub use crate::api::*;
    }
    pub mod capi {
        pub use crate::capi::*;
    }
    pub mod marshal {
        pub use crate::marshal::*;
    }
    pub mod attributes {
        pub use crate::marshal::attributes::*;
    }
    pub mod mpi {
        pub use crate::mpi::*;
    }
    pub mod signature {
        pub use crate::signature::*;
    }
    pub mod exchange {
        pub use crate::exchange::*;
    }
    pub mod unmarshal {
        pub use crate::unmarshal::*;
    }
}
