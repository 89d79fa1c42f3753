//! Compiles the checker's C shim (`src/shim.c`: the MPI constants that are
//! macros in mpi.h, and dladdr) with the MPI compiler wrapper, `$MPICC` or
//! `mpicc`, as the library's own build does.

use std::env;

fn main() {
    println!("cargo:rerun-if-changed=src/shim.c");
    println!("cargo:rerun-if-env-changed=MPICC");
    let mpicc = env::var("MPICC").unwrap_or_else(|_| "mpicc".to_string());
    cc::Build::new()
        .compiler(&mpicc)
        .file("src/shim.c")
        .warnings(true)
        .extra_warnings(true)
        .flag_if_supported("-Werror")
        .compile("mpix_check_shim");
    println!("cargo:rustc-link-lib=dl");
}
