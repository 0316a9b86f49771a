//! FINUFFT 2.5 on the CPU, side by side: the Python package (`scripts/install_test_deps.sh`
//! with SEISGPU_WITH_FINUFFT=1 puts it in a venv at .tools/finufft; FINUFFT_PYTHON names
//! another interpreter) runs `finufft_row.py` on the same points and inputs, written to a
//! temporary folder, with the same threads and tolerance; the bench checks its output with
//! the same direct sums as its own.

use num_complex::Complex;
use seisgpu::sample::Real;
use seisgpu::usfft::TransformType;
use std::path::PathBuf;
use std::process::Command;

pub struct Finufft {
    python: PathBuf,
    pub version: String,
}

/// The interpreter with `finufft` importable, or why there is none.
pub fn probe() -> Result<Finufft, String> {
    let python = std::env::var_os("FINUFFT_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".tools/finufft/bin/python")
        });
    let out = Command::new(&python)
        .args(["-c", "import finufft; print(finufft.__version__)"])
        .output()
        .map_err(|e| format!("{}: {e}", python.display()))?;
    if !out.status.success() {
        return Err(format!(
            "{}: {}",
            python.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(Finufft {
        python,
        version: String::from_utf8_lossy(&out.stdout).trim().to_string(),
    })
}

/// FINUFFT's timing of one case.
pub struct Timed<T> {
    pub set_ms: f64,
    pub exec_ms: f64,
    pub out: Vec<Complex<T>>,
}

fn raw<T: Real>(v: &[T]) -> Vec<u8> {
    v.iter()
        .flat_map(|x| match std::mem::size_of::<T>() {
            4 => (x.to_f32().unwrap()).to_le_bytes().to_vec(),
            _ => (x.to_f64().unwrap()).to_le_bytes().to_vec(),
        })
        .collect()
}

/// Runs type `kind` on `xs` (the first `dim` used) with N = n per dimension.
#[allow(clippy::too_many_arguments)]
pub fn run<T: Real>(
    fin: &Finufft,
    kind: TransformType,
    dim: usize,
    n: usize,
    tol: f64,
    threads: usize,
    reps: usize,
    xs: &[Vec<T>; 3],
    input: &[Complex<T>],
) -> Result<Timed<T>, String> {
    let dir = std::env::temp_dir().join(format!("seisgpu-bench-finufft-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let io = |e: std::io::Error| format!("{}: {e}", dir.display());
    for (d, x) in xs.iter().enumerate().take(dim) {
        std::fs::write(dir.join(format!("x{d}.bin")), raw(x)).map_err(io)?;
    }
    let flat: Vec<T> = input.iter().flat_map(|z| [z.re, z.im]).collect();
    std::fs::write(dir.join("in.bin"), raw(&flat)).map_err(io)?;
    let size = std::mem::size_of::<T>();
    let args = format!(
        r#"{{"dir": "{}", "type": {}, "dim": {dim}, "n": {n}, "m": {}, "prec": "{}", "tol": {tol:e}, "threads": {threads}, "reps": {reps}}}"#,
        dir.display(),
        if kind == TransformType::Type1 { 1 } else { 2 },
        xs[0].len(),
        if size == 4 { "f32" } else { "f64" },
    );
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("bench/usfft/finufft_row.py");
    let out = Command::new(&fin.python)
        .arg(&script)
        .arg(&args)
        .output()
        .map_err(|e| e.to_string())?;
    let result = (|| {
        if !out.status.success() {
            return Err(format!(
                "finufft_row.py failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        let stdout = String::from_utf8_lossy(&out.stdout);
        let field = |name: &str| -> Result<f64, String> {
            let at = stdout
                .find(&format!("\"{name}\": "))
                .ok_or(format!("no {name} in {stdout:?}"))?;
            let rest = &stdout[at + name.len() + 4..];
            let end = rest.find([',', '}']).unwrap_or(rest.len());
            rest[..end]
                .trim()
                .parse()
                .map_err(|_| format!("bad {name} in {stdout:?}"))
        };
        let bytes = std::fs::read(dir.join("out.bin")).map_err(io)?;
        let vals: Vec<T> = bytes
            .chunks_exact(size)
            .map(|b| match size {
                4 => T::from_f32(f32::from_le_bytes(b.try_into().unwrap())).unwrap(),
                _ => T::from_f64(f64::from_le_bytes(b.try_into().unwrap())).unwrap(),
            })
            .collect();
        Ok(Timed {
            set_ms: field("set_ms")?,
            exec_ms: field("exec_ms")?,
            out: vals
                .chunks_exact(2)
                .map(|z| Complex::new(z[0], z[1]))
                .collect(),
        })
    })();
    let _ = std::fs::remove_dir_all(&dir);
    result
}
