//! Shared by the fuzz targets and the seed writer: MPI start-up, a keyval
//! whose attributes travel in streams, and the invariants every decoded
//! stream must keep. A broken invariant panics, which libFuzzer reports as
//! a crash together with the input.

use mpi_sys as ffi;
use mpix_marshal::testing::attributes::{self, Keyval};
use mpix_marshal::testing::codes::Predefined;
use mpix_marshal::testing::compressed;
use mpix_marshal::testing::external;
use mpix_marshal::testing::mpi::{self, Datatype, MPI_Aint};
use mpix_marshal::testing::sink::Sink;
use mpix_marshal::testing::tree::{self, Kind, Node};
use mpix_marshal::{marshal, read, Error, Representation};
use std::ffi::CString;
use std::os::raw::{c_char, c_int, c_void};
use std::sync::Once;

pub const REPS: [Representation; 3] = [
    Representation::External,
    Representation::Internal,
    Representation::Compressed,
];

/// Canonical names of the keyvals `register_keyvals` registers; other
/// names in a stream are skipped on rebuild.
pub const KEYVAL_NAMES: [&[u8]; 2] = [b"a", b"b"];

/// Initializes MPI once per process, with errors returned rather than
/// fatal (as tests/common does), so that an MPI error the library lets
/// through shows as `Error::Mpi` instead of an abort.
pub fn mpi_init() {
    static INIT: Once = Once::new();
    INIT.call_once(|| unsafe {
        let mut done = 0;
        ffi::MPI_Initialized(&mut done);
        if done != 0 {
            return; // by tests/common, in the seed writer
        }
        let mut provided = 0;
        let rc = ffi::MPI_Init_thread(
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            ffi::MPI_THREAD_MULTIPLE as c_int,
            &mut provided,
        );
        assert_eq!(rc, 0, "MPI_Init_thread failed");
        ffi::MPI_Comm_set_errhandler(ffi::RSMPI_COMM_SELF, ffi::RSMPI_ERRORS_RETURN);
        ffi::MPI_Comm_set_errhandler(ffi::RSMPI_COMM_WORLD, ffi::RSMPI_ERRORS_RETURN);
    });
}

// ---------------------------------------------------------------------------
// Keyvals "a" and "b": the value is a heap byte string (Box<Vec<u8>>). No
// copy callback, so MPI_Type_dup does not carry a child's value up a level
// and a rebuilt type holds exactly the attributes of its stream.

unsafe extern "C" fn delete_blob(
    _t: ffi::MPI_Datatype,
    _k: c_int,
    value: *mut c_void,
    _extra: *mut c_void,
) -> c_int {
    drop(Box::from_raw(value as *mut Vec<u8>));
    0
}

/// The value of keyval `k` on `t`, borrowed from the attribute.
unsafe fn blob<'a>(t: ffi::MPI_Datatype, k: c_int) -> Option<&'a [u8]> {
    let mut p: *mut c_void = std::ptr::null_mut();
    let mut flag = 0;
    let rc = ffi::MPI_Type_get_attr(t, k, &mut p as *mut *mut c_void as *mut c_void, &mut flag);
    (rc == 0 && flag != 0).then(|| (*(p as *const Vec<u8>)).as_slice())
}

/// Sets keyval `k` on `t` to `bytes`.
pub fn set_blob(t: Datatype, k: c_int, bytes: &[u8]) -> c_int {
    let p = Box::into_raw(Box::new(bytes.to_vec()));
    unsafe { ffi::MPI_Type_set_attr(t, k, p as *mut c_void) }
}

unsafe extern "C" fn blob_size(
    k: c_int,
    _name: *const c_char,
    _rep: *const c_char,
    t: ffi::MPI_Datatype,
    size: *mut MPI_Aint,
) -> c_int {
    match blob(t, k) {
        Some(v) => {
            *size = v.len() as MPI_Aint;
            0
        }
        None => 1,
    }
}

unsafe extern "C" fn blob_marshal(
    k: c_int,
    _name: *const c_char,
    _rep: *const c_char,
    t: ffi::MPI_Datatype,
    out: *mut c_void,
    outsize: MPI_Aint,
    written: *mut MPI_Aint,
) -> c_int {
    match blob(t, k) {
        Some(v) if v.len() as MPI_Aint <= outsize => {
            std::ptr::copy_nonoverlapping(v.as_ptr(), out as *mut u8, v.len());
            *written = v.len() as MPI_Aint;
            0
        }
        _ => 1,
    }
}

unsafe extern "C" fn blob_unmarshal(
    k: c_int,
    _name: *const c_char,
    _rep: *const c_char,
    t: ffi::MPI_Datatype,
    inbuf: *const c_void,
    insize: MPI_Aint,
) -> c_int {
    let v = if insize == 0 {
        &[][..]
    } else {
        std::slice::from_raw_parts(inbuf as *const u8, insize as usize)
    };
    set_blob(t, k, v)
}

/// Creates and registers the keyvals of `KEYVAL_NAMES` (once); returns
/// their MPI keyvals in the same order.
pub fn register_keyvals() -> [c_int; 2] {
    static ONCE: Once = Once::new();
    static mut KEYVALS: [c_int; 2] = [0; 2];
    mpi_init();
    ONCE.call_once(|| {
        for (i, name) in KEYVAL_NAMES.iter().enumerate() {
            let mut k = 0;
            let rc = unsafe {
                ffi::MPI_Type_create_keyval(None, Some(delete_blob), &mut k, std::ptr::null_mut())
            };
            assert_eq!(rc, 0, "MPI_Type_create_keyval failed");
            attributes::register(Keyval {
                keyval: k,
                name: CString::new(*name).unwrap(),
                size: Some(blob_size),
                marshal: Some(blob_marshal),
                unmarshal: Some(blob_unmarshal),
            })
            .expect("register keyval");
            // SAFETY: written once, inside call_once, before any read.
            unsafe { KEYVALS[i] = k };
        }
    });
    // SAFETY: call_once has completed the writes.
    unsafe { KEYVALS }
}

// ---------------------------------------------------------------------------
// Invariants.

/// The external stream of `tree`; an error for a tree whose signature
/// hash (in the header) cannot be computed.
pub fn write_external(tree: &Node) -> mpix_marshal::Result<Vec<u8>> {
    let mut out = Vec::new();
    external::write(tree, &mut out)?;
    Ok(out)
}

/// A parse error must be one of the kinds the spec names (§2): checksum
/// mismatch, corrupt or truncated.
pub fn assert_parse_error(e: &Error) {
    assert!(
        matches!(
            e,
            Error::Corrupt { .. } | Error::Truncated { .. } | Error::Checksum { .. }
        ),
        "a stream was refused with an error other than checksum, corrupt or truncated: {e}"
    );
}

/// The input with its last 4 bytes replaced by the CRC-32C of the others,
/// when it starts with a checksummed magic word ("MXCT", "MXCP", "MXCV",
/// "MXCS") and differs from that: a mutated stream rarely keeps its
/// checksum, so the targets also read this copy, which reaches the
/// parser's deep paths as the streams before the checksum did.
pub fn resealed(data: &[u8]) -> Option<Vec<u8>> {
    let checksummed = [b"MXCT", b"MXCP", b"MXCV", b"MXCS"];
    if data.len() < 8 || !checksummed.iter().any(|m| data[..4] == m[..]) {
        return None;
    }
    let (body, tail) = data.split_at(data.len() - 4);
    let crc = external::checksum(body).to_be_bytes();
    (tail != crc).then(|| [body, &crc].concat())
}

/// `external::read` also refuses, with validation's error, a tree whose
/// signature hash cannot be computed.
pub fn assert_read_error(e: &Error) {
    if !matches!(e, Error::InvalidArgument(_)) {
        assert_parse_error(e);
    }
}

/// Checks a tree decoded from any representation: validation runs and
/// refuses only with invalid argument; a tree the writer takes (every
/// valid one) re-encodes to an external stream, and to a compressed one,
/// that decode to the very same tree. Returns that external stream and
/// whether the tree is valid.
pub fn check_decoded(tree: &Node) -> (Option<Vec<u8>>, bool) {
    let valid = tree::validate(tree);
    if let Err(e) = &valid {
        assert!(
            matches!(e, Error::InvalidArgument(_)),
            "validate refused a tree with an error other than invalid argument: {e}"
        );
    }
    let ext = match write_external(tree) {
        Ok(ext) => ext,
        Err(e) => {
            assert!(
                valid.is_err(),
                "a valid tree does not encode: {e}\ntree: {tree:?}"
            );
            return (None, false);
        }
    };
    let back = external::read(&ext)
        .unwrap_or_else(|e| panic!("the re-encoded stream does not decode: {e}\ntree: {tree:?}"));
    assert!(
        back == *tree,
        "the re-encoded stream decodes to another tree\nbefore: {tree:?}\nafter: {back:?}"
    );
    let mut packed = Sink::default();
    compressed::compress(&ext, &mut packed).expect("compress a decoded tree's stream");
    let unpacked = compressed::expand(packed.bytes(), external::read)
        .unwrap_or_else(|e| panic!("the compressed re-encoding does not decode: {e}"));
    assert!(
        unpacked == *tree,
        "the compressed re-encoding decodes to another tree"
    );
    (Some(ext), valid.is_ok())
}

/// The tree a rebuilt type shows when marshalled again, as far as
/// docs/archiving.md ("What comes back") says what it is: attributes whose
/// names `keep` refuses are skipped (spec/external.md §5.5), and the tree
/// is in `local_form`.
/// None when a struct has MPI_LB/MPI_UB members on an MPI without them:
/// its rebuilt form (a resized struct) is the library's choice.
pub fn as_rebuilt(tree: &Node, keep: &dyn Fn(&[u8]) -> bool) -> Option<Node> {
    let markers = mpi::local().datatype(Predefined::LB).is_some();
    fn walk(n: &mut Node, keep: &dyn Fn(&[u8]) -> bool, markers: bool) -> bool {
        n.attrs.retain(|a| keep(&a.name));
        if let Kind::Struct { types, .. } = &n.kind {
            let has = types
                .iter()
                .any(|t| matches!(t.kind, Kind::Named(p) if p.is_marker()));
            if has && !markers {
                return false;
            }
        }
        n.children_mut().iter_mut().all(|c| walk(c, keep, markers))
    }
    let mut t = local_form(tree);
    walk(&mut t, keep, markers).then_some(t)
}

/// `tree` as this MPI records it: every MPI-1 `*_INTEGER` combiner in its
/// modern form (MPICH 4.0's MPI-1 constructors record the modern
/// combiners), and every predefined code by the canonical code of its
/// local handle (aliases such as MPI_C_COMPLEX, one handle with
/// MPI_C_FLOAT_COMPLEX in MPICH, come back canonical: src/shim/shim.c).
pub fn local_form(tree: &Node) -> Node {
    let local = mpi::local();
    fn go(n: &mut Node, local: &mpi::Local) {
        match &mut n.kind {
            Kind::Hvector { legacy, .. }
            | Kind::Hindexed { legacy, .. }
            | Kind::Struct { legacy, .. } => *legacy = false,
            Kind::Named(p) => {
                if let Some(c) = local.datatype(*p).and_then(|h| local.predefined(h)) {
                    *p = c;
                }
            }
            _ => {}
        }
        for c in n.children_mut() {
            go(c, local);
        }
    }
    let mut t = tree.clone();
    go(&mut t, local);
    t
}

/// Whether `name` is one of the registered keyvals' names.
pub fn registered(name: &[u8]) -> bool {
    KEYVAL_NAMES.contains(&name)
}

/// `tree` without what depends on the MPI that built it: recorded bounds
/// cleared, and every extent correction (spec/external.md §10, S4)
/// replaced by the level it wraps, which takes its name and attributes.
/// A fuzzed stream records whatever bounds the mutation left; the rebuilt
/// type has those bounds, through a correction where this MPI computes
/// others, and otherwise the stream's tree.
pub fn without_bounds(tree: &Node) -> Node {
    fn go(n: &mut Node) {
        n.bounds = None;
        if n.correction {
            if let Kind::Resized { old, .. } = &mut n.kind {
                let mut inner = std::mem::replace(old.as_mut(), Node::named(Predefined(0x209)));
                inner.name = n.name.take().or(inner.name);
                inner.attrs = std::mem::take(&mut n.attrs);
                *n = inner;
                go(n);
                return;
            }
        }
        n.children_mut().iter_mut().for_each(go);
    }
    let mut t = tree.clone();
    go(&mut t);
    t
}

/// Checks what `unmarshal` made of a stream whose tree parsed and
/// validated: either the local MPI cannot build it (unsupported), or it
/// is a type with the stream's recorded root bounds that marshals, in
/// every representation, to streams decoding to `expected` (or, when None,
/// to one same tree), both taken `without_bounds`. Any MPI error means
/// validation let through arguments the MPI refuses, which under
/// MPI_ERRORS_ARE_FATAL would abort.
pub fn check_rebuilt(
    unmarshalled: mpix_marshal::Result<Datatype>,
    tree: &Node,
    expected: Option<Node>,
) {
    let t = match unmarshalled {
        Ok(t) => t,
        Err(Error::Unsupported(_)) => return,
        Err(e) => panic!("a valid stream was not rebuilt: {e}\ntree: {tree:?}"),
    };
    let g = mpi::geometry(t).unwrap_or_else(|e| panic!("rebuilt into an unusable type: {e}"));
    if let Some(b) = tree.bounds {
        assert!(
            (g.lb, g.extent) == (b.lb, b.extent),
            "rebuilt with lb {} extent {}, recorded {b:?}\ntree: {tree:?}",
            g.lb,
            g.extent
        );
    }
    let mut expected = expected.map(|e| without_bounds(&e));
    for rep in REPS {
        let bytes = marshal(rep, t)
            .unwrap_or_else(|e| panic!("a rebuilt type does not marshal ({rep:?}): {e}"));
        let back = read(rep, &bytes)
            .unwrap_or_else(|e| panic!("a rebuilt type's stream does not decode ({rep:?}): {e}"));
        let back = without_bounds(&local_form(&back));
        let expected = expected.get_or_insert_with(|| back.clone());
        assert!(
            back == *expected,
            "a rebuilt type marshals ({rep:?}) to another tree\nexpected: {expected:?}\ngot: {back:?}\nstream tree: {tree:?}"
        );
    }
    if !tree.is_predefined() {
        mpi::free(t).expect("MPI_Type_free");
    }
}
