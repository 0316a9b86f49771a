//! Library version.

use std::ffi::c_char;

/// Major version: changes when the ABI breaks.
pub const SG_VERSION_MAJOR: u32 = 0;
/// Minor version: new functions, same ABI.
pub const SG_VERSION_MINOR: u32 = 1;
/// Patch version.
pub const SG_VERSION_PATCH: u32 = 0;

const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), "\0");

/// The library version as a static string, e.g. "0.1.0". Never NULL; thread-safe.
#[no_mangle]
pub extern "C" fn sg_version() -> *const c_char {
    VERSION.as_ptr().cast()
}

/// The library version as MAJOR*10000 + MINOR*100 + PATCH, to compare with the
/// `SG_VERSION_*` macros of the header the caller was compiled against. Thread-safe.
#[no_mangle]
pub extern "C" fn sg_version_number() -> u32 {
    SG_VERSION_MAJOR * 10000 + SG_VERSION_MINOR * 100 + SG_VERSION_PATCH
}

#[cfg(test)]
mod tests {
    #[test]
    fn version_constants_match_the_crate_version() {
        let s = format!(
            "{}.{}.{}",
            super::SG_VERSION_MAJOR,
            super::SG_VERSION_MINOR,
            super::SG_VERSION_PATCH
        );
        assert_eq!(s, env!("CARGO_PKG_VERSION"));
    }
}
