//! Every error the C API can return, provoked through the C functions
//! themselves (issue 5): for each, the returned code, its kind
//! (`MPIX_Type_marshal_error_kind`), its MPI error class (one class per
//! kind, registered by the library), its message (`MPI_Error_string` of
//! that very code), that it was raised on MPI_COMM_SELF's error handler,
//! and that the outputs were left untouched.
//!
//! Kinds (docs/errors.md): UNKNOWN_REPRESENTATION, BUFFER_TOO_SMALL,
//! CORRUPT, UNSUPPORTED, INVALID_ARGUMENT, ATTRIBUTE; an MPI call's own
//! error passes through with kind NONE (provoked by injecting failures
//! through the profiling interface, tests/pmpi). INTERNAL (a caught panic)
//! has no known trigger: see `internal_errors_have_no_known_trigger`.
//! "MPI not initialized" is checked in a child process.

mod common;
#[path = "pmpi/mod.rs"]
mod pmpi;

use common::*;
use mpix_marshal::testing::attributes;
use mpix_marshal::testing::capi::*;
use mpix_marshal::testing::codes::{Predefined, PREDEFINED};
use mpix_marshal::testing::compressed::{MAGIC_DEFLATE, MAGIC_STORED};
use mpix_marshal::testing::external::reseal;
use mpix_marshal::testing::mpi::sys as ffi;
use mpix_marshal::testing::mpi::{self as mpi, Datatype, MPI_Aint, MPI_Count};
use mpix_marshal::testing::tree::{Kind, Node};
use mpix_marshal::{marshal, Representation};
use std::collections::HashMap;
use std::ffi::{CStr, CString};
use std::os::raw::{c_char, c_int, c_void};
use std::sync::{Mutex, MutexGuard, Once};

const REPS: [Representation; 3] = [
    Representation::External,
    Representation::Internal,
    Representation::Compressed,
];

// ---------------------------------------------------------------------------
// The checks every error goes through.

/// The tests of this file run one at a time: they share MPI_COMM_SELF's
/// error handler and the record of what it saw.
static SERIAL: Mutex<()> = Mutex::new(());
/// Codes raised on MPI_COMM_SELF's error handler.
static RAISED: Mutex<Vec<c_int>> = Mutex::new(Vec::new());
/// The class each kind's codes were seen with.
static CLASSES: Mutex<Option<HashMap<c_int, c_int>>> = Mutex::new(None);

/// MPI_COMM_SELF's error handler: records the code and returns, as
/// MPI_ERRORS_RETURN does. (MPI declares the handler variadic; it is
/// called with exactly these two arguments, and on x86-64 and AArch64 a
/// variadic call of a non-variadic function with them is the same call.)
unsafe extern "C" fn record(_comm: *mut ffi::MPI_Comm, code: *mut c_int) {
    RAISED.lock().unwrap_or_else(|p| p.into_inner()).push(*code);
}

fn start() -> MutexGuard<'static, ()> {
    let guard = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    init();
    static HANDLER: Once = Once::new();
    HANDLER.call_once(|| unsafe {
        let mut eh: ffi::MPI_Errhandler = std::mem::zeroed();
        type Handler = unsafe extern "C" fn(*mut ffi::MPI_Comm, *mut c_int);
        let f: Handler = record;
        let f = std::mem::transmute::<Handler, ffi::MPI_Comm_errhandler_function>(f);
        ok(
            ffi::MPI_Comm_create_errhandler(f, &mut eh),
            "MPI_Comm_create_errhandler",
        );
        ok(
            ffi::MPI_Comm_set_errhandler(ffi::RSMPI_COMM_SELF, eh),
            "MPI_Comm_set_errhandler",
        );
    });
    RAISED.lock().unwrap_or_else(|p| p.into_inner()).clear();
    guard
}

fn kind_of(rc: c_int) -> c_int {
    let mut kind = -1;
    assert_eq!(unsafe { MPIX_Type_marshal_error_kind(rc, &mut kind) }, 0);
    kind
}

fn class_of(rc: c_int) -> c_int {
    let mut class = 0;
    ok(
        unsafe { ffi::MPI_Error_class(rc, &mut class) },
        "MPI_Error_class",
    );
    class
}

/// `bytes` with its last 4 bytes made its checksum.
fn sealed(mut bytes: Vec<u8>) -> Vec<u8> {
    reseal(&mut bytes);
    bytes
}

fn kind_name(kind: c_int) -> &'static str {
    [
        "NONE",
        "UNKNOWN_REPRESENTATION",
        "BUFFER_TOO_SMALL",
        "CORRUPT",
        "UNSUPPORTED",
        "INVALID_ARGUMENT",
        "INTERNAL",
        "ATTRIBUTE",
        "EXCHANGE",
        "CHECKSUM",
    ]
    .get(kind as usize)
    .copied()
    .unwrap_or("?")
}

/// Checks an error of the library: its kind, its class (the same for every
/// error of a kind, a class MPI_Add_error_class made, a code of it but not
/// the class itself), its message, and that it was raised on
/// MPI_COMM_SELF's handler. Returns the message.
#[track_caller]
fn expect_error(what: &str, rc: c_int, kind: c_int, says: &[&str]) -> String {
    assert_ne!(rc, 0, "{what}: succeeded");
    assert_eq!(
        kind_of(rc),
        kind,
        "{what}: kind {} instead of {} ({})",
        kind_name(kind_of(rc)),
        kind_name(kind),
        mpi::error_string(rc)
    );
    let class = class_of(rc);
    assert!(
        class > ffi::MPI_ERR_LASTCODE as c_int,
        "{what}: class {class} is not one the library added"
    );
    assert_ne!(
        class, rc,
        "{what}: the bare class, not a code with a message"
    );
    {
        let mut classes = CLASSES.lock().unwrap();
        let map = classes.get_or_insert_with(HashMap::new);
        let seen = *map.entry(kind).or_insert(class);
        assert_eq!(
            seen,
            class,
            "{what}: two classes for kind {}",
            kind_name(kind)
        );
        for (&k, &c) in map.iter() {
            assert!(
                k == kind || c != class,
                "{what}: kinds {k} and {kind} share a class"
            );
        }
    }
    let msg = mpi::error_string(rc);
    assert!(msg.starts_with("mpix-marshal: "), "{what}: message {msg:?}");
    for s in says {
        assert!(
            msg.contains(s),
            "{what}: message {msg:?} does not say {s:?}"
        );
    }
    let mut raised = RAISED.lock().unwrap();
    let at = raised.iter().position(|&c| c == rc);
    assert!(
        at.is_some(),
        "{what}: not raised on MPI_COMM_SELF ({raised:?})"
    );
    raised.remove(at.unwrap());
    msg
}

// ---------------------------------------------------------------------------
// Calls with sentinel outputs: each returns the code and asserts that the
// outputs kept their sentinels when the call failed.

const FILL: u8 = 0xa5;
const UNSET: MPI_Aint = -7;
/// UNSET, as the child process reports it.
const UNSET_I64: i64 = -7;

fn rep_name(rep: Representation) -> &'static CStr {
    rep.c_name()
}

/// MPIX_Type_marshal into `outsize` bytes; on error the buffer and
/// `*num_written` are untouched, but for BUFFER_TOO_SMALL, which sets 0.
fn c_marshal(typerep: &CStr, t: Datatype, outsize: MPI_Aint) -> (c_int, MPI_Aint) {
    let mut buf = vec![FILL; outsize.max(0) as usize + 16];
    let mut written = UNSET;
    let rc = unsafe {
        MPIX_Type_marshal(
            typerep.as_ptr(),
            t,
            buf.as_mut_ptr() as *mut c_void,
            outsize,
            &mut written,
        )
    };
    if rc != 0 {
        assert!(
            buf.iter().all(|&b| b == FILL),
            "the buffer was written on error"
        );
        if kind_of(rc) == ErrorKind::BufferTooSmall as c_int {
            assert_eq!(written, 0, "num_written is 0 when the buffer is too small");
        } else {
            assert_eq!(written, UNSET, "num_written was written on error");
        }
    }
    (rc, written)
}

fn c_marshal_size(typerep: &CStr, t: Datatype) -> c_int {
    let mut size = UNSET;
    let rc = unsafe { MPIX_Type_marshal_size(typerep.as_ptr(), t, &mut size) };
    if rc != 0 {
        assert_eq!(size, UNSET, "*size was written on error");
    }
    rc
}

fn sentinel() -> Datatype {
    named("MPI_BYTE")
}

/// MPIX_Type_unmarshal; on error `*type` is untouched and no handle is
/// left (counted through the profiling interface).
fn c_unmarshal(typerep: &CStr, bytes: &[u8]) -> c_int {
    let mut out = sentinel();
    let live = pmpi::live();
    let inbuf = if bytes.is_empty() {
        std::ptr::null()
    } else {
        bytes.as_ptr() as *const c_void
    };
    let rc =
        unsafe { MPIX_Type_unmarshal(typerep.as_ptr(), inbuf, bytes.len() as MPI_Aint, &mut out) };
    if rc != 0 {
        assert!(out == sentinel(), "*type was written on error");
        assert_eq!(pmpi::live(), live, "handles were left behind on error");
    } else if out != sentinel() && mpi::local().predefined(out).is_none() {
        mpi::free(out).unwrap();
    }
    rc
}

const NO_HASH: u64 = 0xdead_beef;

fn c_stream_hash(typerep: &CStr, bytes: &[u8]) -> c_int {
    let mut hash = NO_HASH;
    let rc = unsafe {
        MPIX_Type_marshaled_signature_hash(
            typerep.as_ptr(),
            bytes.as_ptr() as *const c_void,
            bytes.len() as MPI_Aint,
            &mut hash,
        )
    };
    if rc != 0 {
        assert_eq!(hash, NO_HASH, "*hash was written on error");
    }
    rc
}

fn c_type_hash(t: Datatype, kind: c_int) -> c_int {
    let mut hash = NO_HASH;
    let rc = unsafe { MPIX_Type_signature_hash(t, kind, &mut hash) };
    if rc != 0 {
        assert_eq!(hash, NO_HASH, "*hash was written on error");
    }
    rc
}

fn c_prefix_hash(t: Datatype, count: MPI_Count, n: MPI_Count, kind: c_int) -> c_int {
    let mut hash = NO_HASH;
    let rc = unsafe { MPIX_Type_signature_prefix_hash(t, count, n, kind, &mut hash) };
    if rc != 0 {
        assert_eq!(hash, NO_HASH, "*hash was written on error");
    }
    rc
}

fn c_count(t: Datatype) -> c_int {
    let mut count: MPI_Count = -7;
    let rc = unsafe { MPIX_Type_signature_count(t, &mut count) };
    if rc != 0 {
        assert_eq!(count, -7, "*count was written on error");
    }
    rc
}

fn stream(rep: Representation, t: Datatype) -> Vec<u8> {
    marshal(rep, t).unwrap()
}

fn int_node() -> Node {
    Node::named(Predefined(0x209))
}

// ---------------------------------------------------------------------------

#[test]
fn unknown_representation() {
    let _serial = start();
    let t = contiguous(3, named("MPI_INT"));
    let good = stream(Representation::External, t);
    for name in ["xml", "", "External", "external ", "internal\u{1}"] {
        let rep = CString::new(name).unwrap();
        let quoted = format!("{name:?}");
        let says = ["unknown type representation", quoted.as_str()];
        let what = format!("typerep {name:?}");
        let k = ErrorKind::UnknownRepresentation as c_int;
        let (rc, _) = c_marshal(&rep, t, 4096);
        expect_error(&what, rc, k, &says);
        expect_error(&what, c_marshal_size(&rep, t), k, &says);
        expect_error(&what, c_unmarshal(&rep, &good), k, &says);
        expect_error(&what, c_stream_hash(&rep, &good), k, &says);
    }
    mpi::free(t).unwrap();
}

#[test]
fn buffer_too_small() {
    let _serial = start();
    let t = hdf5_complex(false);
    for rep in REPS {
        let n = stream(rep, t).len() as MPI_Aint;
        for outsize in [0, 1, n / 2, n - 1] {
            let what = format!("{rep:?} into {outsize} of {n} bytes");
            let (rc, _) = c_marshal(rep_name(rep), t, outsize);
            expect_error(
                &what,
                rc,
                ErrorKind::BufferTooSmall as c_int,
                &[
                    &format!("needs {n} bytes"),
                    &format!("the buffer has {outsize}"),
                ],
            );
        }
        // NULL is a valid buffer of 0 bytes: too small, not invalid.
        let mut written = UNSET;
        let rc = unsafe {
            MPIX_Type_marshal(
                rep_name(rep).as_ptr(),
                t,
                std::ptr::null_mut(),
                0,
                &mut written,
            )
        };
        expect_error(
            "NULL, 0",
            rc,
            ErrorKind::BufferTooSmall as c_int,
            &["needs"],
        );
        assert_eq!(written, 0);
        // The exact size is enough.
        let (rc, written) = c_marshal(rep_name(rep), t, n);
        assert_eq!((rc, written), (0, n), "{rep:?}");
    }
    mpi::free(t).unwrap();
}

#[test]
fn corrupt() {
    let _serial = start();
    let t = structure(
        &[1, 2],
        &[0, 16],
        &[
            named("MPI_INT"),
            set_name(contiguous(2, named("MPI_DOUBLE")), "pair"),
        ],
    );
    let k = ErrorKind::Corrupt as c_int;
    // An altered stream with its checksum made to match again, so that
    // the reader gets past it to the error under test.
    let with = |bytes: &[u8], i: usize, v: u8| {
        let mut b = bytes.to_vec();
        b[i] = v;
        if b.starts_with(b"MXC") {
            reseal(&mut b);
        }
        b
    };
    for rep in REPS {
        let good = stream(rep, t);
        let name = rep_name(rep);
        // Cut or lengthened, a checksummed stream fails its checksum.
        let (cut, cut_words): (c_int, &[&str]) = if rep == Representation::Internal {
            (k, &["byte"])
        } else {
            (ErrorKind::Checksum as c_int, &["checksum mismatch", "byte"])
        };
        let what = |w: &str| format!("{rep:?}: {w}");
        expect_error(
            &what("empty"),
            c_unmarshal(name, &[]),
            k,
            &["truncated", "byte 0"],
        );
        expect_error(
            &what("one byte short"),
            c_unmarshal(name, &good[..good.len() - 1]),
            cut,
            cut_words,
        );
        let foreign = b"GIF89a this is not a datatype at all";
        expect_error(
            &what("foreign"),
            c_unmarshal(name, foreign),
            k,
            &["byte 0", "not an mpix-marshal"],
        );
        expect_error(
            &what("foreign, hash"),
            c_stream_hash(name, foreign),
            k,
            &["byte 0", "not an mpix-marshal"],
        );
        let mut trailing = good.clone();
        trailing.extend([0; 4]);
        expect_error(
            &what("trailing bytes"),
            c_unmarshal(name, &trailing),
            cut,
            cut_words,
        );
        if rep != Representation::Internal {
            // One flipped bit: the checksum names what it holds and what
            // the bytes give.
            let mut flipped = good.clone();
            flipped[good.len() / 2] ^= 0x10;
            let stored = u32::from_be_bytes(good[good.len() - 4..].try_into().unwrap());
            expect_error(
                &what("a flipped bit"),
                c_unmarshal(name, &flipped),
                ErrorKind::Checksum as c_int,
                &[
                    &format!("at byte {}", good.len() - 4),
                    &format!("is {stored:#010x}, its bytes give"),
                ],
            );
        }
    }
    // External: an older version, a header hash not the type's, a value
    // the format forbids.
    let ext = stream(Representation::External, t);
    let e = rep_name(Representation::External);
    let mut v1 = ext.clone();
    v1[4..8].copy_from_slice(&0x0001_0000u32.to_be_bytes());
    reseal(&mut v1);
    expect_error(
        "version 1",
        c_unmarshal(e, &v1),
        k,
        &["byte 4", "version 1"],
    );
    expect_error("version 1, hash", c_stream_hash(e, &v1), k, &["version 1"]);
    let hash = with(&ext, 11, ext[11] ^ 1);
    expect_error(
        "hash",
        c_unmarshal(e, &hash),
        k,
        &["byte 4", "signature hash"],
    );
    let at = mpix_marshal::testing::external::HEADER_LEN;
    let combiner = with(&ext, at + 3, 99);
    expect_error(
        "combiner 99",
        c_unmarshal(e, &combiner),
        k,
        &[&format!("byte {at}"), "combiner code 99"],
    );
    // Internal: another byte order, version, pointer size, build.
    let int = stream(Representation::Internal, t);
    let i = rep_name(Representation::Internal);
    let mut swapped = int.clone();
    swapped[..4].reverse();
    expect_error(
        "byte order",
        c_unmarshal(i, &swapped),
        k,
        &["other byte order"],
    );
    expect_error(
        "internal version",
        c_unmarshal(i, &with(&int, 4, int[4] + 1)),
        k,
        &["byte 4", "internal format version"],
    );
    expect_error(
        "pointer size",
        c_unmarshal(i, &with(&int, 5, 4)),
        k,
        &["byte 5", "4-byte pointers"],
    );
    expect_error(
        "build",
        c_unmarshal(i, &with(&int, 6, int[6] ^ 1)),
        k,
        &["byte 6", "another MPI library or mpix-marshal build"],
    );
    // Compressed: a claim past the limit, bad deflate data, a stored
    // length that is not the payload's.
    let c = rep_name(Representation::Compressed);
    let bomb = [
        &MAGIC_DEFLATE.to_be_bytes()[..],
        &u32::MAX.to_be_bytes(),
        &[0; 92],
        &[0; 4],
    ]
    .concat();
    let bomb = sealed(bomb);
    expect_error(
        "4 GiB claim",
        c_unmarshal(c, &bomb),
        k,
        &["byte 4", "claims to expand"],
    );
    let bad = [
        &MAGIC_DEFLATE.to_be_bytes()[..],
        &16u32.to_be_bytes(),
        &[0xff; 8],
        &[0; 4],
    ]
    .concat();
    let bad = sealed(bad);
    expect_error(
        "bad deflate",
        c_unmarshal(c, &bad),
        k,
        &["bad deflate data"],
    );
    let stored = sealed(
        [
            &MAGIC_STORED.to_be_bytes()[..],
            &(ext.len() as u32 + 1).to_be_bytes(),
            &ext,
            &[0; 4],
        ]
        .concat(),
    );
    expect_error(
        "stored length",
        c_unmarshal(c, &stored),
        k,
        &["byte 4", "claims"],
    );
    free(t);
}

/// A type nested deeper than the format's 512 levels.
fn nested(levels: usize) -> Datatype {
    let mut t = named("MPI_INT");
    for i in 0..levels {
        let next = contiguous(1, t);
        if i > 0 {
            mpi::free(t).unwrap();
        }
        t = next;
    }
    t
}

#[test]
fn unsupported() {
    let _serial = start();
    let k = ErrorKind::Unsupported as c_int;
    let local = mpi::local();
    let e = rep_name(Representation::External);
    // A predefined type this MPI does not define.
    if let Some(&(code, name)) = PREDEFINED
        .iter()
        .find(|e| local.datatype(Predefined(e.0)).is_none() && e.1 != "MPI_LB" && e.1 != "MPI_UB")
    {
        let tree = Node::new(Kind::Contiguous {
            count: 2,
            old: Box::new(Node::named(Predefined(code))),
        });
        expect_error(
            name,
            c_unmarshal(e, &stream_of(&tree)),
            k,
            &[name, "is not defined by this MPI", "root.0"],
        );
    }
    // A Fortran kind no MPI has (refused while building).
    let f90 = Node::new(Kind::F90Real { p: 1000, r: 1000 });
    expect_error(
        "F90 real",
        c_unmarshal(e, &stream_of(&f90)),
        k,
        &["Fortran REAL kind with precision 1000"],
    );
    // MPI_Type_get_value_index needs MPI 4.1.
    if local.constants.have_value_index == 0 {
        let vi = Node::new(Kind::ValueIndex {
            pair: Box::new([int_node(), int_node()]),
        });
        expect_error(
            "value index",
            c_unmarshal(e, &stream_of(&vi)),
            k,
            &["MPI_Type_get_value_index needs MPI 4.1"],
        );
    }
    // Large counts on an MPI without large-count constructors.
    if !local.has_large_count() {
        let mut big = Node::new(Kind::Contiguous {
            count: 1 << 40,
            old: Box::new(int_node()),
        });
        big.large = true;
        expect_error(
            "large count",
            c_unmarshal(e, &stream_of(&big)),
            k,
            &["needs MPI-4 large-count constructors"],
        );
    }
    // A name longer than this MPI takes (Open MPI: 63 bytes).
    if local.max_name_len() < mpix_marshal::testing::tree::MAX_NAME_LEN {
        let mut long = Node::new(Kind::Dup(Box::new(int_node())));
        long.name = Some(vec![b'n'; local.max_name_len() + 1]);
        expect_error(
            "long name",
            c_unmarshal(e, &stream_of(&long)),
            k,
            &["longer than this MPI's limit"],
        );
    }
    // A signature of more elements than MPI_Count holds: 2^93 ints.
    let a = contiguous(i32::MAX, named("MPI_INT"));
    let b = contiguous(i32::MAX, a);
    let c = contiguous(i32::MAX, b);
    expect_error("2^93 elements", c_count(c), k, &["beyond MPI_Count"]);
    for x in [c, b, a] {
        mpi::free(x).unwrap();
    }
    // Marshalling a type nested deeper than the format allows (on a thread
    // with room for MPI's own recursion over 513 levels).
    std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(move || {
            let t = nested(513);
            for rep in REPS {
                let what = format!("{rep:?}: 513 levels");
                let says = ["nested deeper than 512 levels"];
                let (rc, _) = c_marshal(rep_name(rep), t, 1 << 20);
                expect_error(&what, rc, k, &says);
                expect_error(&what, c_marshal_size(rep_name(rep), t), k, &says);
                expect_error(&what, c_type_hash(t, MPIX_HASH_DEFAULT), k, &says);
            }
            mpi::free(t).unwrap();
        })
        .unwrap()
        .join()
        .unwrap();
}

/// What the invalid-argument tests start from: the error kind they expect,
/// a derived type, MPI_DATATYPE_NULL, the external representation's name
/// and a good stream of the type.
struct Args {
    k: c_int,
    t: Datatype,
    null_t: Datatype,
    e: &'static CStr,
    good: Vec<u8>,
}

fn args() -> Args {
    let t = contiguous(2, named("MPI_INT"));
    Args {
        k: ErrorKind::InvalidArgument as c_int,
        t,
        null_t: null(),
        e: rep_name(Representation::External),
        good: stream(Representation::External, t),
    }
}

/// MPIX_Type_marshal: NULL and negative arguments, MPI_DATATYPE_NULL; the
/// output buffer and count stay untouched.
#[test]
fn invalid_argument_marshal() {
    let _serial = start();
    let Args {
        k, t, null_t, e, ..
    } = args();
    let mut buf = vec![FILL; 256];
    let mut aint: MPI_Aint = UNSET;
    unsafe {
        // MPIX_Type_marshal
        let rc = MPIX_Type_marshal(
            e.as_ptr(),
            t,
            buf.as_mut_ptr() as *mut c_void,
            256,
            std::ptr::null_mut(),
        );
        expect_error("NULL num_written", rc, k, &["num_written is NULL"]);
        let rc = MPIX_Type_marshal(
            std::ptr::null(),
            t,
            buf.as_mut_ptr() as *mut c_void,
            256,
            &mut aint,
        );
        expect_error("NULL typerep", rc, k, &["typerep is NULL"]);
        let rc = MPIX_Type_marshal(
            e.as_ptr(),
            t,
            buf.as_mut_ptr() as *mut c_void,
            -1,
            &mut aint,
        );
        expect_error("negative outsize", rc, k, &["outsize is negative (-1)"]);
        let rc = MPIX_Type_marshal(e.as_ptr(), t, std::ptr::null_mut(), 256, &mut aint);
        expect_error("NULL outbuf", rc, k, &["outbuf is NULL"]);
        assert!(buf.iter().all(|&b| b == FILL) && aint == UNSET);
    }
    let (rc, _) = c_marshal(e, null_t, 256);
    expect_error("MPI_DATATYPE_NULL", rc, k, &["MPI_DATATYPE_NULL"]);
    mpi::free(t).unwrap();
}

/// MPIX_Type_marshal_size: NULL arguments and MPI_DATATYPE_NULL; *size stays
/// untouched.
#[test]
fn invalid_argument_marshal_size() {
    let _serial = start();
    let Args {
        k, t, null_t, e, ..
    } = args();
    let mut aint: MPI_Aint = UNSET;
    // MPIX_Type_marshal_size
    unsafe {
        let rc = MPIX_Type_marshal_size(e.as_ptr(), t, std::ptr::null_mut());
        expect_error("NULL size", rc, k, &["size is NULL"]);
        let rc = MPIX_Type_marshal_size(std::ptr::null(), t, &mut aint);
        expect_error("NULL typerep", rc, k, &["typerep is NULL"]);
        assert_eq!(aint, UNSET);
    }
    expect_error(
        "MPI_DATATYPE_NULL",
        c_marshal_size(e, null_t),
        k,
        &["MPI_DATATYPE_NULL"],
    );
    mpi::free(t).unwrap();
}

/// MPIX_Type_unmarshal: NULL and negative arguments; *type stays untouched.
#[test]
fn invalid_argument_unmarshal() {
    let _serial = start();
    let Args { k, e, good, t, .. } = args();
    let mut out = sentinel();
    // MPIX_Type_unmarshal
    unsafe {
        let p = good.as_ptr() as *const c_void;
        let n = good.len() as MPI_Aint;
        let rc = MPIX_Type_unmarshal(e.as_ptr(), p, n, std::ptr::null_mut());
        expect_error("NULL type", rc, k, &["type is NULL"]);
        let rc = MPIX_Type_unmarshal(std::ptr::null(), p, n, &mut out);
        expect_error("NULL typerep", rc, k, &["typerep is NULL"]);
        let rc = MPIX_Type_unmarshal(e.as_ptr(), p, -5, &mut out);
        expect_error("negative insize", rc, k, &["insize is negative (-5)"]);
        let rc = MPIX_Type_unmarshal(e.as_ptr(), std::ptr::null(), n, &mut out);
        expect_error("NULL inbuf", rc, k, &["inbuf is NULL"]);
        assert!(out == sentinel());
    }
    mpi::free(t).unwrap();
}

/// A stream whose decoded arguments no constructor accepts (a darray rank
/// beyond its size), in every representation, with the path to the node.
#[test]
fn invalid_argument_undecodable_arguments() {
    let _serial = start();
    let Args { k, t, .. } = args();
    // Decoded arguments no constructor accepts: struct {int, darray of
    // size 2 and rank 2}, written by hand (the library's writer refuses
    // such a tree).
    let words: [u32; 15] = [
        110,
        2,
        1,
        1,
        0,
        64,                // struct, 2 members: blocklengths, displacements
        0x209 << 16 | 101, // MPI_INT
        112,
        2,
        2,
        1,
        4,
        0,
        u32::MAX,
        2, // darray: size, rank, ndims, gsize, block, dflt, psize
    ];
    let tail = [0u32, 0x209 << 16 | 101]; // order C, MPI_INT
    let body = |xdr: bool| -> Vec<u8> {
        words
            .iter()
            .chain(&tail)
            .flat_map(|w| {
                if xdr {
                    w.to_be_bytes()
                } else {
                    w.to_ne_bytes()
                }
            })
            .collect()
    };
    let mut ext = [
        &mpix_marshal::testing::external::header(0)[..],
        &body(true),
        &[0; 4],
    ]
    .concat();
    reseal(&mut ext);
    let stored = sealed(
        [
            &MAGIC_STORED.to_be_bytes()[..],
            &(ext.len() as u32).to_be_bytes(),
            &ext,
            &[0; 4],
        ]
        .concat(),
    );
    let internal = [
        &mpix_marshal::testing::internal::header(mpix_marshal::testing::marshal::build_id())[..],
        &body(false),
    ]
    .concat();
    for (rep, bytes) in [
        (Representation::External, ext),
        (Representation::Internal, internal),
        (Representation::Compressed, stored),
    ] {
        expect_error(
            &format!("{rep:?}: darray rank >= size"),
            c_unmarshal(rep_name(rep), &bytes),
            k,
            &["root.1", "MPI_COMBINER_DARRAY", "rank 2", "0..2"],
        );
    }
    mpi::free(t).unwrap();
}

/// The signature functions: NULL and negative arguments, unknown hash kinds,
/// MPI_DATATYPE_NULL.
#[test]
fn invalid_argument_signature() {
    let _serial = start();
    let Args {
        k,
        t,
        null_t,
        e,
        good,
        ..
    } = args();
    // The signature functions.
    unsafe {
        let p = good.as_ptr() as *const c_void;
        let n = good.len() as MPI_Aint;
        let rc = MPIX_Type_marshaled_signature_hash(e.as_ptr(), p, n, std::ptr::null_mut());
        expect_error("NULL hash", rc, k, &["hash is NULL"]);
        let mut hash = NO_HASH;
        let rc = MPIX_Type_marshaled_signature_hash(e.as_ptr(), p, -1, &mut hash);
        expect_error("negative insize", rc, k, &["insize is negative"]);
        let rc = MPIX_Type_marshaled_signature_hash(e.as_ptr(), std::ptr::null(), n, &mut hash);
        expect_error("NULL inbuf", rc, k, &["inbuf is NULL"]);
        let rc = MPIX_Type_signature_hash(t, MPIX_HASH_DEFAULT, std::ptr::null_mut());
        expect_error("NULL hash", rc, k, &["hash is NULL"]);
        let rc = MPIX_Type_signature_count(t, std::ptr::null_mut());
        expect_error("NULL count", rc, k, &["count is NULL"]);
        assert_eq!(hash, NO_HASH);
    }
    for kind in [0, -1, 8, 99] {
        expect_error(
            "hash kind",
            c_type_hash(t, kind),
            k,
            &[&format!("{kind} is not an MPIX_HASH_* kind")],
        );
    }
    expect_error(
        "MPI_DATATYPE_NULL",
        c_type_hash(null_t, MPIX_HASH_DEFAULT),
        k,
        &["MPI_DATATYPE_NULL"],
    );
    expect_error(
        "MPI_DATATYPE_NULL",
        c_count(null_t),
        k,
        &["MPI_DATATYPE_NULL"],
    );
    // The prefix hash: the same, and counts and lengths out of range.
    let rc = unsafe { MPIX_Type_signature_prefix_hash(t, 1, 0, 7, std::ptr::null_mut()) };
    expect_error("NULL hash", rc, k, &["hash is NULL"]);
    let per_copy = mpix_marshal::signature_count(t).unwrap() as MPI_Count;
    assert_eq!(c_prefix_hash(t, 2, 2 * per_copy, MPIX_HASH_DEFAULT), 0);
    for (what, count, n, kind, message) in [
        (
            "prefix hash kind",
            1,
            0,
            99,
            "99 is not an MPIX_HASH_* kind",
        ),
        ("negative count", -1, 0, 7, "count is negative (-1)"),
        ("negative n", 1, -5, 7, "n is negative (-5)"),
        (
            "n too long",
            2,
            2 * per_copy + 1,
            7,
            "longer than the signature",
        ),
        ("n of no copies", 0, 1, 7, "longer than the signature"),
    ] {
        expect_error(what, c_prefix_hash(t, count, n, kind), k, &[message]);
    }
    expect_error(
        "MPI_DATATYPE_NULL",
        c_prefix_hash(null_t, 1, 0, MPIX_HASH_DEFAULT),
        k,
        &["MPI_DATATYPE_NULL"],
    );
    mpi::free(t).unwrap();
}

/// MPIX_Type_compare: NULL and negative arguments, unknown levels,
/// MPI_DATATYPE_NULL; *result and the explanation stay untouched.
#[test]
fn invalid_argument_compare() {
    let _serial = start();
    let Args { k, t, null_t, .. } = args();
    // MPIX_Type_compare: *result and the explanation are untouched.
    let u = contiguous(3, named("MPI_INT"));
    let compare = |a: Datatype, b: Datatype, level: c_int, result: bool, size: c_int, buf: bool| {
        let mut res: c_int = -7;
        let mut text = [FILL as c_char; 64];
        let rc = unsafe {
            MPIX_Type_compare(
                a,
                b,
                level,
                if result {
                    &mut res
                } else {
                    std::ptr::null_mut()
                },
                if buf {
                    text.as_mut_ptr()
                } else {
                    std::ptr::null_mut()
                },
                size,
            )
        };
        assert_eq!(res, -7, "*result was written on error");
        assert!(
            text.iter().all(|&c| c == FILL as c_char),
            "the explanation was written"
        );
        rc
    };
    let level = MPIX_COMPARE_CONSTRUCTOR;
    expect_error(
        "NULL result",
        compare(t, u, level, false, 64, true),
        k,
        &["result is NULL"],
    );
    for bad in [0, 6, -1] {
        expect_error(
            "compare level",
            compare(t, u, bad, true, 64, true),
            k,
            &[&format!("{bad} is not an MPIX_COMPARE_* level")],
        );
    }
    expect_error(
        "negative explanation_size",
        compare(t, u, level, true, -2, true),
        k,
        &["explanation_size is negative (-2)"],
    );
    expect_error(
        "NULL explanation",
        compare(t, u, level, true, 64, false),
        k,
        &["explanation is NULL"],
    );
    expect_error(
        "compare MPI_DATATYPE_NULL",
        compare(null_t, u, level, true, 64, true),
        k,
        &["MPI_DATATYPE_NULL"],
    );
    mpi::free(u).unwrap();
    mpi::free(t).unwrap();
}

/// Keyval registration: each refused call registers nothing; unregistering an
/// unknown keyval; the error-kind query.
#[test]
fn invalid_argument_registration() {
    let _serial = start();
    let Args { k, t, .. } = args();
    // Registration: nothing is registered by a refused call.
    let registry = || {
        attributes::snapshot()
            .map(|r| {
                r.iter()
                    .map(|k| (k.keyval, k.name.clone()))
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default()
    };
    let before = registry();
    let name = c"test.errors.invalid";
    let long = CString::new("x".repeat(256)).unwrap();
    let invalid_keyval = mpi::local().constants.keyval_invalid;
    unsafe {
        let cases: [(&str, c_int, *const c_char, bool, bool, bool, &str); 6] = [
            (
                "NULL name",
                12345,
                std::ptr::null(),
                true,
                true,
                true,
                "canonical_name is NULL",
            ),
            (
                "MPI_KEYVAL_INVALID",
                invalid_keyval,
                name.as_ptr(),
                true,
                true,
                true,
                "MPI_KEYVAL_INVALID",
            ),
            (
                "empty name",
                12345,
                c"".as_ptr(),
                true,
                true,
                true,
                "1 to 255 bytes, this one has 0",
            ),
            (
                "256-byte name",
                12345,
                long.as_ptr(),
                true,
                true,
                true,
                "this one has 256",
            ),
            (
                "size without marshal",
                12345,
                name.as_ptr(),
                true,
                false,
                true,
                "must be given together",
            ),
            (
                "no callback",
                12345,
                name.as_ptr(),
                false,
                false,
                false,
                "at least",
            ),
        ];
        for (what, keyval, n, size, marshal_fn, unmarshal_fn, says) in cases {
            let rc = MPIX_Type_register_marshaled_keyval(
                keyval,
                n,
                size.then_some(ok_size as _),
                marshal_fn.then_some(ok_marshal as _),
                unmarshal_fn.then_some(ok_unmarshal as _),
            );
            expect_error(what, rc, k, &[says]);
            assert_eq!(registry(), before, "{what}: the registry changed");
        }
        let rc = MPIX_Type_unregister_marshaled_keyval(424242);
        expect_error("unregister", rc, k, &["keyval 424242 is not registered"]);
        // The kind query itself: a NULL kind is an invalid argument; the
        // query raises no error handler.
        let rc = MPIX_Type_marshal_error_kind(ErrorKind::Corrupt as c_int, std::ptr::null_mut());
        assert_eq!(kind_of(rc), k);
        assert!(mpi::error_string(rc).contains("kind is NULL"));
        let raised = RAISED.lock().unwrap();
        assert!(
            !raised.contains(&rc),
            "MPIX_Type_marshal_error_kind raised an error handler"
        );
    }
    assert_eq!(registry(), before);
    mpi::free(t).unwrap();
}

// Attribute callbacks: well-behaved ones (for registration), and each way
// of breaking the contract, chosen by the attribute's value.

unsafe extern "C" fn ok_size(
    _k: c_int,
    _n: *const c_char,
    _r: *const c_char,
    _t: ffi::MPI_Datatype,
    size: *mut MPI_Aint,
) -> c_int {
    *size = 4;
    0
}

unsafe extern "C" fn ok_marshal(
    _k: c_int,
    _n: *const c_char,
    _r: *const c_char,
    _t: ffi::MPI_Datatype,
    out: *mut c_void,
    _outsize: MPI_Aint,
    written: *mut MPI_Aint,
) -> c_int {
    std::ptr::copy_nonoverlapping(b"good".as_ptr(), out as *mut u8, 4);
    *written = 4;
    0
}

unsafe extern "C" fn ok_unmarshal(
    _k: c_int,
    _n: *const c_char,
    _r: *const c_char,
    _t: ffi::MPI_Datatype,
    _in: *const c_void,
    _insize: MPI_Aint,
) -> c_int {
    0
}

/// How the callbacks misbehave in `attribute()`.
static MODE: Mutex<&str> = Mutex::new("");

fn mode() -> &'static str {
    *MODE.lock().unwrap()
}

unsafe extern "C" fn bad_size(
    _k: c_int,
    _n: *const c_char,
    _r: *const c_char,
    _t: ffi::MPI_Datatype,
    size: *mut MPI_Aint,
) -> c_int {
    match mode() {
        "size fails" => return 7,
        "negative size" => *size = -1,
        "huge size" => *size = 1 << 30,
        _ => *size = 4,
    }
    0
}

unsafe extern "C" fn bad_marshal(
    _k: c_int,
    _n: *const c_char,
    _r: *const c_char,
    _t: ffi::MPI_Datatype,
    out: *mut c_void,
    outsize: MPI_Aint,
    written: *mut MPI_Aint,
) -> c_int {
    match mode() {
        "marshal fails" => 8,
        "overclaims" => {
            *written = outsize + 1;
            0
        }
        "negative written" => {
            *written = -1;
            0
        }
        _ => ok_marshal(
            0,
            std::ptr::null(),
            std::ptr::null(),
            _t,
            out,
            outsize,
            written,
        ),
    }
}

unsafe extern "C" fn bad_unmarshal(
    _k: c_int,
    _n: *const c_char,
    _r: *const c_char,
    _t: ffi::MPI_Datatype,
    _in: *const c_void,
    _insize: MPI_Aint,
) -> c_int {
    if mode() == "unmarshal fails" {
        9
    } else {
        0
    }
}

#[test]
fn attribute() {
    let _serial = start();
    let k = ErrorKind::Attribute as c_int;
    // (Open MPI refuses NULL for MPI_TYPE_NULL_COPY_FN / _DELETE_FN.)
    unsafe extern "C" fn no_copy(
        _t: ffi::MPI_Datatype,
        _k: c_int,
        _extra: *mut c_void,
        _in: *mut c_void,
        _out: *mut c_void,
        flag: *mut c_int,
    ) -> c_int {
        *flag = 0;
        0
    }
    unsafe extern "C" fn no_delete(
        _t: ffi::MPI_Datatype,
        _k: c_int,
        _value: *mut c_void,
        _extra: *mut c_void,
    ) -> c_int {
        0
    }
    let mut keyval = 0;
    ok(
        unsafe {
            ffi::MPI_Type_create_keyval(
                Some(no_copy),
                Some(no_delete),
                &mut keyval,
                std::ptr::null_mut(),
            )
        },
        "MPI_Type_create_keyval",
    );
    let name = c"test.errors.attribute";
    let rc = unsafe {
        MPIX_Type_register_marshaled_keyval(
            keyval,
            name.as_ptr(),
            Some(bad_size),
            Some(bad_marshal),
            Some(bad_unmarshal),
        )
    };
    assert_eq!(rc, 0);
    let t = contiguous(4, named("MPI_INT"));
    ok(
        unsafe { ffi::MPI_Type_set_attr(t, keyval, 1 as *mut c_void) },
        "MPI_Type_set_attr",
    );
    let quoted = "\"test.errors.attribute\"";
    for (m, says) in [
        ("size fails", "marshal_size callback returned error 7"),
        ("negative size", "returned -1, not in 0..=1073741823"),
        ("huge size", "returned 1073741824, not in 0..=1073741823"),
        ("marshal fails", "the marshal callback returned error 8"),
        (
            "overclaims",
            "claims 5 bytes written, but its size callback promised at most 4",
        ),
        ("negative written", "claims -1 bytes written"),
    ] {
        *MODE.lock().unwrap() = m;
        for rep in REPS {
            let what = format!("{m} {rep:?}");
            let (rc, _) = c_marshal(rep_name(rep), t, 4096);
            expect_error(&what, rc, k, &[quoted, says]);
            expect_error(&what, c_marshal_size(rep_name(rep), t), k, &[quoted, says]);
        }
    }
    *MODE.lock().unwrap() = "";
    for rep in REPS {
        let bytes = stream(rep, t);
        *MODE.lock().unwrap() = "unmarshal fails";
        expect_error(
            &format!("unmarshal {rep:?}"),
            c_unmarshal(rep_name(rep), &bytes),
            k,
            &[quoted, "the unmarshal callback returned error 9"],
        );
        *MODE.lock().unwrap() = "";
        assert_eq!(c_unmarshal(rep_name(rep), &bytes), 0);
    }
    assert_eq!(MPIX_Type_unregister_marshaled_keyval(keyval), 0);
    mpi::free(t).unwrap();
    ok(
        unsafe { ffi::MPI_Type_free_keyval(&mut keyval) },
        "MPI_Type_free_keyval",
    );
}

/// An MPI call of the library that fails returns MPI's own code: of no
/// library class (kind NONE), with MPI's own message, outputs untouched.
#[test]
fn mpi_errors_pass_through() {
    let _serial = start();
    let t = vector(3, 2, 5, contiguous(2, named("MPI_DOUBLE")));
    let bytes = stream(Representation::External, t);
    let check = |what: &str, rc: c_int| {
        assert_eq!(rc, pmpi::INJECTED, "{what}");
        assert_eq!(kind_of(rc), ErrorKind::None as c_int, "{what}");
        assert_eq!(class_of(rc), pmpi::INJECTED, "{what}");
        let msg = mpi::error_string(rc);
        assert!(
            !msg.is_empty() && !msg.starts_with("mpix-marshal"),
            "{what}: {msg}"
        );
        let raised = RAISED.lock().unwrap();
        assert!(raised.contains(&rc), "{what}: not raised on MPI_COMM_SELF");
    };
    for k in 1..=2 {
        pmpi::fail_constructor(k);
        let rc = c_unmarshal(rep_name(Representation::External), &bytes);
        pmpi::fail_constructor(0);
        check(&format!("constructor {k} of unmarshal"), rc);
    }
    // A type marshalled for the first time asks MPI_Type_get_contents.
    let fresh = vector(2, 1, 3, named("MPI_INT"));
    pmpi::fail_contents(1);
    let (rc, _) = c_marshal(rep_name(Representation::Internal), fresh, 4096);
    pmpi::fail_contents(0);
    check("get_contents of marshal", rc);
    mpi::free(fresh).unwrap();
    free(t);
}

/// INTERNAL (a Rust panic caught at the C boundary) has no trigger: no
/// input, argument or MPI answer found makes the library panic (the one
/// found, an overflow on MPIs without MPI_LB, is fixed in
/// src/unmarshal/mod.rs; see `lb_ub_bounds_that_overflow_are_refused`).
/// Its class is still registered apart from the others, so its codes would
/// be told apart.
#[test]
fn internal_errors_have_no_known_trigger() {
    let _serial = start();
    // Every other kind has its own class (checked as they occur); a code of
    // MPI's own classes is of kind NONE.
    for class in [ffi::MPI_ERR_TYPE, ffi::MPI_ERR_ARG, ffi::MPI_ERR_OTHER] {
        assert_eq!(kind_of(class as c_int), ErrorKind::None as c_int);
    }
    assert_eq!(kind_of(0), ErrorKind::None as c_int);
}

/// A struct with MPI_LB and MPI_UB members at the far ends of the 64-bit
/// range: on an MPI without MPI_LB the rebuild computes the bounds itself,
/// and used to overflow there (a panic in a debug build, a wrong type in
/// an optimized one). Refused as an invalid argument now; an MPI with
/// MPI_LB builds or refuses it itself.
#[test]
fn lb_ub_bounds_that_overflow_are_refused() {
    let _serial = start();
    let lb = PREDEFINED.iter().find(|e| e.1 == "MPI_LB").unwrap().0;
    let ub = PREDEFINED.iter().find(|e| e.1 == "MPI_UB").unwrap().0;
    let mut tree = Node::new(Kind::Struct {
        blocklengths: vec![1, 1, 1],
        displacements: vec![i64::MIN, 0, i64::MAX],
        types: vec![
            Node::named(Predefined(lb)),
            int_node(),
            Node::named(Predefined(ub)),
        ],
        legacy: false,
    });
    let e = rep_name(Representation::External);
    let rc = c_unmarshal(e, &stream_of(&tree));
    if mpi::local().datatype(Predefined(lb)).is_none() {
        expect_error(
            "LB/UB overflow",
            rc,
            ErrorKind::InvalidArgument as c_int,
            &["bounds"],
        );
        // An int member near the top of the range: the struct's own upper
        // bound overflows.
        tree = Node::new(Kind::Struct {
            blocklengths: vec![1, 1],
            displacements: vec![0, i64::MAX - 2],
            types: vec![Node::named(Predefined(lb)), int_node()],
            legacy: false,
        });
        let rc = c_unmarshal(e, &stream_of(&tree));
        expect_error(
            "struct bound overflow",
            rc,
            ErrorKind::InvalidArgument as c_int,
            &["bounds"],
        );
    } else {
        assert_ne!(
            kind_of(rc),
            ErrorKind::Internal as c_int,
            "{}",
            mpi::error_string(rc)
        );
    }
}

// ---------------------------------------------------------------------------
// MPI not initialized, or already finalized: in a child process, which
// runs `child` below with MPIX_ERRORS_CHILD set.

const CHILD: &str = "MPIX_ERRORS_CHILD";

/// Runs this test binary's `child` test with `mode`, without the MPI
/// environment of this (already initialized) process; returns its status
/// and its "child:" lines.
fn run_child(mode: &str) -> (std::process::ExitStatus, Vec<String>) {
    let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
    cmd.args(["--exact", "child", "--nocapture", "--test-threads=1"]);
    for (key, _) in std::env::vars() {
        let mpi_env = [
            "OMPI_", "PMIX_", "PMI_", "HYDRA_", "MPIR_", "OPAL_", "ORTE_",
        ]
        .iter()
        .any(|p| key.starts_with(p));
        let keep =
            key.starts_with("OMPI_ALLOW_RUN_AS_ROOT") || key == "OMPI_MCA_rmaps_base_oversubscribe";
        if mpi_env && !keep {
            cmd.env_remove(&key);
        }
    }
    let out = cmd.env(CHILD, mode).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines = stdout
        .lines()
        // (libtest prints "test child ... " before the first line)
        .filter_map(|l| l.find("child: ").map(|at| l[at + 7..].to_string()))
        .collect();
    (out.status, lines)
}

/// The child's side. Without MPIX_ERRORS_CHILD it does nothing.
#[test]
fn child() {
    let Ok(mode) = std::env::var(CHILD) else {
        return;
    };
    let e = rep_name(Representation::External);
    let report = |what: &str, rc: c_int| {
        let mut kind = -1;
        let krc = unsafe { MPIX_Type_marshal_error_kind(rc, &mut kind) };
        println!("child: {what} rc={rc} kind={kind} kind_rc={krc}");
    };
    let mut size = UNSET;
    let mut argc = 0;
    let mut argv: *mut *mut c_char = std::ptr::null_mut();
    unsafe {
        if mode == "after" {
            ok(ffi::MPI_Init(&mut argc, &mut argv), "MPI_Init");
            ffi::MPI_Comm_set_errhandler(ffi::RSMPI_COMM_SELF, ffi::RSMPI_ERRORS_RETURN);
            // An error registers the library's classes.
            let rc = MPIX_Type_unmarshal(
                e.as_ptr(),
                b"bad".as_ptr() as *const c_void,
                3,
                &mut sentinel(),
            );
            report("while initialized", rc);
            ok(ffi::MPI_Finalize(), "MPI_Finalize");
        }
        let rc = MPIX_Type_marshal_size(e.as_ptr(), ffi::RSMPI_DOUBLE, &mut size);
        report("marshal_size", rc);
        println!("child: size={size}");
        if mode == "before" {
            // Initialized afterwards, the library's classes work.
            ok(ffi::MPI_Init(&mut argc, &mut argv), "MPI_Init");
            ffi::MPI_Comm_set_errhandler(ffi::RSMPI_COMM_SELF, ffi::RSMPI_ERRORS_RETURN);
            let rc = MPIX_Type_unmarshal(
                e.as_ptr(),
                b"bad".as_ptr() as *const c_void,
                3,
                &mut sentinel(),
            );
            report("after MPI_Init", rc);
            ffi::MPI_Finalize();
        }
    }
    println!("child: done");
}

fn field(line: &str, key: &str) -> i64 {
    line.split_whitespace()
        .find_map(|w| w.strip_prefix(key))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {key} in {line:?}"))
}

/// Before MPI_Init: an error, *size untouched. docs/errors.md: the kind is
/// INVALID_ARGUMENT; without MPI no class can be registered, so the code is
/// MPI_ERR_OTHER (kind NONE). Once MPI is initialized, errors get their
/// kinds.
#[test]
fn before_mpi_init() {
    let _serial = start();
    let (status, lines) = run_child("before");
    assert!(status.success(), "child failed: {status:?} {lines:?}");
    let rc = field(&lines[0], "rc=");
    assert_ne!(rc, 0, "{lines:?}");
    assert_eq!(field(&lines[1], "size="), UNSET_I64, "*size written");
    assert_eq!(
        field(&lines[2], "kind="),
        ErrorKind::Corrupt as i64,
        "an error after MPI_Init has no kind: {lines:?}"
    );
}

/// After MPI_Finalize: an error returned, *size untouched, no abort.
#[test]
fn after_mpi_finalize() {
    let _serial = start();
    let (status, lines) = run_child("after");
    assert!(status.success(), "child failed: {status:?} {lines:?}");
    assert_eq!(lines.last().map(String::as_str), Some("done"), "{lines:?}");
    let line = lines
        .iter()
        .find(|l| l.starts_with("marshal_size"))
        .unwrap();
    assert_ne!(field(line, "rc="), 0);
}

/// What does work without MPI: the call fails, writes nothing, and does
/// not crash.
#[test]
fn without_mpi_the_calls_fail_cleanly() {
    let _serial = start();
    let (status, lines) = run_child("before");
    assert!(status.success(), "child failed: {status:?} {lines:?}");
    assert!(lines[0].starts_with("marshal_size"), "{lines:?}");
    assert_ne!(field(&lines[0], "rc="), 0, "{lines:?}");
    assert_eq!(field(&lines[1], "size="), UNSET_I64, "*size written");
}
