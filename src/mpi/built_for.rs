//! The MPI this library was compiled for, compared with the one the process
//! runs. MPICH's handles are ints and Open MPI's pointers: a program that
//! mixes the two (compiled with one MPI's mpicc, linked to the mpix-marshal
//! built for the other) would hand one MPI handles it cannot read, and fail
//! obscurely or crash. The comparison uses `MPI_Get_library_version` only,
//! which takes no handle and may be called before `MPI_Init`, so it is made
//! before the library uses any handle (`super::ready`).

use std::ffi::CStr;
use std::fmt;
use std::sync::OnceLock;

/// The MPI a build is for and the MPI a process runs, when they differ.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MpiMismatch {
    /// The MPI mpi.h was from at build time, e.g. "MPICH 4.0.2".
    pub built_for: &'static str,
    /// The MPI library the process runs, e.g. "Open MPI 4.1.4".
    pub running: String,
}

impl fmt::Display for MpiMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "mpix-marshal was built for {} but this process runs {}: \
             compile and link the program with the MPI mpix-marshal was built for, \
             or use the mpix-marshal installed for the other",
            self.built_for, self.running
        )
    }
}

/// The MPI this library was compiled for ("MPICH 4.0.2", "Open MPI 4.1.4",
/// "the MPI standard ABI", or "" for an mpi.h of neither).
pub fn built_for() -> &'static str {
    static BUILT_FOR: OnceLock<&'static str> = OnceLock::new();
    BUILT_FOR.get_or_init(|| {
        // SAFETY: the shim returns a static NUL-terminated string.
        let s = unsafe { CStr::from_ptr(super::shim::mpixm_built_for()) };
        s.to_str().unwrap_or("")
    })
}

/// The mismatch between the MPI this library was built for and the one
/// the process runs, if any. Asked once; callable before `MPI_Init`.
pub fn mismatch() -> Option<&'static MpiMismatch> {
    static MISMATCH: OnceLock<Option<MpiMismatch>> = OnceLock::new();
    MISMATCH
        .get_or_init(|| {
            let built = built_for();
            // Any implementation of the standard ABI takes the ABI's handles.
            if built.is_empty() || built == "the MPI standard ABI" {
                return None;
            }
            compare(built, &super::library_version())
        })
        .as_ref()
}

/// `built` and the running library's version line (`library_version`)
/// compared by family: handles differ between Open MPI and the MPICH
/// family (MPICH and the MPIs derived from it share its handles); versions
/// within a family do not matter here.
pub fn compare(built: &'static str, running_line: &str) -> Option<MpiMismatch> {
    let is_open_mpi = |s: &str| s.contains("Open MPI");
    if is_open_mpi(built) == is_open_mpi(running_line) {
        return None;
    }
    Some(MpiMismatch {
        built_for: built,
        running: short_name(running_line),
    })
}

/// "MPICH 4.0.2" from "MPICH Version: 4.0.2", "Open MPI 4.1.4" from
/// "Open MPI v4.1.4, package: ...": the version line up to its first comma.
fn short_name(line: &str) -> String {
    let head = line.split(',').next().unwrap_or(line).trim();
    let head = head.replacen("MPICH Version: ", "MPICH ", 1);
    let head = head.replacen("Open MPI v", "Open MPI ", 1);
    if head.is_empty() {
        "an unknown MPI".into()
    } else {
        head
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MPICH_LINE: &str = "MPICH Version: 4.0.2";
    const OPEN_MPI_LINE: &str = "Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4";

    #[test]
    fn mpich_build_under_open_mpi_is_refused() {
        let m = compare("MPICH 4.0.2", OPEN_MPI_LINE).expect("a mismatch");
        assert_eq!(m.running, "Open MPI 4.1.4");
        assert_eq!(
            m.to_string().split(':').next().unwrap(),
            "mpix-marshal was built for MPICH 4.0.2 but this process runs Open MPI 4.1.4"
        );
    }

    #[test]
    fn open_mpi_build_under_mpich_is_refused() {
        let m = compare("Open MPI 4.1.4", MPICH_LINE).expect("a mismatch");
        assert_eq!(m.built_for, "Open MPI 4.1.4");
        assert_eq!(m.running, "MPICH 4.0.2");
    }

    #[test]
    fn the_same_family_in_another_version_is_accepted() {
        assert_eq!(compare("MPICH 4.0.2", "MPICH Version: 5.0.2"), None);
        assert_eq!(compare("Open MPI 5.0.11", OPEN_MPI_LINE), None);
    }
}
