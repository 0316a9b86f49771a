//! `sg_wavepacket_layout`: Gaussian wave packets (Nikitin, Duchkov & Andersson 2017) in 2D
//! and 3D — a box layout of the Fourier domain, the forward transform C, its adjoint C*, the
//! inverse, and the operations on coefficients (compression by the largest coefficients or
//! the sparse approximation, thresholding at a value, per level or per box for white noise,
//! the noise estimate, POCS interpolation of missing traces).
//!
//! One file per job: `options` (the codes, option structs and their defaults), `layout`
//! (the object: create, sizes, boxes), `transform` (C, C*, the inverse), `threshold`
//! (compression and thresholding), `pocs`, `noise` (white noise: per-box thresholds, the
//! estimate, packet norms), `sparse`, `device` (C, C*, the inverse and the threshold on
//! device memory), `device_coeffs` (keep the largest, the noise threshold and estimate on
//! device memory) and `device_iterations` (POCS and the sparse approximation on device
//! memory); `calls` and `device_calls` hold the transform calls layouts share with tiled
//! volumes, on host and on device memory, `arrays` the checks of the calls' data and
//! coefficients, `rules` the threshold calls' arguments.

// cbindgen writes the header's functions file by file in the order of these declarations
// (each its own group, so that rustfmt keeps the order).
mod options;

mod layout;

mod transform;

mod threshold;

mod pocs;

mod noise;

mod sparse;

pub mod device;

pub mod device_coeffs;

pub mod device_iterations;

mod arrays;

pub(crate) mod calls;

pub(crate) mod device_calls;

mod rules;

pub use self::layout::*;
pub use self::noise::*;
pub use self::options::*;
pub use self::pocs::*;
pub use self::sparse::*;
pub use self::threshold::*;
pub use self::transform::*;
