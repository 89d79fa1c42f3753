//! Marshalled attributes (the paper's §3.3, spec/external.md §5.5): the
//! process-wide registry of keyvals by canonical name, and the calls to
//! their callbacks when a type is marshalled or rebuilt.
//!
//! The registry is a sorted, immutable list behind an `Arc`: a marshal
//! takes a snapshot and runs callbacks without holding any lock, so a
//! callback may itself register keyvals or marshal types.

use crate::callbacks::{
    MPIX_Type_marshal_attr_function, MPIX_Type_marshal_attr_size_function,
    MPIX_Type_unmarshal_attr_function,
};
use crate::error::{Error, Result};
use crate::format::tree::{Attribute, MAX_ATTR_NAME_LEN};
use crate::mpi::MPI_Aint;
use crate::mpi::{self, Datatype};
use std::ffi::{CStr, CString};
use std::os::raw::{c_int, c_void};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock, RwLockWriteGuard};

pub use crate::format::tree::MAX_ATTR_VALUE;

/// One registered keyval.
#[derive(Clone)]
pub struct Keyval {
    pub keyval: c_int,
    pub name: CString,
    pub size: MPIX_Type_marshal_attr_size_function,
    pub marshal: MPIX_Type_marshal_attr_function,
    pub unmarshal: MPIX_Type_unmarshal_attr_function,
}

impl Keyval {
    fn label(&self) -> String {
        self.name.to_string_lossy().into_owned()
    }
}

/// The registered keyvals, sorted by canonical name.
pub type Registry = Arc<Vec<Keyval>>;

static REGISTRY: RwLock<Option<Registry>> = RwLock::new(None);
/// Whether any keyval is registered: the marshal path's only cost when none is.
static ANY: AtomicBool = AtomicBool::new(false);

/// Registers (or replaces) a keyval under its canonical name. A canonical
/// name or a keyval registered before is replaced.
pub fn register(k: Keyval) -> Result<()> {
    let len = k.name.as_bytes().len();
    if len == 0 || len > MAX_ATTR_NAME_LEN {
        return Err(Error::invalid(format!(
            "a canonical name must be 1 to {MAX_ATTR_NAME_LEN} bytes, this one has {len}"
        )));
    }
    if k.size.is_some() != k.marshal.is_some() {
        return Err(Error::invalid(
            "marshal_size_fn and marshal_fn must be given together (or both be NULL)",
        ));
    }
    if k.marshal.is_none() && k.unmarshal.is_none() {
        return Err(Error::invalid(
            "at least marshal_size_fn/marshal_fn or unmarshal_fn must be given",
        ));
    }
    update(|list| {
        list.retain(|e| e.name != k.name && e.keyval != k.keyval);
        let at = list.partition_point(|e| e.name < k.name);
        list.insert(at, k);
    });
    Ok(())
}

/// Forgets a keyval (it was freed, or unregistered); true when it was registered.
pub fn forget(keyval: c_int) -> bool {
    let mut found = false;
    update(|list| {
        let before = list.len();
        list.retain(|e| e.keyval != keyval);
        found = list.len() != before;
    });
    found
}

fn update(f: impl FnOnce(&mut Vec<Keyval>)) {
    let mut guard = REGISTRY.write().unwrap_or_else(|p| p.into_inner());
    let mut list: Vec<Keyval> = guard.as_ref().map(|r| r.to_vec()).unwrap_or_default();
    f(&mut list);
    ANY.store(!list.is_empty(), Ordering::Release);
    *guard = (!list.is_empty()).then(|| Arc::new(list));
}

/// The current registry; None when no keyval is registered.
pub fn snapshot() -> Option<Registry> {
    if !ANY.load(Ordering::Acquire) {
        return None;
    }
    REGISTRY
        .read()
        .unwrap_or_else(|p| p.into_inner())
        .as_ref()
        .cloned()
}

/// Indices into `reg` of the keyvals with a marshal callback that have a
/// value on `t`, in canonical-name order.
pub(crate) fn present(reg: &[Keyval], t: Datatype, out: &mut Vec<usize>) -> Result<()> {
    out.clear();
    let _shared = PROBING.read().unwrap_or_else(|p| p.into_inner());
    // A keyval freed since `reg` was taken is no longer in the registry.
    let now = snapshot();
    let registered = |k: c_int| {
        now.as_ref()
            .is_some_and(|r| r.iter().any(|e| e.keyval == k))
    };
    for (i, k) in reg.iter().enumerate() {
        if k.marshal.is_some() && registered(k.keyval) && mpi::has_attr(t, k.keyval)? {
            out.push(i);
        }
    }
    Ok(())
}

/// Runs `k`'s size callback for `t`.
pub(crate) fn value_size(k: &Keyval, typerep: &CStr, t: Datatype) -> Result<usize> {
    let size_fn = k.size.expect("present() keeps keyvals with callbacks");
    let mut size: MPI_Aint = 0;
    // SAFETY: the callback was registered for this keyval; the strings are
    // NUL-terminated and `size` is a valid out-pointer.
    let rc = unsafe { size_fn(k.keyval, k.name.as_ptr(), typerep.as_ptr(), t, &mut size) };
    if rc != 0 {
        return Err(callback_failed(k, "marshal_size", rc));
    }
    usize::try_from(size)
        .ok()
        .filter(|&s| s <= MAX_ATTR_VALUE)
        .ok_or_else(|| Error::Attribute {
            name: k.label(),
            what: format!("the marshal_size callback returned {size}, not in 0..={MAX_ATTR_VALUE}"),
        })
}

/// Runs `k`'s marshal callback for `t` into `buf` (whose length is what the
/// size callback promised); returns the bytes written.
pub(crate) fn write_value(
    k: &Keyval,
    typerep: &CStr,
    t: Datatype,
    buf: &mut [u8],
) -> Result<usize> {
    let marshal_fn = k.marshal.expect("present() keeps keyvals with callbacks");
    let mut written: MPI_Aint = 0;
    // SAFETY: buf is valid for buf.len() bytes, the length passed; the
    // strings are NUL-terminated and `written` is a valid out-pointer.
    let rc = unsafe {
        marshal_fn(
            k.keyval,
            k.name.as_ptr(),
            typerep.as_ptr(),
            t,
            buf.as_mut_ptr() as *mut c_void,
            buf.len() as MPI_Aint,
            &mut written,
        )
    };
    if rc != 0 {
        return Err(callback_failed(k, "marshal", rc));
    }
    usize::try_from(written)
        .ok()
        .filter(|&n| n <= buf.len())
        .ok_or_else(|| Error::Attribute {
            name: k.label(),
            what: format!(
                "the marshal callback claims {written} bytes written, but its size callback promised at most {}",
                buf.len()
            ),
        })
}

/// Sets the attributes of a rebuilt node on `t` through the registered
/// unmarshal callbacks. Attributes no local keyval claims are skipped.
pub(crate) fn apply(
    reg: Option<&Registry>,
    typerep: &CStr,
    t: Datatype,
    attrs: &[Attribute],
) -> Result<()> {
    let Some(reg) = reg else { return Ok(()) };
    for a in attrs {
        let Some(k) = reg.iter().find(|k| k.name.as_bytes() == a.name.as_slice()) else {
            continue;
        };
        let Some(unmarshal_fn) = k.unmarshal else {
            continue;
        };
        // SAFETY: the callback was registered for this keyval; the value
        // is valid for its length; the strings are NUL-terminated.
        let rc = unsafe {
            unmarshal_fn(
                k.keyval,
                k.name.as_ptr(),
                typerep.as_ptr(),
                t,
                a.value.as_ptr() as *const c_void,
                a.value.len() as MPI_Aint,
            )
        };
        if rc != 0 {
            return Err(callback_failed(k, "unmarshal", rc));
        }
    }
    Ok(())
}

fn callback_failed(k: &Keyval, which: &str, rc: c_int) -> Error {
    Error::Attribute {
        name: k.label(),
        what: format!("the {which} callback returned error {rc}"),
    }
}

/// Held (shared) while a marshal asks MPI which keyvals a type carries,
/// and (exclusive) while a keyval is freed, so a marshal never asks about
/// a keyval freed under its feet: MPI would raise an error, fatal by default.
static PROBING: RwLock<()> = RwLock::new(());

/// Keeps marshals from asking MPI about keyvals (see `PROBING`) while
/// the guard lives: held by the C API's `MPI_Type_free_keyval` while it
/// forgets a keyval and frees it.
pub(crate) fn hold_probes() -> RwLockWriteGuard<'static, ()> {
    PROBING.write().unwrap_or_else(|p| p.into_inner())
}
