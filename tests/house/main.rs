//! Checks of the source tree, run where it is (CI), not on the GPU machine: the C header is
//! what cbindgen makes of src/ffi, the Fortran module matches it (and gfortran compiles it),
//! the module graph has no circles, and every kernel file compiles with NVRTC for every
//! prelude and architecture.
//!
//! `cargo test --release --test house` runs them all;
//! `SEISGPU_UPDATE_HEADER=1 cargo test --release --test house header` rewrites the header.

mod fortran_module;
mod header;
mod import_graph;
mod nvrtc_compile;
