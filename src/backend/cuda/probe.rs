//! Finds the CUDA libraries without ever letting cudarc panic on a missing one.
//!
//! cudarc looks libraries up by name (`libnvrtc.so`, `.so.13`, `.so.12`, … for the
//! bindings this crate selects), through the loader's usual search path: LD_LIBRARY_PATH,
//! the ldconfig cache, RUNPATH. Each library is probed with `is_culib_present()` first.

/// One CUDA library: whether it was found, and the file the loader mapped.
pub struct Library {
    pub name: &'static str,
    pub path: Option<String>,
}

impl Library {
    pub fn found(&self) -> bool {
        self.path.is_some()
    }
}

pub struct Libraries {
    pub driver: Library,
    pub nvrtc: Library,
    pub cufft: Library,
    pub cublas: Library,
}

/// Probes and loads each library that is present. Loading is process-wide and
/// idempotent, so probing again is cheap.
pub fn probe() -> Libraries {
    // SAFETY: is_culib_present only dlopens candidate names; culib() is called only
    // after it reported the library present, so it cannot panic.
    unsafe {
        Libraries {
            driver: load("libcuda", cudarc::driver::sys::is_culib_present(), || {
                cudarc::driver::sys::culib();
            }),
            nvrtc: load("libnvrtc", cudarc::nvrtc::sys::is_culib_present(), || {
                cudarc::nvrtc::sys::culib();
            }),
            cufft: load("libcufft", cudarc::cufft::sys::is_culib_present(), || {
                cudarc::cufft::sys::culib();
            }),
            cublas: load("libcublas", cudarc::cublas::sys::is_culib_present(), || {
                cudarc::cublas::sys::culib();
            }),
        }
    }
}

fn load(name: &'static str, present: bool, open: impl FnOnce()) -> Library {
    if !present {
        return Library { name, path: None };
    }
    open();
    let path = mapped_path(name).unwrap_or_else(|| format!("{name} (path not reported)"));
    Library {
        name,
        path: Some(path),
    }
}

/// The path of a loaded `NAME.so*` file, read from the process's memory map.
fn mapped_path(name: &str) -> Option<String> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    let wanted = format!("/{name}.so");
    maps.lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .find(|p| p.contains(&wanted))
        .map(str::to_string)
}

impl Libraries {
    /// Why the GPU cannot be used, if a required library is missing (driver, NVRTC, cuFFT).
    pub fn missing_required(&self) -> Option<String> {
        let missing: Vec<&str> = [&self.driver, &self.nvrtc, &self.cufft]
            .iter()
            .filter(|l| !l.found())
            .map(|l| l.name)
            .collect();
        if missing.is_empty() {
            return None;
        }
        let candidates = |l: &str| {
            let lib = l.trim_start_matches("lib");
            cudarc::get_lib_name_candidates(lib)
                .into_iter()
                .filter(|c| c.starts_with(&format!("{l}.so")))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let detail: Vec<String> = missing
            .iter()
            .map(|l| format!("{l} (tried {})", candidates(l)))
            .collect();
        Some(format!(
            "not found by the dynamic loader: {}; add the folders that hold them to LD_LIBRARY_PATH",
            detail.join("; ")
        ))
    }

    pub fn describe(&self) -> String {
        [&self.driver, &self.nvrtc, &self.cufft, &self.cublas]
            .iter()
            .map(|l| format!("{}: {}", l.name, l.path.as_deref().unwrap_or("not found")))
            .collect::<Vec<_>>()
            .join("\n")
    }
}
