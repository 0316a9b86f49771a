//! The coefficient operations that rank or scale by box, on device coefficients ordered on
//! the caller's stream: keep the s largest and the noise estimate's median (the thresholds
//! k·σ·‖ψ_b‖ per box are `shrink`, in `launches.rs`). A rank is found by a radix select in
//! kernels (`wp_select_*` in `kernels/wavepacket.cu`: eight bits a pass, its state in
//! device memory), so the host only queues launches whose number it knows from the sizes;
//! the estimate's one value is all that comes back.

use super::launches::grid_stride;
use super::BoxStage;
use crate::backend::cuda::array::{part_mut, DeviceArray, DeviceArrayMut};
use crate::backend::cuda::buffers::{download, fill_zero, upload};
use crate::backend::cuda::caller::ordered_on;
use crate::backend::cuda::launch::THREADS;
use crate::backend::cuda::memory::DeviceBuf;
use crate::backend::cuda::{bind, driver_error};
use crate::error::Result;
use crate::sample::Real;
use cudarc::driver::{CudaStream, LaunchConfig};

/// Words of a selection's state: the key's bits fixed so far and their masks, the rank
/// sought, 256 counts (`SEL_WORDS` in the kernel file; the key's v word is at 0).
pub(super) const SEL_WORDS: usize = 5 + 256;

/// Blocks of a counting pass: enough to fill the GPU, few enough that adding each block's
/// 256 counts into the state stays cheap.
const COUNT_BLOCKS: u32 = 1024;

/// The noise estimate's samples: a bit per coefficient (those the host estimate reads:
/// the finest level's, packet norm > 0, the packet inside the data) and how many.
pub(super) struct NoiseSamples {
    inside: DeviceBuf<u32>,
    count: usize,
}

/// One thread per element of `n` over at most `COUNT_BLOCKS` blocks.
fn counting(n: usize) -> LaunchConfig {
    let mut cfg = grid_stride(n);
    cfg.grid_dim.0 = cfg.grid_dim.0.min(COUNT_BLOCKS);
    cfg
}

/// Bits of a key's index word that hold every index below `n` (≥ 2): whole bytes.
fn index_bits(n: usize) -> i32 {
    let bits = usize::BITS - (n - 1).leading_zeros();
    8 * bits.div_ceil(8).max(1) as i32
}

impl<T: Real> BoxStage<T> {
    /// Keeps the `s` coefficients of largest |c|² of the caller's `coeffs` (2·m reals) and
    /// zeroes the others, ties kept in array order (as `coeffs::keep_largest`), queued after
    /// `caller`'s work; returns without waiting.
    pub fn keep_largest_ordered(
        &self,
        caller: &CudaStream,
        coeffs: &mut impl DeviceArrayMut<T>,
        s: usize,
    ) -> Result<()> {
        let m = self.layout.n_coefficients;
        self.check_device(self.layout.n_samples(), coeffs.len())?;
        if s >= m {
            return Ok(());
        }
        bind(self.stream.context())?;
        let mut bufs = self.lock();
        let st = &mut bufs.select;
        ordered_on(caller, &self.stream, || {
            if s == 0 {
                let all = &mut part_mut(coeffs, 0, 2 * m);
                return fill_zero(&self.stream, all, "zeroing wave-packet coefficients");
            }
            self.keep_largest(coeffs, s, st)
        })
    }

    /// The median of |c|/‖ψ_b‖ over the noise estimate's samples of the caller's `coeffs`,
    /// after `caller`'s work (None without samples). `samples` gives the samples' bits and
    /// count on a plan's first estimate (uploaded then, once). Waits for the value.
    pub fn noise_median_ordered(
        &self,
        caller: &CudaStream,
        coeffs: &impl DeviceArray<T>,
        samples: impl FnOnce() -> (Vec<u32>, usize),
    ) -> Result<Option<f64>> {
        self.check_device(self.layout.n_samples(), coeffs.len())?;
        bind(self.stream.context())?;
        let mut bufs = self.lock();
        let bufs = &mut *bufs;
        if bufs.noise.is_none() {
            bufs.noise = Some(self.upload_samples(samples())?);
        }
        let noise = bufs.noise.as_ref().unwrap();
        if noise.count == 0 {
            return Ok(None);
        }
        let st = &mut bufs.select;
        ordered_on(caller, &self.stream, || {
            self.noise_median(coeffs, noise, st)
        })?;
        let mut v = [0u64];
        download(
            &self.stream,
            st,
            &mut v,
            "reading the wave-packet noise estimate",
        )?;
        Ok(Some(f64::from_bits(v[0])))
    }

    fn upload_samples(&self, (bits, count): (Vec<u32>, usize)) -> Result<NoiseSamples> {
        let what = "uploading the wave-packet noise samples";
        let inside = upload(&self.stream, &bits, what)?;
        // `bits` is host memory the copy reads from.
        self.stream.synchronize().map_err(driver_error(what))?;
        Ok(NoiseSamples { inside, count })
    }

    /// Queues the selection of the (m − s)-th smallest key (|c|², m − 1 − i) and the zeroing
    /// of the coefficients below it (0 < s < m).
    fn keep_largest(
        &self,
        coeffs: &mut impl DeviceArrayMut<T>,
        s: usize,
        st: &mut DeviceBuf<u64>,
    ) -> Result<()> {
        let m = self.layout.n_coefficients;
        let vbits = 8 * std::mem::size_of::<T>() as i32;
        let ibits = index_bits(m);
        self.select_init(st, (m - s) as u64)?;
        for pass in 0..(vbits + ibits) / 8 {
            let mut l = self.launch("wp_keep_count", counting(m))?;
            l.input(coeffs).scalar(m as i64).output(st);
            l.scalar(pass).scalar(vbits).scalar(ibits);
            // SAFETY: wp_keep_count(const cpx* coeffs, long long n, u64* st, int pass, int
            // vbits, int ibits): element i < n reads coeffs[i] (coeffs holds 2n reals:
            // checked by the callers); the block's counts go into st (SEL_WORDS).
            unsafe { l.run() }?;
            self.select_choose(st, pass, vbits, ibits)?;
        }
        let mut l = self.launch("wp_keep_apply", grid_stride(m))?;
        l.output(coeffs).scalar(m as i64).input(st);
        // SAFETY: wp_keep_apply(cpx* coeffs, long long n, const u64* st): element i < n reads
        // and writes coeffs[i] (2n reals, checked by the callers); st holds SEL_WORDS.
        unsafe { l.run() }
    }

    /// Queues the selection of the median sample (rank count/2, as the host's) of
    /// |c|/‖ψ_b‖; its bits end in the state's first word.
    fn noise_median(
        &self,
        coeffs: &impl DeviceArray<T>,
        noise: &NoiseSamples,
        st: &mut DeviceBuf<u64>,
    ) -> Result<()> {
        let t = &self.tables;
        self.select_init(st, (noise.count / 2) as u64)?;
        for pass in 0..8 {
            let mut l = self.launch("wp_noise_count", counting(self.n_work))?;
            l.input(coeffs).input(&noise.inside);
            l.input(&t.boxes.table)
                .input(&t.boxes.work_start)
                .input(&t.norms);
            l.scalar(self.order.len() as i32).scalar(self.n_work as i64);
            l.output(st).scalar(pass);
            // SAFETY: wp_noise_count(const cpx* coeffs, const unsigned* inside, const long
            // long* table, const long long* work_start, const double* norms, int n_boxes,
            // long long total, u64* st, int pass): work element e < n_work finds its box j
            // < n_boxes (tables built with the layout, norms one per box), reads the bit of
            // its coefficient i < m (inside holds ⌈m/32⌉ words) and coeffs[i] (2m reals,
            // checked by the callers); the block's counts go into st (SEL_WORDS).
            unsafe { l.run() }?;
            self.select_choose(st, pass, 64, 0)?;
        }
        Ok(())
    }

    /// The state for the `rank`-th smallest key.
    fn select_init(&self, st: &mut DeviceBuf<u64>, rank: u64) -> Result<()> {
        let cfg = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut l = self.launch("wp_select_init", cfg)?;
        l.output(st).scalar(rank);
        // SAFETY: wp_select_init(u64* st, u64 rank): one block writes st[0..SEL_WORDS)
        // (st holds SEL_WORDS).
        unsafe { l.run() }
    }

    /// Fixes one pass's digit from the counts.
    fn select_choose(
        &self,
        st: &mut DeviceBuf<u64>,
        pass: i32,
        vbits: i32,
        ibits: i32,
    ) -> Result<()> {
        let cfg = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (1, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut l = self.launch("wp_select_choose", cfg)?;
        l.output(st).scalar(pass).scalar(vbits).scalar(ibits);
        // SAFETY: wp_select_choose(u64* st, int pass, int vbits, int ibits): one thread
        // reads and writes st[0..SEL_WORDS) (st holds SEL_WORDS); shifts stay within the
        // words (pass < vbits/8 + ibits/8).
        unsafe { l.run() }
    }
}

#[cfg(test)]
mod tests {
    use super::index_bits;

    #[test]
    fn index_bits_hold_every_index_in_whole_bytes() {
        assert_eq!(index_bits(2), 8);
        assert_eq!(index_bits(256), 8);
        assert_eq!(index_bits(257), 16);
        assert_eq!(index_bits(1 << 16), 16);
        assert_eq!(index_bits((1 << 16) + 1), 24);
    }
}
