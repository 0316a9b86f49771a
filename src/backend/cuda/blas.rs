//! cuBLAS, made one way: a handle bound to the caller's stream, ready before its first use,
//! and a strided-batched complex GEMM on typed arrays whose lengths are checked against
//! the product's extent, so the call is safe.

use super::array::{DeviceArray, DeviceArrayMut};
use super::buffers::alloc;
use super::memory::DeviceBuf;
use super::{bind, wait_for_library_setup};
use crate::error::{Error, Result};
use crate::sample::Sample;
use cudarc::cublas::sys::{
    cublasComputeType_t, cublasGemmAlgo_t, cublasHandle_t, cublasOperation_t, cublasStatus_t,
    cudaDataType,
};
use cudarc::cublas::{result, sys};
use cudarc::driver::CudaStream;
use num_complex::Complex;
use std::sync::Arc;

/// How a GEMM operand enters the product.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// as stored
    N,
    /// transposed
    T,
    /// conjugate-transposed
    C,
}

impl Op {
    fn cublas(self) -> cublasOperation_t {
        match self {
            Op::N => cublasOperation_t::CUBLAS_OP_N,
            Op::T => cublasOperation_t::CUBLAS_OP_T,
            Op::C => cublasOperation_t::CUBLAS_OP_C,
        }
    }
}

/// One column-major operand of a batch: leading dimension and elements between the
/// matrices of consecutive batch entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Strided {
    pub ld: usize,
    pub stride: usize,
}

/// `batch` products C_k = α·op(A_k)·op(B_k) + β·C_k, with op(A_k) m × k, op(B_k) k × n and
/// C_k m × n, every matrix column-major.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StridedGemm<T> {
    pub op_a: Op,
    pub op_b: Op,
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub a: Strided,
    pub b: Strided,
    pub c: Strided,
    pub batch: usize,
    pub alpha: Complex<T>,
    pub beta: Complex<T>,
}

/// Elements a batch of `rows × cols` column-major matrices spans (0 when empty).
fn span(rows: usize, cols: usize, s: Strided, batch: usize) -> Option<usize> {
    if rows == 0 || cols == 0 || batch == 0 {
        return Some(0);
    }
    let one = s.ld.checked_mul(cols - 1)?.checked_add(rows)?;
    s.stride.checked_mul(batch - 1)?.checked_add(one)
}

/// A `StridedGemm`'s sizes as cuBLAS takes them; leading dimensions and strides of A, B, C.
struct CublasSizes {
    m: i32,
    n: i32,
    k: i32,
    batch: i32,
    ld: [i32; 3],
    stride: [i64; 3],
}

impl<T> StridedGemm<T> {
    fn cublas_sizes(&self, what: &str) -> Result<CublasSizes> {
        let int = |v: usize| i32::try_from(v).ok();
        let long = |v: usize| i64::try_from(v).ok();
        let sizes = || {
            Some(CublasSizes {
                m: int(self.m)?,
                n: int(self.n)?,
                k: int(self.k)?,
                batch: int(self.batch)?,
                ld: [int(self.a.ld)?, int(self.b.ld)?, int(self.c.ld)?],
                stride: [
                    long(self.a.stride)?,
                    long(self.b.stride)?,
                    long(self.c.stride)?,
                ],
            })
        };
        sizes().ok_or_else(|| {
            Error::Unsupported(format!("{what}: sizes beyond cuBLAS's 32-bit dimensions"))
        })
    }

    /// Arrays of these lengths (A, B, C) span the product's extents.
    fn check_lengths(&self, lens: (usize, usize, usize), what: &str) -> Result<()> {
        match self.extents() {
            Some((a, b, c)) if lens.0 >= a && lens.1 >= b && lens.2 >= c => Ok(()),
            extents => Err(Error::Internal(format!(
                "{what}: arrays of {lens:?} elements for a product spanning {extents:?}"
            ))),
        }
    }

    /// Elements A, B and C span; None where a size overflows or a leading dimension is
    /// shorter than its matrix's columns (cuBLAS refuses those).
    fn extents(&self) -> Option<(usize, usize, usize)> {
        let stored = |op: Op, rows: usize, cols: usize| match op {
            Op::N => (rows, cols),
            Op::T | Op::C => (cols, rows),
        };
        let (ar, ac) = stored(self.op_a, self.m, self.k);
        let (br, bc) = stored(self.op_b, self.k, self.n);
        let lds_fit =
            self.a.ld >= ar.max(1) && self.b.ld >= br.max(1) && self.c.ld >= self.m.max(1);
        lds_fit.then_some(())?;
        Some((
            span(ar, ac, self.a, self.batch)?,
            span(br, bc, self.b, self.batch)?,
            span(self.m, self.n, self.c, self.batch)?,
        ))
    }
}

/// A cuBLAS handle whose work runs on one stream; destroyed on drop. Its workspace comes
/// from the context's allocator (`memory.rs`), so that the application's hooks own it and
/// it counts towards the plan that made the handle.
pub struct Blas {
    handle: cublasHandle_t,
    stream: Arc<CudaStream>,
    /// Freed after the handle (fields drop after `Drop::drop`), on the handle's stream.
    _workspace: Option<DeviceBuf<u64>>,
}

/// The workspace cuBLAS recommends, and sizes itself by default: 32 MiB from Hopper
/// (compute capability 9) on, 4 MiB before. The same size as cuBLAS's own keeps its choice
/// of algorithms, and so the results, unchanged.
fn workspace_bytes(stream: &CudaStream) -> usize {
    use cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR;
    let major = stream
        .context()
        .attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)
        .unwrap_or(0);
    if major >= 9 {
        32 << 20
    } else {
        4 << 20
    }
}

impl Blas {
    /// Whether the dynamic loader finds cuBLAS (`new` says so as an error).
    pub fn available() -> bool {
        // SAFETY: probing only dlopens.
        unsafe { sys::is_culib_present() }
    }

    /// A handle on `stream`; `needed_by` names what needs cuBLAS ("the GPU correlation")
    /// where the library is missing.
    pub fn new(stream: &Arc<CudaStream>, needed_by: &'static str) -> Result<Blas> {
        // SAFETY: probing only dlopens.
        if !unsafe { sys::is_culib_present() } {
            return Err(Error::CudaUnavailable(format!(
                "cuBLAS (libcublas) was not found by the dynamic loader; {needed_by} needs it: add its folder to LD_LIBRARY_PATH or use a CPU context"
            )));
        }
        bind(stream.context())?;
        let handle = result::create_handle().map_err(|e| match e.0 {
            // Its set-up allocates device memory: a full device is that, not a broken driver.
            cublasStatus_t::CUBLAS_STATUS_ALLOC_FAILED => Error::DeviceOutOfMemory(format!(
                "cuBLAS could not start for {needed_by}: out of device memory ({} bytes free)",
                super::memory::free_bytes()
            )),
            _ => Error::CudaDriver(format!("cuBLAS could not start: {e:?}")),
        })?;
        let mut blas = Blas {
            handle,
            stream: stream.clone(),
            _workspace: None,
        };
        wait_for_library_setup(stream.context())?;
        // SAFETY: a live handle, and a stream of this context that the value holds.
        unsafe { result::set_stream(handle, stream.cu_stream() as _) }
            .map_err(|e| Error::CudaDriver(format!("cuBLAS set_stream: {e:?}")))?;
        let bytes = workspace_bytes(stream);
        let workspace = alloc::<u64>(stream, bytes / 8, "allocating cuBLAS's workspace")?;
        // SAFETY: a live handle; `bytes` of device memory of this context, 256-aligned, that
        // the value holds until after the handle is destroyed (`_workspace`).
        unsafe { sys::cublasSetWorkspace_v2(handle, workspace.addr() as *mut _, bytes) }
            .result()
            .map_err(|e| Error::CudaDriver(format!("cuBLAS set_workspace: {e:?}")))?;
        blas._workspace = Some(workspace);
        Ok(blas)
    }

    /// Moves the handle's work to `stream` (a stream of the same context).
    pub fn use_stream(&mut self, stream: &Arc<CudaStream>) -> Result<()> {
        bind(stream.context())?;
        // SAFETY: a live handle, and a stream of its context that the value then holds.
        unsafe { result::set_stream(self.handle, stream.cu_stream() as _) }
            .map_err(|e| Error::CudaDriver(format!("cuBLAS set_stream: {e:?}")))?;
        self.stream = stream.clone();
        Ok(())
    }

    /// The stream the handle's work runs on.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// The products of `g` in `T`'s precision (complex FP32 or FP64, computed in it), on
    /// the handle's stream; `what` names the GEMM in errors ("the correlation GEMM").
    pub fn gemm_strided_batched<T: Sample>(
        &self,
        g: &StridedGemm<T>,
        a: &impl DeviceArray<Complex<T>>,
        b: &impl DeviceArray<Complex<T>>,
        c: &mut impl DeviceArrayMut<Complex<T>>,
        what: &'static str,
    ) -> Result<()> {
        let z = g.cublas_sizes(what)?;
        g.check_lengths((a.len(), b.len(), c.len()), what)?;
        let (data, compute) = if std::mem::size_of::<T>() == 8 {
            (
                cudaDataType::CUDA_C_64F,
                cublasComputeType_t::CUBLAS_COMPUTE_64F,
            )
        } else {
            (
                cudaDataType::CUDA_C_32F,
                cublasComputeType_t::CUBLAS_COMPUTE_32F,
            )
        };
        bind(self.stream.context())?;
        // SAFETY: A, B and C span the batch's extents (checked above) in T's precision, which
        // the data and compute types name; α and β are Complex<T>, laid out as cuBLAS's
        // complex scalars, alive for the call (cuBLAS reads them before it returns).
        unsafe {
            result::gemm_strided_batched_ex(
                self.handle,
                g.op_a.cublas(),
                g.op_b.cublas(),
                z.m,
                z.n,
                z.k,
                (&g.alpha as *const Complex<T>).cast(),
                a.addr() as *const std::ffi::c_void,
                data,
                z.ld[0],
                z.stride[0],
                b.addr() as *const std::ffi::c_void,
                data,
                z.ld[1],
                z.stride[1],
                (&g.beta as *const Complex<T>).cast(),
                c.addr() as *mut std::ffi::c_void,
                data,
                z.ld[2],
                z.stride[2],
                z.batch,
                compute,
                cublasGemmAlgo_t::CUBLAS_GEMM_DFALT,
            )
        }
        .map_err(|e| match e.0 {
            cublasStatus_t::CUBLAS_STATUS_ALLOC_FAILED => {
                Error::DeviceOutOfMemory(format!("out of device memory in {what}"))
            }
            _ => Error::CudaDriver(format!("cuBLAS complex GEMM failed: {e:?}")),
        })
    }
}

impl Drop for Blas {
    fn drop(&mut self) {
        // The handle may be dropped on another thread than the one that made it.
        let _ = bind(self.stream.context());
        // SAFETY: made by create_handle, destroyed once.
        let _ = unsafe { result::destroy_handle(self.handle) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gemm(op_a: Op, m: usize, n: usize, k: usize, ld: (usize, usize, usize)) -> StridedGemm<f32> {
        let one = Complex::new(1.0, 0.0);
        StridedGemm {
            op_a,
            op_b: Op::N,
            m,
            n,
            k,
            a: Strided {
                ld: ld.0,
                stride: 100,
            },
            b: Strided {
                ld: ld.1,
                stride: 100,
            },
            c: Strided {
                ld: ld.2,
                stride: m * n,
            },
            batch: 3,
            alpha: one,
            beta: one,
        }
    }

    #[test]
    fn extents_follow_the_operands_storage() {
        // op(A) = A^H, 4 × 5: A stored 5 × 4 with lda 7; B 5 × 6 with ldb 5; C 4 × 6.
        let g = gemm(Op::C, 4, 6, 5, (7, 5, 4));
        assert_eq!(
            g.extents(),
            Some((200 + 7 * 3 + 5, 200 + 5 * 5 + 5, 2 * 24 + 24))
        );
        // op(A) = A: stored 4 × 5, lda 4.
        let g = gemm(Op::N, 4, 6, 5, (4, 5, 4));
        assert_eq!(g.extents().map(|e| e.0), Some(200 + 4 * 4 + 4));
        // A leading dimension shorter than the stored rows is refused.
        assert_eq!(gemm(Op::C, 4, 6, 5, (4, 5, 4)).extents(), None);
        assert_eq!(
            gemm(Op::N, 4, 6, 0, (4, 1, 4)).extents().map(|e| e.0),
            Some(0)
        );
    }
}
