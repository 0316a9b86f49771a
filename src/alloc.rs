//! Sizes computed from caller arguments, checked before anything is allocated: a request
//! the machine cannot serve becomes `SG_ERR_OUT_OF_MEMORY` with the sizes in its message,
//! never an abort from a failed allocation in the caller's process.

use crate::error::{Error, Result};
use std::sync::OnceLock;

/// The host's physical memory in bytes (Linux `/proc/meminfo` MemTotal; without it, the
/// address space).
pub fn host_memory() -> usize {
    static TOTAL: OnceLock<usize> = OnceLock::new();
    *TOTAL.get_or_init(|| {
        std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|m| {
                let line = m.lines().find(|l| l.starts_with("MemTotal:"))?;
                let kib: usize = line.split_whitespace().nth(1)?.parse().ok()?;
                kib.checked_mul(1024)
            })
            .unwrap_or(isize::MAX as usize)
    })
}

/// The bytes of an array of `factors` (multiplied) elements of `element` bytes, or
/// `OutOfMemory` naming the sizes when that overflows size_t or exceeds the host's memory.
pub fn host_bytes(factors: &[usize], element: usize, what: &str) -> Result<usize> {
    let shape = factors
        .iter()
        .map(|f| f.to_string())
        .collect::<Vec<_>>()
        .join(" × ");
    let bytes = factors
        .iter()
        .try_fold(element, |a, &f| a.checked_mul(f))
        .filter(|&b| b <= isize::MAX as usize);
    match bytes {
        None => Err(Error::OutOfMemory(format!(
            "{what}: {shape} elements of {element} bytes overflow the address space"
        ))),
        Some(b) if b > host_memory() => Err(Error::OutOfMemory(format!(
            "{what}: {shape} elements of {element} bytes need {b} bytes; the host has {} bytes",
            host_memory()
        ))),
        Some(b) => Ok(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_beyond_the_host_or_size_t_are_refused_with_the_sizes() {
        assert_eq!(host_bytes(&[3, 5], 8, "x").unwrap(), 120);
        let e = host_bytes(&[1 << 40, 1 << 30], 8, "the grid").unwrap_err();
        assert_eq!(e.status(), crate::status::SG_ERR_OUT_OF_MEMORY);
        assert!(e.to_string().contains("1099511627776 × 1073741824"), "{e}");
        let big = host_memory() / 8 + 1;
        let e = host_bytes(&[big], 8, "the grid").unwrap_err().to_string();
        assert!(e.contains(&format!("need {} bytes", big * 8)), "{e}");
    }
}
