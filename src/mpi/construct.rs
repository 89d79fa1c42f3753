//! The datatype constructors: one call per constructor (classic, MPI-4
//! large-count `_c` and removed MPI-1 forms), each with its arguments as
//! slices, so that the count MPI reads is always the slices' length. The
//! tree rebuilder (`unmarshal`) and the direct path (`unmarshal::direct`)
//! both build through `construct`.

use super::{check, shim, Datatype, MPI_Aint, MPI_Count, OwnedDatatype};
use crate::error::{Error, Result};
use crate::format::codes::Combiner;
use crate::mpi::sys as ffi;
use std::os::raw::c_int;

/// A constructor call and its arguments.
pub enum Call<'a> {
    Dup(Datatype),
    Contiguous(c_int, Datatype),
    ContiguousC(MPI_Count, Datatype),
    /// count, blocklength, stride (in elements of old).
    Vector([c_int; 3], Datatype),
    VectorC([MPI_Count; 3], Datatype),
    /// count, blocklength; stride in bytes.
    Hvector([c_int; 2], MPI_Aint, Datatype),
    HvectorC([MPI_Count; 3], Datatype),
    /// MPI-1's `MPI_Type_hvector` (HVECTOR_INTEGER).
    HvectorMpi1([c_int; 2], MPI_Aint, Datatype),
    /// blocklengths, displacements.
    Indexed(&'a [c_int], &'a [c_int], Datatype),
    IndexedC(&'a [MPI_Count], &'a [MPI_Count], Datatype),
    Hindexed(&'a [c_int], &'a [MPI_Aint], Datatype),
    HindexedC(&'a [MPI_Count], &'a [MPI_Count], Datatype),
    /// MPI-1's `MPI_Type_hindexed` (HINDEXED_INTEGER).
    HindexedMpi1(&'a [c_int], &'a [MPI_Aint], Datatype),
    /// blocklength, displacements.
    IndexedBlock(c_int, &'a [c_int], Datatype),
    IndexedBlockC(MPI_Count, &'a [MPI_Count], Datatype),
    HindexedBlock(c_int, &'a [MPI_Aint], Datatype),
    HindexedBlockC(MPI_Count, &'a [MPI_Count], Datatype),
    /// blocklengths, displacements, member types.
    Struct(&'a [c_int], &'a [MPI_Aint], &'a [Datatype]),
    StructC(&'a [MPI_Count], &'a [MPI_Count], &'a [Datatype]),
    /// MPI-1's `MPI_Type_struct` (STRUCT_INTEGER).
    StructMpi1(&'a [c_int], &'a [MPI_Aint], &'a [Datatype]),
    Subarray(Subarray<'a, c_int>),
    SubarrayC(Subarray<'a, MPI_Count>),
    Darray(Darray<'a, c_int>),
    DarrayC(Darray<'a, MPI_Count>),
    /// old, lb, extent.
    Resized(Datatype, MPI_Aint, MPI_Aint),
    ResizedC(Datatype, MPI_Count, MPI_Count),
    /// value type, index type.
    ValueIndex(Datatype, Datatype),
}

/// `MPI_Type_create_subarray`'s arguments (`order` a local constant).
pub struct Subarray<'a, T> {
    pub sizes: &'a [T],
    pub subsizes: &'a [T],
    pub starts: &'a [T],
    pub order: c_int,
    pub old: Datatype,
}

/// `MPI_Type_create_darray`'s arguments (distributions, dargs and order
/// local constants).
pub struct Darray<'a, T> {
    pub size: c_int,
    pub rank: c_int,
    pub gsizes: &'a [T],
    pub distribs: &'a [c_int],
    pub dargs: &'a [c_int],
    pub psizes: &'a [c_int],
    pub order: c_int,
    pub old: Datatype,
}

impl Call<'_> {
    /// The MPI function it calls, for messages.
    pub fn name(&self) -> &'static str {
        match self {
            Call::Dup(..) => "MPI_Type_dup",
            Call::Contiguous(..) => "MPI_Type_contiguous",
            Call::ContiguousC(..) => "MPI_Type_contiguous_c",
            Call::Vector(..) => "MPI_Type_vector",
            Call::VectorC(..) => "MPI_Type_vector_c",
            Call::Hvector(..) => "MPI_Type_create_hvector",
            Call::HvectorC(..) => "MPI_Type_create_hvector_c",
            Call::HvectorMpi1(..) => "MPI_Type_hvector",
            Call::Indexed(..) => "MPI_Type_indexed",
            Call::IndexedC(..) => "MPI_Type_indexed_c",
            Call::Hindexed(..) => "MPI_Type_create_hindexed",
            Call::HindexedC(..) => "MPI_Type_create_hindexed_c",
            Call::HindexedMpi1(..) => "MPI_Type_hindexed",
            Call::IndexedBlock(..) => "MPI_Type_create_indexed_block",
            Call::IndexedBlockC(..) => "MPI_Type_create_indexed_block_c",
            Call::HindexedBlock(..) => "MPI_Type_create_hindexed_block",
            Call::HindexedBlockC(..) => "MPI_Type_create_hindexed_block_c",
            Call::Struct(..) => "MPI_Type_create_struct",
            Call::StructC(..) => "MPI_Type_create_struct_c",
            Call::StructMpi1(..) => "MPI_Type_struct",
            Call::Subarray(..) => "MPI_Type_create_subarray",
            Call::SubarrayC(..) => "MPI_Type_create_subarray_c",
            Call::Darray(..) => "MPI_Type_create_darray",
            Call::DarrayC(..) => "MPI_Type_create_darray_c",
            Call::Resized(..) => "MPI_Type_create_resized",
            Call::ResizedC(..) => "MPI_Type_create_resized_c",
            Call::ValueIndex(..) => "MPI_Type_get_value_index",
        }
    }
}

/// The slices' common length, as a C int: arrays a call reads with one
/// count must have that many elements.
fn count<T: TryFrom<usize>>(lens: &[usize]) -> Result<T> {
    let n = lens[0];
    if lens.iter().any(|&l| l != n) {
        return Err(Error::invalid(format!(
            "constructor arrays of different lengths {lens:?}"
        )));
    }
    T::try_from(n).map_err(|_| Error::invalid(format!("{n} elements do not fit a count")))
}

/// Makes `call`; its error names the call and the combiner it builds
/// (`what`). The new handle is owned: dropping it frees it. One of the
/// library's own calls (`own_calls`): a PMPI tool does not count the
/// types the library builds as the program's.
pub fn construct(call: Call, what: Combiner) -> Result<OwnedDatatype> {
    super::own_calls::within(|| construct_now(call, what))
}

fn construct_now(call: Call, what: Combiner) -> Result<OwnedDatatype> {
    let name = call.name();
    let value_index = matches!(call, Call::ValueIndex(..));
    let mut out = super::local().datatype_null();
    let o = &mut out as *mut Datatype;
    // SAFETY: (every call) each array argument is a slice whose length is
    // the count passed with it (checked by `count`), every handle is a
    // live datatype of the caller's, and `o` points to a local. The MPI-1
    // shim wrappers take `*mut` for arrays MPI only reads.
    let rc = unsafe {
        match call {
            Call::Dup(old) => ffi::MPI_Type_dup(old, o),
            Call::Contiguous(n, old) => ffi::MPI_Type_contiguous(n, old, o),
            Call::ContiguousC(n, old) => shim::mpixm_type_contiguous_c(n, old, o),
            Call::Vector([n, b, s], old) => ffi::MPI_Type_vector(n, b, s, old, o),
            Call::VectorC([n, b, s], old) => shim::mpixm_type_vector_c(n, b, s, old, o),
            Call::Hvector([n, b], s, old) => ffi::MPI_Type_create_hvector(n, b, s, old, o),
            Call::HvectorC([n, b, s], old) => shim::mpixm_type_create_hvector_c(n, b, s, old, o),
            Call::HvectorMpi1([n, b], s, old) => shim::mpixm_type_hvector(n, b, s, old, o),
            Call::Indexed(b, d, old) => {
                let n = count(&[b.len(), d.len()])?;
                ffi::MPI_Type_indexed(n, b.as_ptr(), d.as_ptr(), old, o)
            }
            Call::IndexedC(b, d, old) => {
                let n = count(&[b.len(), d.len()])?;
                shim::mpixm_type_indexed_c(n, b.as_ptr(), d.as_ptr(), old, o)
            }
            Call::Hindexed(b, d, old) => {
                let n = count(&[b.len(), d.len()])?;
                ffi::MPI_Type_create_hindexed(n, b.as_ptr(), d.as_ptr(), old, o)
            }
            Call::HindexedC(b, d, old) => {
                let n = count(&[b.len(), d.len()])?;
                shim::mpixm_type_create_hindexed_c(n, b.as_ptr(), d.as_ptr(), old, o)
            }
            Call::HindexedMpi1(b, d, old) => {
                let n = count(&[b.len(), d.len()])?;
                shim::mpixm_type_hindexed(n, b.as_ptr() as *mut _, d.as_ptr() as *mut _, old, o)
            }
            Call::IndexedBlock(b, d, old) => {
                let n = count(&[d.len()])?;
                ffi::MPI_Type_create_indexed_block(n, b, d.as_ptr(), old, o)
            }
            Call::IndexedBlockC(b, d, old) => {
                let n = count(&[d.len()])?;
                shim::mpixm_type_create_indexed_block_c(n, b, d.as_ptr(), old, o)
            }
            Call::HindexedBlock(b, d, old) => {
                let n = count(&[d.len()])?;
                ffi::MPI_Type_create_hindexed_block(n, b, d.as_ptr(), old, o)
            }
            Call::HindexedBlockC(b, d, old) => {
                let n = count(&[d.len()])?;
                shim::mpixm_type_create_hindexed_block_c(n, b, d.as_ptr(), old, o)
            }
            Call::Struct(b, d, t) => {
                let n = count(&[b.len(), d.len(), t.len()])?;
                ffi::MPI_Type_create_struct(n, b.as_ptr(), d.as_ptr(), t.as_ptr(), o)
            }
            Call::StructC(b, d, t) => {
                let n = count(&[b.len(), d.len(), t.len()])?;
                shim::mpixm_type_create_struct_c(n, b.as_ptr(), d.as_ptr(), t.as_ptr(), o)
            }
            Call::StructMpi1(b, d, t) => {
                let n = count(&[b.len(), d.len(), t.len()])?;
                let (b, d, t) = (b.as_ptr(), d.as_ptr(), t.as_ptr());
                shim::mpixm_type_struct(n, b as *mut _, d as *mut _, t as *mut _, o)
            }
            Call::Subarray(s) => {
                let n = count(&[s.sizes.len(), s.subsizes.len(), s.starts.len()])?;
                let (a, b, c) = (s.sizes.as_ptr(), s.subsizes.as_ptr(), s.starts.as_ptr());
                ffi::MPI_Type_create_subarray(n, a, b, c, s.order, s.old, o)
            }
            Call::SubarrayC(s) => {
                let n = count(&[s.sizes.len(), s.subsizes.len(), s.starts.len()])?;
                let (a, b, c) = (s.sizes.as_ptr(), s.subsizes.as_ptr(), s.starts.as_ptr());
                shim::mpixm_type_create_subarray_c(n, a, b, c, s.order, s.old, o)
            }
            Call::Darray(d) => {
                let lens = [d.gsizes.len(), d.distribs.len(), d.dargs.len()];
                let n = count(&[lens[0], lens[1], lens[2], d.psizes.len()])?;
                ffi::MPI_Type_create_darray(
                    d.size,
                    d.rank,
                    n,
                    d.gsizes.as_ptr(),
                    d.distribs.as_ptr(),
                    d.dargs.as_ptr(),
                    d.psizes.as_ptr(),
                    d.order,
                    d.old,
                    o,
                )
            }
            Call::DarrayC(d) => {
                let lens = [d.gsizes.len(), d.distribs.len(), d.dargs.len()];
                let n = count(&[lens[0], lens[1], lens[2], d.psizes.len()])?;
                shim::mpixm_type_create_darray_c(
                    d.size,
                    d.rank,
                    n,
                    d.gsizes.as_ptr(),
                    d.distribs.as_ptr(),
                    d.dargs.as_ptr(),
                    d.psizes.as_ptr(),
                    d.order,
                    d.old,
                    o,
                )
            }
            Call::Resized(old, lb, extent) => ffi::MPI_Type_create_resized(old, lb, extent, o),
            Call::ResizedC(old, lb, extent) => {
                shim::mpixm_type_create_resized_c(lb, extent, old, o)
            }
            Call::ValueIndex(value, index) => shim::mpixm_type_get_value_index(value, index, o),
        }
    };
    check(rc, name).map_err(|e| match e {
        Error::Mpi {
            call,
            code,
            message,
        } => Error::Mpi {
            call,
            code,
            message: format!("{message} (building {})", what.mpi_name()),
        },
        e => e,
    })?;
    if value_index && super::handle_bits(out) == super::handle_bits(super::local().datatype_null())
    {
        // MPI 4.1: MPI_DATATYPE_NULL when the MPI has no type for the pair
        // (MPICH 5 has one only for the six predefined pair types).
        return Err(Error::unsupported(
            "MPI_Type_get_value_index gives MPI_DATATYPE_NULL for this (value, index) pair on this MPI",
        ));
    }
    if value_index && !super::is_derived(out) {
        // MPI_Type_get_value_index may hand back a predefined pair type.
        return Ok(OwnedDatatype::borrowed(out));
    }
    // SAFETY: MPI just made `out` for this call, and it goes nowhere else.
    Ok(unsafe { OwnedDatatype::from_raw(out) })
}
