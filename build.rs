//! Compiles the C shim (`src/shim/shim.c`) with the MPI compiler wrapper, so
//! that every predefined datatype and constant of the installed MPI is seen
//! as mpi.h defines it. The wrapper is `$MPICC` or `mpicc`, as for mpi-sys.

use std::env;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=src/shim/shim.c");
    println!("cargo:rerun-if-env-changed=MPICC");
    let mpicc = env::var("MPICC").unwrap_or_else(|_| "mpicc".to_string());

    // Fail early with a message a person can act on.
    let found = Command::new(&mpicc).arg("-show").output();
    if !found.is_ok_and(|out| out.status.success()) {
        panic!(
            "mpix-marshal needs an MPI compiler wrapper: '{mpicc}' was not found or failed. \
             Install MPICH (apt-get install mpich libmpich-dev) or set MPICC."
        );
    }

    // The shared library's soname carries the major version
    // (libmpix_marshal.so.0), so that an installation can keep
    // libmpix_marshal.so.0 -> libmpix_marshal.so.0.x.y (scripts/install.sh).
    let major = env::var("CARGO_PKG_VERSION_MAJOR").unwrap_or_else(|_| "0".into());
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libmpix_marshal.so.{major}");

    cc::Build::new()
        .compiler(&mpicc)
        .file("src/shim/shim.c")
        .warnings(true)
        .extra_warnings(true)
        .flag_if_supported("-Werror")
        .compile("mpix_marshal_shim");
}
