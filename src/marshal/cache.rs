//! Repeated marshalling: what a type's traversal produced is kept on the
//! type itself, in an attribute of the library's own keyval, so marshalling
//! the same handle again replays it instead of asking MPI for every
//! envelope and contents. Types are immutable, but names and attributes
//! are not: the replay still reads those from each level, through the
//! handles get_contents returned, which the cached plan keeps (and frees
//! when the type is freed).
//!
//! The attribute's value is a pointer to the type's entry, which the type
//! owns: the keyval's delete callback drops it when the type is freed, and
//! its copy callback does not copy (a dup has another tree). An entry is
//! therefore valid exactly as long as its type, which MPI requires the
//! caller to keep alive during any call that uses it; looking it up costs
//! one MPI_Type_get_attr and no lock (a process-wide table of entries cost
//! a lock and a hash lookup on every marshal).

use crate::error::Result;
use crate::format::external::Encoding;
use crate::mpi::{self, Datatype};
use std::os::raw::{c_int, c_void};
use std::sync::{Mutex, OnceLock};

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
/// node word, name and attributes again. Kept to 32 bytes: a plan's heads
/// are one allocation, and one of 1 KiB or more makes glibc's malloc
/// consolidate its free lists (the HDF5 type has 23 levels).
#[derive(Clone, Copy)]
pub(crate) struct Head {
    pub handle: Held,
    /// The single child, for Open MPI's automatic "Dup" names (when
    /// `has_only_child`).
    only_child: Held,
    /// Combiner code with WIDE and LARGE (NAME and ATTRS are read anew).
    pub word: u32,
    /// Where the node word starts in `Plan::bytes`, and where its fields
    /// start (the end of its name and attributes). A cached plan is at most
    /// 64 KiB; the offsets of a longer recording, which is not kept,
    /// saturate.
    head_at: u32,
    fields_at: u32,
    depth: u16,
    has_only_child: bool,
}

impl Head {
    pub fn new(
        handle: Datatype,
        word: u32,
        depth: usize,
        only_child: Option<Datatype>,
        head_at: usize,
        fields_at: usize,
    ) -> Head {
        let offset = |at: usize| u32::try_from(at).unwrap_or(u32::MAX);
        Head {
            handle: Held::new(handle),
            only_child: Held::new(only_child.unwrap_or(handle)),
            word,
            head_at: offset(head_at),
            fields_at: offset(fields_at),
            depth: depth as u16, // below MAX_DEPTH
            has_only_child: only_child.is_some(),
        }
    }

    pub fn depth(&self) -> usize {
        usize::from(self.depth)
    }

    pub fn only_child(&self) -> Option<Datatype> {
        self.has_only_child.then(|| self.only_child.get())
    }

    pub fn head_at(&self) -> usize {
        self.head_at as usize
    }

    pub fn fields_at(&self) -> usize {
        self.fields_at as usize
    }
}

const _: () = assert!(std::mem::size_of::<Head>() == 32);
const _: () = assert!(crate::format::tree::MAX_DEPTH <= u16::MAX as usize);

/// A recorded stream: its bytes and its derived levels in pre-order. The
/// plan owns the handles of the inner levels (depth > 0), which
/// get_contents returned: one reference per occurrence. Both are sized
/// exactly, so a plan is two allocations.
pub(crate) struct Plan {
    pub bytes: Box<[u8]>,
    pub heads: Box<[Head]>,
    /// The checksum of `bytes` (an external stream's), kept with them: a
    /// replay that writes the same bytes copies it.
    pub crc: Option<u32>,
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
    /// Set once per encoding: a type never changes, so neither does its
    /// plan (two first marshals racing keep the first plan stored).
    plans: [OnceLock<Plan>; 2],
    signature: Mutex<Signature>,
    /// The type exchange's identifier of the type, with the varying parts
    /// (`marshal::with_varying_parts`) it was computed for: the same parts
    /// over the same plan are the same stream.
    identity: Mutex<Option<Identity>>,
    /// The type is a RESIZED level unmarshal added to restore the recorded
    /// bounds of the level below it (marshalled with FLAG_CORRECTION).
    correction: bool,
}

/// An exchange identifier and the varying parts it was computed for.
type Identity = (Box<[u8]>, [u8; 16]);

/// A type's signature figures, as far as they were asked for.
#[derive(Default, Clone, Copy)]
pub(crate) struct Signature {
    /// Indexed by `HashKind::code()`.
    pub hashes: [Option<u64>; 8],
    pub count: Option<u128>,
}

impl Entry {
    /// The plan for `enc`, if one was recorded.
    pub fn plan(&self, enc: Encoding) -> Option<&Plan> {
        self.plans[slot(enc)].get()
    }

    pub fn signature(&self) -> Signature {
        *self.signature.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn update_signature(&self, f: impl FnOnce(&mut Signature)) {
        f(&mut self.signature.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// The identifier kept for these varying parts, if any.
    pub fn identity(&self, varying: &[u8]) -> Option<[u8; 16]> {
        let kept = self.identity.lock().unwrap_or_else(|p| p.into_inner());
        kept.as_ref()
            .filter(|(v, _)| &v[..] == varying)
            .map(|(_, id)| *id)
    }

    pub fn set_identity(&self, varying: &[u8], id: [u8; 16]) {
        *self.identity.lock().unwrap_or_else(|p| p.into_inner()) = Some((varying.into(), id));
    }
}

fn slot(enc: Encoding) -> usize {
    match enc {
        Encoding::Xdr => 0,
        Encoding::Native => 1,
    }
}

unsafe extern "C" fn copy_fn(
    _t: Datatype,
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
    _t: Datatype,
    _k: c_int,
    value: *mut c_void,
    _extra: *mut c_void,
) -> c_int {
    let _ = std::panic::catch_unwind(|| {
        if !value.is_null() {
            // SAFETY: the value is the Box `attach` leaked for this type,
            // and MPI calls the delete callback once per attribute value.
            // Dropping it drops its plans, which free their handles.
            drop(unsafe { Box::from_raw(value as *mut Entry) });
        }
    });
    0
}

fn keyval() -> Option<c_int> {
    mpi::keyval::cache_keyval(copy_fn, delete_fn)
}

/// The cache entry attached to `t`, if any. It lives as long as `t`: the
/// caller uses it only while it uses `t`.
pub(crate) fn entry<'t>(t: Datatype) -> Result<Option<&'t Entry>> {
    let Some(k) = keyval() else { return Ok(None) };
    let Some(ptr) = mpi::get_attr(t, k)? else {
        return Ok(None);
    };
    // SAFETY: the library's keyval only ever holds a pointer from `attach`,
    // freed by the delete callback when `t` is freed, which cannot happen
    // while the caller is using `t`.
    Ok(Some(unsafe { &*(ptr as *const Entry) }))
}

/// Keeps `plan` on `t` for `enc`, in `t`'s entry as `entry` found it
/// before the traversal; when there was none, one is created and attached.
pub(crate) fn store(t: Datatype, entry: Option<&Entry>, enc: Encoding, plan: Plan) -> Result<()> {
    match entry {
        // A plan already there (another thread's) is as good; this one is
        // dropped, which frees its handles.
        Some(e) => {
            let _ = e.plans[slot(enc)].set(plan);
        }
        None => {
            // A new entry holds its plan from the start: setting a OnceLock
            // runs its one-time initialisation, a good part of a small
            // type's first marshal.
            let mut e = Box::<Entry>::default();
            e.plans[slot(enc)] = OnceLock::from(plan);
            attach_entry(t, e)?;
        }
    }
    Ok(())
}

/// Whether `t` is an extent correction unmarshal made (`mark_correction`).
pub(crate) fn is_correction(t: Datatype) -> Result<bool> {
    Ok(entry(t)?.is_some_and(|e| e.correction))
}

/// Marks `t`, a RESIZED type just built (with no entry yet), as an
/// extent correction.
pub(crate) fn mark_correction(t: Datatype) -> Result<()> {
    let e = Box::new(Entry {
        correction: true,
        ..Entry::default()
    });
    attach_entry(t, e).map(|_| ())
}

/// `t`'s entry, attached now if it had none; None if the library has no
/// keyval.
pub(crate) fn entry_or_attach<'t>(t: Datatype) -> Result<Option<&'t Entry>> {
    match entry(t)? {
        Some(e) => Ok(Some(e)),
        None => attach(t),
    }
}

/// A new entry, attached to `t` (which has none); owned by `t` from here.
fn attach<'t>(t: Datatype) -> Result<Option<&'t Entry>> {
    attach_entry(t, Box::default())
}

/// `new`, attached to `t`; None, and `new` dropped, if the library has no
/// keyval. If another thread attached an entry first, that one is kept and
/// returned, with `new`'s plans moved into it where it has none.
fn attach_entry<'t>(t: Datatype, mut new: Box<Entry>) -> Result<Option<&'t Entry>> {
    let Some(k) = keyval() else { return Ok(None) };
    // Two threads marshalling a type for the first time both find no
    // entry. Without this lock the second set_attr would replace the
    // first's entry, and MPI's delete callback would free it, and the
    // handles of its plan, while a third thread replays that plan
    // (tests/threads.rs failed about one run in three). Taken only when a
    // type gets its entry, not on a repeated marshal.
    static ATTACHING: Mutex<()> = Mutex::new(());
    let _one_at_a_time = ATTACHING.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(existing) = entry(t)? {
        for (mine, theirs) in new.plans.iter_mut().zip(&existing.plans) {
            if let Some(plan) = mine.take() {
                // A plan already there is as good; this one is dropped.
                let _ = theirs.set(plan);
            }
        }
        return Ok(Some(existing));
    }
    let ptr = Box::into_raw(new);
    if let Err(err) = mpi::set_attr(t, k, ptr as usize) {
        // SAFETY: MPI did not take the pointer; it is still only ours.
        drop(unsafe { Box::from_raw(ptr) });
        return Err(err);
    }
    // SAFETY: `t` now owns the entry, as in `entry`.
    Ok(Some(unsafe { &*ptr }))
}
