//! Shared by the integration tests: MPI start-up, the corpus of datatypes,
//! and the comparison of two datatypes by every observable.
#![allow(dead_code)]

pub mod blob;

use mpix_marshal::testing::codes::{Predefined, PREDEFINED};
use mpix_marshal::testing::mpi::f90::F90;
use mpix_marshal::testing::mpi::sys as ffi;
use mpix_marshal::testing::mpi::{self, shim, Datatype, MPI_Aint, MPI_Count};
use std::os::raw::{c_int, c_void};
use std::sync::Once;

/// The version-4 stream ("MXDT", no checksum) of a version-5 external
/// stream: the same header and nodes, without the checksum.
pub fn as_version_4(ext: &[u8]) -> Vec<u8> {
    let mut old = ext[..ext.len() - 4].to_vec();
    old[..4].copy_from_slice(b"MXDT");
    old[4] = old[4] & 0x1f | 4 << 5;
    old
}

/// Initializes MPI once per test process, with errors returned rather than
/// fatal, so that a failing MPI call fails the test instead of aborting.
pub fn init() {
    static INIT: Once = Once::new();
    INIT.call_once(|| unsafe {
        let mut provided = 0;
        let rc = ffi::MPI_Init_thread(
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            ffi::MPI_THREAD_MULTIPLE as c_int,
            &mut provided,
        );
        assert_eq!(rc, 0, "MPI_Init_thread");
        ffi::MPI_Comm_set_errhandler(ffi::RSMPI_COMM_SELF, ffi::RSMPI_ERRORS_RETURN);
        ffi::MPI_Comm_set_errhandler(ffi::RSMPI_COMM_WORLD, ffi::RSMPI_ERRORS_RETURN);
    });
}

pub fn ok(rc: c_int, what: &str) {
    assert_eq!(rc, 0, "{what} failed: {}", mpi::error_string(rc));
}

/// A predefined handle by MPI name.
pub fn named(name: &str) -> Datatype {
    try_named(name).unwrap_or_else(|| panic!("{name} is not defined by this MPI"))
}

pub fn try_named(name: &str) -> Option<Datatype> {
    let code = PREDEFINED.iter().find(|e| e.1 == name)?.0;
    mpi::local().datatype(Predefined(code))
}

pub fn null() -> Datatype {
    mpi::local().datatype_null()
}

fn out() -> Datatype {
    null()
}

pub fn contiguous(n: i32, t: Datatype) -> Datatype {
    let mut o = out();
    ok(
        unsafe { ffi::MPI_Type_contiguous(n, t, &mut o) },
        "contiguous",
    );
    o
}
pub fn vector(n: i32, b: i32, s: i32, t: Datatype) -> Datatype {
    let mut o = out();
    ok(
        unsafe { ffi::MPI_Type_vector(n, b, s, t, &mut o) },
        "vector",
    );
    o
}
pub fn hvector(n: i32, b: i32, s: MPI_Aint, t: Datatype) -> Datatype {
    let mut o = out();
    ok(
        unsafe { ffi::MPI_Type_create_hvector(n, b, s, t, &mut o) },
        "hvector",
    );
    o
}
pub fn indexed(b: &[i32], d: &[i32], t: Datatype) -> Datatype {
    let mut o = out();
    ok(
        unsafe { ffi::MPI_Type_indexed(b.len() as c_int, b.as_ptr(), d.as_ptr(), t, &mut o) },
        "indexed",
    );
    o
}
pub fn hindexed(b: &[i32], d: &[MPI_Aint], t: Datatype) -> Datatype {
    let mut o = out();
    ok(
        unsafe {
            ffi::MPI_Type_create_hindexed(b.len() as c_int, b.as_ptr(), d.as_ptr(), t, &mut o)
        },
        "hindexed",
    );
    o
}
pub fn indexed_block(b: i32, d: &[i32], t: Datatype) -> Datatype {
    let mut o = out();
    ok(
        unsafe { ffi::MPI_Type_create_indexed_block(d.len() as c_int, b, d.as_ptr(), t, &mut o) },
        "indexed_block",
    );
    o
}
pub fn hindexed_block(b: i32, d: &[MPI_Aint], t: Datatype) -> Datatype {
    let mut o = out();
    ok(
        unsafe { ffi::MPI_Type_create_hindexed_block(d.len() as c_int, b, d.as_ptr(), t, &mut o) },
        "hindexed_block",
    );
    o
}
pub fn structure(b: &[i32], d: &[MPI_Aint], t: &[Datatype]) -> Datatype {
    let mut o = out();
    ok(
        unsafe {
            ffi::MPI_Type_create_struct(
                b.len() as c_int,
                b.as_ptr(),
                d.as_ptr(),
                t.as_ptr(),
                &mut o,
            )
        },
        "struct",
    );
    o
}
pub fn subarray(
    sizes: &[i32],
    sub: &[i32],
    starts: &[i32],
    fortran: bool,
    t: Datatype,
) -> Datatype {
    let c = &mpi::local().constants;
    let order = if fortran { c.order_fortran } else { c.order_c };
    let mut o = out();
    ok(
        unsafe {
            ffi::MPI_Type_create_subarray(
                sizes.len() as c_int,
                sizes.as_ptr(),
                sub.as_ptr(),
                starts.as_ptr(),
                order,
                t,
                &mut o,
            )
        },
        "subarray",
    );
    o
}
/// distribs: 'b' block, 'c' cyclic, 'n' none; darg 0 = default.
#[allow(clippy::too_many_arguments)]
pub fn darray(
    size: i32,
    rank: i32,
    gsizes: &[i32],
    distribs: &str,
    dargs: &[i32],
    psizes: &[i32],
    fortran: bool,
    t: Datatype,
) -> Datatype {
    let c = &mpi::local().constants;
    let order = if fortran { c.order_fortran } else { c.order_c };
    let d: Vec<c_int> = distribs
        .chars()
        .map(|x| match x {
            'b' => c.distribute_block,
            'c' => c.distribute_cyclic,
            _ => c.distribute_none,
        })
        .collect();
    let a: Vec<c_int> = dargs
        .iter()
        .map(|&x| if x == 0 { c.distribute_dflt_darg } else { x })
        .collect();
    let mut o = out();
    ok(
        unsafe {
            ffi::MPI_Type_create_darray(
                size,
                rank,
                gsizes.len() as c_int,
                gsizes.as_ptr(),
                d.as_ptr(),
                a.as_ptr(),
                psizes.as_ptr(),
                order,
                t,
                &mut o,
            )
        },
        "darray",
    );
    o
}
pub fn resized(t: Datatype, lb: MPI_Aint, extent: MPI_Aint) -> Datatype {
    let mut o = out();
    ok(
        unsafe { ffi::MPI_Type_create_resized(t, lb, extent, &mut o) },
        "resized",
    );
    o
}
pub fn dup(t: Datatype) -> Datatype {
    let mut o = out();
    ok(unsafe { ffi::MPI_Type_dup(t, &mut o) }, "dup");
    o
}
pub fn set_name(t: Datatype, name: &str) -> Datatype {
    mpi::set_name(t, name.as_bytes()).unwrap();
    t
}
pub fn free(t: Datatype) {
    if !mpix_marshal::type_tree(t).unwrap().is_predefined() {
        mpi::free(t).unwrap();
    }
}
/// Frees a handle known to be derived, without asking (for timed loops).
pub fn release(t: Datatype) {
    mpi::free(t).unwrap();
}

/// The HDF5-derived type of REFERENCE.md: with MPI_LB/MPI_UB markers when
/// `markers` (only where the MPI has them), or its portable resized form.
pub fn hdf5_complex(markers: bool) -> Datatype {
    let byte = named("MPI_BYTE");
    let wrap = |x: Datatype, d: MPI_Aint, u: MPI_Aint| -> Datatype {
        if markers {
            let r = structure(
                &[1, 1, 1],
                &[0, d, u],
                &[named("MPI_LB"), x, named("MPI_UB")],
            );
            free(x);
            r
        } else if d == 0 {
            let r = resized(x, 0, u);
            free(x);
            r
        } else {
            let s = structure(&[1], &[d], &[x]);
            free(x);
            let r = resized(s, 0, u);
            free(s);
            r
        }
    };
    let vec = |n: i32, x: Datatype| {
        let v = vector(1, n, 1, x);
        free(x);
        v
    };
    let make = |d1: MPI_Aint| {
        let ctg = contiguous(4, byte);
        let vect = vec(5, ctg);
        let s1 = wrap(vect, d1, 40);
        let v2 = vec(5, s1);
        let s2 = wrap(v2, 2000, 400);
        let v3 = vec(5, s2);
        let s3 = wrap(v3, 0, 4000);
        let v4 = vec(5, s3);
        let s4 = wrap(v4, 0, 40000);
        let v5 = vec(1, s4);
        wrap(v5, 160000, 200000)
    };
    let a = make(0);
    let b = make(20);
    let top = structure(&[1, 1], &[0, 0], &[a, b]);
    free(a);
    free(b);
    top
}

/// The paper's indexed type: three regions of a byte array.
pub fn paper_indexed() -> Datatype {
    indexed(&[4, 8, 2], &[0, 16, 40], named("MPI_BYTE"))
}

/// A struct of 1000 members of five basic types.
pub fn struct_1000() -> Datatype {
    let n = 1000;
    let b: Vec<i32> = (0..n).map(|i| (i % 3) + 1).collect();
    let d: Vec<MPI_Aint> = (0..n).map(|i| (i as MPI_Aint) * 40 - 2000).collect();
    let pool = [
        "MPI_INT",
        "MPI_DOUBLE",
        "MPI_CHAR",
        "MPI_FLOAT",
        "MPI_SHORT",
    ]
    .map(named);
    let t: Vec<Datatype> = (0..n).map(|i| pool[i as usize % pool.len()]).collect();
    structure(&b, &d, &t)
}

/// An indexed type of 100,000 blocks of bytes, a quarter of them empty.
pub fn indexed_100k() -> Datatype {
    let n = 100_000;
    let b: Vec<i32> = (0..n).map(|i| i % 4).collect();
    let d: Vec<i32> = (0..n).map(|i| i * 5).collect();
    indexed(&b, &d, named("MPI_BYTE"))
}

pub struct Case {
    pub name: String,
    pub datatype: Datatype,
}

fn case(name: &str, datatype: Datatype) -> Case {
    Case {
        name: name.to_string(),
        datatype,
    }
}

/// The test corpus: every combiner, the paper's types, the edge cases.
pub fn corpus() -> Vec<Case> {
    let int = named("MPI_INT");
    let dbl = named("MPI_DOUBLE");
    let byte = named("MPI_BYTE");
    let chr = named("MPI_CHAR");
    let mut v = Vec::new();
    for n in [
        "MPI_INT",
        "MPI_DOUBLE",
        "MPI_BYTE",
        "MPI_PACKED",
        "MPI_FLOAT_INT",
        "MPI_2INT",
        "MPI_LONG_DOUBLE_INT",
        "MPI_C_BOOL",
        "MPI_INT8_T",
        "MPI_UINT64_T",
        "MPI_AINT",
        "MPI_COUNT",
        "MPI_OFFSET",
        "MPI_C_DOUBLE_COMPLEX",
        "MPI_CXX_BOOL",
        "MPI_INTEGER",
        "MPI_REAL8",
        "MPI_DOUBLE_PRECISION",
        "MPI_2DOUBLE_PRECISION",
        "MPI_CHARACTER",
        "MPI_WCHAR",
        // The Fortran codes version 4 of the format renumbered (the MPI-5
        // ABI's), and MPI_LOGICAL16, where the MPI has them.
        "MPI_LOGICAL",
        "MPI_INTEGER1",
        "MPI_LOGICAL4",
        "MPI_INTEGER8",
        "MPI_LOGICAL16",
        "MPI_INTEGER16",
    ] {
        if let Some(t) = try_named(n) {
            v.push(case(n, t));
        }
    }
    v.push(case("dup(int)", dup(int)));
    v.push(case("contiguous(5,double)", contiguous(5, dbl)));
    v.push(case("contiguous(0,int)", contiguous(0, int)));
    v.push(case("vector(3,2,4,int)", vector(3, 2, 4, int)));
    v.push(case("vector negative stride", vector(4, 1, -3, dbl)));
    v.push(case("hvector negative stride", hvector(3, 2, -24, int)));
    v.push(case("paper indexed", paper_indexed()));
    v.push(case(
        "indexed zero-count blocks",
        indexed(&[0, 2, 0, 3], &[5, 1, 9, -4], int),
    ));
    v.push(case(
        "hindexed negative displacements",
        hindexed(&[1, 2, 3], &[-64, 0, 40], dbl),
    ));
    v.push(case("indexed_block", indexed_block(2, &[0, 7, 3], dbl)));
    v.push(case(
        "hindexed_block",
        hindexed_block(3, &[100, -12, 0], chr),
    ));
    v.push(case(
        "struct{int,double,char}",
        structure(&[1, 2, 3], &[0, 8, 24], &[int, dbl, chr]),
    ));
    v.push(case(
        "struct with zero blocks",
        structure(&[0, 1, 0], &[-8, 4, 100], &[dbl, int, chr]),
    ));
    v.push(case("struct with 1000 members", struct_1000()));
    v.push(case("indexed with 100000 blocks", indexed_100k()));
    v.push(case(
        "subarray C 3d",
        subarray(&[10, 12, 7], &[3, 4, 5], &[2, 8, 1], false, dbl),
    ));
    v.push(case(
        "subarray Fortran 2d",
        subarray(&[9, 5], &[9, 1], &[0, 4], true, int),
    ));
    v.push(case(
        "darray block/cyclic",
        darray(4, 1, &[16, 10], "bc", &[0, 2], &[2, 2], false, dbl),
    ));
    v.push(case(
        "darray block darg/none, Fortran",
        darray(3, 2, &[12, 5, 4], "bnc", &[5, 0, 0], &[3, 1, 1], true, int),
    ));
    v.push(case(
        "resized negative lb",
        resized(vector(2, 1, 3, int), -8, 40),
    ));
    // Extents an MPI pads by rules of its own (spec/external.md §5.6): a
    // struct of one shared member handle, of equal but distinct handles,
    // and byte-displaced types whose data ends off the alignment.
    for (name, t) in extent_cases() {
        v.push(case(name, t));
    }
    let f90r = f90(F90::Real, 6, 30);
    let f90c = f90(F90::Complex, 15, ffi::MPI_UNDEFINED as c_int);
    let f90i = f90(F90::Integer, 0, 9);
    v.push(case("f90 real", f90r));
    v.push(case("f90 complex", f90c));
    v.push(case("f90 integer", f90i));
    v.push(case("contiguous(3, f90 real)", contiguous(3, f90r)));
    v.push(case(
        "struct of f90 types",
        structure(&[1, 2, 1], &[0, 8, 40], &[f90r, f90c, f90i]),
    ));
    // Listing 1 of the paper.
    let a = vector(2, 1, 2, byte);
    let ext = extent_of(a);
    v.push(case("Listing 1 A", a));
    v.push(case("Listing 1 B", resized(a, 0, ext + 1)));
    v.push(case("HDF5 complex (resized form)", hdf5_complex(false)));
    if try_named("MPI_LB").is_some() {
        v.push(case("HDF5 complex (LB/UB form)", hdf5_complex(true)));
        v.push(case(
            "struct with LB/UB markers",
            structure(
                &[1, 2, 1],
                &[-4, 8, 64],
                &[named("MPI_LB"), int, named("MPI_UB")],
            ),
        ));
    }
    {
        // 64 levels, cycling through one-child combiners.
        let mut t = int;
        for i in 0..64 {
            let next = match i % 5 {
                0 => contiguous(2, t),
                1 => vector(2, 1, 2, t),
                2 => dup(t),
                3 => resized(t, 0, extent_of(t) + 4),
                _ => hvector(1, 2, 0, t),
            };
            if i != 0 {
                free(t);
            }
            t = next;
        }
        v.push(case("nested 64 deep", t));
    }
    {
        let inner = set_name(contiguous(2, dbl), "inner pair");
        let mid = set_name(vector(3, 1, 2, inner), "middle vector");
        let top = structure(&[1, 1], &[0, 256], &[mid, int]);
        set_name(top, "the top level");
        free(inner);
        free(mid);
        v.push(case("names at three levels", top));
    }
    v.push(case("named dup", set_name(dup(dbl), "a dup with a name")));
    v.push(case(
        "pair types in a struct",
        structure(
            &[2, 1],
            &[0, 32],
            &[named("MPI_DOUBLE_INT"), named("MPI_SHORT_INT")],
        ),
    ));
    v.push(case(
        "hvector of struct",
        hvector(3, 1, 64, structure(&[1, 1], &[0, 16], &[int, dbl])),
    ));
    if mpi::local().has_mpi1() {
        let mut o = null();
        ok(
            unsafe { shim::mpixm_type_hvector(2, 3, 48, int, &mut o) },
            "MPI_Type_hvector",
        );
        v.push(case("MPI-1 hvector", o));
        let mut b = [1, 2];
        let mut d: [MPI_Aint; 2] = [0, 16];
        let mut o = null();
        ok(
            unsafe { shim::mpixm_type_hindexed(2, b.as_mut_ptr(), d.as_mut_ptr(), dbl, &mut o) },
            "MPI_Type_hindexed",
        );
        v.push(case("MPI-1 hindexed", o));
        let mut t = [int, dbl];
        let mut o = null();
        ok(
            unsafe {
                shim::mpixm_type_struct(2, b.as_mut_ptr(), d.as_mut_ptr(), t.as_mut_ptr(), &mut o)
            },
            "MPI_Type_struct",
        );
        v.push(case("MPI-1 struct", o));
    }
    if mpi::local().constants.have_value_index != 0 {
        // MPI 4.1's MPI_Type_get_value_index: MPICH 5 returns the predefined
        // pair type (MPI_FLOAT_INT), never a VALUE_INDEX combiner.
        let mut o = null();
        ok(
            unsafe { shim::mpixm_type_get_value_index(named("MPI_FLOAT"), int, &mut o) },
            "MPI_Type_get_value_index",
        );
        v.push(case("value_index(float, int)", o));
        v.push(case("contiguous(2, value_index(double, int))", {
            let mut p = null();
            ok(
                unsafe { shim::mpixm_type_get_value_index(dbl, int, &mut p) },
                "MPI_Type_get_value_index",
            );
            contiguous(2, p)
        }));
    }
    if mpi::local().has_large_count() {
        let big: MPI_Count = 1 << 32;
        let mut o = null();
        ok(
            unsafe { shim::mpixm_type_contiguous_c(big + 3, byte, &mut o) },
            "contiguous_c",
        );
        v.push(case("contiguous_c 2^32+3 bytes", o));
        let mut o = null();
        ok(
            unsafe { shim::mpixm_type_vector_c(3, 2, big, dbl, &mut o) },
            "vector_c",
        );
        v.push(case("vector_c stride 2^32", o));
        let mut o = null();
        ok(
            unsafe { shim::mpixm_type_contiguous_c(7, int, &mut o) },
            "contiguous_c small",
        );
        v.push(case("contiguous_c small", o));
        let bl: [MPI_Count; 2] = [1, big];
        let ds: [MPI_Count; 2] = [0, 8];
        let ts = [dbl, byte];
        let mut o = null();
        ok(
            unsafe {
                shim::mpixm_type_create_struct_c(2, bl.as_ptr(), ds.as_ptr(), ts.as_ptr(), &mut o)
            },
            "struct_c",
        );
        v.push(case("struct_c with 2^32 block", o));
        let sz: [MPI_Count; 2] = [big, 4];
        let ss: [MPI_Count; 2] = [2, 4];
        let st: [MPI_Count; 2] = [big - 2, 0];
        let mut o = null();
        let oc = mpi::local().constants.order_c;
        ok(
            unsafe {
                shim::mpixm_type_create_subarray_c(
                    2,
                    sz.as_ptr(),
                    ss.as_ptr(),
                    st.as_ptr(),
                    oc,
                    byte,
                    &mut o,
                )
            },
            "subarray_c",
        );
        v.push(case("subarray_c 2^32 rows", o));
        let mut o = null();
        ok(
            unsafe { shim::mpixm_type_create_resized_c(-(big), 2 * big, int, &mut o) },
            "resized_c",
        );
        v.push(case("resized_c", o));
    }
    v
}

/// The hvector of issue 18: `MPI_Type_create_hvector(2, 1, 24,
/// MPI_LONG_DOUBLE)`.
pub fn long_double_hvector() -> Datatype {
    hvector(2, 1, 24, named("MPI_LONG_DOUBLE"))
}

/// A struct of 5 members at 8, 48, 128, 248, 408, each of the types
/// `member` makes: one shared handle (`shared`) or a new one each.
pub fn five_member_struct(member: fn() -> Datatype, shared: bool) -> Datatype {
    let first = member();
    let types: Vec<Datatype> = (0..5)
        .map(|i| if shared || i == 0 { first } else { member() })
        .collect();
    let t = structure(&[1; 5], &[8, 48, 128, 248, 408], &types);
    for (i, &m) in types.iter().enumerate() {
        if i == 0 || !shared {
            free(m);
        }
    }
    t
}

/// `MPI_Type_create_resized(MPI_DOUBLE_INT, 160, 12)`.
pub fn resized_double_int() -> Datatype {
    resized(named("MPI_DOUBLE_INT"), 160, 12)
}

/// A struct of 2 members at 8 and 32 of `resized_double_int`: one shared
/// handle or two.
pub fn double_int_struct(shared: bool) -> Datatype {
    let a = resized_double_int();
    let b = if shared { a } else { resized_double_int() };
    let t = structure(&[1, 1], &[8, 32], &[a, b]);
    free(a);
    if !shared {
        free(b);
    }
    t
}

/// Types whose extent an MPI pads by an implementation-defined rule: the
/// two structs of issue 18 with shared and with distinct member handles,
/// nested in a contiguous and in another struct, and byte-displaced types
/// whose data ends off their alignment (MPICH and Open MPI pad those
/// differently).
pub fn extent_cases() -> Vec<(&'static str, Datatype)> {
    let dbl = named("MPI_DOUBLE");
    let shared = five_member_struct(long_double_hvector, true);
    let in_contiguous = contiguous(3, shared);
    let in_struct = structure(&[2, 1], &[0, 900], &[shared, named("MPI_CHAR")]);
    let pair = double_int_struct(true);
    let nested_pairs = structure(&[1, 1], &[0, 40], &[pair, pair]);
    vec![
        ("struct of one shared hvector handle", shared),
        (
            "struct of distinct hvector handles",
            five_member_struct(long_double_hvector, false),
        ),
        ("contiguous of a shared-handle struct", in_contiguous),
        ("struct holding a shared-handle struct", in_struct),
        ("struct of one shared resized DOUBLE_INT", pair),
        (
            "struct of distinct resized DOUBLE_INT",
            double_int_struct(false),
        ),
        ("struct of shared-handle structs", nested_pairs),
        (
            "struct of doubles at 0, 12",
            structure(&[1, 1], &[0, 12], &[dbl, dbl]),
        ),
        ("hvector of doubles, stride 12", hvector(2, 1, 12, dbl)),
        (
            "hindexed of doubles at 0, 12",
            hindexed(&[1, 1], &[0, 12], dbl),
        ),
        (
            "hindexed_block of doubles at 0, 12",
            hindexed_block(1, &[0, 12], dbl),
        ),
        ("hvector of doubles, stride -12", hvector(2, 1, -12, dbl)),
        (
            "hvector of ints, stride 6",
            hvector(2, 1, 6, named("MPI_INT")),
        ),
    ]
}

/// The external stream of `tree`, with its header.
pub fn stream_of(tree: &mpix_marshal::testing::tree::Node) -> Vec<u8> {
    let mut out = Vec::new();
    mpix_marshal::testing::external::write(tree, &mut out).unwrap();
    out
}

pub fn extent_of(t: Datatype) -> MPI_Aint {
    let (mut lb, mut ext) = (0, 0);
    ok(
        unsafe { ffi::MPI_Type_get_extent(t, &mut lb, &mut ext) },
        "get_extent",
    );
    ext
}

/// The bytes MPI_Pack produces for `count` elements of `t` read from a
/// buffer filled with a fixed pattern, or None when the data would be too
/// large to pack in a test.
pub fn pack(t: Datatype, count: i32) -> Option<Vec<u8>> {
    let g = mpi::geometry(t).unwrap();
    if g.size == 0 {
        return Some(vec![]);
    }
    let reps = (count as i64 - 1) * g.extent;
    let lo = g.true_lb + reps.min(0);
    let hi = g.true_lb + g.true_extent + reps.max(0);
    let span = hi - lo;
    if span > 64 << 20 || g.size * count as i64 > 64 << 20 {
        return None;
    }
    let src: Vec<u8> = (0..span)
        .map(|i| (i.wrapping_mul(31).wrapping_add(7) % 251) as u8)
        .collect();
    let base = src.as_ptr().wrapping_offset(-lo as isize) as *mut c_void;
    let mut committed = t;
    let derived = mpi::local().predefined(t).is_none();
    if derived {
        // Commit a dup so the caller's handle stays as it was.
        committed = dup(t);
        ok(unsafe { ffi::MPI_Type_commit(&mut committed) }, "commit");
    }
    let mut need = 0;
    ok(
        unsafe { ffi::MPI_Pack_size(count, committed, ffi::RSMPI_COMM_WORLD, &mut need) },
        "pack_size",
    );
    let mut out = vec![0u8; need as usize];
    let mut pos = 0;
    ok(
        unsafe {
            ffi::MPI_Pack(
                base,
                count,
                committed,
                out.as_mut_ptr() as *mut c_void,
                need,
                &mut pos,
                ffi::RSMPI_COMM_WORLD,
            )
        },
        "pack",
    );
    out.truncate(pos as usize);
    if derived {
        mpi::free(committed).unwrap();
    }
    Some(out)
}

/// Asserts that `b` cannot be told from `a` by any observable: size,
/// extents, packed bytes for counts 1..3, and the envelope/contents tree
/// with its names. With `constructor_equal` false (a typemap-equivalent
/// substitute), the trees are not compared.
pub fn assert_same(what: &str, a: Datatype, b: Datatype, constructor_equal: bool) {
    let ga = mpi::geometry(a).unwrap();
    let gb = mpi::geometry(b).unwrap();
    assert_eq!(ga, gb, "{what}: size/lb/extent/true extent differ");
    for count in 1..=3 {
        assert_eq!(
            pack(a, count),
            pack(b, count),
            "{what}: MPI_Pack of {count} differs"
        );
    }
    if constructor_equal {
        let ta = mpix_marshal::type_tree(a).unwrap();
        let tb = mpix_marshal::type_tree(b).unwrap();
        assert_eq!(ta, tb, "{what}: envelope/contents trees differ");
    }
}

/// An F90 parameterized type, through the library's own path (one lock
/// for every creation: MPI_Type_create_f90_* is not thread-safe on MPICH
/// 5.0 and Open MPI, and the tests create types on several threads).
pub fn f90(kind: F90, p: c_int, r: c_int) -> Datatype {
    let undefined = ffi::MPI_UNDEFINED as c_int;
    match mpi::f90::create(kind, p, r, undefined) {
        Ok(t) => t,
        Err(rc) => panic!("{kind:?} F90 type ({p}, {r}): MPI error {rc}"),
    }
}
