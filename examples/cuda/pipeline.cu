// pipeline.cu: seisgpu's device calls in a CUDA runtime program, on the program's own stream.
//
// A synthetic 64 × 64 × 64 volume (f32; time fastest, then inline, then crossline: three
// dipping plane events of Ricker wavelets, and noise) is copied to the GPU once. On one
// cudaStream_t that the program creates, with no host wait between them:
//   1. DWT denoise of its 4,096 traces (Daubechies 8, 4 levels, soft universal thresholds);
//   2. F-XY deconvolution of the denoised volume (the default 20 × 20 windows, 7 × 7
//      operators, 4 ms samples);
//   3. wave packets (86 directions, cutoff 0.2): forward, soft threshold, adjoint;
// then the three stages' outputs are copied back after the chain: the only time the host
// waits for the GPU.
// The same chain then runs on host arrays (same context, same GPU) and each stage is
// compared with the documented tolerances (docs/device.md, "Determinism"):
//   - the DWT bit for bit;
//   - F-XY to 1e-5 of the largest sample: overlapping windows' predictions are summed
//     with atomic additions, in the order the threads run;
//   - the wave-packet output to 1e-4 of the largest sample: the adjoint's type-1 USFFT
//     sums with atomics too, and it carries F-XY's rounding (soft thresholds pass it on
//     without growing it).
// Prints the largest differences; exit status 1 if a comparison or a call fails. Without a
// CUDA device it says so and exits 0 (1 with SEISGPU_REQUIRE_CUDA=1).
//
// Build: make examples-cuda (nvcc -std=c++17 -I include examples/cuda/pipeline.cu
// -L target/release -lseisgpu); the GPU check builds and runs it as the step
// example_pipeline_cuda of scripts/gpu_run.sh.

#include "seisgpu.hpp"

#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

constexpr std::size_t nt = 64, nx = 64, ny = 64, n = nt * nx * ny;

// Stops the program on a failed CUDA runtime call.
void cuda(cudaError_t status, const char *what) {
    if (status != cudaSuccess) {
        std::fprintf(stderr, "error: %s: %s\n", what, cudaGetErrorString(status));
        std::exit(1);
    }
}

// An array in device memory (cudaMalloc), freed when it goes out of scope.
template <class T> class device_array {
public:
    explicit device_array(std::size_t size) : size_(size) {
        cuda(cudaMalloc(reinterpret_cast<void **>(&data_), size * sizeof(T)), "cudaMalloc");
    }
    device_array(const device_array &) = delete;
    device_array &operator=(const device_array &) = delete;
    ~device_array() { cudaFree(data_); }
    seisgpu::device_view<T> dev() const { return {data_, size_}; }
    // Queues a copy of the array into `host` on `stream`.
    void copy_to(std::vector<T> &host, cudaStream_t stream) const {
        host.resize(size_);
        cuda(cudaMemcpyAsync(host.data(), data_, size_ * sizeof(T), cudaMemcpyDeviceToHost,
                             stream),
             "copy back");
    }

private:
    T *data_ = nullptr;
    std::size_t size_;
};

// The chain's plans and settings, shared by the device and the host runs.
struct chain {
    seisgpu::dwt_plan dwt;
    sg_dwt_denoise_options dwt_options;
    seisgpu::fxdecon_plan fx;
    seisgpu::wavepacket_layout wp;
    double threshold; // of the wave-packet coefficients' magnitudes, soft
};

// Each stage's output.
struct stages {
    std::vector<float> dwt, fx, wp;
};

double ricker(double t) {
    const double a = 3.14159265358979323846 * 0.12 * t;
    return (1.0 - 2.0 * a * a) * std::exp(-a * a);
}

// Three plane events t = t0 + p·x + q·y and uniform noise of amplitude 0.3.
std::vector<float> synthetic_volume() {
    const double t0[3] = {14, 30, 46}, p[3] = {0.0, 0.25, -0.15}, q[3] = {0.1, -0.1, 0.2};
    std::vector<float> v(n);
    unsigned long long state = 12345;
    for (std::size_t y = 0; y < ny; ++y) {
        for (std::size_t x = 0; x < nx; ++x) {
            for (std::size_t t = 0; t < nt; ++t) {
                double s = 0.0;
                for (int e = 0; e < 3; ++e) {
                    s += ricker(double(t) - t0[e] - p[e] * double(x) - q[e] * double(y));
                }
                state = state * 6364136223846793005ULL + 1442695040888963407ULL;
                const double noise = double(state >> 11) / 9007199254740992.0 - 0.5;
                v[(y * nx + x) * nt + t] = float(s + 0.6 * noise);
            }
        }
    }
    return v;
}

// The largest magnitude of interleaved complex values.
double largest_magnitude(const std::vector<float> &c) {
    double m = 0.0;
    for (std::size_t i = 0; i + 1 < c.size(); i += 2) {
        m = std::fmax(m, std::hypot(double(c[i]), double(c[i + 1])));
    }
    return m;
}

// The chain on device memory: one copy in, every call queued on `stream` (the stream
// overloads make it the context's stream), the outputs copied back after it; the host
// waits only there.
stages on_device(const chain &c, const std::vector<float> &volume, cudaStream_t stream) {
    device_array<float> in(n), dwt_out(n), fx_out(n), out(n);
    device_array<float> coeffs(2 * c.wp.n_coefficients());
    cuda(cudaMemcpyAsync(in.dev().data(), volume.data(), n * sizeof(float),
                         cudaMemcpyHostToDevice, stream),
         "copy in");
    c.dwt.denoise_device<float>(stream, c.dwt_options, in.dev(), dwt_out.dev(), nx * ny);
    c.fx.execute_3d_device(stream, dwt_out.dev(), fx_out.dev());
    c.wp.forward_device<float>(stream, fx_out.dev(), coeffs.dev());
    c.wp.threshold_device<float>(stream, coeffs.dev(), SG_WAVEPACKET_SOFT,
                                 SG_WAVEPACKET_THRESHOLD_VALUE, c.threshold);
    c.wp.adjoint_device<float>(stream, coeffs.dev(), out.dev());
    stages s;
    dwt_out.copy_to(s.dwt, stream);
    fx_out.copy_to(s.fx, stream);
    out.copy_to(s.wp, stream);
    cuda(cudaStreamSynchronize(stream), "waiting for the stream");
    return s;
}

// The same chain on host arrays.
stages on_host(const chain &c, const std::vector<float> &volume) {
    stages s{std::vector<float>(n), std::vector<float>(n), std::vector<float>(n)};
    std::vector<float> coeffs(2 * c.wp.n_coefficients());
    c.dwt.denoise<float>(c.dwt_options, volume, s.dwt, nx * ny);
    c.fx.execute_3d<float>(s.dwt, s.fx);
    c.wp.forward<float>(s.fx, coeffs);
    c.wp.threshold<float>(coeffs, SG_WAVEPACKET_SOFT, SG_WAVEPACKET_THRESHOLD_VALUE,
                          c.threshold);
    c.wp.adjoint<float>(coeffs, s.wp);
    return s;
}

// Prints the largest |device − host| over the largest |host| against `tolerance` (0: bit
// for bit); true when within it.
bool compare(const char *stage, const std::vector<float> &dev, const std::vector<float> &host,
             double tolerance) {
    double diff = 0.0, scale = 0.0;
    for (std::size_t i = 0; i < host.size(); ++i) {
        diff = std::fmax(diff, std::fabs(double(dev[i]) - double(host[i])));
        scale = std::fmax(scale, std::fabs(double(host[i])));
    }
    const double relative = scale > 0.0 ? diff / scale : diff;
    const bool same_bits =
        dev.size() == host.size() &&
        std::memcmp(dev.data(), host.data(), host.size() * sizeof(float)) == 0;
    const bool ok = tolerance == 0.0 ? same_bits : relative <= tolerance;
    char wanted[32];
    std::snprintf(wanted, sizeof wanted, tolerance == 0.0 ? "bit for bit" : "within %.0e",
                  tolerance);
    std::printf("  [%s] %-13s largest difference %.2e of the largest sample %.3f (%s%s)\n",
                ok ? "ok" : "FAIL", stage, relative, scale, same_bits ? "same bits; " : "",
                wanted);
    return ok;
}

// Without a CUDA device: says so and gives the exit status (1 with SEISGPU_REQUIRE_CUDA=1,
// else 0); -1 when there is one.
int without_device() {
    int count = 0;
    if (cudaGetDeviceCount(&count) == cudaSuccess && count > 0) {
        return -1;
    }
    const char *require = std::getenv("SEISGPU_REQUIRE_CUDA");
    const bool required = require != nullptr && std::strcmp(require, "1") == 0;
    std::printf("pipeline: no CUDA device: %s\n",
                required ? "FAIL (SEISGPU_REQUIRE_CUDA=1)" : "skipped");
    return required ? 1 : 0;
}

} // namespace

int main() {
    if (const int status = without_device(); status >= 0) {
        return status;
    }
    cuda(cudaSetDevice(0), "cudaSetDevice");
    cudaStream_t stream = nullptr;
    cuda(cudaStreamCreate(&stream), "cudaStreamCreate");
    bool ok = true;
    try {
        seisgpu::context ctx(SG_BACKEND_CUDA, 0);
        std::printf("pipeline: %zu × %zu × %zu f32 volume on %s\n", nt, nx, ny,
                    ctx.describe().c_str());
        sg_dwt_denoise_options dwt_options = sg_dwt_denoise_options_default();
        dwt_options.n_levels = 4;
        sg_wavepacket_layout_options wo = sg_wavepacket_layout_options_default();
        wo.directions = 86;
        wo.cutoff = 0.2; // smaller boxes: redundancy 22 rather than 297 at the default 1e-3
        chain c{seisgpu::dwt_plan(ctx, SG_WAVELET_DAUBECHIES, 8, nt), dwt_options,
                seisgpu::fxdecon_plan::volume(ctx, sg_fxdecon_options_default(), nt, nx, ny),
                seisgpu::wavepacket_layout(ctx, {nt, nx, ny}, SG_WAVEPACKET_F32, &wo), 0.0};
        const std::vector<float> volume = synthetic_volume();
        // One threshold for both runs: 2 % of the input's largest coefficient.
        std::vector<float> coeffs(2 * c.wp.n_coefficients());
        c.wp.forward<float>(volume, coeffs);
        c.threshold = 0.02 * largest_magnitude(coeffs);
        std::printf("  wave packets: %zu coefficients (redundancy %.1f), threshold %.4f\n",
                    c.wp.n_coefficients(), double(c.wp.n_coefficients()) / double(n),
                    c.threshold);
        const stages dev = on_device(c, volume, stream);
        const stages host = on_host(c, volume);
        ok &= compare("DWT denoise", dev.dwt, host.dwt, 0.0);
        ok &= compare("F-XY decon", dev.fx, host.fx, 1e-5);
        ok &= compare("wave packets", dev.wp, host.wp, 1e-4);
        ctx.set_stream(nullptr); // the stream is destroyed below
    } catch (const seisgpu::error &e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        ok = false;
    }
    cuda(cudaStreamDestroy(stream), "cudaStreamDestroy");
    std::printf("pipeline: %s\n", ok ? "device and host chains agree" : "FAILED");
    return ok ? 0 : 1;
}
