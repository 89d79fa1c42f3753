//! Compiles the checker's C shim (`src/shim.c`: the MPI constants that are
//! macros in mpi.h, and dladdr) with the MPI compiler wrapper, `$MPICC` or
//! `mpicc`, as the library's own build does, and asks the MPI whether it
//! has the MPI-4 persistent collectives (`MPI_Bcast_init`, …): Open MPI 4.1
//! has them only as `MPIX_`, so their wrappers are built where the MPI
//! declares them (`cfg(mpi_persistent_collectives)`), and likewise the
//! large-count `_c` forms (`cfg(mpi_large_count)`).

use std::env;
use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=src/shim.c");
    println!("cargo:rerun-if-env-changed=MPICC");
    println!("cargo::rustc-check-cfg=cfg(mpi_persistent_collectives)");
    println!("cargo::rustc-check-cfg=cfg(mpi_large_count)");
    let mpicc = env::var("MPICC").unwrap_or_else(|_| "mpicc".to_string());
    cc::Build::new()
        .compiler(&mpicc)
        .file("src/shim.c")
        .warnings(true)
        .extra_warnings(true)
        .flag_if_supported("-Werror")
        .compile("mpix_check_shim");
    println!("cargo:rustc-link-lib=dl");
    if declares(&mpicc, "persistent", PERSISTENT) {
        println!("cargo:rustc-cfg=mpi_persistent_collectives");
    }
    if declares(&mpicc, "large_count", LARGE_COUNT) {
        println!("cargo:rustc-cfg=mpi_large_count");
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

/// Uses of the persistent collectives (MPI 4).
const PERSISTENT: &str = "MPI_Request r; \
    return PMPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &r) \
    + PMPI_Neighbor_alltoallw_init(0, 0, 0, 0, 0, 0, 0, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r);";

/// Uses of the large-count collectives (MPI 4), persistent ones included
/// where those exist.
const LARGE_COUNT: &str = "MPI_Count c = 1; \
    return PMPI_Bcast_c(0, c, MPI_INT, 0, MPI_COMM_WORLD) \
    + PMPI_Neighbor_alltoallw_c(0, 0, 0, 0, 0, 0, 0, 0, MPI_COMM_WORLD);";

/// Whether mpi.h declares what `body` uses: a compile of it, where a
/// missing declaration is an error.
fn declares(mpicc: &str, name: &str, body: &str) -> bool {
    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let src = out.join(format!("probe_{name}.c"));
    let probe = format!("#include <mpi.h>\nint probe(void) {{ {body} }}\n");
    if std::fs::write(&src, probe).is_err() {
        return false;
    }
    Command::new(mpicc)
        .args(["-Werror=implicit-function-declaration", "-c", "-o"])
        .arg(out.join(format!("probe_{name}.o")))
        .arg(&src)
        .output()
        .is_ok_and(|o| o.status.success())
}
