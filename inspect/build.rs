//! The command finds the MPI library where the MPI's compiler wrapper has C
//! programs find it: the library's build script passes the wrapper's
//! `-Wl,-rpath` directories on (`DEP_MPIX_MARSHAL_RPATH`, empty for an MPI
//! on the system's path). Without it, a build for an MPI outside that path
//! (the MPI 5 wheels) would need `LD_LIBRARY_PATH` to start.

fn main() {
    let dirs = std::env::var("DEP_MPIX_MARSHAL_RPATH").unwrap_or_default();
    for dir in dirs.split(':').filter(|d| !d.is_empty()) {
        println!("cargo:rustc-link-arg=-Wl,--enable-new-dtags,-rpath,{dir}");
    }
}
