//! Thread safety under MPI_THREAD_MULTIPLE (issue 5): four threads marshal
//! (all three representations, through the Rust and the C API), unmarshal,
//! compare, provoke errors, and register and unregister attribute keyvals
//! concurrently, thousands of times. Every result equals the single-threaded
//! reference computed before the threads start; the threads' digests of
//! everything they produced are equal; afterwards the per-type cache
//! (src/marshal/cache.rs) still replays the reference bytes and the keyval
//! registry holds exactly what it held before.
//!
//! The same types are marshalled by all threads at about the same time, so
//! that replays of a type's cached plan race with each other; a set of
//! types never marshalled before is marshalled by all threads at once
//! first, so that the first traversals, which store the plan, race too.

mod common;

use common::blob::{blob_marshal, blob_size, get_blob};
use common::*;
use mpix_marshal::testing::attributes::{self, Keyval};
use mpix_marshal::testing::capi;
use mpix_marshal::testing::mpi::sys as ffi;
use mpix_marshal::testing::mpi::{self as mpi, Datatype, MPI_Aint};
use mpix_marshal::{marshal, read, unmarshal, Representation};
use std::ffi::CString;
use std::os::raw::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicI64, Ordering::SeqCst};
use std::sync::{Arc, Barrier};

const REPS: [Representation; 3] = [
    Representation::External,
    Representation::Internal,
    Representation::Compressed,
];
const THREADS: usize = 4;
/// Iterations per thread (debug builds: well under 30 s on 2 cores).
const ITERATIONS: usize = 3000;
/// Types created before the run and marshalled first by all threads at once.
const VIRGINS: usize = 24;

// ---------------------------------------------------------------------------
// Attribute values: heap byte strings, counted by their copy and delete
// callbacks (so that the run can be checked to leave none behind).

static VALUES: AtomicI64 = AtomicI64::new(0);

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
    *(value_out as *mut *mut c_void) = new_value(&*(value_in as *const Vec<u8>));
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

fn create_keyval() -> c_int {
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
    k
}

fn set_value(t: Datatype, k: c_int, bytes: &[u8]) {
    ok(
        unsafe { ffi::MPI_Type_set_attr(t, k, new_value(bytes)) },
        "MPI_Type_set_attr",
    );
}

unsafe extern "C" fn value_unmarshal(
    k: c_int,
    _name: *const c_char,
    _rep: *const c_char,
    t: ffi::MPI_Datatype,
    inbuf: *const c_void,
    insize: MPI_Aint,
) -> c_int {
    let bytes = std::slice::from_raw_parts(inbuf as *const u8, insize as usize);
    ffi::MPI_Type_set_attr(t, k, new_value(bytes))
}

fn keyval_entry(k: c_int, name: &str) -> Keyval {
    Keyval {
        keyval: k,
        name: CString::new(name).unwrap(),
        size: Some(blob_size),
        marshal: Some(blob_marshal),
        unmarshal: Some(value_unmarshal),
    }
}

/// Registers through the C API (`c_api`) or the Rust one.
fn register(k: c_int, name: &str, c_api: bool) {
    if c_api {
        let name = CString::new(name).unwrap();
        let rc = unsafe {
            capi::MPIX_Type_register_marshaled_keyval(
                k,
                name.as_ptr(),
                Some(blob_size),
                Some(blob_marshal),
                Some(value_unmarshal),
            )
        };
        assert_eq!(rc, 0, "MPIX_Type_register_marshaled_keyval");
    } else {
        attributes::register(keyval_entry(k, name)).unwrap();
    }
}

/// The registered canonical names under "test.threads.".
fn registered() -> Vec<(c_int, String)> {
    attributes::snapshot()
        .map(|r| {
            r.iter()
                .map(|k| (k.keyval, k.name.to_string_lossy().into_owned()))
                .filter(|(_, n)| n.starts_with("test.threads."))
                .collect()
        })
        .unwrap_or_default()
}

// ---------------------------------------------------------------------------

fn is_derived(t: Datatype) -> bool {
    mpi::local().predefined(t).is_none()
        && !read(
            Representation::External,
            &marshal(Representation::External, t).unwrap(),
        )
        .unwrap()
        .is_predefined()
}

/// A handle's bits, so that handles can cross threads (Open MPI's are
/// pointers).
#[derive(Clone, Copy)]
struct Handle(u64);

impl Handle {
    fn new(t: Datatype) -> Handle {
        Handle(mpi::handle_bits(t))
    }
    fn get(self) -> Datatype {
        mpi::handle_from_bits(self.0)
    }
}

/// What a type must give: its stream in each representation, and the
/// external stream of what each stream rebuilds into.
struct Reference {
    what: String,
    handle: Handle,
    bytes: [Vec<u8>; 3],
    rebuilt: [Vec<u8>; 3],
    /// Whether unmarshalling gives a new handle (not a predefined one).
    derived: bool,
}

fn reference(what: &str, t: Datatype) -> Reference {
    let bytes = REPS.map(|rep| marshal(rep, t).unwrap());
    let rebuilt = std::array::from_fn(|i| {
        let back = unmarshal(REPS[i], &bytes[i]).unwrap();
        let ext = marshal(Representation::External, back).unwrap();
        if is_derived(back) {
            mpi::free(back).unwrap();
        }
        ext
    });
    let derived = !read(Representation::External, &bytes[0])
        .unwrap()
        .is_predefined();
    Reference {
        what: what.to_string(),
        handle: Handle::new(t),
        bytes,
        rebuilt,
        derived,
    }
}

/// The types of the run: the corpus (but its two largest), and two types
/// carrying a registered attribute at two levels.
fn shared_types(shared_k: c_int) -> Vec<(String, Datatype)> {
    let mut v: Vec<(String, Datatype)> = corpus()
        .into_iter()
        .filter(|c| !c.name.contains("100000") && !c.name.contains("1000 members"))
        .map(|c| (c.name, c.datatype))
        .collect();
    let inner = set_name(contiguous(3, named("MPI_INT")), "attributed inner");
    set_value(inner, shared_k, b"inner value");
    let outer = vector(2, 1, 4, inner);
    set_value(outer, shared_k, b"outer value");
    v.push(("attributed inner".into(), inner));
    v.push(("attributed outer".into(), outer));
    v
}

/// A type of the virgin set: all different, never marshalled before the
/// run. `twin` builds the same type again (for the reference).
fn virgin(i: usize) -> Datatype {
    let int = named("MPI_INT");
    let dbl = named("MPI_DOUBLE");
    let inner = contiguous(1 + i as i32, if i % 2 == 0 { int } else { dbl });
    set_name(inner, &format!("virgin inner {i}"));
    let mid = vector(2, 1 + (i % 3) as i32, 5, inner);
    let top = structure(&[1, 2], &[0, 4096], &[mid, int]);
    mpi::free(inner).unwrap();
    mpi::free(mid).unwrap();
    top
}

/// FNV-1a over everything a thread produced, in order.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Digest(u64);

impl Digest {
    fn new() -> Digest {
        Digest(0xcbf2_9ce4_8422_2325)
    }
    fn add(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
        self.add_len(bytes.len());
    }
    fn add_len(&mut self, n: usize) {
        for b in (n as u64).to_le_bytes() {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
    }
}

/// MPIX_Type_marshal into a buffer of exactly `n` bytes.
fn c_marshal(rep: Representation, t: Datatype, n: usize) -> Vec<u8> {
    let mut buf = vec![0u8; n];
    let mut written: MPI_Aint = -1;
    let rc = unsafe {
        capi::MPIX_Type_marshal(
            rep.c_name().as_ptr(),
            t,
            buf.as_mut_ptr() as *mut c_void,
            n as MPI_Aint,
            &mut written,
        )
    };
    assert_eq!(rc, 0, "MPIX_Type_marshal: {}", mpi::error_string(rc));
    assert_eq!(written as usize, n);
    buf
}

/// A corrupt stream refused through the C API: its kind and message.
fn c_refuse(bytes: &[u8]) -> (c_int, String) {
    let mut out = named("MPI_BYTE");
    let rc = unsafe {
        capi::MPIX_Type_unmarshal(
            c"external".as_ptr(),
            bytes.as_ptr() as *const c_void,
            bytes.len() as MPI_Aint,
            &mut out,
        )
    };
    assert!(out == named("MPI_BYTE"), "*type written on error");
    let mut kind = -1;
    assert_eq!(
        unsafe { capi::MPIX_Type_marshal_error_kind(rc, &mut kind) },
        0
    );
    (kind, mpi::error_string(rc))
}

struct Run {
    shared: Vec<Reference>,
    virgins: Vec<Reference>,
    corrupt: Vec<u8>,
    corrupt_message: String,
}

/// One thread's work; returns its digest.
fn worker(id: usize, run: &Run, start: &Barrier) -> Digest {
    let mut digest = Digest::new();
    let check = |r: &Reference, digest: &mut Digest, c_api: bool| {
        let t = r.handle.get();
        for (i, rep) in REPS.into_iter().enumerate() {
            let bytes = if c_api {
                c_marshal(rep, t, r.bytes[i].len())
            } else {
                marshal(rep, t).unwrap()
            };
            assert!(
                bytes == r.bytes[i],
                "thread {id}: {} {rep:?}: marshalled bytes differ from the reference",
                r.what
            );
            let back = unmarshal(rep, &bytes).unwrap();
            let ext = marshal(Representation::External, back).unwrap();
            assert!(
                ext == r.rebuilt[i],
                "thread {id}: {} {rep:?}: the rebuilt type differs from the reference",
                r.what
            );
            if r.derived {
                mpi::free(back).unwrap();
            }
            digest.add(&bytes);
            digest.add(&ext);
        }
    };
    // A private type, whose name and attributes this thread changes.
    let pair = contiguous(2, named("MPI_SHORT"));
    let private = vector(2, 1, 3, pair);
    mpi::free(pair).unwrap();
    let plain = marshal(Representation::External, private).unwrap();
    start.wait();
    // Everybody at once on never-marshalled types: first traversals race.
    for r in &run.virgins {
        check(r, &mut digest, false);
    }
    for i in 0..ITERATIONS {
        // The same type in every thread at about the same time.
        let r = &run.shared[i % run.shared.len()];
        check(r, &mut digest, i % 3 == 0);

        // Keyval churn: register, use, unregister.
        let k = create_keyval();
        let name = format!("test.threads.t{id}.k{i:05}");
        register(k, &name, i % 2 == 0);
        let value = format!("thread {id} iteration {i}");
        set_value(private, k, value.as_bytes());
        let label = format!("t{id} i{i}");
        set_name(private, &label);
        let rep = REPS[i % 3];
        let bytes = marshal(rep, private).unwrap();
        let tree = read(rep, &bytes).unwrap();
        assert_eq!(tree.name.as_deref(), Some(label.as_bytes()), "thread {id}");
        let attrs: Vec<(&[u8], &[u8])> = tree
            .attrs
            .iter()
            .map(|a| (a.name.as_slice(), a.value.as_slice()))
            .collect();
        assert_eq!(
            attrs,
            vec![(name.as_bytes(), value.as_bytes())],
            "thread {id}: the private type's attributes"
        );
        let back = unmarshal(rep, &bytes).unwrap();
        assert_eq!(get_blob(back, k).as_deref(), Some(value.as_bytes()));
        mpi::free(back).unwrap();
        ok(
            unsafe { ffi::MPI_Type_delete_attr(private, k) },
            "MPI_Type_delete_attr",
        );
        let mut k = k;
        if i % 4 == 1 {
            // Unregistered first, then freed.
            assert_eq!(capi::MPIX_Type_unregister_marshaled_keyval(k), 0);
        } else if i % 4 == 3 {
            assert!(attributes::forget(k));
        }
        // MPI_Type_free_keyval unregisters, through the library's wrapper.
        ok(
            unsafe { ffi::MPI_Type_free_keyval(&mut k) },
            "MPI_Type_free_keyval",
        );
        digest.add_len(tree.attrs.len());

        // An error, through the C API: every thread's message is the same.
        let (kind, message) = c_refuse(&run.corrupt);
        assert_eq!(kind, capi::ErrorKind::Corrupt as c_int, "thread {id}");
        assert_eq!(message, run.corrupt_message, "thread {id}");
    }
    // Back to no name and no attribute: the plain stream again.
    set_name(private, "");
    assert!(
        marshal(Representation::External, private).unwrap() == plain,
        "thread {id}: the private type kept a name or an attribute"
    );
    mpi::free(private).unwrap();
    digest
}

#[test]
fn four_threads_marshal_unmarshal_and_register_concurrently() {
    init();
    let mut provided = 0;
    ok(
        unsafe { ffi::MPI_Query_thread(&mut provided) },
        "MPI_Query_thread",
    );
    assert_eq!(
        provided,
        ffi::MPI_THREAD_MULTIPLE as c_int,
        "this MPI provides thread level {provided}, not MPI_THREAD_MULTIPLE ({}): \
         the library's thread safety cannot be tested",
        ffi::MPI_THREAD_MULTIPLE
    );
    let mut shared_k = create_keyval();
    register(shared_k, "test.threads.shared", true);
    let registry_before = registered();
    assert_eq!(
        registry_before,
        vec![(shared_k, "test.threads.shared".to_string())]
    );

    // The single-threaded reference.
    let types = shared_types(shared_k);
    let shared: Vec<Reference> = types.iter().map(|(w, t)| reference(w, *t)).collect();
    let virgins: Vec<Datatype> = (0..VIRGINS).map(virgin).collect();
    let virgin_refs: Vec<Reference> = (0..VIRGINS)
        .map(|i| {
            let twin = virgin(i);
            let mut r = reference(&format!("virgin {i}"), twin);
            mpi::free(twin).unwrap();
            r.handle = Handle::new(virgins[i]);
            r
        })
        .collect();
    let mut corrupt = shared[0].bytes[0].clone();
    corrupt.truncate(corrupt.len() - 1);
    let corrupt_message = format!(
        "mpix-marshal: {}",
        unmarshal(Representation::External, &corrupt).unwrap_err()
    );
    let run = Arc::new(Run {
        shared,
        virgins: virgin_refs,
        corrupt,
        corrupt_message,
    });

    let start = Arc::new(Barrier::new(THREADS));
    let began = std::time::Instant::now();
    let threads: Vec<_> = (0..THREADS)
        .map(|id| {
            let (run, start) = (run.clone(), start.clone());
            std::thread::Builder::new()
                .name(format!("marshal-{id}"))
                .spawn(move || worker(id, &run, &start))
                .unwrap()
        })
        .collect();
    let digests: Vec<Digest> = threads
        .into_iter()
        .map(|t| t.join().expect("a thread failed"))
        .collect();
    println!(
        "{THREADS} threads x {ITERATIONS} iterations in {:.1} s",
        began.elapsed().as_secs_f64()
    );
    assert!(
        digests.iter().all(|d| *d == digests[0]),
        "threads produced different results: {digests:?}"
    );

    // The registry holds what it held before; the caches still replay the
    // reference bytes, through the Rust and the C API.
    assert_eq!(registered(), registry_before, "the keyval registry");
    for r in run.shared.iter().chain(&run.virgins) {
        let t = r.handle.get();
        for (i, rep) in REPS.into_iter().enumerate() {
            assert!(
                marshal(rep, t).unwrap() == r.bytes[i],
                "{} {rep:?} after the run",
                r.what
            );
            assert!(
                c_marshal(rep, t, r.bytes[i].len()) == r.bytes[i],
                "{} {rep:?} after the run (C API)",
                r.what
            );
        }
    }
    // A fresh type equal to a cached one marshals to the same bytes.
    let twin = virgin(0);
    for (i, rep) in REPS.into_iter().enumerate() {
        assert!(marshal(rep, twin).unwrap() == run.virgins[0].bytes[i]);
    }
    mpi::free(twin).unwrap();

    // Clean up: only the attributes of the shared types remain, and go
    // with them.
    for t in virgins {
        mpi::free(t).unwrap();
    }
    for (_, t) in types {
        if is_derived(t) {
            mpi::free(t).unwrap();
        }
    }
    assert_eq!(VALUES.load(SeqCst), 0, "attribute values left behind");
    ok(
        unsafe { ffi::MPI_Type_free_keyval(&mut shared_k) },
        "MPI_Type_free_keyval",
    );
    assert!(registered().is_empty());
}
