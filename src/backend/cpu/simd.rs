//! Runs a CPU kernel compiled for the widest vector unit the processor has, behind one
//! checked dispatch, so that the kernels themselves stay safe code.
//!
//! A kernel is written once, generic over its register-block size; the CPU is asked once
//! per call whether it has AVX2 and FMA, and the kernel's body is then inlined into a
//! function compiled with those features (256-bit vectors), or run as built for the
//! baseline (128-bit SSE2 on x86-64). The compiler never fuses a multiply and an add on
//! its own, so both builds compute the same operations in the same order.

/// A kernel body for [`run`], told how wide the vector registers are.
pub trait Kernel {
    type Output;

    /// The body, for vector registers of `vector_bytes` bytes (16 or 32). Mark it
    /// `#[inline(always)]`: it takes the enabled features only when inlined into
    /// [`run`]'s feature-enabled function.
    fn run(self, vector_bytes: usize) -> Self::Output;
}

/// Runs `kernel` with AVX2 and FMA enabled where the CPU has them, else as built.
pub fn run<K: Kernel>(kernel: K) -> K::Output {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: the CPU supports AVX2 and FMA, the features `avx2_fma` is compiled with.
        return unsafe { avx2_fma(kernel) };
    }
    kernel.run(16)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn avx2_fma<K: Kernel>(kernel: K) -> K::Output {
    kernel.run(32)
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Width;

    impl Kernel for Width {
        type Output = usize;
        #[inline(always)]
        fn run(self, vector_bytes: usize) -> usize {
            vector_bytes
        }
    }

    #[test]
    fn the_width_follows_the_cpu() {
        #[cfg(target_arch = "x86_64")]
        let wide = std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("fma");
        #[cfg(not(target_arch = "x86_64"))]
        let wide = false;
        assert_eq!(run(Width), if wide { 32 } else { 16 });
    }
}
