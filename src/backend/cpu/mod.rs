//! The CPU backend: a rayon pool per context; the capabilities' CPU halves run inside it.

pub mod simd;

use crate::error::{Error, Result};

pub struct CpuBackend {
    pool: rayon::ThreadPool,
}

impl CpuBackend {
    /// A pool of `SEISGPU_NUM_THREADS` threads, or one per core when it is unset or 0.
    pub fn new() -> Result<CpuBackend> {
        let threads = match std::env::var("SEISGPU_NUM_THREADS") {
            Err(_) => 0,
            Ok(v) => v.trim().parse::<usize>().map_err(|_| {
                crate::invalid!("SEISGPU_NUM_THREADS={v:?} is not a non-negative integer")
            })?,
        };
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("seisgpu-cpu-{i}"))
            .build()
            .map_err(|e| Error::OutOfMemory(format!("could not start the CPU thread pool: {e}")))?;
        Ok(CpuBackend { pool })
    }

    pub fn threads(&self) -> usize {
        self.pool.current_num_threads()
    }

    /// Runs `f` inside this context's pool, so that rayon calls in it use these threads.
    pub fn install<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        self.pool.install(f)
    }

    /// Copies `src` into `dst` (of equal length) on the pool: one core copies about
    /// 10 GB/s, well below what memory gives a large array.
    pub fn copy<T: Copy + Send + Sync>(&self, dst: &mut [T], src: &[T]) {
        const CHUNK: usize = 1 << 20;
        use rayon::prelude::*;
        self.install(|| {
            dst.par_chunks_mut(CHUNK)
                .zip(src.par_chunks(CHUNK))
                .for_each(|(d, s)| d.copy_from_slice(s));
        });
    }
}
