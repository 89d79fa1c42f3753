//! Compiles the checker's C shim (`src/shim.c`: the MPI constants that are
//! macros in mpi.h, and dladdr) with the MPI compiler wrapper, `$MPICC` or
//! `mpicc`, as the library's own build does, and asks the MPI whether it
//! has the MPI-4 persistent collectives (`MPI_Bcast_init`, …): Open MPI 4.1
//! has them only as `MPIX_`, so their wrappers are built where the MPI
//! declares them (`cfg(mpi_persistent_collectives)`), and likewise the
//! large-count `_c` forms (`cfg(mpi_large_count)`).
//!
//! It also writes the interposed functions from the table of calls
//! (`calls.txt`, read by `build/calls.rs`): `wrappers.rs`, for the `abi`
//! build `pmpi.rs` (the `PMPI_` declarations our ABI bindings lack), and
//! `prototypes.c`, compiled against the MPI's own header so that a wrong
//! row is a build error.

#[path = "build/calls.rs"]
mod calls;

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
    find_mpi_like_the_wrapper();
    let persistent = declares(&mpicc, "persistent", PERSISTENT);
    if persistent {
        println!("cargo:rustc-cfg=mpi_persistent_collectives");
    }
    let large_count = declares(&mpicc, "large_count", LARGE_COUNT);
    if large_count {
        println!("cargo:rustc-cfg=mpi_large_count");
    }
    export_only_mpi_functions();
    generate(
        &mpicc,
        Available {
            persistent,
            large_count,
        },
    );
}

/// The preloaded library finds the MPI library where the MPI's compiler
/// wrapper has C programs find it (its `-Wl,-rpath`, passed on by the
/// library's build script as `DEP_MPIX_MARSHAL_RPATH`; none for an MPI
/// on the system's path): preloaded into `mpiexec` too, it must load
/// there, where nothing else names that directory. A run-time path
/// (RUNPATH): `LD_LIBRARY_PATH` still chooses another MPI.
fn find_mpi_like_the_wrapper() {
    let dirs = env::var("DEP_MPIX_MARSHAL_RPATH").unwrap_or_default();
    for dir in dirs.split(':').filter(|d| !d.is_empty()) {
        println!("cargo:rustc-cdylib-link-arg=-Wl,--enable-new-dtags,-rpath,{dir}");
    }
}

/// What the MPI has of MPI 4 (from the probes).
struct Available {
    persistent: bool,
    large_count: bool,
}

impl Available {
    fn has(&self, f: &calls::Form) -> bool {
        (!f.needs_mpi4 || self.large_count) && (!f.needs_persistent || self.persistent)
    }
}

/// The wrappers, the ABI's declarations and the prototype check, from the
/// table.
fn generate(mpicc: &str, available: Available) {
    println!("cargo:rerun-if-changed=calls.txt");
    println!("cargo:rerun-if-changed=build/calls.rs");
    let text = std::fs::read_to_string("calls.txt").expect("check/calls.txt is readable");
    let table = calls::parse(&text).unwrap_or_else(|e| panic!("{e}"));
    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let (mut wrappers, mut pmpi, mut protos) = (String::new(), String::new(), String::new());
    protos.push_str("#include <mpi.h>\n");
    for row in &table.rows {
        for form in row.expand().iter().filter(|f| available.has(f)) {
            pmpi.push_str(&declaration(form));
            protos.push_str(&prototype("PMPI_", form));
            if row.shape != "edge" {
                protos.push_str(&prototype("MPI_", form));
                wrappers.push_str(&wrapper(&table, row, form));
            }
        }
    }
    let write =
        |name: &str, s: &str| std::fs::write(out.join(name), s).expect("OUT_DIR is writable");
    write("wrappers.rs", &wrappers);
    write("pmpi.rs", &format!("extern \"C\" {{\n{pmpi}}}\n"));
    write("prototypes.c", &protos);
    check_prototypes(mpicc, &out);
}

/// A wrong parameter in the table is a conflict with the MPI's header.
fn check_prototypes(mpicc: &str, out: &std::path::Path) {
    let o = Command::new(mpicc)
        .args(["-c", "-o"])
        .arg(out.join("prototypes.o"))
        .arg(out.join("prototypes.c"))
        .output()
        .unwrap_or_else(|e| panic!("{mpicc}: {e}"));
    if !o.status.success() {
        panic!(
            "check/calls.txt disagrees with the MPI's mpi.h:\n{}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

fn c_params(form: &calls::Form) -> String {
    if form.params.is_empty() {
        return "void".into();
    }
    let p: Vec<String> = form
        .params
        .iter()
        .map(|p| format!("{} {}", p.c_type(), p.name))
        .collect();
    p.join(", ")
}

fn prototype(prefix: &str, form: &calls::Form) -> String {
    format!("int {prefix}{}({});\n", form.name, c_params(form))
}

fn rust_params(form: &calls::Form) -> String {
    let p: Vec<String> = form
        .params
        .iter()
        .map(|p| format!("{}: {}", p.name, p.rust_type()))
        .collect();
    p.join(", ")
}

fn declaration(form: &calls::Form) -> String {
    format!(
        "    pub fn PMPI_{}({}) -> c_int;\n",
        form.name,
        rust_params(form)
    )
}

/// The form's `PMPI_` call with the wrapper's own parameters (pointers
/// cast, as the bindings' constness may differ).
fn pmpi_call(form: &calls::Form) -> String {
    let args: Vec<String> = form
        .params
        .iter()
        .map(|p| match p.is_pointer() {
            true => format!("{} as _", p.name),
            false => p.name.clone(),
        })
        .collect();
    format!("PMPI_{}({})", form.name, args.join(", "))
}

fn wrapper(table: &calls::Table, row: &calls::Row, form: &calls::Form) -> String {
    let template = &table.shapes[&row.shape][&form.kind];
    let check = row.keys.get("check").cloned().unwrap_or_default();
    let check = if form.large {
        format!("large({check})")
    } else {
        check
    };
    let names: Vec<&str> = form.params.iter().map(|p| p.name.as_str()).collect();
    let body = template
        .replace("$icall", &pmpi_call(&row.i_form(form.large)))
        .replace("$call", &pmpi_call(form))
        .replace("$check", &check)
        .replace("$then", row.keys.get("then").map_or("rc", String::as_str))
        .replace(
            "$arguments",
            row.keys.get("arguments").map_or("", String::as_str),
        )
        .replace("$name", &format!("MPI_{}", form.name))
        .replace("$own", &row.name.to_lowercase())
        .replace("$args", &names.join(", "))
        .replace("$c", if form.large { "_c" } else { "" });
    format!(
        "// calls.txt:{}\n#[no_mangle]\npub unsafe extern \"C\" fn MPI_{}({}) -> c_int {{\n    \
         // SAFETY: the user's arguments, passed on unchanged.\n    {body}\n}}\n\n",
        row.line,
        form.name,
        rust_params(form)
    )
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
