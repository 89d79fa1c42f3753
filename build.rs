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
    let show = match Command::new(&mpicc).arg("-show").output() {
        Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout).into_owned(),
        _ => panic!(
            "mpix-marshal needs an MPI compiler wrapper: '{mpicc}' was not found or failed. \
             Install MPICH (apt-get install mpich libmpich-dev) or set MPICC."
        ),
    };
    pass_on_rpath(&show);

    // The shared library's soname carries the major version
    // (libmpix_marshal.so.0), so that an installation can keep
    // libmpix_marshal.so.0 -> libmpix_marshal.so.0.x.y (scripts/install.sh).
    let major = env::var("CARGO_PKG_VERSION_MAJOR").unwrap_or_else(|_| "0".into());
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libmpix_marshal.so.{major}");
    soname_link(&major);

    // The abi build has no mpi-sys to link the MPI library: the wrapper's
    // own link flags (-L, -l, -Wl,-rpath) say what to link.
    if env::var_os("CARGO_FEATURE_ABI").is_some() {
        link_like_the_wrapper(&show);
    }

    cc::Build::new()
        .compiler(&mpicc)
        .file("src/shim/shim.c")
        .warnings(true)
        .extra_warnings(true)
        .flag_if_supported("-Werror")
        .compile("mpix_marshal_shim");
}

/// Programs linked against the build tree's library (scripts/c-tests.sh,
/// scripts/demo.sh) load it by its soname: a link of that name beside it in
/// the profile directory (OUT_DIR is PROFILE/build/PKG-HASH/out).
fn soname_link(major: &str) {
    let Some(out) = env::var_os("OUT_DIR") else {
        return;
    };
    let Some(profile) = std::path::Path::new(&out).ancestors().nth(3) else {
        return;
    };
    let link = profile.join(format!("libmpix_marshal.so.{major}"));
    if std::fs::symlink_metadata(&link).is_err() {
        if let Err(e) = std::os::unix::fs::symlink("libmpix_marshal.so", &link) {
            println!("cargo:warning=could not link {}: {e}", link.display());
        }
    }
}

/// Passes the MPI wrapper's link flags (`$MPICC -show`) on to rustc: its
/// library directories and libraries (for `mpicc_abi`, `-lmpi_abi`).
fn link_like_the_wrapper(show: &str) {
    for word in show.split_whitespace() {
        if let Some(dir) = word.strip_prefix("-L") {
            println!("cargo:rustc-link-search=native={dir}");
        } else if let Some(lib) = word.strip_prefix("-l") {
            println!("cargo:rustc-link-lib={lib}");
        }
    }
}

/// Rust programs find the MPI library where the wrapper has C programs
/// find it: the `-Wl,-rpath` directories of `$MPICC -show` (the MPI 5
/// wheels' wrappers name their own `lib/`; Debian's name none) go into
/// this package's tests and benchmarks, and, as the `rpath` metadata of
/// `links = "mpix_marshal"`, to the build scripts of the command and the
/// checker (`DEP_MPIX_MARSHAL_RPATH`). A run-time search path (RUNPATH),
/// as the wrappers make: `LD_LIBRARY_PATH` still chooses another MPI.
fn pass_on_rpath(show: &str) {
    let words: Vec<&str> = show.split_whitespace().collect();
    let mut dirs = vec![];
    for (i, w) in words.iter().enumerate() {
        if let Some(dir) = w.strip_prefix("-Wl,-rpath,") {
            dirs.push(dir.to_string());
        } else if *w == "-Wl,-rpath" {
            if let Some(dir) = words.get(i + 1).and_then(|n| n.strip_prefix("-Wl,")) {
                dirs.push(dir.to_string());
            }
        }
    }
    for dir in &dirs {
        for kind in ["tests", "benches"] {
            println!("cargo:rustc-link-arg-{kind}=-Wl,--enable-new-dtags,-rpath,{dir}");
        }
    }
    println!("cargo:rpath={}", dirs.join(":"));
}
