//! The checked-in C header is what cbindgen generates from the C API
//! (src/capi/mod.rs and the modules it declares, whose error kinds become
//! the MPIX_MARSHAL_ERR_* constants) and the callback types
//! (src/callbacks.rs). Fails when it is stale; `MPIX_UPDATE_HEADER=1`
//! rewrites it.

use std::path::Path;

#[test]
fn header_is_up_to_date() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(root.join("cbindgen.toml")).expect("cbindgen.toml");
    let mut generated = Vec::new();
    cbindgen::Builder::new()
        .with_config(config)
        .with_src(root.join("src/capi/mod.rs"))
        .with_src(root.join("src/callbacks.rs"))
        .generate()
        .expect("cbindgen")
        .write(&mut generated);
    let path = root.join("include/mpix_marshal.h");
    if std::env::var_os("MPIX_UPDATE_HEADER").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let checked_in = std::fs::read(&path).unwrap_or_default();
    assert!(
        checked_in == generated,
        "include/mpix_marshal.h is stale: run MPIX_UPDATE_HEADER=1 cargo test --test header"
    );
}

/// The header's MPIX_MARSHAL_VERSION_* macros, the library's
/// MPIX_Marshal_get_version and Cargo.toml's version are the same.
#[test]
fn version_macros_match_the_package_and_the_library() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let header = std::fs::read_to_string(root.join("include/mpix_marshal.h")).unwrap();
    let defined = |name: &str| -> i32 {
        let prefix = format!("#define {name} ");
        let line = header
            .lines()
            .find_map(|l| l.strip_prefix(prefix.as_str()))
            .unwrap_or_else(|| panic!("the header does not define {name}"));
        line.trim().parse().expect("a decimal version field")
    };
    let package = |field: &str| -> i32 { field.parse().unwrap() };
    let want = [
        package(env!("CARGO_PKG_VERSION_MAJOR")),
        package(env!("CARGO_PKG_VERSION_MINOR")),
        package(env!("CARGO_PKG_VERSION_PATCH")),
    ];
    let macros = [
        defined("MPIX_MARSHAL_VERSION_MAJOR"),
        defined("MPIX_MARSHAL_VERSION_MINOR"),
        defined("MPIX_MARSHAL_VERSION_PATCH"),
    ];
    assert_eq!(macros, want, "the header's version macros");

    use mpix_marshal::testing::capi::MPIX_Marshal_get_version;
    let (mut major, mut minor, mut patch) = (-1, -1, -1);
    // SAFETY: three writable ints.
    let rc = unsafe { MPIX_Marshal_get_version(&mut major, &mut minor, &mut patch) };
    assert_eq!(rc, 0, "MPIX_Marshal_get_version succeeds before MPI_Init");
    assert_eq!(
        [major, minor, patch],
        want,
        "the library's run-time version"
    );

    // A NULL output is an error, and the others are left as they were.
    let (mut major, mut patch) = (-1, -1);
    // SAFETY: NULL for minor (the case under test), writable ints otherwise.
    let rc = unsafe { MPIX_Marshal_get_version(&mut major, std::ptr::null_mut(), &mut patch) };
    assert_ne!(rc, 0, "a NULL minor is refused");
    assert_eq!([major, patch], [-1, -1], "nothing is written on error");
}
