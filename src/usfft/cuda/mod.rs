//! The USFFT on the GPU: kernels/usfft.cu (NVRTC, one module per dimension, kernel width,
//! kernel shape and precision) and cuFFT on the fine grid, one job per file:
//!
//! - `heuristics`: the bins points are sorted into, how type 1 spreads and type 2
//!   interpolates;
//! - `prelude`: the constants the kernels are compiled with;
//! - `plan`: a plan's device state (module, stream, mode tables, fine grids, cuFFT plan,
//!   sorted points);
//! - `points`: set-points: fold, bin and sort on the device (from coordinates, or from
//!   lattices whose points the kernels compute where they use them);
//! - `reuse`: set-points from another plan's sorted points (a type-1 plan beside a type-2);
//! - `spread` (type 1) and `interp` (type 2): one function per method;
//! - `execute`: one transform (or its adjoint, on the same state) from host or device
//!   arrays;
//! - `type3`: type 3 from a spreading stage, a type-2 stage and the phase factors.

mod execute;
mod heuristics;
mod interp;
mod plan;
mod points;
mod prelude;
mod reuse;
mod spread;
mod type3;

pub use execute::Way;
pub use heuristics::{choose_tiling, set_interp_tile_bytes, SpreadMethod};
pub use plan::{prepare, DevicePoints};
pub use points::{
    set_lattice_groups, set_lattice_points, set_points, set_points_device, DeviceCoords,
};
pub use prelude::{prelude, usfft_kernel_preludes};
pub use reuse::{same_sort, share_points};
pub use type3::{set_points3, DeviceType3};
