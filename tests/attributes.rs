//! Marshalled attributes: registered keyvals travel with the type at every
//! level, unknown ones are skipped, callback failures are reported by
//! canonical name, and a freed keyval is marshalled no more.

mod common;

use common::blob::{blob_marshal, blob_size, get_blob};
use common::{contiguous, free, init, named, ok, set_name, vector};
use mpix_marshal::testing::attributes::{self, Keyval};
use mpix_marshal::testing::mpi::sys as ffi;
use mpix_marshal::testing::mpi::{Datatype, MPI_Aint};
use mpix_marshal::{marshal, type_tree, unmarshal, Error, Representation};
use std::ffi::{CStr, CString};
use std::os::raw::{c_char, c_int, c_void};

const REPS: [Representation; 1] = [Representation::External];

// ---------------------------------------------------------------------------
// A keyval whose value is a heap byte string (Box<Vec<u8>>).

unsafe extern "C" fn copy_blob(
    _t: ffi::MPI_Datatype,
    _k: c_int,
    _extra: *mut c_void,
    value_in: *mut c_void,
    value_out: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    let v = &*(value_in as *const Vec<u8>);
    *(value_out as *mut *mut c_void) = Box::into_raw(Box::new(v.clone())) as *mut c_void;
    *flag = 1;
    0
}

unsafe extern "C" fn delete_blob(
    _t: ffi::MPI_Datatype,
    _k: c_int,
    value: *mut c_void,
    _extra: *mut c_void,
) -> c_int {
    drop(Box::from_raw(value as *mut Vec<u8>));
    0
}

fn create_keyval() -> c_int {
    let mut k = 0;
    ok(
        unsafe {
            ffi::MPI_Type_create_keyval(
                Some(copy_blob),
                Some(delete_blob),
                &mut k,
                std::ptr::null_mut(),
            )
        },
        "MPI_Type_create_keyval",
    );
    k
}

fn set_blob(t: Datatype, k: c_int, bytes: &[u8]) {
    let p = Box::into_raw(Box::new(bytes.to_vec()));
    ok(
        unsafe { ffi::MPI_Type_set_attr(t, k, p as *mut c_void) },
        "MPI_Type_set_attr",
    );
}

unsafe extern "C" fn blob_unmarshal(
    k: c_int,
    _name: *const c_char,
    rep: *const c_char,
    t: ffi::MPI_Datatype,
    inbuf: *const c_void,
    insize: MPI_Aint,
) -> c_int {
    assert!(matches!(
        CStr::from_ptr(rep).to_bytes(),
        b"external" | b"internal" | b"compressed"
    ));
    let bytes = std::slice::from_raw_parts(inbuf as *const u8, insize as usize);
    set_blob(t, k, bytes);
    UNMARSHALLED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    0
}

/// Calls of `blob_unmarshal`, all tests together.
static UNMARSHALLED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

fn register(k: c_int, name: &str) {
    attributes::register(Keyval {
        keyval: k,
        name: CString::new(name).unwrap(),
        size: Some(blob_size),
        marshal: Some(blob_marshal),
        unmarshal: Some(blob_unmarshal),
    })
    .unwrap();
}

/// The attribute names at the root and its first descendants.
fn attr_names(t: Datatype) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut node = type_tree(t).unwrap();
    loop {
        out.push(
            node.attrs
                .iter()
                .map(|a| String::from_utf8_lossy(&a.name).into_owned())
                .collect(),
        );
        match node.children().first() {
            Some(c) => node = c.clone(),
            None => return out,
        }
    }
}

#[test]
fn attributes_round_trip_at_every_level() {
    init();
    let (outer_k, inner_k) = (create_keyval(), create_keyval());
    register(outer_k, "test.roundtrip.outer");
    register(inner_k, "test.roundtrip.inner");
    let inner = set_name(contiguous(3, named("MPI_INT")), "inner");
    set_blob(inner, inner_k, b"inner cache: 3 ints");
    set_blob(inner, outer_k, b"");
    let outer = set_name(vector(2, 1, 4, inner), "outer");
    set_blob(outer, outer_k, &[1, 2, 3, 4, 5]);
    // Open MPI's MPI_Type_get_contents returns duplicates that carry no
    // attributes, so only the root's attributes are visible there.
    let nested_visible = mpix_marshal::testing::mpi::local().constants.is_open_mpi == 0;
    let expected: Vec<Vec<String>> = if nested_visible {
        vec![
            vec!["test.roundtrip.outer".into()],
            vec!["test.roundtrip.inner".into(), "test.roundtrip.outer".into()],
            vec![],
        ]
    } else {
        vec![vec!["test.roundtrip.outer".into()], vec![], vec![]]
    };
    assert_eq!(attr_names(outer), expected);
    for rep in REPS {
        let bytes = marshal(rep, outer).unwrap();
        let back = unmarshal(rep, &bytes).unwrap();
        assert_eq!(
            type_tree(back).unwrap(),
            type_tree(outer).unwrap(),
            "{rep:?}"
        );
        assert_eq!(get_blob(back, outer_k).unwrap(), vec![1, 2, 3, 4, 5]);
        assert_eq!(get_blob(back, inner_k), None);
        assert_eq!(attr_names(back), expected);
        free(back);
    }
    free(outer);
    free(inner);
    assert!(attributes::forget(outer_k) && attributes::forget(inner_k));
}

/// A stream with attributes on two levels (as MPICH writes it) is rebuilt
/// with every unmarshal callback run, on either MPI.
#[test]
fn nested_attributes_in_a_stream_are_all_set() {
    use mpix_marshal::testing::tree::{Attribute, Kind, Node};
    init();
    let (a, b) = (create_keyval(), create_keyval());
    register(a, "test.nested.a");
    register(b, "test.nested.b");
    let attr = |name: &str, value: &[u8]| Attribute {
        name: name.as_bytes().to_vec(),
        value: value.to_vec(),
    };
    let mut inner = Node::new(Kind::Contiguous {
        count: 2,
        old: Box::new(Node::named(mpix_marshal::testing::codes::Predefined(0x209))),
    });
    inner.attrs = vec![
        attr("test.nested.a", b"inner a"),
        attr("test.nested.b", b"inner b"),
    ];
    let mut outer = Node::new(Kind::Contiguous {
        count: 1,
        old: Box::new(inner),
    });
    outer.attrs = vec![attr("test.nested.b", b"outer b")];
    let mut bytes = Vec::new();
    mpix_marshal::testing::external::write(&outer, &mut bytes).unwrap();
    let before = UNMARSHALLED.load(std::sync::atomic::Ordering::SeqCst);
    let back = unmarshal(Representation::External, &bytes).unwrap();
    let calls = UNMARSHALLED.load(std::sync::atomic::Ordering::SeqCst) - before;
    assert!(calls >= 3, "{calls} unmarshal callbacks ran, expected 3");
    assert_eq!(get_blob(back, b).unwrap(), b"outer b");
    assert_eq!(get_blob(back, a), None);
    if mpix_marshal::testing::mpi::local().constants.is_open_mpi == 0 {
        assert_eq!(type_tree(back).unwrap(), outer);
    }
    free(back);
    attributes::forget(a);
    attributes::forget(b);
}

#[test]
fn an_attribute_without_a_local_keyval_is_skipped() {
    init();
    let (a, b) = (create_keyval(), create_keyval());
    register(a, "test.skip.a");
    register(b, "test.skip.b");
    let t = contiguous(2, named("MPI_DOUBLE"));
    set_blob(t, a, b"only the writer knows a");
    set_blob(t, b, b"both know b");
    let bytes = marshal(Representation::External, t).unwrap();
    assert!(attributes::forget(a));
    let back = unmarshal(Representation::External, &bytes).unwrap();
    assert_eq!(get_blob(back, a), None);
    assert_eq!(get_blob(back, b).unwrap(), b"both know b");
    free(back);
    free(t);
    attributes::forget(b);
}

#[test]
fn a_freed_keyval_is_no_longer_marshalled() {
    init();
    let mut k = create_keyval();
    register(k, "test.freed");
    let t = contiguous(2, named("MPI_CHAR"));
    set_blob(t, k, b"x");
    assert_eq!(attr_names(t)[0], vec!["test.freed".to_string()]);
    // The attribute stays on the type, but the keyval is gone.
    ok(
        unsafe { ffi::MPI_Type_free_keyval(&mut k) },
        "MPI_Type_free_keyval",
    );
    assert!(attr_names(t)[0].is_empty(), "a freed keyval was marshalled");
    free(t);
}

unsafe extern "C" fn failing_size(
    _k: c_int,
    _n: *const c_char,
    _r: *const c_char,
    _t: ffi::MPI_Datatype,
    _size: *mut MPI_Aint,
) -> c_int {
    7
}

unsafe extern "C" fn overclaiming_marshal(
    _k: c_int,
    _n: *const c_char,
    _r: *const c_char,
    _t: ffi::MPI_Datatype,
    _out: *mut c_void,
    outsize: MPI_Aint,
    written: *mut MPI_Aint,
) -> c_int {
    *written = outsize + 1;
    0
}

unsafe extern "C" fn failing_unmarshal(
    _k: c_int,
    _n: *const c_char,
    _r: *const c_char,
    _t: ffi::MPI_Datatype,
    _in: *const c_void,
    _insize: MPI_Aint,
) -> c_int {
    3
}

#[test]
fn callback_failures_name_the_attribute() {
    init();
    let k = create_keyval();
    let t = contiguous(4, named("MPI_INT"));
    set_blob(t, k, b"data");
    fn expect_attr_error<T: std::fmt::Debug>(r: Result<T, Error>, what: &str) {
        match r {
            Err(Error::Attribute { name, what: w }) => {
                assert_eq!(name, "test.failing");
                assert!(w.contains(what), "{w}");
            }
            other => panic!("expected an attribute error, got {other:?}"),
        }
    }
    let with = |size, marshal, unmarshal| {
        attributes::register(Keyval {
            keyval: k,
            name: CString::new("test.failing").unwrap(),
            size,
            marshal,
            unmarshal,
        })
        .unwrap()
    };
    with(Some(failing_size), Some(blob_marshal), None);
    expect_attr_error(
        marshal(Representation::External, t),
        "marshal_size callback returned error 7",
    );
    with(Some(blob_size), Some(overclaiming_marshal), None);
    expect_attr_error(marshal(Representation::External, t), "promised at most 4");
    with(Some(blob_size), Some(blob_marshal), Some(failing_unmarshal));
    let bytes = marshal(Representation::External, t).unwrap();
    expect_attr_error(
        unmarshal(Representation::External, &bytes),
        "unmarshal callback returned error 3",
    );
    attributes::forget(k);
    free(t);
    let mut k = k;
    ok(
        unsafe { ffi::MPI_Type_free_keyval(&mut k) },
        "MPI_Type_free_keyval",
    );
}

#[test]
fn registration_is_validated() {
    init();
    let bad = |name: &str, size: bool, marshal: bool, unmarshal: bool| {
        attributes::register(Keyval {
            keyval: 12345,
            name: CString::new(name).unwrap(),
            size: size.then_some(blob_size as _),
            marshal: marshal.then_some(blob_marshal as _),
            unmarshal: unmarshal.then_some(blob_unmarshal as _),
        })
        .unwrap_err()
    };
    assert!(matches!(
        bad("", true, true, true),
        Error::InvalidArgument(_)
    ));
    assert!(matches!(
        bad(&"x".repeat(256), true, true, true),
        Error::InvalidArgument(_)
    ));
    assert!(matches!(
        bad("test.half", true, false, true),
        Error::InvalidArgument(_)
    ));
    assert!(matches!(
        bad("test.none", false, false, false),
        Error::InvalidArgument(_)
    ));
}

#[test]
fn attributes_decide_the_attributes_level() {
    use mpix_marshal::{compare, Level};
    init();
    let k = create_keyval();
    register(k, "test.compare");
    let v = vector(2, 1, 4, named("MPI_INT"));
    let a = common::dup(v);
    let b = common::dup(v);
    set_blob(a, k, b"one");
    set_blob(b, k, b"two");
    let c = compare(a, b, Level::Names).unwrap();
    assert!(c.is_equal(), "{}", c.explanation);
    let c = compare(a, b, Level::Attributes).unwrap();
    assert_eq!(c.differs_at, Some(Level::Attributes), "{}", c.explanation);
    assert!(c.explanation.contains("test.compare"), "{}", c.explanation);
    set_blob(b, k, b"one");
    assert!(compare(a, b, Level::Attributes).unwrap().is_equal());
    // An attribute on one side only.
    let plain = common::dup(v);
    let c = compare(a, plain, Level::Attributes).unwrap();
    assert_eq!(c.differs_at, Some(Level::Attributes), "{}", c.explanation);
    for t in [a, b, plain, v] {
        free(t);
    }
    assert!(attributes::forget(k));
}
