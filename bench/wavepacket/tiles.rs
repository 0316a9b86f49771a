//! `--tiles K`: a volume of K × K tiles of the case's cube (N samples deep, K·N × K·N
//! traces, cut from the test cube of side K·N) through the tiled plan (the seed's §3.5), and
//! what the common grid costs: the tiled forward and adjoint against K² times one tile's
//! forward and adjoint on the same layout (the difference is the grid shifts and the
//! scatter/gather onto the common grid), and the coefficients on the common grid against K²
//! tiles kept apart. With several GPUs, a line with the tiles dealt out over all of them.

use crate::config::{Case, Config};
use crate::cube;
use crate::harness::timing::{guarded, measure, ms_since, Reps, Sample};
use num_complex::Complex;
use seisgpu::context::Context;
use seisgpu::wavepacket::tiles::TiledPlan;
use seisgpu::wavepacket::{LayoutOptions, WavepacketPlan};
use std::sync::Arc;
use std::time::Instant;

fn lib(e: seisgpu::Error) -> String {
    e.to_string()
}

/// The median of `reps` timed calls of `call`, ms.
fn median_ms(reps: usize, mut call: impl FnMut() -> Result<(), String>) -> Result<f64, String> {
    let m = measure(Reps::fixed(0, reps), |_| {
        let t = Instant::now();
        call()?;
        Ok((Sample::since(t), None::<()>))
    })?;
    Ok(m.median_ms)
}

/// One line of the tiles table (Markdown), or the error that ended it: the tiles dealt out
/// over `contexts`, one tile alone on the first.
pub fn line(contexts: &[Arc<Context>], mode: &str, case: Case, k: usize, cfg: &Config) -> String {
    match guarded(|| measure_line(contexts, mode, case, k, cfg)) {
        Ok(s) => s,
        Err(e) => format!(
            "| {mode} | {}³ in {k}×{k} | error: {e} | | | | | |\n",
            case.n
        ),
    }
}

fn measure_line(
    contexts: &[Arc<Context>],
    mode: &str,
    case: Case,
    k: usize,
    cfg: &Config,
) -> Result<String, String> {
    let n = case.n;
    let (side, deep) = (k * n, cfg.tiles_deep);
    let volume = cube::seismic_volume(deep * n, side);
    let opts = LayoutOptions {
        directions: cfg.directions,
        levels: case.levels,
        cutoff: cfg.cutoff,
        ..Default::default()
    };
    let t = Instant::now();
    let cap = cfg.max_device_bytes;
    let (shape, tile) = ([deep * n, side, side], [n; 3]);
    let tiled =
        TiledPlan::<f32>::on_contexts_capped(contexts, &shape, &tile, &opts, cap).map_err(lib)?;
    let plan_ms = ms_since(t);
    let one =
        WavepacketPlan::<f32>::with_cap(contexts[0].clone(), &tile, &opts, cap).map_err(lib)?;
    let zero = Complex::new(0f32, 0.0);
    let mut c = vec![zero; tiled.n_coefficients()];
    let mut back = vec![0f32; volume.len()];
    tiled.forward(&volume, &mut c).map_err(lib)?;
    let fwd = median_ms(cfg.reps, || tiled.forward(&volume, &mut c).map_err(lib))?;
    let adj = median_ms(cfg.reps, || tiled.adjoint(&c, &mut back).map_err(lib))?;
    let tile = &volume[..n * n * n];
    let mut c1 = vec![zero; one.layout().n_coefficients];
    let mut back1 = vec![0f32; tile.len()];
    one.forward(tile, &mut c1).map_err(lib)?;
    let fwd1 = median_ms(cfg.reps, || one.forward(tile, &mut c1).map_err(lib))?;
    let adj1 = median_ms(cfg.reps, || one.adjoint(&c1, &mut back1).map_err(lib))?;
    let tiles = (deep * k * k) as f64;
    let apart = tiles * one.layout().n_coefficients as f64;
    let in_tiles = match deep {
        1 => format!("{k}×{k}"),
        d => format!("{d}×{k}×{k}"),
    };
    Ok(format!(
        "| {mode} | {n}³ in {in_tiles} | {:.1} M ({:.2} of apart) | {:.1} s | {:.2} s ({:+.1} %) | \
         {:.2} s ({:+.1} %) | {:.2} / {:.2} s |\n",
        tiled.n_coefficients() as f64 / 1e6,
        tiled.n_coefficients() as f64 / apart,
        plan_ms / 1e3,
        fwd / 1e3,
        100.0 * (fwd / (tiles * fwd1) - 1.0),
        adj / 1e3,
        100.0 * (adj / (tiles * adj1) - 1.0),
        fwd1 / 1e3,
        adj1 / 1e3,
    ))
}

/// The table's head.
pub const HEAD: &str = "| mode | volume | coefficients (common grid) | plan | forward (vs K² tiles) | \
                        adjoint (vs K² tiles) | one tile fwd / adj |\n| --- | --- | ---: | ---: | ---: | ---: | ---: |\n";
