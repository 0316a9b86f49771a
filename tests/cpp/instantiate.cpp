// Instantiates every member template of include/seisgpu.hpp for float and double, so
// that tests/cpp/run.sh compiles all of the header with -Werror, not only what the
// example calls. Compiled, never run.
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
    template void wavepacket_volume::forward<T>(view<const T>, view<T>) const;             \
    template void wavepacket_volume::adjoint<T>(view<const T>, view<T>) const;             \
    template inverse_report wavepacket_volume::inverse<T>(view<const T>, view<T>, double,  \
                                                          std::size_t) const;
SEISGPU_INSTANTIATE(float)
SEISGPU_INSTANTIATE(double)
#undef SEISGPU_INSTANTIATE
} // namespace seisgpu
