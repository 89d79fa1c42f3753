//! The command's only MPI calls: starting MPI as a singleton (so the
//! command runs without mpiexec) and finishing it, and asking the local
//! MPI about types rebuilt from a tree: their size, bounds and true
//! bounds, and their comparison. Everything else works on trees alone.

use crate::error::{Error, Result};
use mpix_marshal::testing::mpi::sys as ffi;
use mpix_marshal::{Comparison, Datatype, Level, Node, Representation};
use std::os::raw::c_int;

/// MPI, started for the life of this value and finished when it drops.
pub struct Session {
    finalize: bool,
}

impl Session {
    /// Initialises MPI unless it already is, with errors returned instead
    /// of aborting, so that the library's errors reach the user as messages.
    pub fn start() -> Result<Session> {
        let mut flag: c_int = 0;
        // SAFETY: MPI_Initialized may be called at any time; flag is a valid out pointer.
        check(
            unsafe { ffi::MPI_Initialized(&mut flag) },
            "MPI_Initialized",
        )?;
        let finalize = flag == 0;
        if finalize {
            // SAFETY: called once, before any other MPI call but
            // MPI_Initialized; null argc/argv are allowed.
            let rc = unsafe { ffi::MPI_Init(std::ptr::null_mut(), std::ptr::null_mut()) };
            check(rc, "MPI_Init")?;
        }
        // SAFETY: MPI is initialised; the predefined communicators and
        // error handler are valid handles.
        unsafe {
            ffi::MPI_Comm_set_errhandler(ffi::RSMPI_COMM_SELF, ffi::RSMPI_ERRORS_RETURN);
            ffi::MPI_Comm_set_errhandler(ffi::RSMPI_COMM_WORLD, ffi::RSMPI_ERRORS_RETURN);
        }
        Ok(Session { finalize })
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if self.finalize {
            // SAFETY: MPI was initialised by `start`, and every handle this
            // module made has been freed (Rebuilt frees on drop).
            unsafe { ffi::MPI_Finalize() };
        }
    }
}

fn check(rc: c_int, call: &str) -> Result<()> {
    if rc == 0 {
        return Ok(());
    }
    let mut buf = vec![0u8; 512];
    let mut len: c_int = 0;
    // SAFETY: the buffer is at least MPI_MAX_ERROR_STRING (≤ 512 in both MPIs) bytes.
    let got = unsafe { ffi::MPI_Error_string(rc, buf.as_mut_ptr().cast(), &mut len) };
    buf.truncate(if got == 0 { len.max(0) as usize } else { 0 });
    Err(Error::Mpi(format!(
        "{call} failed: {} (error code {rc})",
        String::from_utf8_lossy(&buf)
    )))
}

/// A type rebuilt from a tree by the library; freed on drop unless it is
/// a predefined type (which comes back as MPI's own handle).
struct Rebuilt {
    handle: Datatype,
    predefined: bool,
}

impl Rebuilt {
    fn new(tree: &Node) -> std::result::Result<Rebuilt, mpix_marshal::Error> {
        let bytes = mpix_marshal::write(Representation::External, tree)?;
        let handle = mpix_marshal::unmarshal(Representation::External, &bytes)?;
        Ok(Rebuilt {
            handle,
            predefined: tree.is_predefined(),
        })
    }
}

impl Drop for Rebuilt {
    fn drop(&mut self) {
        if !self.predefined {
            // SAFETY: a derived handle that unmarshal made for us alone.
            unsafe { ffi::MPI_Type_free(&mut self.handle) };
        }
    }
}

/// What the local MPI reports for a type, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Extents {
    pub size: i64,
    pub lb: i64,
    pub extent: i64,
    pub true_lb: i64,
    pub true_extent: i64,
}

/// Whether `tree` builds on the local MPI.
pub fn rebuilds(tree: &Node) -> std::result::Result<(), mpix_marshal::Error> {
    Rebuilt::new(tree).map(drop)
}

/// The size and bounds of the type `tree` describes, rebuilt on the local
/// MPI; the library's error when it cannot be built here.
pub fn extents(tree: &Node) -> std::result::Result<Extents, mpix_marshal::Error> {
    let t = Rebuilt::new(tree)?;
    let (mut size, mut lb, mut extent, mut tlb, mut textent) = (0, 0, 0, 0, 0);
    let rcs = [
        // SAFETY: t.handle is a valid datatype; the out pointers are valid.
        unsafe { ffi::MPI_Type_size_x(t.handle, &mut size) },
        // SAFETY: as above.
        unsafe { ffi::MPI_Type_get_extent_x(t.handle, &mut lb, &mut extent) },
        // SAFETY: as above.
        unsafe { ffi::MPI_Type_get_true_extent_x(t.handle, &mut tlb, &mut textent) },
    ];
    if let Some(rc) = rcs.iter().find(|rc| **rc != 0) {
        return Err(mpix_marshal::Error::Mpi {
            call: "MPI_Type_get_extent_x",
            code: *rc,
            message: "the local MPI could not report the type's size or bounds".into(),
        });
    }
    Ok(Extents {
        size,
        lb,
        extent,
        true_lb: tlb,
        true_extent: textent,
    })
}

/// The comparison of the types two trees describe, both rebuilt on the
/// local MPI (`MPIX_Type_compare`).
pub fn compare(
    a: &Node,
    b: &Node,
    level: Level,
) -> std::result::Result<Comparison, mpix_marshal::Error> {
    let (ta, tb) = (Rebuilt::new(a)?, Rebuilt::new(b)?);
    mpix_marshal::compare(ta.handle, tb.handle, level)
}
