//! Rows written into a device call's output array (the caller's, `stride` floats a row),
//! where the host calls copy them into host arrays.

use super::kit::{blocks, grid_dim, Kit};
use crate::backend::cuda::array::{DeviceArray, Part, PartMut};
use crate::error::{Error, Result};

/// Where rows go in an output array: row r at `dst[r]`.
pub(super) struct RowsAt<'a> {
    pub(super) dst: &'a [i64],
    pub(super) n_lags: usize,
    pub(super) stride: usize,
}

impl<'a> RowsAt<'a> {
    /// Row r (`n_lags` values) at output row `dst[r]`, rows `stride` values apart.
    pub(super) fn new(dst: &'a [i64], n_lags: usize, stride: usize) -> Self {
        RowsAt {
            dst,
            n_lags,
            stride,
        }
    }
}

/// Rows `src` (dst.len() rows of n_lags floats; None: zeros) into `out` at rows `at.dst`.
pub(super) fn put_rows(
    kit: &Kit,
    src: Option<&Part<f32>>,
    at: RowsAt,
    out: &mut PartMut<f32>,
) -> Result<()> {
    let (rows, m) = (at.dst.len(), at.n_lags);
    if rows == 0 {
        return Ok(());
    }
    let last = at.dst.iter().copied().max().unwrap_or(0);
    let fits = usize::try_from(last)
        .ok()
        .and_then(|d| d.checked_mul(at.stride))
        .and_then(|x| x.checked_add(m))
        .is_some_and(|end| end <= out.len());
    let src_fits = src.is_none_or(|s| s.len() >= rows * m);
    if !fits || !src_fits || at.dst.iter().any(|&d| d < 0) {
        return Err(Error::Internal(format!(
            "{rows} rows up to row {last} do not fit an output of {} floats",
            out.len()
        )));
    }
    let dst = kit.upload(at.dst, "uploading output rows")?;
    let grid = (grid_dim(rows, "rows")?, m.div_ceil(128) as u32);
    let mut l = kit.launch("xc_put_rows", blocks(grid, (128, 1)))?;
    l.optional(src)
        .input(&dst)
        .scalar(0i64)
        .scalar(m as i32)
        .scalar(at.stride as i64)
        .output(out);
    // SAFETY: xc_put_rows(const float* rows, const i64* dst, i64 first, int n_lags,
    // i64 stride, float* out): block r < rows (dst's length) reads dst[r] and, for
    // k < n_lags, rows[r·n_lags + k] (inside src's rows·n_lags, checked above; null:
    // zeros), and writes out[dst[r]·stride + k], inside out as every dst[r] was checked
    // above (0 ≤ dst[r], dst[r]·stride + n_lags ≤ out's length).
    unsafe { l.run() }
}
