use seisgpu::backend::BackendRequest;
use seisgpu::context::Context;
use seisgpu::fxdecon::options::FxdeconOptions;
use seisgpu::fxdecon::FxdeconPlan;

fn read(path: &str) -> Vec<f32> {
    std::fs::read(path).unwrap().chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect()
}

#[test]
fn su_defaults() {
    let dir = "/work/shared/data/sufxdecon-reference";
    let input = read(&format!("{dir}/input.f32"));
    let ctx = Context::new(BackendRequest::Cpu, 0).unwrap();
    for (name, o) in [
        ("su_defaults", FxdeconOptions { fft_length: 3080, ..FxdeconOptions::seismic_unix() }),
        ("su_w20_f5", FxdeconOptions { fft_length: 280, time_window: 0.5, window_traces: 20, operator_traces: 5, fmin: 5.0, fmax: 60.0, ..FxdeconOptions::seismic_unix() }),
    ] {
        let reference = read(&format!("{dir}/{name}.f32"));
        let plan = FxdeconPlan::new_2d(ctx.clone(), &o, 1501, 601).unwrap();
        let mut out = vec![0f32; input.len()];
        let t = std::time::Instant::now();
        plan.execute(&input, &mut out, plan.layout_2d(1501).unwrap()).unwrap();
        let el = t.elapsed();
        let (mut d2, mut r2, mut nan) = (0f64, 0f64, 0);
        for (a, b) in out.iter().zip(&reference) {
            if !b.is_finite() { nan += 1; continue; }
            d2 += ((a - b) as f64).powi(2);
            r2 += (*b as f64).powi(2);
        }
        println!("{name}: rel rms {:.3e}, excluded {nan}, {el:?}, finite out {}", (d2 / r2).sqrt(), out.iter().all(|v| v.is_finite()));
    }
}
