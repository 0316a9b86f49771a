// Checks of a device call's inputs, made on the device when a context asks for them
// (sg_context_set_device_checks). A non-finite sample among the rows read raises the
// context's flag to the call's code, unless an earlier call raised it; the host reads the
// flag when it synchronises.
//
// The rows: nx * ny runs of n samples, run (ix, iy) starting at element ix * sx + iy * sy.

template <typename T>
__device__ void scan_rows(const T *__restrict__ x, long long n, long long nx, long long sx,
                          long long ny, long long sy, unsigned *flag, unsigned code)
{
    long long total = n * nx * ny;
    for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < total;
         e += (long long)gridDim.x * blockDim.x) {
        long long i = e % n, row = e / n;
        T v = x[(row / nx) * sy + (row % nx) * sx + i];
        if (!isfinite(v)) {
            atomicCAS(flag, 0u, code);
            return;
        }
    }
}

extern "C" __global__ void check_finite_f32(const float *__restrict__ x, long long n, long long nx,
                                            long long sx, long long ny, long long sy,
                                            unsigned *flag, unsigned code)
{
    scan_rows<float>(x, n, nx, sx, ny, sy, flag, code);
}

extern "C" __global__ void check_finite_f64(const double *__restrict__ x, long long n,
                                            long long nx, long long sx, long long ny,
                                            long long sy, unsigned *flag, unsigned code)
{
    scan_rows<double>(x, n, nx, sx, ny, sy, flag, code);
}
