// Instantiates every member template of include/seisgpu.hpp for float and double, so
// that tests/cpp/run.sh compiles all of the header with -Werror, not only what the
// example calls (the members that are not templates, such as fxdecon_plan's device
// calls, xcorr_plan's and the emlog classes', are compiled as they stand). Compiled,
// never run.
#include "seisgpu.hpp"

namespace seisgpu {
#define SEISGPU_INSTANTIATE(T)                                                              \
    template void dwt_plan::execute<T>(int32_t, uint32_t, view<const T>, view<T>,          \
                                       std::size_t, std::size_t) const;                     \
    template void dwt_plan::execute<T>(int32_t, uint32_t, const std::vector<T> &,           \
                                       std::vector<T> &) const;                             \
    template void dwt_plan::denoise<T>(const sg_dwt_denoise_options &, view<const T>,       \
                                       view<T>, std::size_t, std::size_t, view<double>)     \
        const;                                                                              \
    template void dwt_plan::denoise<T>(const sg_dwt_denoise_options &,                      \
                                       const std::vector<T> &, std::vector<T> &) const;     \
    template void fxdecon_plan::execute_2d<T>(view<const T>, view<T>, std::size_t) const;   \
    template void fxdecon_plan::execute_2d<T>(const std::vector<T> &, std::vector<T> &)     \
        const;                                                                              \
    template void fxdecon_plan::execute_3d<T>(view<const T>, view<T>, std::size_t,          \
                                              std::size_t) const;                           \
    template void fxdecon_plan::execute_3d<T>(const std::vector<T> &, std::vector<T> &)     \
        const;                                                                              \
    template void usfft_plan::set_points<T>(view<const T>, view<const T>, view<const T>);   \
    template void usfft_plan::execute<T>(view<T>, view<T>) const;                          \
    template void usfft_plan::set_points3<T>(view<const T>, view<const T>, view<const T>,  \
                                             view<const T>, view<const T>, view<const T>); \
    template void usfft_plan::set_points_device<T>(device_view<const T>, device_view<const T>, \
                                                   device_view<const T>);                  \
    template void usfft_plan::execute_device<T>(device_view<T>, device_view<T>) const;     \
    template void dwt_plan::execute_device<T>(int32_t, uint32_t, device_view<const T>,     \
                                              device_view<T>, std::size_t, std::size_t)    \
        const;                                                                              \
    template void dwt_plan::denoise_device<T>(const sg_dwt_denoise_options &,              \
                                              device_view<const T>, device_view<T>,        \
                                              std::size_t, std::size_t, view<double>)      \
        const;                                                                              \
    template void dwt_plan::execute_device<T>(stream_t, int32_t, uint32_t,                 \
                                              device_view<const T>, device_view<T>,        \
                                              std::size_t, std::size_t) const;             \
    template void dwt_plan::denoise_device<T>(stream_t, const sg_dwt_denoise_options &,    \
                                              device_view<const T>, device_view<T>,        \
                                              std::size_t, std::size_t, view<double>)      \
        const;                                                                              \
    template void usfft_plan::set_points_device<T>(stream_t, device_view<const T>,         \
                                                   device_view<const T>,                   \
                                                   device_view<const T>);                  \
    template void usfft_plan::execute_device<T>(stream_t, device_view<T>, device_view<T>)  \
        const;                                                                              \
    template inverse_report wavepacket_layout::inverse_device<T>(                          \
        device_view<const T>, device_view<T>, double, std::size_t) const;                  \
    template void wavepacket_layout::forward_device<T>(stream_t, device_view<const T>,     \
                                                       device_view<T>) const;              \
    template void wavepacket_layout::adjoint_device<T>(stream_t, device_view<const T>,     \
                                                       device_view<T>) const;              \
    template void wavepacket_layout::threshold_device<T>(stream_t, device_view<T>, int32_t, \
                                                         int32_t, double) const;            \
    template inverse_report wavepacket_layout::inverse_device<T>(                          \
        stream_t, device_view<const T>, device_view<T>, double, std::size_t) const;        \
    template void wavepacket_layout::forward<T>(view<const T>, view<T>) const;             \
    template void wavepacket_layout::forward_device<T>(device_view<const T>, device_view<T>) \
        const;                                                                              \
    template void wavepacket_layout::adjoint_device<T>(device_view<const T>, device_view<T>) \
        const;                                                                              \
    template void wavepacket_layout::threshold_device<T>(device_view<T>, int32_t, int32_t,  \
                                                         double) const;                     \
    template void wavepacket_layout::adjoint<T>(view<const T>, view<T>) const;             \
    template inverse_report wavepacket_layout::inverse<T>(view<const T>, view<T>, double,  \
                                                          std::size_t) const;              \
    template double wavepacket_layout::estimate_noise<T>(view<const T>) const;             \
    template void wavepacket_layout::threshold_noise<T>(view<T>, int32_t, double, double)  \
        const;                                                                              \
    template void wavepacket_layout::threshold<T>(view<T>, int32_t, int32_t, double) const; \
    template void wavepacket_volume::forward<T>(view<const T>, view<T>) const;             \
    template void wavepacket_volume::adjoint<T>(view<const T>, view<T>) const;             \
    template inverse_report wavepacket_volume::inverse<T>(view<const T>, view<T>, double,  \
                                                          std::size_t) const;              \
    template void wavepacket_layout::pocs_device<T>(device_view<T>, view<const int32_t>,   \
                                                    const sg_wavepacket_pocs_options *)    \
        const;                                                                             \
    template void wavepacket_layout::pocs_device<T>(                                       \
        stream_t, device_view<T>, view<const int32_t>, const sg_wavepacket_pocs_options *)  \
        const;                                                                             \
    template sparse_report wavepacket_layout::sparse_approximation_device<T>(              \
        device_view<const T>, device_view<T>, std::size_t,                                 \
        const sg_wavepacket_sparse_options *) const;                                       \
    template sparse_report wavepacket_layout::sparse_approximation_device<T>(              \
        stream_t, device_view<const T>, device_view<T>, std::size_t,                       \
        const sg_wavepacket_sparse_options *) const;                                       \
    template void wavepacket_volume::forward_device<T>(device_view<const T>, device_view<T>) \
        const;                                                                             \
    template void wavepacket_volume::adjoint_device<T>(device_view<const T>, device_view<T>) \
        const;                                                                             \
    template inverse_report wavepacket_volume::inverse_device<T>(                          \
        device_view<const T>, device_view<T>, double, std::size_t) const;                  \
    template void wavepacket_volume::forward_device<T>(stream_t, device_view<const T>,     \
                                                       device_view<T>) const;              \
    template void wavepacket_volume::adjoint_device<T>(stream_t, device_view<const T>,     \
                                                       device_view<T>) const;              \
    template inverse_report wavepacket_volume::inverse_device<T>(                          \
        stream_t, device_view<const T>, device_view<T>, double, std::size_t) const;
SEISGPU_INSTANTIATE(float)
SEISGPU_INSTANTIATE(double)
#undef SEISGPU_INSTANTIATE
} // namespace seisgpu

// What callers write resolves to the intended overload (compiled, never called): a
// cudaStream_t is a pointer to ::CUstream_st, so a stream or nullptr picks the stream
// overloads; a device view never becomes a host view.
namespace seisgpu_check {
using namespace seisgpu;
static_assert(std::is_same_v<stream_t, ::CUstream_st *>);
static_assert(!std::is_constructible_v<view<const float>, device_view<float> &>);
static_assert(!std::is_constructible_v<view<float>, const device_view<float> &>);
static_assert(!std::is_copy_constructible_v<context> && !std::is_copy_constructible_v<emlog_plan>);
static_assert(std::is_nothrow_move_constructible_v<context>);

void resolve_overloads(context &ctx, const dwt_plan &dwt, const fxdecon_plan &fx,
                       const wavepacket_layout &wp, const xcorr_plan &xc, const emlog_plan &em,
                       const xcorr_spectra &day, stream_t stream, device_view<float> d,
                       device_view<double> d64, device_view<uint64_t> counts) {
    const sg_dwt_denoise_options opt = sg_dwt_denoise_options_default();
    dwt.denoise_device<float>(opt, d, d, 1);
    dwt.denoise_device<float>(stream, opt, d, d, 1);
    dwt.execute_device<float>(nullptr, SG_DWT_FORWARD, 0, d, d, 1);
    fx.execute_3d_device(stream, d, d);
    wp.forward_device<float>(stream, d, d);
    wp.threshold_device<float>(stream, d, SG_WAVEPACKET_SOFT, SG_WAVEPACKET_THRESHOLD_VALUE, 1.0);
    wp.adjoint_device<float>(d, d);
    xcorr_spectra s = xc.preprocess_device(stream, d, 2, 100);
    const std::vector<const xcorr_spectra *> days{&day, &s};
    xc.correlate_device(stream, days, 0, 2, 0, 2, d, 8);
    const int32_t searched[] = {0, 1};
    emlog_plan made = emlog_plan::create_device(ctx, stream, 3, 2, d64, 2, 1, d64, d64, d64,
                                                d64, {searched, 2});
    const std::vector<int32_t> kind{SG_EMLOG_AXIS_LINEAR, SG_EMLOG_AXIS_LOG};
    const std::vector<std::size_t> n{4, 5};
    const std::vector<double> lo{0.1, 0.1}, hi{1.0, 1.0};
    emlog_result r = em.search_device(stream, kind, n, lo, hi);
    r.marginal_device(stream, 0, counts);
    r.models_device(counts, d64);
    (void)made.analytic(SG_EMLOG_FIT_WITHIN_ERRORS, 1.0);
}
} // namespace seisgpu_check
