// Linker settings for the shared object: a versioned SONAME and a version
// script that exports the C ABI (`sg_*`) and nothing else.
fn main() {
    let major = std::env::var("CARGO_PKG_VERSION_MAJOR").unwrap();
    let target_os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if target_os == "linux" {
        let script = std::path::Path::new(&std::env::var("CARGO_MANIFEST_DIR").unwrap())
            .join("src/ffi/exports.map");
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libseisgpu.so.{major}");
        println!(
            "cargo:rustc-cdylib-link-arg=-Wl,--version-script={}",
            script.display()
        );
        println!("cargo:rerun-if-changed=src/ffi/exports.map");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
