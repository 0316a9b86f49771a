//! The windows on the device (`kernels/wavepacket_windows.cu`): the host evaluator
//! (`windows::WindowEvaluator`) flattened into tables, and one thread per window value
//! evaluating ŵ_b = cell · s_b · g_b / √S in double precision where it is stored. The
//! normaliser S dominates a plan's creation on the CPU threads (each value meets a few dozen
//! boxes over its periodic images); on the device it takes a fraction of the USFFT plans.

use crate::backend::cpu::CpuBackend;
use crate::backend::cuda::buffers::{alloc, download, upload};
use crate::backend::cuda::launch::{for_elems_in_blocks_of, Launch, MAX_GRID_Y};
use crate::backend::cuda::memory::DeviceBuf;
use crate::backend::cuda::{kernels, CudaBackend};
use crate::error::{Error, Result};
use crate::sample::Real;
use crate::wavepacket::cells::{K, SHELLS};
use crate::wavepacket::layout::Layout;
use crate::wavepacket::sparse::packet_norm;
use crate::wavepacket::windows::{WindowEvaluator, MAX_LEVELS};
use cudarc::driver::CudaStream;
use std::sync::Arc;

/// Doubles of `params` (the P_* indices of the kernel file).
const PARAMS: usize = 6 + 4 * MAX_LEVELS;
/// Doubles per lattice, doubles and long longs per box (LAT_FIELDS, BOX_REALS, BOX_INTS).
const LAT_FIELDS: usize = 16;
const BOX_REALS: usize = 10;
const BOX_INTS: usize = 10;
/// Threads per block of the squares' sums (a power of two ≤ 1024, the kernel's shared array).
const SQUARE_THREADS: u32 = 256;
/// Threads per block of the windows, and blocks per box at most (each strides over its box).
const WINDOW_THREADS: u32 = 128;
const MAX_BLOCKS_PER_BOX: u32 = 4096;

/// The evaluator's tables as the kernel reads them.
struct WindowTables {
    params: Vec<f64>,
    lat: Vec<f64>,
    lat_first: Vec<i32>,
    lat_boxes: Vec<i32>,
    box_real: Vec<f64>,
    box_int: Vec<i64>,
    cell_first: Vec<i64>,
    cell_lattices: Vec<u32>,
}

/// The bytes of the tables `device_windows` uploads for `layout` (the evaluator's cells
/// built on the `cpu` threads, as there), held while the windows are made, and of the
/// packet norms' sums (8 a box).
pub fn table_bytes(layout: &Layout, cpu: &CpuBackend) -> usize {
    let ev = cpu.install(|| WindowEvaluator::new(layout));
    let t = WindowTables::new(&ev);
    8 * (t.params.len() + t.lat.len() + t.box_real.len() + t.box_int.len() + t.cell_first.len())
        + 4 * (t.lat_first.len() + t.lat_boxes.len() + t.cell_lattices.len())
        + 8 * layout.boxes.len()
}

impl WindowTables {
    fn new(ev: &WindowEvaluator) -> WindowTables {
        let layout = ev.layout;
        let r = &ev.radial;
        let mut params = vec![
            layout.angular_std,
            ev.reach,
            r.sigma0,
            r.alpha,
            r.taper_std,
            ev.cells.width,
        ];
        params.extend((0..MAX_LEVELS).map(|k| {
            if (1..=layout.levels).contains(&k) {
                r.centre(k)
            } else {
                1.0
            }
        }));
        params.extend(ev.ln_centre);
        params.extend(ev.level_reach.iter().flatten());
        debug_assert_eq!(params.len(), PARAMS);
        let mut lat = Vec::with_capacity(layout.lattices.len() * LAT_FIELDS);
        let (mut lat_first, mut lat_boxes) = (vec![0i32], Vec::new());
        for (l, (lattice, gate)) in layout.lattices.iter().zip(&ev.gates).enumerate() {
            lat.extend(lattice.axes.iter().flatten());
            lat.extend(lattice.period);
            lat.extend([gate.cone, gate.lo, gate.hi, ev.cell_factor(l)]);
            lat_boxes.extend(ev.lattice_boxes[l].iter().map(|&b| b as i32));
            lat_first.push(lat_boxes.len() as i32);
        }
        let mut box_real = Vec::with_capacity(layout.boxes.len() * BOX_REALS);
        let mut box_int = Vec::with_capacity(layout.boxes.len() * BOX_INTS);
        for (bx, bounds) in layout.boxes.iter().zip(&ev.bounds) {
            box_real.extend(bounds.iter().flatten());
            box_real.push(bx.scale);
            box_real.extend(bx.direction.map_or([0.0; 3], |d| layout.directions[d]));
            box_int.extend([bx.offset as i64]);
            box_int.extend(bx.lo);
            box_int.extend(bx.shape.map(|n| n as i64));
            box_int.extend([bx.lattice, bx.level].map(|v| v as i64));
            box_int.push(bx.direction.map_or(-1, |d| d as i64));
        }
        WindowTables {
            params,
            lat,
            lat_first,
            lat_boxes,
            box_real,
            box_int,
            cell_first: ev.cells.offsets.iter().map(|&o| o as i64).collect(),
            cell_lattices: ev.cells.lattices.clone(),
        }
    }
}

/// The stored windows of every box of `layout` (box after box, as the coefficients) on the
/// device, and each box's packet norm ‖ψ_b‖ (`sparse::packet_norms`), on stream `s`; the call
/// waits for them. The evaluator's cell lists are built on the `cpu` threads; the device
/// buffers are made on the calling thread (whose scope counts them towards the plan).
pub(super) fn device_windows<T: Real>(
    gpu: &CudaBackend,
    cpu: &CpuBackend,
    layout: &Layout,
    s: &Arc<CudaStream>,
) -> Result<(DeviceBuf<T>, Vec<f64>)> {
    let n_boxes = layout.boxes.len();
    // One row of blocks a box: the grid's y extent.
    if n_boxes > MAX_GRID_Y {
        return Err(Error::Internal(format!(
            "a wave-packet layout of {n_boxes} boxes: the windows' grid holds {MAX_GRID_Y}"
        )));
    }
    let ev = cpu.install(|| WindowEvaluator::new(layout));
    let host = WindowTables::new(&ev);
    let what = "uploading the wave-packet window tables";
    let module = gpu.modules.get(
        &gpu.ctx,
        &gpu.arch,
        &kernels::WAVEPACKET_WINDOWS,
        &super::prelude::<T>(),
    )?;
    let params = upload(s, &host.params, what)?;
    let lat = upload(s, &host.lat, what)?;
    let lat_first = upload(s, &host.lat_first, what)?;
    let lat_boxes = upload(s, &host.lat_boxes, what)?;
    let box_real = upload(s, &host.box_real, what)?;
    let box_int = upload(s, &host.box_int, what)?;
    let cell_first = upload(s, &host.cell_first, what)?;
    let cell_lattices = upload(s, &host.cell_lattices, what)?;
    let mut windows = alloc::<T>(
        s,
        layout.n_coefficients,
        "allocating the wave-packet windows",
    )?;
    let largest = layout
        .boxes
        .iter()
        .map(|b| b.n_coefficients())
        .max()
        .unwrap_or(1);
    let mut cfg = for_elems_in_blocks_of(largest, WINDOW_THREADS);
    cfg.grid_dim = (cfg.grid_dim.0.min(MAX_BLOCKS_PER_BOX), n_boxes as u32, 1);
    let mut l = Launch::new(&module, s, "wp_windows", cfg)?;
    l.input(&params)
        .input(&lat)
        .input(&lat_first)
        .input(&lat_boxes);
    l.input(&box_real).input(&box_int);
    l.input(&cell_first).input(&cell_lattices);
    l.scalar(layout.lattices.len() as i32)
        .scalar(layout.dim as i32)
        .scalar(layout.levels as i32)
        .output(&mut windows);
    // SAFETY: wp_windows(const double* params, const double* lat, const int* lat_first,
    // const int* lat_boxes, const double* box_real, const long long* box_int, const long
    // long* cell_first, const unsigned* cell_lattices, int n_lattices, int dim, int levels,
    // REAL* windows): the tables are `WindowTables` of this layout (PARAMS, LAT_FIELDS per
    // lattice with n_lattices + 1 box-list offsets, BOX_REALS and BOX_INTS per box, the
    // cells' 6·K²·SHELLS + 1 offsets into their lattice lists, every index in range by
    // construction); block row y = box b < n_boxes writes windows[first value of b + k] for
    // k < its n1·n2·n3 values, inside the layout's coefficients (the array's length).
    unsafe { l.run() }?;
    let mut sums = alloc::<f64>(s, n_boxes, "allocating the wave-packet packet norms")?;
    let cfg = for_elems_in_blocks_of(n_boxes * SQUARE_THREADS as usize, SQUARE_THREADS);
    let mut l = Launch::new(&module, s, "wp_window_squares", cfg)?;
    l.input(&windows).input(&box_int).output(&mut sums);
    // SAFETY: wp_window_squares(const REAL* windows, const long long* box_int, double* sums):
    // one block of SQUARE_THREADS (a power of two, the kernel's shared array holds 1024) per
    // box b < n_boxes reads its values of windows (as wp_windows writes them) and writes
    // sums[b] (n_boxes doubles).
    unsafe { l.run() }?;
    // The download waits for the stream: the host tables outlive every copy from them.
    let mut host_sums = vec![0.0; n_boxes];
    download(
        s,
        &sums,
        &mut host_sums,
        "downloading the wave-packet packet norms",
    )?;
    debug_assert_eq!(6 * K * K * SHELLS + 1, host.cell_first.len());
    drop(host);
    let norms = layout
        .boxes
        .iter()
        .zip(host_sums)
        .map(|(bx, e)| packet_norm(layout, bx, e))
        .collect();
    Ok((windows, norms))
}
