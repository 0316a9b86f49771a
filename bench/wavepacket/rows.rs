//! One row: plan creation, forward and adjoint timed (host arrays; on GPU rows also
//! device-resident), the energy ‖Cf‖²/‖f‖², the round trip through the inverse, and (GPU
//! rows) the device memory the plan holds.

use crate::config::{Case, Config};
use crate::harness::compare::rel_rms;
use crate::harness::timing::{guarded, measure, ms_since, Measured, Reps, Sample};
use cudarc::driver::CudaContext;
use num_complex::Complex;
use seisgpu::context::Context;
use seisgpu::wavepacket::coverage;
use seisgpu::wavepacket::inverse::CorrectionFilter;
use seisgpu::wavepacket::{LayoutOptions, PlanPhases, WavepacketPlan};
use std::sync::Arc;
use std::time::Instant;

/// What one (case, mode) row measured; None where not measured.
#[derive(Default)]
pub struct Row {
    pub n_coefficients: Option<usize>,
    pub redundancy: Option<f64>,
    pub plan_ms: Option<f64>,
    /// The plan's creation, phase by phase.
    pub plan_phases: Option<PlanPhases>,
    /// The first (untimed, warm-up) calls: the USFFT kernels compile on a CUDA context.
    pub first_forward_ms: Option<f64>,
    pub first_adjoint_ms: Option<f64>,
    pub forward: Option<Measured<()>>,
    pub adjoint: Option<Measured<()>>,
    /// GPU rows: device-resident forward and adjoint (data and coefficients on the device).
    pub forward_device: Option<Measured<()>>,
    pub adjoint_device: Option<Measured<()>>,
    /// ‖Cf‖² / ‖f‖².
    pub energy: Option<f64>,
    /// ‖C*Cf − f‖ / ‖f‖: the adjoint alone as an inverse.
    pub adjoint_err: Option<f64>,
    pub filter_ms: Option<f64>,
    pub inverse_ms: Option<f64>,
    /// ‖inverse(Cf) − f‖ / ‖f‖, the iterations and the final relative residual.
    pub round_trip: Option<(f64, usize, f64)>,
    /// The fraction of f's energy outside every box (what no inverse gives back).
    pub uncovered: Option<f64>,
    /// As `round_trip`, for f band-limited to the boxes' band.
    pub round_trip_in_band: Option<(f64, usize, f64)>,
    /// Device memory taken by plan creation and still taken after the row's calls, bytes
    /// (the device's free memory before minus after, as the driver reports it).
    pub gpu_plan_bytes: Option<f64>,
    pub gpu_after_bytes: Option<f64>,
    pub notes: Vec<String>,
    pub error: Option<String>,
}

fn lib(e: seisgpu::Error) -> String {
    e.to_string()
}

/// The device's free memory, bytes.
fn free_bytes(cu: Option<&Arc<CudaContext>>) -> Option<f64> {
    cu.and_then(|c| c.mem_get_info().ok())
        .map(|(free, _)| free as f64)
}

/// As many timed calls as `budget_s` allows after a first call of `first_ms`, 1 ≤ n ≤ reps.
fn reps_for(cfg: &Config, first_ms: f64) -> Reps {
    let n = (cfg.budget_s * 1e3 / first_ms.max(1e-3)) as usize;
    Reps::fixed(0, n.clamp(1, cfg.reps))
}

/// Runs the row; an error or a panic ends it, keeping what was measured before.
/// `cu`: the device's driver context (GPU rows), for its free memory.
pub fn run(
    ctx: &Arc<Context>,
    cu: Option<&Arc<CudaContext>>,
    case: Case,
    cfg: &Config,
    data: &[f32],
    past_deadline: &dyn Fn() -> bool,
) -> Row {
    let mut row = Row::default();
    if let Err(e) = guarded(|| measure_row(&mut row, ctx, cu, case, cfg, data, past_deadline)) {
        row.error = Some(e);
    }
    row
}

/// Device-resident forward and adjoint: each call queued on the plan's stream and waited for.
fn device_resident(
    row: &mut Row,
    plan: &WavepacketPlan<f32>,
    s: &Arc<cudarc::driver::CudaStream>,
    cfg: &Config,
    f: &[f32],
) -> Result<(), String> {
    let drv = |e: cudarc::driver::DriverError| format!("{e:?}");
    let data = s.clone_htod(f).map_err(drv)?;
    let m = plan.layout().n_coefficients;
    let mut c = s.alloc_zeros::<f32>(2 * m).map_err(drv)?;
    let mut back = s.alloc_zeros::<f32>(f.len()).map_err(drv)?;
    let t = Instant::now();
    plan.forward_device(&data, &mut c).map_err(lib)?;
    s.synchronize().map_err(drv)?;
    let reps = reps_for(cfg, ms_since(t));
    row.forward_device = Some(measure(reps, |_| {
        let t = Instant::now();
        plan.forward_device(&data, &mut c).map_err(lib)?;
        s.synchronize().map_err(drv)?;
        Ok((Sample::since(t), None::<()>))
    })?);
    row.adjoint_device = Some(measure(reps, |_| {
        let t = Instant::now();
        plan.adjoint_device(&c, &mut back).map_err(lib)?;
        s.synchronize().map_err(drv)?;
        Ok((Sample::since(t), None::<()>))
    })?);
    Ok(())
}

fn measure_row(
    row: &mut Row,
    ctx: &Arc<Context>,
    cu: Option<&Arc<CudaContext>>,
    case: Case,
    cfg: &Config,
    f: &[f32],
    past_deadline: &dyn Fn() -> bool,
) -> Result<(), String> {
    let opts = LayoutOptions {
        directions: cfg.directions,
        levels: case.levels,
        cutoff: cfg.cutoff,
        ..Default::default()
    };
    let free0 = free_bytes(cu);
    let t = Instant::now();
    let cap = if ctx.cuda().is_some() {
        cfg.max_device_bytes
    } else {
        0
    };
    let plan =
        WavepacketPlan::<f32>::with_cap(ctx.clone(), &case.shape(), &opts, cap).map_err(lib)?;
    if cap > 0 {
        let f = WavepacketPlan::<f32>::footprint(ctx, &case.shape(), &opts, cap).map_err(lib)?;
        row.notes.push(format!(
            "max_device_bytes {:.1} GB: lattice values in {} groups of directions, footprint {:.0} MB",
            cap as f64 / 1e9,
            f.groups,
            f.peak() as f64 / 1e6
        ));
    }
    row.plan_ms = Some(ms_since(t));
    row.plan_phases = Some(plan.creation_phases());
    let layout = plan.layout();
    row.n_coefficients = Some(layout.n_coefficients);
    row.redundancy = Some(layout.redundancy());
    row.gpu_plan_bytes = free0.zip(free_bytes(cu)).map(|(a, b)| a - b);
    let parts: Vec<String> = plan
        .device_parts()
        .iter()
        .map(|(part, b)| format!("{part} {:.0} MB", *b as f64 / 1e6))
        .collect();
    if !parts.is_empty() {
        row.notes.push(format!("plan memory: {}", parts.join(", ")));
    }

    let mut c = vec![Complex::new(0f32, 0.0); layout.n_coefficients];
    let t = Instant::now();
    plan.forward(f, &mut c).map_err(lib)?;
    let first = ms_since(t);
    row.first_forward_ms = Some(first);
    let norm2 = |v: &[f32]| v.iter().map(|&x| (x as f64).powi(2)).sum::<f64>();
    let c_energy: f64 = c.iter().map(|z| z.norm_sqr() as f64).sum();
    row.energy = Some(c_energy / norm2(f));
    row.forward = Some(measure(reps_for(cfg, first), |_| {
        let t = Instant::now();
        plan.forward(f, &mut c).map_err(lib)?;
        Ok((Sample::since(t), None::<()>))
    })?);

    let mut back = vec![0f32; f.len()];
    let t = Instant::now();
    plan.adjoint(&c, &mut back).map_err(lib)?;
    let first = ms_since(t);
    row.first_adjoint_ms = Some(first);
    row.adjoint_err = Some(rel_rms(&back, f));
    row.adjoint = Some(measure(reps_for(cfg, first), |_| {
        let t = Instant::now();
        plan.adjoint(&c, &mut back).map_err(lib)?;
        Ok((Sample::since(t), None::<()>))
    })?);
    row.gpu_after_bytes = free0.zip(free_bytes(cu)).map(|(a, b)| a - b);
    if let Some(gpu) = ctx.cuda() {
        let (now, most) = gpu.memory.usage();
        row.notes.push(format!(
            "library device memory: {:.0} MB now, {:.0} MB at most so far",
            now as f64 / 1e6,
            most as f64 / 1e6
        ));
    }
    if let Some(stage) = plan.device_stage() {
        device_resident(row, &plan, stage.stream(), cfg, f)?;
    }

    if case.n > cfg.inverse_max_n {
        row.notes.push(format!(
            "no round trip: N > --inverse-max-n {}",
            cfg.inverse_max_n
        ));
        return Ok(());
    }
    if past_deadline() {
        row.notes.push("no round trip: past --deadline".into());
        return Ok(());
    }
    let t = Instant::now();
    let filter = CorrectionFilter::new(&plan).map_err(lib)?;
    row.filter_ms = Some(ms_since(t));
    let t = Instant::now();
    let report = plan
        .inverse(&filter, &c, &mut back, cfg.tol, cfg.max_iter)
        .map_err(lib)?;
    row.inverse_ms = Some(ms_since(t));
    row.round_trip = Some((rel_rms(&back, f), report.iterations, report.residual));
    if report.residual > cfg.tol {
        row.notes.push(format!(
            "inverse stopped at {} iterations, residual {:.1e} > tol",
            report.iterations, report.residual
        ));
    }
    in_band_round_trip(row, &plan, &filter, cfg, f)
}

/// The part of f the layout covers (`coverage`): its share of f's energy, and its round trip.
fn in_band_round_trip(
    row: &mut Row,
    plan: &WavepacketPlan<f32>,
    filter: &CorrectionFilter<f32>,
    cfg: &Config,
    f: &[f32],
) -> Result<(), String> {
    let layout = plan.layout();
    let covered = coverage::covered(layout);
    row.uncovered = Some(coverage::uncovered_energy(layout, &covered, f));
    let g = coverage::band_limited(layout, &covered, f);
    let mut c = vec![Complex::new(0f32, 0.0); layout.n_coefficients];
    plan.forward(&g, &mut c).map_err(lib)?;
    let mut back = vec![0f32; g.len()];
    let report = plan
        .inverse(filter, &c, &mut back, cfg.tol, cfg.max_iter)
        .map_err(lib)?;
    row.round_trip_in_band = Some((rel_rms(&back, &g), report.iterations, report.residual));
    Ok(())
}
