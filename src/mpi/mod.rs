//! The MPI edge: the local MPI's constants and predefined handles (through
//! the C shim), owned datatype handles (`OwnedDatatype`, `Handles`), and
//! checked wrappers for the MPI calls the library makes. Every MPI return
//! code is checked here; nothing above this module calls MPI directly.

pub mod built_for;
pub mod comm;
// The MPI bindings: mpi-sys (the classic build), or our own declarations
// of the MPI-5 standard ABI (the `abi` feature).
#[cfg(feature = "abi")]
pub mod abi;
#[cfg(all(feature = "abi", feature = "classic"))]
compile_error!(
    "the abi and classic features exclude each other: build abi with --no-default-features"
);
#[cfg(not(any(feature = "abi", feature = "classic")))]
compile_error!("enable the classic (default) or the abi feature");
#[cfg(feature = "abi")]
pub use abi as sys;
#[cfg(feature = "classic")]
pub use mpi_sys as sys;

pub mod construct;
pub mod error_class;
pub mod f90;
mod handle;
pub mod keyval;
pub mod own_calls;
pub mod shim;

pub use handle::{Handles, OwnedDatatype};

use crate::error::{Error, Result};
use crate::format::codes::{Combiner, Predefined};
pub use shim::{Constants, UNSUPPORTED};
use std::ffi::CStr;
use std::os::raw::{c_char, c_int};
use std::sync::OnceLock;
pub use sys::{MPI_Aint, MPI_Comm, MPI_Count, MPI_Datatype, MPI_Status};

/// An MPI datatype handle.
pub type Datatype = MPI_Datatype;

const MPI_SUCCESS: c_int = 0;

/// A handle's bits, to compare or look up handles whatever their C type
/// (an `int` in MPICH, a pointer in Open MPI).
pub fn handle_bits(t: Datatype) -> u64 {
    // SAFETY: Datatype is a plain 4- or 8-byte handle (repr(transparent)
    // over int or pointer); reading it as an integer of its size is valid.
    unsafe {
        match std::mem::size_of::<Datatype>() {
            4 => std::mem::transmute_copy::<Datatype, u32>(&t) as u64,
            8 => std::mem::transmute_copy::<Datatype, u64>(&t),
            _ => unreachable!("MPI_Datatype is 4 or 8 bytes"),
        }
    }
}

pub fn handle_from_bits(bits: u64) -> Datatype {
    // SAFETY: the inverse of handle_bits, for bits that came from a handle.
    unsafe {
        match std::mem::size_of::<Datatype>() {
            4 => std::mem::transmute_copy::<u32, Datatype>(&(bits as u32)),
            8 => std::mem::transmute_copy::<u64, Datatype>(&bits),
            _ => unreachable!("MPI_Datatype is 4 or 8 bytes"),
        }
    }
}

/// What the local MPI defines, read once from the shim.
pub struct Local {
    pub constants: shim::Constants,
    null_bits: u64,
    /// Handle bits by portable code (index: code - 0x200).
    by_code: Vec<u64>,
    /// Portable codes by handle bits: an open-addressing table.
    by_handle: HandleTable,
    /// (local combiner value, portable combiner).
    combiners: Vec<(c_int, Combiner)>,
    /// The same, indexed by small local values.
    combiner_table: Vec<Option<Combiner>>,
}

/// Handle bits to portable codes. Every node of every marshal asks whether
/// its handle is predefined, and most are not: a hash probe answers in a
/// few instructions where a binary search mispredicted its way down.
struct HandleTable {
    /// (handle bits, portable code); code 0 marks an empty slot.
    slots: Box<[(u64, u16)]>,
    shift: u32,
}

impl HandleTable {
    fn new(pairs: &[(u64, u16)]) -> HandleTable {
        // At most a quarter full, so probes are short.
        let size = (pairs.len() * 4).next_power_of_two().max(16);
        let mut table = HandleTable {
            slots: vec![(0, 0); size].into_boxed_slice(),
            shift: 64 - size.trailing_zeros(),
        };
        for &(bits, code) in pairs {
            debug_assert_ne!(code, 0);
            let mut i = table.home(bits);
            while table.slots[i].1 != 0 {
                i = (i + 1) & (size - 1);
            }
            table.slots[i] = (bits, code);
        }
        table
    }

    fn home(&self, bits: u64) -> usize {
        (bits.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    fn get(&self, bits: u64) -> Option<u16> {
        let mask = self.slots.len() - 1;
        let mut i = self.home(bits);
        loop {
            let (b, code) = self.slots[i];
            if code == 0 {
                return None;
            }
            if b == bits {
                return Some(code);
            }
            i = (i + 1) & mask;
        }
    }
}

const CODE_BASE: usize = 0x200;
const CODE_SPAN: usize = 0x200;

/// The local MPI's constants and predefined handles.
pub fn local() -> &'static Local {
    static LOCAL: OnceLock<Local> = OnceLock::new();
    LOCAL.get_or_init(Local::read)
}

impl Local {
    fn read() -> Local {
        let mut constants = shim::Constants::default();
        let mut n: c_int = 0;
        // SAFETY: the shim fills the struct (layouts mirror each other) and
        // returns a static table of n entries.
        let (table, null) = unsafe {
            shim::mpixm_get_constants(&mut constants);
            let table = shim::mpixm_predefined_table(&mut n);
            (
                std::slice::from_raw_parts(table, n as usize),
                shim::mpixm_datatype_null(),
            )
        };
        let null_bits = handle_bits(null);
        let mut by_code = vec![null_bits; CODE_SPAN];
        let mut pairs: Vec<(u64, u16)> = Vec::with_capacity(table.len());
        for entry in table {
            let bits = handle_bits(entry.datatype);
            if bits == null_bits {
                continue; // declared but not available (MPICH's MPI_INTEGER16)
            }
            let code = entry.code as usize;
            debug_assert!((CODE_BASE..CODE_BASE + CODE_SPAN).contains(&code));
            by_code[code - CODE_BASE] = bits;
            // The first entry for a handle is the canonical code.
            if !pairs.iter().any(|&(b, _)| b == bits) {
                pairs.push((bits, entry.code as u16));
            }
        }
        let by_handle = HandleTable::new(&pairs);
        let c = &constants;
        let combiners = [
            (c.named, Combiner::Named),
            (c.dup, Combiner::Dup),
            (c.contiguous, Combiner::Contiguous),
            (c.vector, Combiner::Vector),
            (c.hvector, Combiner::Hvector),
            (c.indexed, Combiner::Indexed),
            (c.hindexed, Combiner::Hindexed),
            (c.indexed_block, Combiner::IndexedBlock),
            (c.hindexed_block, Combiner::HindexedBlock),
            (c.struct_, Combiner::Struct),
            (c.subarray, Combiner::Subarray),
            (c.darray, Combiner::Darray),
            (c.f90_real, Combiner::F90Real),
            (c.f90_complex, Combiner::F90Complex),
            (c.f90_integer, Combiner::F90Integer),
            (c.resized, Combiner::Resized),
            (c.value_index, Combiner::ValueIndex),
            (c.hvector_integer, Combiner::HvectorInteger),
            (c.hindexed_integer, Combiner::HindexedInteger),
            (c.struct_integer, Combiner::StructInteger),
        ]
        .into_iter()
        .filter(|&(local, _)| local >= 0)
        .collect::<Vec<_>>();
        let mut combiner_table = vec![None; 64];
        for &(local, c) in &combiners {
            if let Some(slot) = combiner_table.get_mut(local as usize) {
                *slot = Some(c);
            }
        }
        Local {
            constants,
            null_bits,
            by_code,
            by_handle,
            combiners,
            combiner_table,
        }
    }

    /// The local handle of a predefined type, if this MPI defines it.
    pub fn datatype(&self, p: Predefined) -> Option<Datatype> {
        let i = (p.0 as usize).checked_sub(CODE_BASE)?;
        let bits = *self.by_code.get(i)?;
        (bits != self.null_bits).then(|| handle_from_bits(bits))
    }

    /// The portable code of a local predefined handle.
    pub fn predefined(&self, t: Datatype) -> Option<Predefined> {
        self.by_handle.get(handle_bits(t)).map(Predefined)
    }

    /// The portable combiner of a local combiner value.
    #[inline]
    pub fn combiner(&self, local: c_int) -> Option<Combiner> {
        // Implementations number their combiners from 0 or 1 upwards.
        if let Some(&Some(c)) = usize::try_from(local)
            .ok()
            .and_then(|i| self.combiner_table.get(i))
        {
            return Some(c);
        }
        self.combiners.iter().find(|e| e.0 == local).map(|e| e.1)
    }

    pub fn datatype_null(&self) -> Datatype {
        handle_from_bits(self.null_bits)
    }

    pub fn has_large_count(&self) -> bool {
        self.constants.have_large_count != 0
    }

    pub fn has_mpi1(&self) -> bool {
        self.constants.have_mpi1 != 0
    }

    /// Longest name `MPI_Type_set_name` takes, without the terminating NUL.
    pub fn max_name_len(&self) -> usize {
        (self.constants.max_object_name.max(1) - 1) as usize
    }
}

/// MPI's message for an error code.
pub fn error_string(code: c_int) -> String {
    let mut buf = vec![0 as c_char; 1024];
    let mut len: c_int = 0;
    // SAFETY: the buffer is at least MPI_MAX_ERROR_STRING (1024 in MPICH,
    // 256 in Open MPI) characters long.
    let rc = unsafe { crate::mpi::sys::MPI_Error_string(code, buf.as_mut_ptr(), &mut len) };
    if rc != MPI_SUCCESS {
        return format!("unknown MPI error {code}");
    }
    // SAFETY: MPI wrote a NUL-terminated string into buf.
    unsafe { CStr::from_ptr(buf.as_ptr()) }
        .to_string_lossy()
        .into_owned()
}

/// Turns an MPI return code into a Result.
#[inline]
pub fn check(rc: c_int, call: &'static str) -> Result<()> {
    if rc == MPI_SUCCESS {
        Ok(())
    } else if rc == shim::UNSUPPORTED {
        Err(Error::unsupported(format!(
            "{call} is not provided by this MPI"
        )))
    } else {
        Err(Error::Mpi {
            call,
            code: rc,
            message: error_string(rc),
        })
    }
}

/// Whether MPI is initialized and not yet finalized. After the first
/// positive answer, a callback run by MPI_Finalize keeps it current, so the
/// common case costs one atomic load.
pub fn is_initialized() -> bool {
    use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
    static SEEN: AtomicBool = AtomicBool::new(false);
    static FINALIZED: AtomicI32 = AtomicI32::new(0);
    static WATCH: std::sync::Once = std::sync::Once::new();
    if SEEN.load(Ordering::Acquire) {
        return FINALIZED.load(Ordering::Acquire) == 0;
    }
    let mut init: c_int = 0;
    let mut fini: c_int = 0;
    // SAFETY: both calls may be made at any time, even before MPI_Init.
    unsafe {
        crate::mpi::sys::MPI_Initialized(&mut init);
        crate::mpi::sys::MPI_Finalized(&mut fini);
    }
    let ready = init != 0 && fini == 0;
    // Under another MPI than the build's, no handle may be used: no watch.
    if ready && built_for::mismatch().is_none() {
        WATCH.call_once(|| {
            let hook = on_finalize;
            // SAFETY: MPI is initialized; FINALIZED is a static that
            // outlives MPI and the hook a function that does.
            let watching = unsafe { shim::mpixm_watch_finalize(&FINALIZED, hook) };
            if watching == MPI_SUCCESS {
                SEEN.store(true, Ordering::Release);
            }
        });
    }
    ready
}

/// Functions to call when MPI finalizes (`at_finalize`).
static FINALIZE_HOOKS: std::sync::Mutex<Vec<fn()>> = std::sync::Mutex::new(Vec::new());

/// Calls `f` from `MPI_Finalize`, while MPI is still usable (when it
/// deletes `MPI_COMM_SELF`'s attributes), before the cache's keyval is
/// released. `f` must not panic.
pub fn at_finalize(f: fn()) {
    FINALIZE_HOOKS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(f);
}

/// The hook `is_initialized` registers: the registered functions, then
/// the cache's keyval.
extern "C" fn on_finalize() {
    let hooks: Vec<fn()> =
        std::mem::take(&mut *FINALIZE_HOOKS.lock().unwrap_or_else(|p| p.into_inner()));
    for f in hooks {
        // Nothing may unwind into MPI_Finalize.
        let _ = std::panic::catch_unwind(f);
    }
    keyval::release_cache_keyval();
}

/// An error unless MPI is initialized and not yet finalized, and is the
/// MPI this library was built for: every entry point asks before its
/// first MPI call.
pub fn ready() -> Result<()> {
    // Before any handle is used: under another MPI than the build's, the
    // first would crash it.
    if let Some(m) = built_for::mismatch() {
        return Err(Error::unsupported(m));
    }
    if !is_initialized() {
        return Err(Error::invalid(
            "MPI is not initialized (or already finalized)",
        ));
    }
    Ok(())
}

/// The envelope of a datatype, with 64-bit numbers.
#[derive(Debug, Clone, Copy)]
pub struct Envelope {
    pub ni: usize,
    pub na: usize,
    pub nc: usize,
    pub nd: usize,
    pub combiner: c_int,
}

pub fn envelope(t: Datatype) -> Result<Envelope> {
    let (mut ni, mut na, mut nc, mut nd, mut comb) = (0, 0, 0, 0, 0);
    // SAFETY: all out-pointers are valid locals.
    let rc = unsafe { shim::mpixm_get_envelope(t, &mut ni, &mut na, &mut nc, &mut nd, &mut comb) };
    check(rc, "MPI_Type_get_envelope")?;
    let size = |n: MPI_Count| {
        usize::try_from(n).map_err(|_| {
            Error::invalid(format!(
                "MPI_Type_get_envelope returned a negative count {n}"
            ))
        })
    };
    Ok(Envelope {
        ni: size(ni)?,
        na: size(na)?,
        nc: size(nc)?,
        nd: size(nd)?,
        combiner: comb,
    })
}

/// Buffers for `MPI_Type_get_contents`, reused across a traversal.
#[derive(Default)]
pub struct Contents {
    pub ints: Vec<c_int>,
    pub addrs: Vec<MPI_Aint>,
    pub counts: Vec<MPI_Count>,
    pub types: Vec<Datatype>,
}

/// Fills `out` with the contents of a derived datatype. The handles in
/// `out.types` are new references the caller must free (unless
/// predefined), held by the library: one of its own calls (`own_calls`),
/// as their frees are (`free`).
pub fn contents(t: Datatype, env: &Envelope, out: &mut Contents) -> Result<()> {
    own_calls::within(|| contents_now(t, env, out))
}

fn contents_now(t: Datatype, env: &Envelope, out: &mut Contents) -> Result<()> {
    // Sized without clearing first: MPI overwrites every entry, and
    // zeroing a large type's arrays on every call cost as much as reading
    // them (what a reused buffer holds is only ever old values).
    out.ints.resize(env.ni, 0);
    out.addrs.resize(env.na, 0);
    out.counts.resize(env.nc, 0);
    out.types.clear();
    out.types.resize(env.nd, local().datatype_null());
    // SAFETY: each array has exactly the length the envelope announced.
    let rc = unsafe {
        shim::mpixm_get_contents(
            t,
            env.ni as MPI_Count,
            env.na as MPI_Count,
            env.nc as MPI_Count,
            env.nd as MPI_Count,
            out.ints.as_mut_ptr(),
            out.addrs.as_mut_ptr(),
            out.counts.as_mut_ptr(),
            out.types.as_mut_ptr(),
        )
    };
    check(rc, "MPI_Type_get_contents")
}

/// `contents`, with the child handles handed over as owned handles (and
/// `out.types` left empty): dropping them frees the derived ones. Each is
/// told apart by its envelope, one call per child, for callers that do
/// not learn it otherwise (the marshal traversal does, walking the child).
pub fn contents_owned(
    t: Datatype,
    env: &Envelope,
    out: &mut Contents,
) -> Result<Vec<OwnedDatatype>> {
    contents(t, env, out)?;
    Ok(out
        .types
        .drain(..)
        .map(|child| {
            if is_derived(child) {
                // SAFETY: get_contents just returned a new reference to this
                // derived type, and it goes nowhere else.
                unsafe { OwnedDatatype::from_raw(child) }
            } else {
                OwnedDatatype::borrowed(child)
            }
        })
        .collect())
}

/// Whether a handle get_contents returned is the caller's to free: every
/// one but a predefined type's (named or F90).
pub fn is_derived(t: Datatype) -> bool {
    match envelope(t) {
        Ok(env) => !local()
            .combiner(env.combiner)
            .is_some_and(Combiner::is_predefined),
        Err(_) => false,
    }
}

/// The user-visible name of a datatype; None when it has none.
pub fn get_name(t: Datatype) -> Result<Option<Vec<u8>>> {
    let mut buf = [0 as c_char; 256];
    let mut len: c_int = 0;
    // SAFETY: MPI_MAX_OBJECT_NAME is at most 128 in MPICH and 64 in Open MPI;
    // the buffer is larger.
    let rc = unsafe { crate::mpi::sys::MPI_Type_get_name(t, buf.as_mut_ptr(), &mut len) };
    check(rc, "MPI_Type_get_name")?;
    if buf[0] == 0 {
        return Ok(None);
    }
    // SAFETY: MPI wrote a NUL-terminated string.
    let name = unsafe { CStr::from_ptr(buf.as_ptr()) };
    Ok(Some(name.to_bytes().to_vec()))
}

/// The user-visible name of a datatype, into `buf`; returns its length
/// (0 when it has none). No allocation: this is on the marshal path.
pub fn get_name_into(t: Datatype, buf: &mut [u8; 256]) -> Result<usize> {
    let mut len: c_int = 0;
    buf[0] = 0;
    // SAFETY: MPI_MAX_OBJECT_NAME is at most 128 in MPICH and 64 in Open MPI;
    // the buffer is larger.
    let rc =
        unsafe { crate::mpi::sys::MPI_Type_get_name(t, buf.as_mut_ptr() as *mut c_char, &mut len) };
    check(rc, "MPI_Type_get_name")?;
    // The terminating NUL, not `len`, is authoritative (found with memchr:
    // a replayed marshal spends its time reading names).
    Ok(std::ffi::CStr::from_bytes_until_nul(&buf[..]).map_or(0, |c| c.to_bytes().len()))
}

/// Sets a datatype's name. The name has no NUL and fits MPI_MAX_OBJECT_NAME
/// (checked by the caller's validation).
pub fn set_name(t: Datatype, name: &[u8]) -> Result<()> {
    // Names fit MPI_MAX_OBJECT_NAME: a stack buffer, no allocation.
    let mut buf = [0u8; 256];
    if name.len() >= buf.len() {
        return Err(Error::invalid(format!(
            "a name of {} bytes is longer than any MPI's limit",
            name.len()
        )));
    }
    buf[..name.len()].copy_from_slice(name);
    // SAFETY: buf holds the name and at least one NUL after it, and
    // outlives the call.
    let rc = unsafe { crate::mpi::sys::MPI_Type_set_name(t, buf.as_ptr() as *const c_char) };
    check(rc, "MPI_Type_set_name")
}

/// Frees a derived datatype handle the library holds (one of its own
/// calls, `own_calls`: also from an attribute's delete callback, which
/// runs inside the program's `MPI_Type_free`).
pub fn free(t: Datatype) -> Result<()> {
    let mut t = t;
    // SAFETY: t is a derived handle the library owns.
    let rc = own_calls::within(|| unsafe { crate::mpi::sys::MPI_Type_free(&mut t) });
    check(rc, "MPI_Type_free")
}

/// Commits `t` in place (`MPI_Type_commit`).
pub fn commit(t: &mut Datatype) -> Result<()> {
    // SAFETY: t points to a live datatype handle.
    let rc = unsafe { crate::mpi::sys::MPI_Type_commit(t) };
    check(rc, "MPI_Type_commit")
}

/// The lower bound and extent of `t`, as 64-bit numbers.
pub fn extent(t: Datatype) -> Result<(i64, i64)> {
    let (mut lb, mut extent) = (0, 0);
    // SAFETY: both out-pointers are valid locals.
    let rc = unsafe { crate::mpi::sys::MPI_Type_get_extent_x(t, &mut lb, &mut extent) };
    check(rc, "MPI_Type_get_extent_x")?;
    Ok((lb, extent))
}

/// Size, lb, extent, true lb and true extent, as 64-bit numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    pub size: i64,
    pub lb: i64,
    pub extent: i64,
    pub true_lb: i64,
    pub true_extent: i64,
}

pub fn geometry(t: Datatype) -> Result<Geometry> {
    let (mut size, mut lb, mut extent, mut tlb, mut textent) = (0, 0, 0, 0, 0);
    // SAFETY: all out-pointers are valid locals.
    unsafe {
        check(
            crate::mpi::sys::MPI_Type_size_x(t, &mut size),
            "MPI_Type_size_x",
        )?;
        check(
            crate::mpi::sys::MPI_Type_get_extent_x(t, &mut lb, &mut extent),
            "MPI_Type_get_extent_x",
        )?;
        check(
            crate::mpi::sys::MPI_Type_get_true_extent_x(t, &mut tlb, &mut textent),
            "MPI_Type_get_true_extent_x",
        )?;
    }
    Ok(Geometry {
        size,
        lb,
        extent,
        true_lb: tlb,
        true_extent: textent,
    })
}

/// Whether `keyval` has a value on `t` (`MPI_Type_get_attr`'s flag).
pub fn has_attr(t: Datatype, keyval: c_int) -> Result<bool> {
    Ok(get_attr(t, keyval)?.is_some())
}

/// The first line of `MPI_Get_library_version`, whitespace collapsed.
pub fn library_version() -> String {
    let mut buf = vec![0 as c_char; 8192];
    let mut len: c_int = 0;
    // SAFETY: the buffer is larger than MPI_MAX_LIBRARY_VERSION_STRING in
    // both MPIs; len is a valid out-pointer.
    let rc = unsafe { crate::mpi::sys::MPI_Get_library_version(buf.as_mut_ptr(), &mut len) };
    if rc != MPI_SUCCESS {
        return "unknown MPI".into();
    }
    buf.push(0);
    // SAFETY: MPI wrote a NUL-terminated string; a NUL was appended anyway.
    let s = unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) }.to_string_lossy();
    let first = s.lines().next().unwrap_or("");
    first.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The value of `keyval` on `t`, when set (`MPI_Type_get_attr`).
pub fn get_attr(t: Datatype, keyval: c_int) -> Result<Option<usize>> {
    let mut value: *mut std::os::raw::c_void = std::ptr::null_mut();
    let mut flag: c_int = 0;
    // SAFETY: both out-pointers are valid locals; MPI writes a pointer-sized
    // value through the `void *` it receives.
    let rc = unsafe {
        crate::mpi::sys::MPI_Type_get_attr(
            t,
            keyval,
            &mut value as *mut *mut std::os::raw::c_void as *mut std::os::raw::c_void,
            &mut flag,
        )
    };
    check(rc, "MPI_Type_get_attr")?;
    Ok((flag != 0).then_some(value as usize))
}

/// Sets `keyval` on `t` to `value` (`MPI_Type_set_attr`).
pub fn set_attr(t: Datatype, keyval: c_int, value: usize) -> Result<()> {
    // SAFETY: the value is stored, not dereferenced, by MPI.
    let rc = unsafe {
        crate::mpi::sys::MPI_Type_set_attr(t, keyval, value as *mut std::os::raw::c_void)
    };
    check(rc, "MPI_Type_set_attr")
}
