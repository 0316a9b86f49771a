//! Tuning constants of the GPU DWT (sizes of teams, tiles, chunks).

use std::sync::atomic::{AtomicUsize, Ordering};

/// Level-1 work items (VEC outputs each) per thread when sizing a trace's team.
pub(super) const ITEMS_PER_THREAD: usize = 4;
/// Traces per block when a trace's team is one warp.
pub(super) const WARP_TEAMS_PER_BLOCK: usize = 4;
/// Levels per pass of the long-signal path.
pub(super) const TILE_LEVELS: u32 = 5;
/// Samples of input window per forward tile and of output per inverse tile (f32; half for f64).
pub(super) const TILE_SAMPLES_F32: usize = 8192;
/// Threads of the tile kernels (their `__launch_bounds__`).
pub(super) const TILE_THREADS: u32 = 256;
/// Elements per block of the median's histogram passes over device memory.
pub(super) const SELECT_CHUNK: usize = 16384;
/// Digit width and histogram bins of those passes (`SELECT_BINS` in the kernel).
pub(super) const SELECT_DIGIT_BITS: i32 = 11;
pub(super) const SELECT_BINS: usize = 1 << SELECT_DIGIT_BITS;
/// Traces per launch group of the long path (grid.y and segment limits).
pub(super) const LONG_GROUP_TRACES: usize = 1024;

/// 0: the whole-trace limit follows from shared memory alone.
pub(super) static SINGLE_KERNEL_LIMIT: AtomicUsize = AtomicUsize::new(0);

/// Caps the trace length of the whole-trace kernels (None: shared memory decides), so that
/// tests can run the long-signal path on short traces. Process-wide; values below 256 are
/// raised to 256.
pub fn set_single_kernel_limit(samples: Option<usize>) {
    SINGLE_KERNEL_LIMIT.store(samples.map_or(0, |s| s.max(256)), Ordering::Relaxed);
}

/// 0: a host batch goes to the device whole when it fits.
pub(super) static HOST_CHUNK_LIMIT: AtomicUsize = AtomicUsize::new(0);

/// Caps the traces per chunk of a host call (None: device memory decides), so that tests
/// can run the chunked path, and its up-front check of the samples, on small batches.
/// Process-wide; 0 is raised to 1.
pub fn set_host_chunk_limit(traces: Option<usize>) {
    HOST_CHUNK_LIMIT.store(traces.map_or(0, |t| t.max(1)), Ordering::Relaxed);
}
