//! No leaks, no partial results (issue 5): when an unmarshal fails late,
//! after parts of the type were built, every datatype handle created so far
//! is freed, the output handle is untouched, and the attributes unmarshal
//! callbacks had already set are deleted with their types.
//!
//! Handles are counted through the MPI profiling interface (tests/pmpi):
//! this test binary defines MPI_Type_free, the constructors and
//! MPI_Type_get_contents, which count per thread and call PMPI_*. The same
//! layer injects failures: the k-th constructor or MPI_Type_set_name call
//! returns an MPI error, for every k a rebuild makes. Attribute values are
//! counted by their copy and delete callbacks.

mod common;
#[path = "pmpi/mod.rs"]
mod pmpi;

use common::blob::{blob_marshal, blob_size, get_blob};
use common::*;
use mpix_marshal::testing::attributes::{self, Keyval};
use mpix_marshal::testing::capi::{self, MPIX_Type_unmarshal};
use mpix_marshal::testing::codes::Predefined;
use mpix_marshal::testing::compressed::MAGIC_STORED;
use mpix_marshal::testing::mpi::sys as ffi;
use mpix_marshal::testing::mpi::{self as mpi, Datatype, MPI_Aint};
use mpix_marshal::testing::tree::{Attribute, Kind, Node};
use mpix_marshal::{marshal, unmarshal, Representation};
use std::ffi::{CStr, CString};
use std::os::raw::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicUsize, Ordering::SeqCst};
use std::sync::Mutex;

const REPS: [Representation; 3] = [
    Representation::External,
    Representation::Internal,
    Representation::Compressed,
];

fn typerep(rep: Representation) -> &'static CStr {
    rep.c_name()
}

/// A handle no unmarshal returns, to see that `*type` is left untouched.
fn sentinel() -> Datatype {
    named("MPI_BYTE")
}

/// MPIX_Type_unmarshal through the C API: its code and the output handle.
fn c_unmarshal(rep: Representation, bytes: &[u8]) -> (c_int, Datatype) {
    let mut out = sentinel();
    let rc = unsafe {
        MPIX_Type_unmarshal(
            typerep(rep).as_ptr(),
            bytes.as_ptr() as *const c_void,
            bytes.len() as MPI_Aint,
            &mut out,
        )
    };
    (rc, out)
}

fn kind_of(rc: c_int) -> c_int {
    let mut kind = -1;
    assert_eq!(
        unsafe { capi::MPIX_Type_marshal_error_kind(rc, &mut kind) },
        0
    );
    kind
}

fn is_derived(t: Datatype) -> bool {
    !mpix_marshal::read(
        Representation::External,
        &marshal(Representation::External, t).unwrap(),
    )
    .unwrap()
    .is_predefined()
}

/// The types whose rebuild is broken at every step.
fn subjects() -> Vec<(String, Datatype)> {
    let int = named("MPI_INT");
    let dbl = named("MPI_DOUBLE");
    let mut v = vec![
        (
            "HDF5 complex (resized form)".to_string(),
            hdf5_complex(false),
        ),
        ("names at three levels".to_string(), {
            let inner = set_name(contiguous(2, dbl), "inner pair");
            let mid = set_name(vector(3, 1, 2, inner), "middle vector");
            let top = set_name(structure(&[1, 1], &[0, 256], &[mid, int]), "the top");
            mpi::free(inner).unwrap();
            mpi::free(mid).unwrap();
            top
        }),
        ("struct of darray, subarray, indexed".to_string(), {
            let d = darray(4, 1, &[16, 10], "bc", &[0, 2], &[2, 2], false, dbl);
            let s = subarray(&[10, 12, 7], &[3, 4, 5], &[2, 8, 1], false, int);
            let i = indexed(&[0, 2, 0, 3], &[5, 1, 9, -4], int);
            let t = structure(&[1, 2, 1], &[0, 4096, 8192], &[d, s, i]);
            for x in [d, s, i] {
                mpi::free(x).unwrap();
            }
            t
        }),
    ];
    if try_named("MPI_LB").is_some() {
        v.push(("HDF5 complex (LB/UB form)".to_string(), hdf5_complex(true)));
    }
    v
}

/// Every constructor and every MPI_Type_set_name call of a rebuild fails
/// in turn: each time the MPI error comes back as is, `*type` is untouched
/// and no handle is left.
#[test]
fn an_mpi_failure_at_any_step_of_a_rebuild_leaks_nothing() {
    init();
    for (what, t) in subjects() {
        for rep in REPS {
            let bytes = marshal(rep, t).unwrap();
            let base = pmpi::live();
            // A clean rebuild: how many constructor calls it makes.
            let made = pmpi::made();
            let back = unmarshal(rep, &bytes).unwrap();
            let calls = pmpi::made() - made;
            assert!(calls > 1, "{what}: {calls} constructor calls");
            assert_eq!(
                pmpi::live(),
                base + 1,
                "{what} {rep:?}: one handle comes back"
            );
            mpi::free(back).unwrap();
            assert_eq!(pmpi::live(), base);
            for k in 1..=calls {
                let injected = pmpi::injections();
                pmpi::fail_constructor(k);
                let (rc, out) = c_unmarshal(rep, &bytes);
                pmpi::fail_constructor(0);
                assert_eq!(
                    pmpi::injections(),
                    injected + 1,
                    "{what}: call {k} was made"
                );
                assert_eq!(
                    rc,
                    pmpi::INJECTED,
                    "{what} {rep:?}: constructor {k} of {calls}"
                );
                // An MPI error is returned as MPI's own code, of no
                // library class.
                assert_eq!(kind_of(rc), capi::ErrorKind::None as c_int);
                assert!(out == sentinel(), "{what} {rep:?}: *type written");
                assert_eq!(
                    pmpi::live(),
                    base,
                    "{what} {rep:?}: constructor {k} of {calls} failed, handles leaked"
                );
            }
            // Names are set after each level's constructor.
            let mut k = 1;
            loop {
                let injected = pmpi::injections();
                pmpi::fail_set_name(k);
                let (rc, out) = c_unmarshal(rep, &bytes);
                pmpi::fail_set_name(0);
                if pmpi::injections() == injected {
                    assert_eq!(rc, 0, "{what}: a clean rebuild");
                    mpi::free(out).unwrap();
                    assert_eq!(pmpi::live(), base);
                    break;
                }
                assert_eq!(rc, pmpi::INJECTED, "{what} {rep:?}: set_name {k}");
                assert!(out == sentinel(), "{what} {rep:?}: *type written");
                assert_eq!(pmpi::live(), base, "{what} {rep:?}: set_name {k} leaked");
                k += 1;
            }
            if what.contains("names") {
                assert_eq!(k, 4, "{what}: three names were set");
            }
        }
        mpi::free(t).unwrap();
    }
}

fn int_node() -> Node {
    Node::named(Predefined(0x209))
}

fn contiguous_node(count: i64, old: Node) -> Node {
    Node::new(Kind::Contiguous {
        count,
        old: Box::new(old),
    })
}

fn struct_node(types: Vec<Node>) -> Node {
    let n = types.len() as i64;
    Node::new(Kind::Struct {
        blocklengths: vec![1; n as usize],
        displacements: (0..n).map(|i| i * 4096).collect(),
        types,
        legacy: false,
    })
}

/// The external stream of `tree`, and the same stream stored in the
/// compressed representation.
fn external_and_compressed(tree: &Node) -> [(Representation, Vec<u8>); 2] {
    let ext = stream_of(tree);
    let mut stored = [
        &MAGIC_STORED.to_be_bytes()[..],
        &(ext.len() as u32).to_be_bytes(),
        &ext,
        &[0; 4],
    ]
    .concat();
    mpix_marshal::testing::external::reseal(&mut stored);
    [
        (Representation::External, ext),
        (Representation::Compressed, stored),
    ]
}

/// A failure the rebuild meets only after it built earlier members: a
/// Fortran kind no MPI has, as the last member of a struct. Every member
/// built before it is freed.
#[test]
fn a_late_unsupported_member_frees_its_siblings() {
    init();
    let big = |n: i64| {
        let mut inner = contiguous_node(n, int_node());
        inner.name = Some(b"inner".to_vec());
        Node::new(Kind::Vector {
            count: 3,
            blocklength: 1,
            stride: 2,
            old: Box::new(inner),
        })
    };
    let no_such_kind = Node::new(Kind::F90Real { p: 1000, r: 1000 });
    let tree = struct_node(vec![
        big(2),
        big(3),
        struct_node(vec![big(4), contiguous_node(5, int_node())]),
        contiguous_node(2, no_such_kind),
    ]);
    for (rep, bytes) in external_and_compressed(&tree) {
        let base = pmpi::live();
        let made = pmpi::made();
        let (rc, out) = c_unmarshal(rep, &bytes);
        assert_eq!(
            kind_of(rc),
            capi::ErrorKind::Unsupported as c_int,
            "{rep:?}"
        );
        let msg = mpi::error_string(rc);
        assert!(msg.contains("Fortran REAL kind"), "{msg}");
        assert!(out == sentinel(), "{rep:?}: *type written");
        assert!(
            pmpi::made() - made >= 8,
            "{rep:?}: the earlier members were built ({} constructor calls)",
            pmpi::made() - made
        );
        assert_eq!(pmpi::live(), base, "{rep:?}: handles leaked");
    }
}

/// Streams refused by the reader or by validation, however late in the
/// stream, reach no constructor at all; a corruption that decodes into a
/// type, or fails while building, leaves nothing behind either.
#[test]
fn corrupt_streams_are_refused_before_any_constructor() {
    init();
    for (what, t) in subjects() {
        for rep in REPS {
            let good = marshal(rep, t).unwrap();
            let base = pmpi::live();
            let step = (good.len() / 97).max(1);
            let mut checked = 0;
            for len in (0..good.len()).step_by(step) {
                let made = pmpi::made();
                let (rc, out) = c_unmarshal(rep, &good[..len]);
                // A cut checksummed stream fails its checksum (or is too
                // short to hold one: truncated).
                assert!(
                    [capi::ErrorKind::Corrupt, capi::ErrorKind::Checksum]
                        .map(|k| k as c_int)
                        .contains(&kind_of(rc)),
                    "{what} {rep:?}"
                );
                assert!(out == sentinel());
                assert_eq!(pmpi::made(), made, "{what}: a prefix reached a constructor");
            }
            for i in (0..good.len()).step_by(step) {
                for v in [0x00u8, 0xff, good[i] ^ 0x40] {
                    if v == good[i] {
                        continue;
                    }
                    let mut bad = good.clone();
                    bad[i] = v;
                    // With its checksum made to match, so that the reader
                    // and validation see the corruption.
                    if rep != Representation::Internal && i < good.len() - 4 {
                        mpix_marshal::testing::external::reseal(&mut bad);
                    }
                    let made = pmpi::made();
                    let (rc, out) = c_unmarshal(rep, &bad);
                    if rc == 0 {
                        if is_derived(out) {
                            mpi::free(out).unwrap();
                        }
                    } else {
                        assert!(out == sentinel(), "{what} {rep:?}: *type written");
                        let kind = kind_of(rc);
                        if kind == capi::ErrorKind::Corrupt as c_int
                            || kind == capi::ErrorKind::InvalidArgument as c_int
                        {
                            assert_eq!(
                                pmpi::made(),
                                made,
                                "{what} {rep:?} byte {i} = {v:#x}: refused as kind {kind} after building ({})",
                                mpi::error_string(rc)
                            );
                        }
                    }
                    assert_eq!(
                        pmpi::live(),
                        base,
                        "{what} {rep:?} byte {i} = {v:#x}: leaked"
                    );
                    checked += 1;
                }
            }
            assert!(checked > 0);
        }
        mpi::free(t).unwrap();
    }
}

// ---------------------------------------------------------------------------
// Attributes: values are counted heap objects; the unmarshal callback of
// "test.leaks.zfail" fails on the value "fail" while FAILING is set.

static VALUES: AtomicI64 = AtomicI64::new(0);
static UNMARSHAL_CALLS: AtomicUsize = AtomicUsize::new(0);
static FAILING: AtomicBool = AtomicBool::new(false);
/// The attribute tests run one at a time (they share the counters).
static ATTR_LOCK: Mutex<()> = Mutex::new(());

fn new_value(bytes: &[u8]) -> *mut c_void {
    VALUES.fetch_add(1, SeqCst);
    Box::into_raw(Box::new(bytes.to_vec())) as *mut c_void
}

unsafe extern "C" fn copy_value(
    _t: ffi::MPI_Datatype,
    _k: c_int,
    _extra: *mut c_void,
    value_in: *mut c_void,
    value_out: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    let v = &*(value_in as *const Vec<u8>);
    *(value_out as *mut *mut c_void) = new_value(v);
    *flag = 1;
    0
}

unsafe extern "C" fn delete_value(
    _t: ffi::MPI_Datatype,
    _k: c_int,
    value: *mut c_void,
    _extra: *mut c_void,
) -> c_int {
    drop(Box::from_raw(value as *mut Vec<u8>));
    VALUES.fetch_sub(1, SeqCst);
    0
}

unsafe extern "C" fn value_unmarshal(
    k: c_int,
    name: *const c_char,
    _rep: *const c_char,
    t: ffi::MPI_Datatype,
    inbuf: *const c_void,
    insize: MPI_Aint,
) -> c_int {
    UNMARSHAL_CALLS.fetch_add(1, SeqCst);
    let bytes = std::slice::from_raw_parts(inbuf as *const u8, insize as usize);
    if FAILING.load(SeqCst)
        && CStr::from_ptr(name).to_bytes() == b"test.leaks.zfail"
        && bytes == b"fail"
    {
        return 5;
    }
    ffi::MPI_Type_set_attr(t, k, new_value(bytes))
}

fn keyval(name: &str) -> c_int {
    let mut k = 0;
    ok(
        unsafe {
            ffi::MPI_Type_create_keyval(
                Some(copy_value),
                Some(delete_value),
                &mut k,
                std::ptr::null_mut(),
            )
        },
        "MPI_Type_create_keyval",
    );
    attributes::register(Keyval {
        keyval: k,
        name: CString::new(name).unwrap(),
        size: Some(blob_size),
        marshal: Some(blob_marshal),
        unmarshal: Some(value_unmarshal),
    })
    .unwrap();
    k
}

fn attr(name: &str, value: &str) -> Attribute {
    Attribute {
        name: name.as_bytes().to_vec(),
        value: value.as_bytes().to_vec(),
    }
}

/// A struct whose members and levels carry "keep" attributes; `fail_at`
/// names the level that carries the failing one ("c": the last member,
/// "root": the root, after its keep attribute).
fn attributed_tree(fail_at: &str) -> Node {
    let keep = |v: &str| attr("test.leaks.keep", v);
    let fail = attr("test.leaks.zfail", "fail");
    let mut a = contiguous_node(2, int_node());
    a.attrs = vec![keep("a")];
    let mut b_inner = contiguous_node(2, int_node());
    b_inner.attrs = vec![keep("b-inner")];
    let mut b = Node::new(Kind::Vector {
        count: 2,
        blocklength: 1,
        stride: 3,
        old: Box::new(b_inner),
    });
    b.attrs = vec![keep("b")];
    let mut c = Node::new(Kind::Dup(Box::new(int_node())));
    c.attrs = if fail_at == "c" {
        vec![keep("c"), fail.clone()]
    } else {
        vec![keep("c")]
    };
    let mut root = struct_node(vec![a, b, c]);
    root.attrs = if fail_at == "root" {
        vec![keep("root"), fail]
    } else {
        vec![keep("root")]
    };
    root
}

#[test]
fn attributes_set_before_a_late_failure_are_deleted_with_their_types() {
    init();
    let _one = ATTR_LOCK.lock().unwrap_or_else(|p| p.into_inner());
    let mut keep = keyval("test.leaks.keep");
    let mut zfail = keyval("test.leaks.zfail");
    let open_mpi = mpi::local().constants.is_open_mpi != 0;
    for fail_at in ["c", "root"] {
        let tree = attributed_tree(fail_at);
        let mut streams = external_and_compressed(&tree).to_vec();
        // The internal stream is marshalled from a clean rebuild (on Open
        // MPI only the root's attributes are seen when marshalling).
        FAILING.store(false, SeqCst);
        let base = pmpi::live();
        let rebuilt = unmarshal(Representation::External, &streams[0].1).unwrap();
        assert_eq!(get_blob(rebuilt, keep).unwrap(), b"root");
        assert!(VALUES.load(SeqCst) >= 1);
        if !open_mpi || fail_at == "root" {
            streams.push((
                Representation::Internal,
                marshal(Representation::Internal, rebuilt).unwrap(),
            ));
        }
        mpi::free(rebuilt).unwrap();
        assert_eq!(pmpi::live(), base);
        assert_eq!(
            VALUES.load(SeqCst),
            0,
            "values left after freeing a rebuilt type"
        );

        FAILING.store(true, SeqCst);
        for (rep, bytes) in &streams {
            let calls = UNMARSHAL_CALLS.load(SeqCst);
            let made = pmpi::made();
            let (rc, out) = c_unmarshal(*rep, bytes);
            assert_eq!(
                kind_of(rc),
                capi::ErrorKind::Attribute as c_int,
                "{fail_at} {rep:?}"
            );
            let msg = mpi::error_string(rc);
            assert!(
                msg.contains("test.leaks.zfail") && msg.contains("returned error 5"),
                "{msg}"
            );
            assert!(out == sentinel(), "{rep:?}: *type written");
            let ran = UNMARSHAL_CALLS.load(SeqCst) - calls;
            // Callbacks of earlier levels ran and set values before the failure.
            assert!(ran >= 2, "{fail_at} {rep:?}: {ran} unmarshal callbacks ran");
            assert!(
                pmpi::made() > made + 1,
                "{fail_at} {rep:?}: built before failing"
            );
            assert_eq!(pmpi::live(), base, "{fail_at} {rep:?}: handles leaked");
            assert_eq!(
                VALUES.load(SeqCst),
                0,
                "{fail_at} {rep:?}: attribute values set before the failure were not deleted"
            );
        }
        FAILING.store(false, SeqCst);
    }
    // A constructor failure after attributed members were built.
    let tree = attributed_tree("none");
    for (rep, bytes) in external_and_compressed(&tree) {
        let base = pmpi::live();
        let made = pmpi::made();
        let back = unmarshal(rep, &bytes).unwrap();
        let calls = pmpi::made() - made;
        mpi::free(back).unwrap();
        assert_eq!(VALUES.load(SeqCst), 0);
        for k in 1..=calls {
            pmpi::fail_constructor(k);
            let (rc, out) = c_unmarshal(rep, &bytes);
            pmpi::fail_constructor(0);
            assert_eq!(rc, pmpi::INJECTED);
            assert!(out == sentinel());
            assert_eq!(pmpi::live(), base, "constructor {k}: handles leaked");
            assert_eq!(VALUES.load(SeqCst), 0, "constructor {k}: values leaked");
        }
    }
    assert!(attributes::forget(keep) && attributes::forget(zfail));
    ok(
        unsafe { ffi::MPI_Type_free_keyval(&mut keep) },
        "free_keyval",
    );
    ok(
        unsafe { ffi::MPI_Type_free_keyval(&mut zfail) },
        "free_keyval",
    );
}

/// The counting layer itself: constructors, frees, and the handles
/// MPI_Type_get_contents returns (which a marshal frees, or keeps in the
/// type's cache until the type is freed).
#[test]
fn the_count_sees_every_handle() {
    init();
    let base = pmpi::live();
    let a = contiguous(2, named("MPI_INT"));
    let b = vector(2, 1, 3, a);
    assert_eq!(pmpi::live(), base + 2);
    mpi::free(a).unwrap();
    assert_eq!(pmpi::live(), base + 1);
    for rep in REPS {
        marshal(rep, b).unwrap();
    }
    mpi::free(b).unwrap();
    assert_eq!(pmpi::live(), base, "a marshal left handles");
}
