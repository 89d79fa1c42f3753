//! The kinds of error the C API reports, and the MPI error classes and
//! codes that carry them.
//!
//! `ErrorKind` is the one list of kinds: cbindgen generates the header's
//! `MPIX_MARSHAL_ERR_*` constants from it, and the classes registered with
//! MPI (one per kind but NONE, with its name), the kind of a library
//! `Error`, and the kind of an error code all derive from it. Each error
//! gets a code of its kind's class whose string is the error's own
//! message, from a small ring of codes per class.

use crate::error::Error;
use crate::mpi::{self, error_class};
use std::ffi::{CStr, CString};
use std::os::raw::c_int;
use std::sync::{Mutex, OnceLock};

/// The kind of an error code returned by this library:
/// `MPIX_Type_marshal_error_kind` sets its `int` to one of these. Each
/// kind but `MPIX_MARSHAL_ERR_NONE` is an MPI error class of its own.
// Exported to C as MPIX_Marshal_err (see cbindgen.toml), variants
// MPIX_MARSHAL_ERR_NONE and so on. The numbers are part of the ABI.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// `MPIX_Type_marshal_error_kind` result: the code is not one of this library's classes.
    None = 0,
    /// The representation name is not "external", "internal" or "compressed".
    UnknownRepresentation = 1,
    /// The output buffer is too small; nothing was written, `*num_written` is 0.
    BufferTooSmall = 2,
    /// The input is truncated or corrupt; the error string says what and where.
    Corrupt = 3,
    /// The local MPI cannot describe or build this construct.
    Unsupported = 4,
    /// An argument (or a decoded value) is invalid.
    InvalidArgument = 5,
    /// A bug in mpix-marshal (a caught panic).
    Internal = 6,
    /// A marshalled attribute's callback failed or broke its contract; the
    /// error string names the attribute's canonical name.
    Attribute = 7,
    /// A type exchange message is malformed or forged, or refers to a type
    /// identifier the receiver never cached (`MPIX_Type_recv`, `MPIX_Type_bcast`).
    Exchange = 8,
    /// The stream's checksum is not that of its bytes: it was damaged after
    /// it was written; the error string names the stored and computed values.
    Checksum = 9,
}

/// How many kinds are error classes.
const KINDS: usize = ErrorKind::CLASSES.len();

// CLASSES lists every kind but NONE in number order, without gaps: the
// class of kind k is registered at index k - 1, and index i is kind i + 1.
const _: () = {
    let mut i = 0;
    while i < KINDS {
        assert!(ErrorKind::CLASSES[i] as usize == i + 1);
        i += 1;
    }
};

impl ErrorKind {
    /// The kinds that are error classes: all but `None`, in number order
    /// (checked when compiling). A new variant goes here, with its name
    /// in `class_name`.
    pub(crate) const CLASSES: [ErrorKind; 9] = [
        ErrorKind::UnknownRepresentation,
        ErrorKind::BufferTooSmall,
        ErrorKind::Corrupt,
        ErrorKind::Unsupported,
        ErrorKind::InvalidArgument,
        ErrorKind::Internal,
        ErrorKind::Attribute,
        ErrorKind::Exchange,
        ErrorKind::Checksum,
    ];

    /// The kind of a library error. An MPI call's own error keeps its
    /// MPI code, so it is of no class of this library: NONE.
    pub(crate) fn of(e: &Error) -> ErrorKind {
        match e {
            Error::UnknownRepresentation(_) => ErrorKind::UnknownRepresentation,
            Error::BufferTooSmall { .. } => ErrorKind::BufferTooSmall,
            Error::Truncated { .. } | Error::Corrupt { .. } => ErrorKind::Corrupt,
            Error::Unsupported(_) => ErrorKind::Unsupported,
            Error::InvalidArgument(_) => ErrorKind::InvalidArgument,
            Error::Attribute { .. } => ErrorKind::Attribute,
            Error::Exchange(_) => ErrorKind::Exchange,
            Error::Checksum { .. } => ErrorKind::Checksum,
            Error::Mpi { .. } => ErrorKind::None,
        }
    }

    /// The string registered for the kind's class (`MPI_Error_string` of
    /// the class itself; each code's string is its error's message).
    pub(crate) fn class_name(self) -> &'static CStr {
        match self {
            ErrorKind::None => c"mpix-marshal: not an error of this library",
            ErrorKind::UnknownRepresentation => c"mpix-marshal: unknown type representation",
            ErrorKind::BufferTooSmall => c"mpix-marshal: output buffer too small",
            ErrorKind::Corrupt => c"mpix-marshal: truncated or corrupt stream",
            ErrorKind::Unsupported => c"mpix-marshal: construct not supported by this MPI",
            ErrorKind::InvalidArgument => c"mpix-marshal: invalid argument",
            ErrorKind::Internal => c"mpix-marshal: internal error",
            ErrorKind::Attribute => c"mpix-marshal: attribute callback failed",
            ErrorKind::Exchange => {
                c"mpix-marshal: bad type exchange message or unknown type identifier"
            }
            ErrorKind::Checksum => c"mpix-marshal: checksum mismatch (damaged stream)",
        }
    }

    /// The kind's index in `CLASSES`; None for NONE, which has no class.
    fn class_index(self) -> Option<usize> {
        (self as usize).checked_sub(1)
    }
}

/// `MPI_SUCCESS`, 0 in every MPI (the standard fixes it).
pub(super) const MPI_SUCCESS: c_int = 0;

/// Error codes kept per class: a code's string stays readable until this
/// many later errors of the same class have been raised.
const RING: usize = 32;

/// A class's codes with the string each carries, and the next to reuse.
type Ring = (Vec<(c_int, CString)>, usize);

/// The error classes this library registered with MPI, and per class a
/// ring of error codes whose strings carry each error's own message.
struct Classes {
    /// The class of each kind, in `ErrorKind::CLASSES` order.
    class: [c_int; KINDS],
    /// Per class, the codes made so far with the string each carries, and
    /// the next one to reuse.
    rings: Mutex<[Ring; KINDS]>,
}

fn classes() -> Option<&'static Classes> {
    static CLASSES: OnceLock<Option<Classes>> = OnceLock::new();
    // Before MPI_Init no class can be added (and "none" must not be kept
    // for later); after MPI_Finalize none may be used.
    if !mpi::is_initialized() {
        return None;
    }
    CLASSES.get_or_init(register).as_ref()
}

/// Registers a class per kind; None when MPI will not add one.
fn register() -> Option<Classes> {
    let mut class = [0; KINDS];
    for (c, kind) in class.iter_mut().zip(ErrorKind::CLASSES) {
        *c = error_class::add_class().ok()?;
        // Without its string a class still works: MPI's own message stands.
        let _ = error_class::set_string(*c, kind.class_name());
    }
    Some(Classes {
        class,
        rings: Mutex::new(Default::default()),
    })
}

/// The MPI error code returned for `e`: MPI's own code for an MPI error,
/// else a code of the kind's class whose string is `e`'s message.
pub(super) fn code_of(e: &Error) -> c_int {
    if let Error::Mpi { code, .. } = e {
        return *code;
    }
    code_for(ErrorKind::of(e), &e.to_string())
}

/// A code of `kind`'s class whose string is `message`. Falls back on the
/// class itself when MPI adds no more codes, and on `MPI_ERR_OTHER` when
/// there are no classes (MPI not initialized, or it added none).
pub(super) fn code_for(kind: ErrorKind, message: &str) -> c_int {
    let (Some(classes), Some(i)) = (classes(), kind.class_index()) else {
        return error_class::ERR_OTHER;
    };
    // Held until the string is set, so no other thread reuses the code
    // and overwrites its string in between.
    let mut rings = classes.rings.lock().unwrap_or_else(|p| p.into_inner());
    let (ring, next) = &mut rings[i];
    let text = error_text(message);
    // A code that already carries this message is handed out again as it
    // is: no string is replaced under a thread reading it (MPICH 5 gave a
    // reader a torn string when another thread set one).
    if let Some((code, _)) = ring.iter().find(|(_, t)| *t == text) {
        return *code;
    }
    let slot = if ring.len() < RING {
        let Ok(code) = error_class::add_code(classes.class[i]) else {
            return classes.class[i];
        };
        ring.push((code, CString::default()));
        ring.len() - 1
    } else {
        let slot = *next;
        *next = (*next + 1) % RING;
        slot
    };
    let (code, kept) = &mut ring[slot];
    // Without the string, the code reads as its class: still the right kind.
    if error_class::set_string(*code, &text).is_ok() {
        *kept = text;
    } else {
        *kept = CString::default();
    }
    *code
}

/// The string of an error code: the message, prefixed with the library's
/// name, cut to fit every MPI's limit, without inner NULs.
fn error_text(message: &str) -> CString {
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
    // Cannot fail: the NULs are gone. (No panic here: this runs outside
    // the panic boundary's catch.)
    CString::new(text).unwrap_or_default()
}

/// The kind of an error code: the kind of one of this library's classes,
/// NONE for any other code (MPI_SUCCESS, or an MPI error passed through).
pub(super) fn kind_of_code(code: c_int) -> ErrorKind {
    if code == MPI_SUCCESS {
        return ErrorKind::None;
    }
    let Some(classes) = classes() else {
        return ErrorKind::None;
    };
    let Ok(class) = error_class::class_of(code) else {
        return ErrorKind::None;
    };
    match classes.class.iter().position(|&c| c == class) {
        Some(i) => ErrorKind::CLASSES[i],
        None => ErrorKind::None,
    }
}
