//! include/seisgpu.h must be exactly what cbindgen makes of src/ffi today.
//! `SEISGPU_UPDATE_HEADER=1 cargo test --test house header` (or `make header`) rewrites it.

use std::path::Path;

#[test]
fn header_is_current() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(root.join("cbindgen.toml")).expect("cbindgen.toml");
    let mut generated = Vec::new();
    cbindgen::Builder::new()
        .with_crate(root)
        .with_config(config)
        .generate()
        .expect("cbindgen could not parse src/ffi")
        .write(&mut generated);
    let generated = String::from_utf8(generated).unwrap();
    let path = root.join("include/seisgpu.h");
    if std::env::var_os("SEISGPU_UPDATE_HEADER").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "include/seisgpu.h is stale: run `make header` and commit it"
    );
}
