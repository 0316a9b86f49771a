//! What a wave-packet plan holds on a GPU, from its layout alone, before anything is
//! allocated: the answer of `sg_wavepacket_device_bytes` and the check of
//! `LayoutOptions::max_device_bytes` when a plan is made. The parts are those the device
//! plan reports once made (`cuda::BoxStage::device_parts`), in the same order.
//!
//! Every size is the library's own arithmetic except cuFFT's work areas, which `FftAreas`
//! asks of cuFFT on a GPU (a plan made and dropped, nothing allocated) and bounds on the
//! CPU.

use super::cuda::window_table_bytes;
use super::lattice_groups::{fewest, split, LatticeGroup};
use super::layout::Layout;
use crate::backend::cpu::CpuBackend;
use crate::backend::cuda::fft::{self, Shape};
use crate::backend::cuda::{bind, CudaBackend};
use crate::error::{Error, Result};
use crate::sample::Real;
use crate::usfft::cuda::choose_tiling;
use crate::usfft::{TransformType, UsfftOptions, UsfftSpec};
use std::cell::RefCell;
use std::collections::HashMap;

/// Per box on the device: its table row (12 long longs), work start and packet norm (f64),
/// and its place in its lattice's box list (int).
const BOX_BYTES: usize = 12 * 8 + 8 + 8 + 4;
/// Per lattice: its USFFT table (12 reals, 6 integers, a first point) and its box list's
/// first entry, first point and two lengths.
const USFFT_LATTICE_BYTES: usize = (12 + 6 + 1) * 8;
const LIST_LATTICE_BYTES: usize = 4 + 8 + 2 * 8;
/// The selection state of the device coefficient operations (`cuda::select::SEL_WORDS`
/// words) and the input check's word.
const SELECT_BYTES: usize = (5 + 256) * 8 + 8;
/// Elements one box-FFT execute covers (`cuda::ffts::FFT_CHUNK`).
const FFT_CHUNK: usize = 1 << 24;
/// Shared memory assumed for the bins where no GPU says (the bins' table is a few bytes a
/// bin; the row tiling the wave packets use does not depend on it).
const SHARED_BYTES: usize = 48 * 1024;
/// Bins per tile of the bins' scan (`usfft::cuda::points::SCAN_TILE`).
const SCAN_TILE: usize = 4096;
/// Each sorted set's one-element arrays of the stored coordinates (first cell and offset per
/// axis) that points on lattices do not use.
const PLACEHOLDERS: usize = 3;

/// cuFFT's work area for `batch` complex transforms of `dims` (slowest first) in the
/// plan's precision, bytes.
pub type FftAreas<'a> = &'a dyn Fn(&[usize], usize) -> Result<usize>;

/// A device plan's memory, bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Footprint {
    /// What each part holds while the plan lives (as `device_parts` names them).
    pub parts: Vec<(&'static str, usize)>,
    /// Made by the first host-to-host call and kept: the data's device copy and the
    /// selections' bits.
    pub calls: usize,
    /// The point sort's working arrays, held only while the plan is made (beside the
    /// USFFT plan's part).
    pub sorting: usize,
    /// The windows' evaluator tables and the packet norms' sums, held only while the
    /// windows are made (beside the USFFT plan and the windows).
    pub windowing: usize,
    /// The groups of directions whose lattice values the plan holds one at a time.
    pub groups: usize,
}

impl Footprint {
    /// Bytes held after creation.
    pub fn held(&self) -> usize {
        self.parts.iter().map(|p| p.1).sum()
    }

    /// The most the plan holds at once: while its points are sorted, while its windows
    /// are made, or after its first host-to-host call.
    pub fn peak(&self) -> usize {
        let part = |i: usize| self.parts.get(i).map_or(0, |p| p.1);
        let (usfft, windows) = (part(0), part(1));
        (usfft + self.sorting)
            .max(usfft + windows + self.windowing)
            .max(self.held() + self.calls)
    }

    /// Refuses a plan whose peak exceeds `cap` bytes (0: no cap), naming the parts.
    pub fn check(&self, cap: usize) -> Result<()> {
        if cap == 0 || self.peak() <= cap {
            return Ok(());
        }
        let parts: Vec<String> = self
            .parts
            .iter()
            .map(|(p, b)| format!("{p} {}", mib(*b)))
            .collect();
        Err(Error::DeviceOutOfMemory(format!(
            "the wave-packet plan would hold {} of device memory at its peak with its lattice \
             values in {} group(s) of directions ({}; the first host call {}; while the plan \
             is made, sorting the points {} and the windows' tables {}), over \
             max_device_bytes = {cap} ({}); nothing was allocated",
            mib(self.peak()),
            self.groups,
            parts.join(", "),
            mib(self.calls),
            mib(self.sorting),
            mib(self.windowing),
            mib(cap),
        )))
    }
}

fn mib(bytes: usize) -> String {
    format!("{:.1} MiB", bytes as f64 / (1u64 << 20) as f64)
}

/// The fewest groups of directions (`lattice_groups::split`) whose plan fits `cap` bytes
/// (0: one group), with its footprint; or the refusal of the least footprint there is.
/// The windows' tables are built on the `cpu` threads to be measured.
pub fn within_cap<T: Real>(
    layout: &Layout,
    cap: usize,
    areas: FftAreas<'_>,
    cpu: &CpuBackend,
) -> Result<(Vec<LatticeGroup>, Footprint)> {
    let windowing = window_table_bytes(layout, cpu);
    // cuFFT's answers do not depend on the groups: asked once each.
    let known = RefCell::new(HashMap::new());
    let cached = |dims: &[usize], batch: usize| -> Result<usize> {
        let key = (dims.to_vec(), batch);
        if let Some(&bytes) = known.borrow().get(&key) {
            return Ok(bytes);
        }
        let bytes = areas(dims, batch)?;
        known.borrow_mut().insert(key, bytes);
        Ok(bytes)
    };
    let first = fewest(layout);
    let most = if cap == 0 {
        first
    } else {
        layout.lattices.len().max(first)
    };
    let mut least: Option<Footprint> = None;
    for count in first..=most {
        let groups = split(layout, count);
        let found = footprint::<T>(layout, &groups, &cached, windowing)?;
        if found.check(cap).is_ok() {
            return Ok((groups, found));
        }
        if least.as_ref().is_none_or(|l| found.peak() < l.peak()) {
            least = Some(found);
        }
    }
    let least = least.expect("one count at least");
    least.check(cap)?;
    Err(Error::Internal(
        "a footprint both over and under its cap".into(),
    ))
}

/// The device footprint of a plan of `layout` in precision T with its lattice values in
/// `groups`, cuFFT's work areas from `areas`, its windows' tables `windowing` bytes
/// (`cuda::window_table_bytes`).
pub fn footprint<T: Real>(
    layout: &Layout,
    groups: &[LatticeGroup],
    areas: FftAreas<'_>,
    windowing: usize,
) -> Result<Footprint> {
    let t = std::mem::size_of::<T>();
    let spec = usfft_spec::<T>(layout)?;
    let (points, coeffs, n) = (layout.n_points, layout.n_coefficients, layout.n_samples());
    let values = groups.iter().map(|g| g.points.len()).max().unwrap_or(0);
    let nft = spec.fine_count();
    let (tiling, _) = choose_tiling(&spec, points, t, SHARED_BYTES);
    let bins = tiling.n_bins();
    let fine: Vec<usize> = (0..layout.dim).rev().map(|d| spec.fine[d]).collect();
    let modes: usize = spec.modes.iter().sum();
    let usfft = 2 * nft * t
        + areas(&fine, 1)?
        + modes * (4 + t)
        + 4 * points
        + USFFT_LATTICE_BYTES * layout.lattices.len()
        + groups.len() * (4 * (bins + 1) + PLACEHOLDERS * (4 + t))
        + (4 + PLACEHOLDERS * (4 + t) + 4)
        + sort_tables(bins, t);
    let box_ffts = box_fft_areas(layout, areas)?;
    let per_box_factors: usize = layout
        .boxes
        .iter()
        .map(|b| b.shape.iter().sum::<usize>())
        .sum();
    let lattices = layout.lattices.len();
    let tables = BOX_BYTES * layout.boxes.len()
        + 2 * t * per_box_factors
        + LIST_LATTICE_BYTES * lattices
        + 4;
    Ok(Footprint {
        parts: vec![
            ("USFFT plan", usfft),
            ("windows", coeffs * t),
            ("box FFT plans", box_ffts),
            ("tables", tables),
            ("work arrays", 2 * t * (coeffs + values + n) + SELECT_BYTES),
        ],
        calls: n * t + coeffs.div_ceil(32) * 4,
        sorting: 8 * values,
        windowing,
        groups: groups.len(),
    })
}

/// The sort's tables kept after it: the bins' counts, the scan's tile sums, and its
/// per-point arrays (one element each after the sort).
fn sort_tables(bins: usize, t: usize) -> usize {
    let tiles = bins.div_ceil(SCAN_TILE);
    let scan = if tiles > 2 { 2 * tiles + 1 } else { 2 };
    4 * bins + 4 * scan + (4 + 4 + 4 * t + 8)
}

/// The type-2 USFFT a plan of `layout` makes (its fine grid and bins).
pub(super) fn usfft_spec<T: Real>(layout: &Layout) -> Result<UsfftSpec> {
    UsfftSpec::new::<T>(
        TransformType::Type2,
        layout.dim,
        layout.shape,
        -1,
        layout.tolerance,
        1,
        UsfftOptions::default(),
    )
}

/// The box FFTs' work areas: per shape, a plan of up to FFT_CHUNK elements a batch and one
/// for the rest (as `cuda::ffts::plan_groups` makes them).
fn box_fft_areas(layout: &Layout, areas: FftAreas<'_>) -> Result<usize> {
    let mut shapes: Vec<[usize; 3]> = layout.boxes.iter().map(|b| b.shape).collect();
    shapes.sort_unstable();
    let mut total = 0;
    for run in shapes.chunk_by(|a, b| a == b) {
        let (shape, count) = (run[0], run.len());
        let dims: Vec<usize> = shape.iter().rev().copied().filter(|&n| n > 1).collect();
        if dims.is_empty() {
            continue;
        }
        let size: usize = shape.iter().product();
        let batch = (FFT_CHUNK / size).clamp(1, count);
        total += areas(&dims, batch)?;
        if count % batch > 0 {
            total += areas(&dims, count % batch)?;
        }
    }
    Ok(total)
}

/// cuFFT's work areas as cuFFT gives them on `gpu` (plans made and dropped, nothing
/// allocated).
pub fn device_areas<T: Real>(
    gpu: &CudaBackend,
) -> Result<impl Fn(&[usize], usize) -> Result<usize> + '_> {
    bind(&gpu.ctx)?;
    Ok(|dims: &[usize], batch: usize| {
        let kind = fft::kind::<T>(Shape::C2C);
        fft::work_bytes(dims, kind, batch, "a wave-packet FFT's work area")
    })
}

/// cuFFT's work areas without cuFFT (a CPU context): none where every length is a product
/// of 2, 3, 5 and 7 (what cuFFT plans in place without one for these sizes), else one
/// array of the transform's size (the most it asks for).
pub fn host_areas<T: Real>(dims: &[usize], batch: usize) -> Result<usize> {
    let smooth = |mut n: usize| {
        for p in [2, 3, 5, 7] {
            while n > 1 && n % p == 0 {
                n /= p;
            }
        }
        n <= 1
    };
    Ok(match dims.iter().all(|&n| smooth(n)) {
        true => 0,
        false => 2 * std::mem::size_of::<T>() * batch * dims.iter().product::<usize>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 40 × 36 × 32 cube of 26 directions in 2 levels.
    fn cube() -> Layout {
        Layout::for_tests(&[40, 36, 32], 26, 2)
    }

    #[test]
    fn parts_follow_the_layout_and_the_cap_names_them() {
        let layout = cube();
        let one = split(&layout, 1);
        let f = footprint::<f32>(&layout, &one, &host_areas::<f32>, 1000).unwrap();
        let part = |name: &str| f.parts.iter().find(|p| p.0 == name).unwrap().1;
        let (p, c, n) = (layout.n_points, layout.n_coefficients, layout.n_samples());
        assert_eq!(part("windows"), 4 * c);
        assert_eq!(part("work arrays"), 8 * (c + p + n) + SELECT_BYTES);
        let spec = usfft_spec::<f32>(&layout).unwrap();
        // The fine grid, the permutation, and a few kilobytes of tables.
        let usfft = part("USFFT plan");
        let least = 8 * spec.fine_count() + 4 * p;
        assert!(
            usfft > least && usfft < least + (1 << 20),
            "{usfft} vs {least}"
        );
        assert_eq!(f.peak(), f.held() + f.calls);
        assert_eq!(f.sorting, 8 * p);
        let d = footprint::<f64>(&layout, &one, &host_areas::<f64>, 1000).unwrap();
        assert!(d.peak() > f.peak() && d.peak() < 2 * f.peak());
        assert!(f.check(0).is_ok() && f.check(f.peak()).is_ok());
        match f.check(f.peak() - 1) {
            Err(Error::DeviceOutOfMemory(m)) => {
                assert!(
                    m.contains("max_device_bytes") && m.contains("windows"),
                    "{m}"
                )
            }
            other => panic!("a cap one byte short: {other:?}"),
        }
    }

    #[test]
    fn a_cap_takes_the_fewest_groups_that_fit_it() {
        let layout = cube();
        let areas = &host_areas::<f32>;
        let cpu = CpuBackend::new().unwrap();
        let tables = window_table_bytes(&layout, &cpu);
        let (groups, one) = within_cap::<f32>(&layout, 0, areas, &cpu).unwrap();
        assert_eq!((groups.len(), one.groups), (1, 1));
        let three = footprint::<f32>(&layout, &split(&layout, 3), areas, tables).unwrap();
        assert!(three.peak() < one.peak());
        // Only the lattice values (and the sort's scratch) shrink with the groups.
        let part = |f: &Footprint, name: &str| f.parts.iter().find(|p| p.0 == name).unwrap().1;
        assert_eq!(part(&three, "windows"), part(&one, "windows"));
        assert!(part(&three, "work arrays") < part(&one, "work arrays"));
        let (groups, fit) = within_cap::<f32>(&layout, three.peak(), areas, &cpu).unwrap();
        assert!(
            groups.len() <= 3 && fit.peak() <= three.peak(),
            "{}",
            groups.len()
        );
        let least = (1..=layout.lattices.len())
            .map(|k| {
                footprint::<f32>(&layout, &split(&layout, k), areas, tables)
                    .unwrap()
                    .peak()
            })
            .min()
            .unwrap();
        let (_, at_least) = within_cap::<f32>(&layout, least, areas, &cpu).unwrap();
        assert_eq!(at_least.peak(), least);
        match within_cap::<f32>(&layout, least - 1, areas, &cpu) {
            Err(Error::DeviceOutOfMemory(m)) => {
                assert!(m.contains("group(s) of directions"), "{m}")
            }
            other => panic!("below the least footprint: {other:?}"),
        }
    }

    #[test]
    fn host_areas_only_for_lengths_of_other_primes() {
        assert_eq!(host_areas::<f32>(&[512, 512, 512], 1).unwrap(), 0);
        assert_eq!(host_areas::<f32>(&[14, 45], 3).unwrap(), 0);
        assert_eq!(host_areas::<f64>(&[11, 4], 2).unwrap(), 16 * 2 * 44);
    }
}
