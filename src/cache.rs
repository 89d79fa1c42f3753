//! Repeated marshalling: what a type's traversal produced is kept on the
//! type itself, in an attribute of the library's own keyval, so marshalling
//! the same handle again replays it instead of asking MPI for every
//! envelope and contents. Types are immutable, but names and attributes
//! are not: the replay still reads those from each level, through the
//! handles get_contents returned, which the cached plan keeps (and frees
//! when the type is freed).
//!
//! The attribute's value is a number naming an entry of a process-wide
//! table of shared plans, not a pointer: a thread replaying a plan keeps it
//! alive even if another thread frees the type meanwhile. The keyval's copy
//! callback does not copy (a dup has another tree) and its delete callback
//! drops the entry.

use crate::error::Result;
use crate::external::Encoding;
use crate::mpi::{self, Datatype};
use std::collections::HashMap;
use std::os::raw::{c_int, c_void};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// A datatype handle kept across threads. Open MPI's handles are
/// pointers, which Rust does not let cross threads; their bits can.
#[derive(Clone, Copy)]
pub(crate) struct Held(u64);

impl Held {
    pub fn new(t: Datatype) -> Held {
        Held(mpi::handle_bits(t))
    }

    pub fn get(self) -> Datatype {
        mpi::handle_from_bits(self.0)
    }
}

/// One derived level of a recorded stream: what is needed to write its
/// node word, name and attributes again.
#[derive(Clone, Copy)]
pub(crate) struct Head {
    pub handle: Held,
    /// Combiner code with WIDE and LARGE (NAME and ATTRS are read anew).
    pub word: u32,
    pub depth: usize,
    /// The single child, for Open MPI's automatic "Dup" names.
    pub only_child: Option<Held>,
    /// Where the node word starts in `Plan::bytes`.
    pub head_at: usize,
    /// Where its fields start (the end of its name and attributes).
    pub fields_at: usize,
}

/// A recorded stream: its bytes and its derived levels in pre-order. The
/// plan owns the handles of the inner levels (depth > 0), which
/// get_contents returned: one reference per occurrence. Both are sized
/// exactly, so a plan is two allocations.
pub(crate) struct Plan {
    pub bytes: Box<[u8]>,
    pub heads: Box<[Head]>,
}

impl Drop for Plan {
    fn drop(&mut self) {
        if mpi::is_initialized() {
            for h in self.heads.iter().filter(|h| h.depth > 0) {
                let _ = mpi::free(h.handle.get());
            }
        }
    }
}

/// What is kept on one type: its plans, one per encoding, and what was
/// computed of its signature (types are immutable, so these never go stale).
#[derive(Default)]
pub(crate) struct Entry {
    plans: Mutex<[Option<Arc<Plan>>; 2]>,
    signature: Mutex<Signature>,
}

/// A type's signature figures, as far as they were asked for.
#[derive(Default, Clone, Copy)]
pub(crate) struct Signature {
    /// Indexed by `HashKind::code()`.
    pub hashes: [Option<u64>; 8],
    pub count: Option<u128>,
}

impl Entry {
    /// The plan for `enc`, if one was recorded.
    pub fn plan(&self, enc: Encoding) -> Option<Arc<Plan>> {
        self.plans.lock().unwrap_or_else(|p| p.into_inner())[slot(enc)].clone()
    }

    pub fn signature(&self) -> Signature {
        *self.signature.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn update_signature(&self, f: impl FnOnce(&mut Signature)) {
        f(&mut self.signature.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

fn slot(enc: Encoding) -> usize {
    match enc {
        Encoding::Xdr => 0,
        Encoding::Native => 1,
    }
}

static TABLE: OnceLock<Mutex<HashMap<usize, Arc<Entry>>>> = OnceLock::new();
static NEXT_ID: AtomicUsize = AtomicUsize::new(1);

fn table() -> &'static Mutex<HashMap<usize, Arc<Entry>>> {
    TABLE.get_or_init(Default::default)
}

unsafe extern "C" fn copy_fn(
    _t: mpi_sys::MPI_Datatype,
    _k: c_int,
    _extra: *mut c_void,
    _in: *mut c_void,
    _out: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    // SAFETY: MPI passes a valid flag pointer.
    unsafe { *flag = 0 };
    0
}

unsafe extern "C" fn delete_fn(
    _t: mpi_sys::MPI_Datatype,
    _k: c_int,
    value: *mut c_void,
    _extra: *mut c_void,
) -> c_int {
    let _ = std::panic::catch_unwind(|| {
        let removed = table()
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&(value as usize));
        // Dropped after the lock is released: dropping a plan frees handles.
        drop(removed);
    });
    0
}

/// The library's keyval, created on first use; None if MPI refused one.
static KEYVAL: OnceLock<Option<c_int>> = OnceLock::new();

/// Called from MPI_Finalize (the shim's MPI_COMM_SELF delete callback):
/// frees the library's keyval, which MPI then releases with the last type
/// that carries it.
#[no_mangle]
pub extern "C" fn mpixm_release_cache_keyval() {
    if let Some(Some(mut k)) = KEYVAL.get().copied() {
        // SAFETY: k is this library's keyval, freed once, through PMPI so
        // that the library's own MPI_Type_free_keyval wrapper is bypassed.
        unsafe { crate::mpi::shim::mpixm_pmpi_type_free_keyval(&mut k) };
    }
}

fn keyval() -> Option<c_int> {
    *KEYVAL.get_or_init(|| {
        let mut k: c_int = 0;
        // SAFETY: the callbacks have MPI's signatures; k is a valid out-pointer.
        let rc = unsafe {
            mpi_sys::MPI_Type_create_keyval(
                Some(copy_fn),
                Some(delete_fn),
                &mut k,
                std::ptr::null_mut(),
            )
        };
        (rc == 0).then_some(k)
    })
}

/// The cache entry attached to `t`, if any.
pub(crate) fn entry(t: Datatype) -> Result<Option<Arc<Entry>>> {
    let Some(k) = keyval() else { return Ok(None) };
    let Some(id) = mpi::get_attr(t, k)? else {
        return Ok(None);
    };
    Ok(table()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(&id)
        .cloned())
}

/// Keeps `plan` on `t` for `enc`, in `t`'s entry as `entry` found it
/// before the traversal; when there was none, one is created and attached.
pub(crate) fn store(
    t: Datatype,
    entry: Option<Arc<Entry>>,
    enc: Encoding,
    plan: Plan,
) -> Result<()> {
    let Some(e) = entry.map_or_else(|| attach(t), |e| Ok(Some(e)))? else {
        return Ok(());
    };
    e.plans.lock().unwrap_or_else(|p| p.into_inner())[slot(enc)] = Some(Arc::new(plan));
    Ok(())
}

/// `t`'s entry, attached now if it had none; None if the library has no
/// keyval.
pub(crate) fn entry_or_attach(t: Datatype) -> Result<Option<Arc<Entry>>> {
    match entry(t)? {
        Some(e) => Ok(Some(e)),
        None => attach(t),
    }
}

/// A new entry, attached to `t` (which has none).
fn attach(t: Datatype) -> Result<Option<Arc<Entry>>> {
    let Some(k) = keyval() else { return Ok(None) };
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let e = Arc::new(Entry::default());
    table()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(id, e.clone());
    if let Err(err) = mpi::set_attr(t, k, id) {
        let removed = table()
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&id);
        drop(removed);
        return Err(err);
    }
    Ok(Some(e))
}
