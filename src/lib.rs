//! mpix-marshal: marshal any MPI datatype into bytes and back.
//!
//! The library implements the `MPIX_Type_marshal` extension proposed by
//! Kimpe, Goodell and Ross ("MPI Datatype Marshalling: A Case Study in
//! Datatype Equivalence", EuroMPI 2010). The architecture follows the data:
//!
//! * [`decode`]: MPI datatype → [`tree::Node`] (envelope/contents calls),
//! * [`external`]: tree ↔ portable bytes (`spec/external.md`),
//! * [`encode`]: tree → new MPI datatype (constructor calls),
//! * [`signature`]: signature counts and hashes over the tree, [`compare`]:
//!   equivalence of two datatypes at five levels,
//! * [`api`]: the safe Rust API, and `capi`: the C API at the edge.
//!
//! Everything implementation-specific about MPI lives in [`mpi`] and the C
//! shim it wraps.

pub mod api;
pub mod attributes;
mod cache;
pub mod capi;
pub mod codes;
pub mod compare;
pub mod compressed;
pub mod decode;
mod direct;
pub mod encode;
pub mod error;
pub mod external;
pub mod internal;
pub mod mpi;
mod scratch;
pub mod signature;
pub mod sink;
pub mod tree;

pub use api::{marshal, marshal_into, marshal_size, read, type_tree, unmarshal, Representation};
pub use compare::{compare, Comparison, Level};
pub use error::{Error, Result};
