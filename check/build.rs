//! Compiles the checker's C shim (`src/shim.c`: the MPI constants that are
//! macros in mpi.h, and dladdr) with the MPI compiler wrapper, `$MPICC` or
//! `mpicc`, as the library's own build does, and asks the MPI whether it
//! has the MPI-4 persistent collectives (`MPI_Bcast_init`, …): Open MPI 4.1
//! has them only as `MPIX_`, so their wrappers are built where the MPI
//! declares them (`cfg(mpi_persistent_collectives)`).

use std::env;
use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=src/shim.c");
    println!("cargo:rerun-if-env-changed=MPICC");
    println!("cargo::rustc-check-cfg=cfg(mpi_persistent_collectives)");
    let mpicc = env::var("MPICC").unwrap_or_else(|_| "mpicc".to_string());
    cc::Build::new()
        .compiler(&mpicc)
        .file("src/shim.c")
        .warnings(true)
        .extra_warnings(true)
        .flag_if_supported("-Werror")
        .compile("mpix_check_shim");
    println!("cargo:rustc-link-lib=dl");
    if has_persistent_collectives(&mpicc) {
        println!("cargo:rustc-cfg=mpi_persistent_collectives");
    }
    export_only_mpi_functions();
}

/// The preloaded library exports its `MPI_` wrappers and nothing else: not
/// the `MPIX_` functions of the marshalling library it is built on, nor
/// that library's `MPI_Type_free_keyval` (which would come between the
/// program and its own copy of the library). An exact name in a version
/// script wins over a pattern.
fn export_only_mpi_functions() {
    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let script = out.join("exports.map");
    std::fs::write(
        &script,
        "{\n  global: MPI_*;\n  local: MPI_Type_free_keyval; *;\n};\n",
    )
    .expect("OUT_DIR is writable");
    println!(
        "cargo:rustc-cdylib-link-arg=-Wl,--version-script={}",
        script.display()
    );
}

/// Whether mpi.h declares the persistent collectives (a compile of one
/// declaration's use; a missing declaration is an error under -Werror).
fn has_persistent_collectives(mpicc: &str) -> bool {
    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let src = out.join("probe_persistent.c");
    let probe = "#include <mpi.h>\nint probe(void) { MPI_Request r; \
                 return PMPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &r) \
                 + PMPI_Neighbor_alltoallw_init(0, 0, 0, 0, 0, 0, 0, 0, \
                 MPI_COMM_WORLD, MPI_INFO_NULL, &r); }\n";
    if std::fs::write(&src, probe).is_err() {
        return false;
    }
    Command::new(mpicc)
        .args(["-Werror=implicit-function-declaration", "-c", "-o"])
        .arg(out.join("probe_persistent.o"))
        .arg(&src)
        .output()
        .is_ok_and(|o| o.status.success())
}
