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
