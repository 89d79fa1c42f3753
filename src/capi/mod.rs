//! The C API (`include/mpix_marshal.h`, generated from this file by
//! cbindgen). Every exported function runs its body through `boundary`:
//! one place that catches panics, turns errors into MPI error codes of the
//! classes this library registers, and raises them on `MPI_COMM_SELF`'s
//! error handler, as MPI does for datatype calls. Pointer arguments are
//! checked in `arg`, and outputs are written only on success.

use crate::api::{self, Representation};
use crate::compare::{self, Level};
use crate::error::{Error, Result};
use crate::marshal::attributes::{self, Keyval};
use crate::mpi;
use crate::signature::HashKind;
use mpi_sys::{MPI_Aint, MPI_Count, MPI_Datatype};
use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Mutex, OnceLock};

/// `MPIX_Type_marshal_error_kind` result: the code is not one of this library's classes.
pub const MPIX_MARSHAL_ERR_NONE: c_int = 0;
/// The representation name is not "external", "internal" or "compressed".
pub const MPIX_MARSHAL_ERR_UNKNOWN_REPRESENTATION: c_int = 1;
/// The output buffer is too small; nothing was written, `*num_written` is 0.
pub const MPIX_MARSHAL_ERR_BUFFER_TOO_SMALL: c_int = 2;
/// The input is truncated or corrupt; the error string says what and where.
pub const MPIX_MARSHAL_ERR_CORRUPT: c_int = 3;
/// The local MPI cannot describe or build this construct.
pub const MPIX_MARSHAL_ERR_UNSUPPORTED: c_int = 4;
/// An argument (or a decoded value) is invalid.
pub const MPIX_MARSHAL_ERR_INVALID_ARGUMENT: c_int = 5;
/// A bug in mpix-marshal (a caught panic).
pub const MPIX_MARSHAL_ERR_INTERNAL: c_int = 6;
/// A marshalled attribute's callback failed or broke its contract; the
/// error string names the attribute's canonical name.
pub const MPIX_MARSHAL_ERR_ATTRIBUTE: c_int = 7;

const KINDS: usize = 7;

/// Signature hash family: Gropp (2000), (α, n) with xor and circular shift; 32 bits.
pub const MPIX_HASH_GROPP: c_int = 1;
/// Signature hash family: xor-bs1 of Langou et al. (2005); 32 bits.
pub const MPIX_HASH_XOR_BS1: c_int = 2;
/// Signature hash family: mmm-bs1 of Langou et al. (2005); 32 bits.
pub const MPIX_HASH_MMM_BS1: c_int = 3;
/// Signature hash family: gfd over GF(2^8), m = 4, of Langou et al.; 32 bits.
pub const MPIX_HASH_GFD8: c_int = 4;
/// Signature hash family: gfd over GF(2^16), m = 2, of Langou et al.; 32 bits.
pub const MPIX_HASH_GFD16: c_int = 5;
/// Signature hash family: CRC-32 of the signature's byte string; 32 bits.
pub const MPIX_HASH_CRC32: c_int = 6;
/// Signature hash family: polynomial hash modulo 2^61 - 1; 61 bits.
pub const MPIX_HASH_DEFAULT64: c_int = 7;
/// The library's default family, the one external streams carry.
pub const MPIX_HASH_DEFAULT: c_int = MPIX_HASH_DEFAULT64;

/// Comparison level: the same type signature (exactly, not by hash).
pub const MPIX_COMPARE_SIGNATURE: c_int = 1;
/// Comparison level: the same typemap (basic types and displacements), lb,
/// extent and explicit bound markers.
pub const MPIX_COMPARE_TYPEMAP: c_int = 2;
/// Comparison level: the same constructor tree (envelope/contents at every level).
pub const MPIX_COMPARE_CONSTRUCTOR: c_int = 3;
/// Comparison level: the same constructor tree and names at every level.
pub const MPIX_COMPARE_NAMES: c_int = 4;
/// Comparison level: the same tree, names and marshalled attributes.
pub const MPIX_COMPARE_ATTRIBUTES: c_int = 5;

/// Sets `*size` to an upper bound of the bytes the marshal callback writes
/// for the attribute of `keyval` on `type`.
#[allow(non_camel_case_types)]
pub type MPIX_Type_marshal_attr_size_function = Option<
    unsafe extern "C" fn(
        keyval: c_int,
        canonical_name: *const c_char,
        typerep: *const c_char,
        r#type: MPI_Datatype,
        size: *mut MPI_Aint,
    ) -> c_int,
>;

/// Writes the attribute of `keyval` on `type` into `outbuf` (at most
/// `outsize` bytes) and sets `*num_written`.
#[allow(non_camel_case_types)]
pub type MPIX_Type_marshal_attr_function = Option<
    unsafe extern "C" fn(
        keyval: c_int,
        canonical_name: *const c_char,
        typerep: *const c_char,
        r#type: MPI_Datatype,
        outbuf: *mut c_void,
        outsize: MPI_Aint,
        num_written: *mut MPI_Aint,
    ) -> c_int,
>;

/// Sets the attribute of the local `keyval` on the rebuilt `type` from the
/// `insize` bytes at `inbuf` the marshal callback wrote.
#[allow(non_camel_case_types)]
pub type MPIX_Type_unmarshal_attr_function = Option<
    unsafe extern "C" fn(
        keyval: c_int,
        canonical_name: *const c_char,
        typerep: *const c_char,
        r#type: MPI_Datatype,
        inbuf: *const c_void,
        insize: MPI_Aint,
    ) -> c_int,
>;

const MPI_SUCCESS: c_int = 0;
/// Error codes kept per class: a code's string stays readable until this
/// many later errors of the same class have been raised.
const RING: usize = 32;

fn kind_of(e: &Error) -> Option<c_int> {
    match e {
        Error::UnknownRepresentation(_) => Some(MPIX_MARSHAL_ERR_UNKNOWN_REPRESENTATION),
        Error::BufferTooSmall { .. } => Some(MPIX_MARSHAL_ERR_BUFFER_TOO_SMALL),
        Error::Truncated { .. } | Error::Corrupt { .. } => Some(MPIX_MARSHAL_ERR_CORRUPT),
        Error::Unsupported(_) => Some(MPIX_MARSHAL_ERR_UNSUPPORTED),
        Error::InvalidArgument(_) => Some(MPIX_MARSHAL_ERR_INVALID_ARGUMENT),
        Error::Attribute { .. } => Some(MPIX_MARSHAL_ERR_ATTRIBUTE),
        Error::Mpi { .. } => None,
    }
}

/// The error classes this library registers with MPI, and per class a ring
/// of error codes whose strings carry each error's own message.
struct Classes {
    class: [c_int; KINDS],
    rings: Mutex<[(Vec<c_int>, usize); KINDS]>,
}

fn classes() -> Option<&'static Classes> {
    static CLASSES: OnceLock<Option<Classes>> = OnceLock::new();
    // Before MPI_Init no class can be added (and "none" must not be kept
    // for later); after MPI_Finalize none may be used.
    if !mpi::is_initialized() {
        return None;
    }
    CLASSES
        .get_or_init(|| {
            let names = [
                "mpix-marshal: unknown type representation",
                "mpix-marshal: output buffer too small",
                "mpix-marshal: truncated or corrupt stream",
                "mpix-marshal: construct not supported by this MPI",
                "mpix-marshal: invalid argument",
                "mpix-marshal: internal error",
                "mpix-marshal: attribute callback failed",
            ];
            let mut class = [0; KINDS];
            for (c, name) in class.iter_mut().zip(names) {
                // SAFETY: c is a valid out-pointer; the string is NUL-terminated.
                unsafe {
                    if mpi_sys::MPI_Add_error_class(c) != MPI_SUCCESS {
                        return None;
                    }
                    let s = format!("{name}\0");
                    mpi_sys::MPI_Add_error_string(*c, s.as_ptr() as *const c_char);
                }
            }
            Some(Classes {
                class,
                rings: Mutex::new(Default::default()),
            })
        })
        .as_ref()
}

/// An MPI error code of the right class whose string is `e`'s message.
fn error_code(e: &Error) -> c_int {
    let kind = match kind_of(e) {
        Some(k) => k,
        None => {
            if let Error::Mpi { code, .. } = e {
                return *code;
            }
            unreachable!("only MPI errors have no kind")
        }
    };
    code_for(kind, &e.to_string())
}

fn code_for(kind: c_int, message: &str) -> c_int {
    let Some(classes) = classes() else {
        return mpi_sys::MPI_ERR_OTHER as c_int;
    };
    let i = (kind - 1) as usize;
    let mut rings = classes.rings.lock().unwrap_or_else(|p| p.into_inner());
    let (ring, next) = &mut rings[i];
    let code = if ring.len() < RING {
        let mut code = 0;
        // SAFETY: code is a valid out-pointer; the class was registered.
        if unsafe { mpi_sys::MPI_Add_error_code(classes.class[i], &mut code) } != MPI_SUCCESS {
            return classes.class[i];
        }
        ring.push(code);
        code
    } else {
        let code = ring[*next];
        *next = (*next + 1) % RING;
        code
    };
    // MPI_MAX_ERROR_STRING is 256 in Open MPI: keep well under it.
    let mut text: String = format!("mpix-marshal: {message}");
    if text.len() > 250 {
        let mut cut = 247;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push_str("...");
    }
    text.retain(|c| c != '\0');
    text.push('\0');
    // SAFETY: text is NUL-terminated; MPI copies it.
    unsafe { mpi_sys::MPI_Add_error_string(code, text.as_ptr() as *const c_char) };
    code
}

/// Runs an exported function's body: catches panics, maps errors to MPI
/// codes and raises them on MPI_COMM_SELF's error handler.
fn boundary(body: impl FnOnce() -> Result<()>) -> c_int {
    let code = match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => return MPI_SUCCESS,
        Ok(Err(e)) => error_code(&e),
        Err(_) => code_for(
            MPIX_MARSHAL_ERR_INTERNAL,
            "a bug in mpix-marshal was caught (a Rust panic)",
        ),
    };
    if mpi::is_initialized() {
        // SAFETY: MPI is initialized; COMM_SELF always exists. Under the
        // default MPI_ERRORS_ARE_FATAL handler this aborts, as MPI would.
        unsafe { mpi_sys::MPI_Comm_call_errhandler(mpi_sys::RSMPI_COMM_SELF, code) };
    }
    code
}

/// Null checks, in one place.
fn arg<'a, T>(p: *mut T, what: &str) -> Result<&'a mut T> {
    // SAFETY: a non-null pointer from the caller points to a valid T, as
    // the C API documents.
    unsafe { p.as_mut() }.ok_or_else(|| Error::invalid(format!("{what} is NULL")))
}

fn representation(typerep: *const c_char) -> Result<Representation> {
    if typerep.is_null() {
        return Err(Error::invalid("typerep is NULL"));
    }
    // SAFETY: a non-null typerep is a NUL-terminated C string.
    let name = unsafe { CStr::from_ptr(typerep) };
    Representation::from_bytes(name.to_bytes())
}

/// The caller's input buffer as a slice (empty when `insize` is 0).
///
/// # Safety
/// A non-null `inbuf` points to `insize` readable bytes.
unsafe fn input<'a>(inbuf: *const c_void, insize: MPI_Aint) -> Result<&'a [u8]> {
    let insize = length(insize, "insize")?;
    if insize == 0 {
        return Ok(&[]);
    }
    if inbuf.is_null() {
        return Err(Error::invalid("inbuf is NULL"));
    }
    // SAFETY: inbuf is non-null and points to insize readable bytes.
    Ok(unsafe { std::slice::from_raw_parts(inbuf as *const u8, insize) })
}

fn length(n: MPI_Aint, what: &str) -> Result<usize> {
    usize::try_from(n).map_err(|_| Error::invalid(format!("{what} is negative ({n})")))
}

/// Marshals `type` into `outbuf` in the representation `typerep`
/// ("external", "internal" or "compressed") and sets `*num_written` to the
/// number of bytes written. When `outsize` is too small, nothing is
/// written, `*num_written` is set to 0 and the error class is
/// MPIX_MARSHAL_ERR_BUFFER_TOO_SMALL's.
///
/// # Safety
/// `typerep` is a NUL-terminated string; `outbuf` points to `outsize`
/// writable bytes; `num_written` points to a writable `MPI_Aint`.
#[no_mangle]
pub unsafe extern "C" fn MPIX_Type_marshal(
    typerep: *const c_char,
    r#type: MPI_Datatype,
    outbuf: *mut c_void,
    outsize: MPI_Aint,
    num_written: *mut MPI_Aint,
) -> c_int {
    boundary(|| {
        let rep = representation(typerep)?;
        let num_written = arg(num_written, "num_written")?;
        let outsize = length(outsize, "outsize")?;
        if outbuf.is_null() && outsize > 0 {
            return Err(Error::invalid("outbuf is NULL"));
        }
        let out: &mut [u8] = if outsize == 0 {
            &mut []
        } else {
            // SAFETY: outbuf points to outsize writable bytes (checked non-null).
            unsafe { std::slice::from_raw_parts_mut(outbuf as *mut u8, outsize) }
        };
        match api::marshal_into(rep, r#type, out) {
            Ok(n) => {
                *num_written = n as MPI_Aint;
                Ok(())
            }
            Err(e @ Error::BufferTooSmall { .. }) => {
                *num_written = 0;
                Err(e)
            }
            Err(e) => Err(e),
        }
    })
}

/// Sets `*size` to an upper bound of the bytes `MPIX_Type_marshal` writes
/// for `type` in the representation `typerep`.
///
/// # Safety
/// `typerep` is a NUL-terminated string; `size` points to a writable `MPI_Aint`.
#[no_mangle]
pub unsafe extern "C" fn MPIX_Type_marshal_size(
    typerep: *const c_char,
    r#type: MPI_Datatype,
    size: *mut MPI_Aint,
) -> c_int {
    boundary(|| {
        let rep = representation(typerep)?;
        let size = arg(size, "size")?;
        *size = api::marshal_size(rep, r#type)? as MPI_Aint;
        Ok(())
    })
}

/// Rebuilds a datatype from `insize` bytes at `inbuf` written by
/// `MPIX_Type_marshal` with the same `typerep`. A predefined type comes back
/// as the very same handle; any other is a new, uncommitted handle that the
/// caller frees with `MPI_Type_free`. On error `*type` is left untouched
/// and no handle is left behind.
///
/// # Safety
/// `typerep` is a NUL-terminated string; `inbuf` points to `insize`
/// readable bytes; `type` points to a writable `MPI_Datatype`.
#[no_mangle]
pub unsafe extern "C" fn MPIX_Type_unmarshal(
    typerep: *const c_char,
    inbuf: *const c_void,
    insize: MPI_Aint,
    r#type: *mut MPI_Datatype,
) -> c_int {
    boundary(|| {
        let rep = representation(typerep)?;
        let out = arg(r#type, "type")?;
        // SAFETY: inbuf points to insize readable bytes, as documented.
        let bytes = unsafe { input(inbuf, insize)? };
        *out = api::unmarshal(rep, bytes)?;
        Ok(())
    })
}

/// Registers `keyval` for marshalling under `canonical_name` (1 to 255
/// bytes): when a type is marshalled, the value of `keyval` on every level
/// of the type is stored under that name with the bytes `marshal_fn` writes
/// (at most what `marshal_size_fn` promised); when a stream is unmarshalled,
/// `unmarshal_fn` of the keyval registered under the same name in the
/// reading process sets the attribute on the rebuilt level. Registration
/// is process-wide and thread-safe; registering a name or a keyval again
/// replaces the earlier registration. A process may register only
/// `unmarshal_fn` (reading) or only `marshal_size_fn` and `marshal_fn`
/// (writing). A keyval freed with `MPI_Type_free_keyval` is forgotten.
///
/// # Safety
/// `canonical_name` is a NUL-terminated string; the callbacks, when not
/// NULL, are functions of the documented types, callable from any thread.
#[no_mangle]
pub unsafe extern "C" fn MPIX_Type_register_marshaled_keyval(
    keyval: c_int,
    canonical_name: *const c_char,
    marshal_size_fn: MPIX_Type_marshal_attr_size_function,
    marshal_fn: MPIX_Type_marshal_attr_function,
    unmarshal_fn: MPIX_Type_unmarshal_attr_function,
) -> c_int {
    boundary(|| {
        if canonical_name.is_null() {
            return Err(Error::invalid("canonical_name is NULL"));
        }
        if keyval == mpi::local().constants.keyval_invalid {
            return Err(Error::invalid("keyval is MPI_KEYVAL_INVALID"));
        }
        // SAFETY: a non-null canonical_name is a NUL-terminated C string.
        let name = unsafe { CStr::from_ptr(canonical_name) }.to_owned();
        attributes::register(Keyval {
            keyval,
            name,
            size: marshal_size_fn,
            marshal: marshal_fn,
            unmarshal: unmarshal_fn,
        })
    })
}

/// Stops marshalling `keyval`'s attribute. Returns an invalid-argument
/// error when the keyval is not registered.
#[no_mangle]
pub extern "C" fn MPIX_Type_unregister_marshaled_keyval(keyval: c_int) -> c_int {
    boundary(|| {
        if attributes::forget(keyval) {
            Ok(())
        } else {
            Err(Error::invalid(format!(
                "keyval {keyval} is not registered for marshalling"
            )))
        }
    })
}

/// Sets `*hash` to the hash of `type`'s type signature (the sequence of
/// basic types it moves) in the family `kind`, one of the MPIX_HASH_*
/// constants; the value is in the family's low 32 (or 61) bits. Computed
/// from the constructor tree without expanding the typemap, and kept on the
/// type, so asking again costs a lookup. Equal signatures give equal
/// hashes whatever the types' structure.
///
/// # Safety
/// `hash` points to a writable `uint64_t`.
#[no_mangle]
pub unsafe extern "C" fn MPIX_Type_signature_hash(
    r#type: MPI_Datatype,
    kind: c_int,
    hash: *mut u64,
) -> c_int {
    boundary(|| {
        let hash = arg(hash, "hash")?;
        let kind = u32::try_from(kind)
            .ok()
            .and_then(HashKind::from_code)
            .ok_or_else(|| Error::invalid(format!("{kind} is not an MPIX_HASH_* kind")))?;
        *hash = api::signature_hash(r#type, kind)?;
        Ok(())
    })
}

/// Sets `*hash` to the default signature hash (MPIX_HASH_DEFAULT) of the
/// type that `insize` bytes at `inbuf`, written by `MPIX_Type_marshal` with
/// `typerep`, describe, without rebuilding the type: compare it with
/// `MPIX_Type_signature_hash(expected, MPIX_HASH_DEFAULT, ...)` to check a
/// received description. External and compressed streams carry the hash in
/// their header, which is all that is read (`MPIX_Type_unmarshal` checks
/// it against the whole stream); an internal stream is parsed and hashed.
///
/// # Safety
/// `typerep` is a NUL-terminated string; `inbuf` points to `insize`
/// readable bytes; `hash` points to a writable `uint64_t`.
#[no_mangle]
pub unsafe extern "C" fn MPIX_Type_marshaled_signature_hash(
    typerep: *const c_char,
    inbuf: *const c_void,
    insize: MPI_Aint,
    hash: *mut u64,
) -> c_int {
    boundary(|| {
        let rep = representation(typerep)?;
        let hash = arg(hash, "hash")?;
        // SAFETY: inbuf points to insize readable bytes, as documented.
        let bytes = unsafe { input(inbuf, insize)? };
        *hash = api::stream_signature_hash(rep, bytes)?;
        Ok(())
    })
}

/// Sets `*count` to the number of basic elements in `type`'s type
/// signature (what `MPI_Get_elements_c` reports for one whole `type`).
/// A count beyond `MPI_Count`'s range is an error of the
/// MPIX_MARSHAL_ERR_UNSUPPORTED kind.
///
/// # Safety
/// `count` points to a writable `MPI_Count`.
#[no_mangle]
pub unsafe extern "C" fn MPIX_Type_signature_count(
    r#type: MPI_Datatype,
    count: *mut MPI_Count,
) -> c_int {
    boundary(|| {
        let count = arg(count, "count")?;
        let n = api::signature_count(r#type)?;
        *count = MPI_Count::try_from(n).map_err(|_| {
            Error::unsupported(format!("the signature has {n} elements, beyond MPI_Count"))
        })?;
        Ok(())
    })
}

/// Compares `type_a` and `type_b` at `level` (an MPIX_COMPARE_* constant)
/// and every weaker level. Sets `*result` to 0 when they are equal, else to
/// the weakest level at which they differ. When `explanation` is not NULL,
/// writes a NUL-terminated description of the first difference into it
/// (at most `explanation_size` bytes, cut if longer; empty when equal):
/// for signatures and typemaps the element index and the path to it in
/// each type, for trees the path and the argument that differ.
///
/// # Safety
/// `result` points to a writable `int`; `explanation`, when not NULL,
/// points to `explanation_size` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn MPIX_Type_compare(
    type_a: MPI_Datatype,
    type_b: MPI_Datatype,
    level: c_int,
    result: *mut c_int,
    explanation: *mut c_char,
    explanation_size: c_int,
) -> c_int {
    boundary(|| {
        let result = arg(result, "result")?;
        let level = u32::try_from(level)
            .ok()
            .and_then(Level::from_code)
            .ok_or_else(|| compare::unknown_level(level.into()))?;
        let room = usize::try_from(explanation_size).map_err(|_| {
            Error::invalid(format!("explanation_size is negative ({explanation_size})"))
        })?;
        if explanation.is_null() && room > 0 {
            return Err(Error::invalid(
                "explanation is NULL but explanation_size is not 0",
            ));
        }
        let null = mpi::local().datatype_null();
        if type_a == null || type_b == null {
            return Err(Error::invalid("a datatype is MPI_DATATYPE_NULL"));
        }
        let c = compare::compare(type_a, type_b, level)?;
        *result = c.differs_at.map_or(0, |l| l as c_int);
        if room > 0 {
            let text = c.explanation.as_bytes();
            let mut n = text.len().min(room - 1);
            // Cut on a character boundary.
            while n > 0 && !c.explanation.is_char_boundary(n) {
                n -= 1;
            }
            // SAFETY: explanation points to room ≥ n + 1 writable bytes.
            let out = unsafe { std::slice::from_raw_parts_mut(explanation as *mut u8, room) };
            out[..n].copy_from_slice(&text[..n]);
            out[n] = 0;
        }
        Ok(())
    })
}

/// Sets `*kind` to the MPIX_MARSHAL_ERR_* kind of an error code returned by
/// this library, or MPIX_MARSHAL_ERR_NONE when the code is not of one of
/// its classes (an MPI error passed through, or MPI_SUCCESS). Raises no
/// error handler.
///
/// # Safety
/// `kind` points to a writable `int`.
#[no_mangle]
pub unsafe extern "C" fn MPIX_Type_marshal_error_kind(errorcode: c_int, kind: *mut c_int) -> c_int {
    let result = catch_unwind(AssertUnwindSafe(|| -> Result<c_int> {
        let kind = arg(kind, "kind")?;
        *kind = MPIX_MARSHAL_ERR_NONE;
        if errorcode == MPI_SUCCESS {
            return Ok(MPI_SUCCESS);
        }
        if let Some(classes) = classes() {
            let mut class = 0;
            // SAFETY: class is a valid out-pointer.
            if unsafe { mpi_sys::MPI_Error_class(errorcode, &mut class) } == MPI_SUCCESS {
                if let Some(i) = classes.class.iter().position(|&c| c == class) {
                    *kind = i as c_int + 1;
                }
            }
        }
        Ok(MPI_SUCCESS)
    }));
    match result {
        Ok(Ok(rc)) => rc,
        Ok(Err(e)) => error_code(&e),
        Err(_) => code_for(
            MPIX_MARSHAL_ERR_INTERNAL,
            "a bug in mpix-marshal was caught (a Rust panic)",
        ),
    }
}
