//! A small synthetic sensitivity matrix for a VIKIZ-like tool, for tests, the examples and
//! the benchmark. It is not an EM solver: it follows Doll's geometric-factor picture, in
//! which a probe's apparent conductivity is a weighted sum of the conductivities of the
//! cells around it, f = Σ_c g_c σ_c with Σ_c g_c = 1, so that A is exactly the matrix of
//! geometric factors and f₀ = A·σ₀.
//!
//! Five three-coil probes of lengths 0.5, 0.71, 1.0, 1.41 and 2.0 m (VIKIZ's geometric
//! series) are logged at evenly spaced depths. The formation is a stack of horizontal
//! layers between two shoulder beds; each layer has coaxial zones (borehole and invasion,
//! annulus, undisturbed formation...) bounded by radii. A probe of length L centred at
//! depth z weighs the depth interval [a, b] by (atan((b − z)/h) − atan((a − z)/h))/π and
//! the radial interval [r₁, r₂] by G(r₂) − G(r₁), G(r) = r²/(r² + h²), h = L/2: longer
//! probes see further into the formation and average over more depth, as real ones do.
//! Columns: the upper shoulder, each layer's zones from the borehole out, the lower
//! shoulder.

/// Lengths of the five probes, m.
pub const PROBE_LENGTHS: [f64; 5] = [0.5, 0.71, 1.0, 1.41, 2.0];

/// One layer: depth interval (m, increasing downwards) and its zones as (outer radius in m,
/// conductivity in S/m), innermost first; the last zone's radius is ignored (infinite).
#[derive(Clone, Debug)]
pub struct Layer {
    pub top: f64,
    pub bottom: f64,
    pub zones: Vec<(f64, f64)>,
}

/// A measured log and its sensitivity matrix.
#[derive(Clone, Debug)]
pub struct SyntheticLog {
    /// Measurements (5 probes × depths, probe-major: row = probe·depths + depth index).
    pub n: usize,
    /// Columns (2 + zones of all layers).
    pub m: usize,
    /// A, row-major n × m.
    pub a: Vec<f64>,
    /// The true conductivities (the columns' order).
    pub sigma: Vec<f64>,
    /// Noise-free apparent conductivities A·σ.
    pub f: Vec<f64>,
}

/// Builds the matrix for `layers` (contiguous, top to bottom) between shoulder beds of
/// conductivity `shoulders` (above, below), logged at `depths` points from `z0` to `z1`.
pub fn vikiz_like(
    layers: &[Layer],
    shoulders: (f64, f64),
    depths: usize,
    z0: f64,
    z1: f64,
) -> SyntheticLog {
    let mut sigma = vec![shoulders.0];
    for l in layers {
        sigma.extend(l.zones.iter().map(|z| z.1));
    }
    sigma.push(shoulders.1);
    let m = sigma.len();
    let n = PROBE_LENGTHS.len() * depths;
    let mut a = vec![0.0; n * m];
    let top = layers.first().map_or(0.0, |l| l.top);
    let bottom = layers.last().map_or(0.0, |l| l.bottom);
    for (pi, &len) in PROBE_LENGTHS.iter().enumerate() {
        let h = len / 2.0;
        let g = |r: f64| {
            if r.is_finite() {
                r * r / (r * r + h * h)
            } else {
                1.0
            }
        };
        for di in 0..depths {
            let z = if depths > 1 {
                z0 + (z1 - z0) * di as f64 / (depths - 1) as f64
            } else {
                z0
            };
            let vert = |a: f64, b: f64| {
                ((b - z) / h).atan() / std::f64::consts::PI
                    - ((a - z) / h).atan() / std::f64::consts::PI
            };
            let row = &mut a[(pi * depths + di) * m..(pi * depths + di + 1) * m];
            row[0] = vert(f64::NEG_INFINITY, top);
            let mut c = 1;
            for l in layers {
                let v = vert(l.top, l.bottom);
                let mut r_in = 0.0;
                for (k, &(r_out, _)) in l.zones.iter().enumerate() {
                    let r_out = if k + 1 == l.zones.len() {
                        f64::INFINITY
                    } else {
                        r_out
                    };
                    row[c] = v * (g(r_out) - g(r_in));
                    r_in = r_out;
                    c += 1;
                }
            }
            row[m - 1] = vert(bottom, f64::INFINITY);
        }
    }
    let f = (0..n)
        .map(|i| (0..m).map(|j| a[i * m + j] * sigma[j]).sum())
        .collect();
    SyntheticLog { n, m, a, sigma, f }
}

/// `f` with relative errors of at most `delta` (uniform, reproducible from `seed`).
pub fn with_noise(f: &[f64], delta: f64, seed: u64) -> Vec<f64> {
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    f.iter()
        .map(|&v| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let u = (state >> 11) as f64 / (1u64 << 53) as f64;
            v * (1.0 + delta * (2.0 * u - 1.0))
        })
        .collect()
}

/// The benchmark's and example's formation: `layers` layers of 1.2 m, each with an
/// invasion zone (r < 0.3 m), an annulus (0.3–0.5 m) and the undisturbed formation, so
/// that 3 zones × 1–3 layers give the seed's 3 to 9 parameters.
pub fn reservoir(layers: usize) -> Vec<Layer> {
    (0..layers)
        .map(|k| Layer {
            top: 1.2 * k as f64,
            bottom: 1.2 * (k + 1) as f64,
            zones: vec![
                (0.3, 0.2 + 0.05 * k as f64),
                (0.5, 0.5),
                (f64::INFINITY, 0.1 + 0.02 * k as f64),
            ],
        })
        .collect()
}
