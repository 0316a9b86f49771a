// seisgpu.hpp: C++17 owners for the handles of seisgpu.h, header-only.
//
// Every class here is a thin, move-only owner of one C handle: its constructor is the
// `*_create` call, its destructor the `*_destroy` call, its methods the C calls on that
// handle. A status other than SG_OK becomes a `seisgpu::error` carrying the status and
// the thread's last-error message. Arrays are passed as `seisgpu::view<T>` (a pointer and
// a size; std::vector, std::array and std::span convert to it), and a view shorter than
// what the C call will touch is refused with SG_ERR_INVALID_ARGUMENT before the call.
// Nothing else happens here: the numbers are the C library's.
//
// Device memory: `device_view<T>` (a device pointer and a size) goes to the `_device`
// methods, which queue their work on the stream set by `context::set_stream` and return
// without waiting (see "Keeping data on the GPU" in the README). Each `_device` method has
// an overload whose first argument is a stream (`seisgpu::stream_t`: a cudaStream_t or
// CUstream): it sets that stream as the context's stream, then makes the call (see
// `stream_t` for what that means for threads).
//
// Adding a plan type: one `detail::owner<sg_x_plan, sg_x_plan_destroy>` base, the methods
// that forward its C calls, and for device calls a `detail::context_ref` member that the
// stream overloads set the stream through (see dwt_plan).

#ifndef SEISGPU_HPP
#define SEISGPU_HPP

#include "seisgpu.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

// What cudaStream_t (cuda_runtime.h) and CUstream (cuda.h) point to, declared here so that
// this header needs no CUDA header.
struct CUstream_st;

namespace seisgpu {

// A CUDA stream: a cudaStream_t or CUstream of the context's device (nullptr: the legacy
// default stream). A context holds one stream for its device calls, shared by every plan
// made on it and every thread that uses them. The stream overloads of the `_device`
// methods set it (sg_context_set_stream) and then make the call; it stays set for the
// context's later device calls: the C library has no call that reads it back, so it is
// not restored. Like sg_context_set_stream, a stream overload must not run while another
// device call of the same context runs on another thread; threads that queue work on
// streams of their own each use a context of their own (contexts of one device share its
// CUDA primary context, so arrays and streams serve them all).
using stream_t = CUstream_st *;

// A failed call: `status()` is its sg_status, `message()` the library's explanation.
class error : public std::runtime_error {
public:
    error(sg_status status, const std::string &message)
        : std::runtime_error(std::string(sg_status_string(status)) + ": " + message),
          status_(status), message_(message) {}
    sg_status status() const noexcept { return status_; }
    const std::string &message() const noexcept { return message_; }

private:
    sg_status status_;
    std::string message_;
};

// Throws the thread's last error when `status` is not SG_OK.
inline void check(sg_status status) {
    if (status != SG_OK) {
        throw error(status, sg_last_error_message());
    }
}

template <class T> class device_view;

namespace detail {
template <class C> struct is_device_view : std::false_type {};
template <class T> struct is_device_view<device_view<T>> : std::true_type {};
} // namespace detail

// A contiguous array the caller owns: a pointer and an element count.
template <class T> class view {
public:
    view(T *data, std::size_t size) noexcept : data_(data), size_(size) {}
    // Any contiguous container with data() and size() whose elements are T
    // (std::vector, std::array, std::span, std::string for char); not a device_view,
    // whose memory the host calls cannot read.
    template <class C, class = std::enable_if_t<
                           std::is_convertible_v<decltype(std::declval<C &>().data()), T *> &&
                           !detail::is_device_view<std::remove_cv_t<C>>::value>>
    view(C &container) noexcept : data_(container.data()), size_(container.size()) {}
    T *data() const noexcept { return data_; }
    std::size_t size() const noexcept { return size_; }

private:
    T *data_;
    std::size_t size_;
};

// An array in the device memory of a CUDA context's GPU (from cudaMalloc, cuMemAlloc, a
// pool or managed memory): a device pointer and an element count. The `_device` methods take
// these; the library checks them with the driver (device, range) before it queues work.
template <class T> class device_view {
public:
    device_view(T *data, std::size_t size) noexcept : data_(data), size_(size) {}
    // A view of the same array for reading (from a view of mutable elements only: for
    // const T it would convert a type to itself).
    template <class U = T, class = std::enable_if_t<!std::is_const_v<U>>>
    operator device_view<const U>() const noexcept { return {data_, size_}; }
    T *data() const noexcept { return data_; }
    std::size_t size() const noexcept { return size_; }
    // The CUdeviceptr value the C calls take.
    uint64_t address() const noexcept { return reinterpret_cast<uint64_t>(data_); }

private:
    T *data_;
    std::size_t size_;
};

namespace detail {

// Refuses a device view shorter than the `needed` elements the C call will touch.
template <class T> void need(const device_view<T> &v, std::size_t needed, const char *what) {
    if (v.size() < needed) {
        throw error(SG_ERR_INVALID_ARGUMENT, std::string(what) + " holds " +
                                                 std::to_string(v.size()) +
                                                 " elements; the call needs " +
                                                 std::to_string(needed));
    }
}

// Refuses a view shorter than the `needed` elements the C call will touch.
template <class T> void need(const view<T> &v, std::size_t needed, const char *what) {
    if (v.size() < needed) {
        throw error(SG_ERR_INVALID_ARGUMENT, std::string(what) + " holds " +
                                                 std::to_string(v.size()) +
                                                 " elements; the call needs " +
                                                 std::to_string(needed));
    }
}

// A wave-packet call's arrays: data and coefficients of one precision (float or double),
// at least `n_samples` data values and `n_coefficients` interleaved complex values.
template <class D, class C>
void need_data_and_coeffs(const view<D> &data, const view<C> &coeffs, std::size_t n_samples,
                          std::size_t n_coefficients) {
    static_assert(std::is_same_v<std::remove_const_t<D>, std::remove_const_t<C>> &&
                  (std::is_same_v<std::remove_const_t<D>, float> ||
                   std::is_same_v<std::remove_const_t<D>, double>));
    need(data, n_samples, "data");
    need(coeffs, 2 * n_coefficients, "coeffs");
}

// Elements spanned by `count` blocks of `length` elements, `stride` apart.
inline std::size_t extent(std::size_t count, std::size_t stride, std::size_t length) {
    return count == 0 ? 0 : (count - 1) * stride + length;
}

// The move-only owner of one handle, released by `Destroy`.
template <class Handle, void (*Destroy)(Handle *)> class owner {
public:
    owner(const owner &) = delete;
    owner &operator=(const owner &) = delete;
    owner(owner &&other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
    owner &operator=(owner &&other) noexcept {
        if (this != &other) {
            Destroy(handle_);
            handle_ = std::exchange(other.handle_, nullptr);
        }
        return *this;
    }
    ~owner() { Destroy(handle_); }
    // The C handle, for calls this header does not wrap; still owned here.
    Handle *get() const noexcept { return handle_; }

protected:
    owner() = default;
    // The address a `*_create` call writes the new handle to.
    Handle **out() noexcept { return &handle_; }

private:
    Handle *handle_ = nullptr;
};

} // namespace detail

// The progress callback of a context: (stage, fraction) → true to cancel the call.
using progress_fn = std::function<bool(const char *stage, double fraction)>;

namespace detail {
class context_ref;
} // namespace detail

// The backend every plan runs on (sg_context_*). Move-only; the plans made on it keep the
// C handle (sg_context_destroy runs when the context and all of them are gone), so that
// their stream overloads can set its stream.
class context {
public:
    explicit context(int32_t backend = SG_BACKEND_AUTO, int32_t device_ordinal = 0) {
        sg_context *made = nullptr;
        check(sg_context_create(backend, device_ordinal, &made));
        handle_.reset(made, sg_context_destroy);
    }
    // sg_context_create_on_cuda_context: a CUDA context on the application's own CUDA
    // context (a CUcontext, e.g. from cuCtxCreate), which the library never destroys: keep
    // it alive until this context and its plans are gone.
    static context on_cuda_context(void *cu_context) {
        sg_context *made = nullptr;
        check(sg_context_create_on_cuda_context(reinterpret_cast<uint64_t>(cu_context), &made));
        return context(made);
    }
    context(const context &) = delete;
    context &operator=(const context &) = delete;
    context(context &&) noexcept = default;
    context &operator=(context &&other) noexcept {
        if (this != &other) {
            remove_progress();
            handle_ = std::move(other.handle_);
            progress_ = std::move(other.progress_);
        }
        return *this;
    }
    // Plans outlive their context: they must not call a callback that dies with it.
    ~context() { remove_progress(); }
    // The C handle, for calls this header does not wrap; still owned here.
    sg_context *get() const noexcept { return handle_.get(); }

private:
    explicit context(sg_context *made) { handle_.reset(made, sg_context_destroy); }

public:

    // sg_context_set_progress with a C++ callable, called on the thread that makes each
    // long call; an empty one removes it. An exception thrown by `callback` cancels the
    // call (the C library cannot carry it); catch inside it to do otherwise. Change or
    // remove it (and destroy the context) only while no call of this context runs.
    void set_progress(progress_fn callback) {
        if (!callback) {
            check(sg_context_set_progress(get(), nullptr, nullptr));
            progress_.reset();
            return;
        }
        auto held = std::make_unique<progress_fn>(std::move(callback));
        check(sg_context_set_progress(get(), &context::call_progress, held.get()));
        progress_ = std::move(held);
    }
    // sg_context_set_stream: the `_device` methods of this context's plans queue their work
    // on `stream` (a cudaStream_t or CUstream; nullptr for the legacy default stream) and
    // return without waiting for it. Not while a device call of this context runs.
    void set_stream(void *stream) { check(sg_context_set_stream(get(), reinterpret_cast<uint64_t>(stream))); }
    // sg_context_set_device_checks: SG_DEVICE_CHECKS_FINITE makes each `_device` call scan
    // its inputs on the GPU; a non-finite one makes the next synchronize() throw.
    void set_device_checks(int32_t checks) { check(sg_context_set_device_checks(get(), checks)); }
    // sg_context_set_device_allocator: the device memory of plans made from now on comes
    // from `alloc` and goes back to `free` (both nullptr: cuMemAllocAsync again). The hooks
    // are plain C functions, called from any thread; `user` is passed back to them.
    void set_device_allocator(sg_device_alloc_fn alloc, sg_device_free_fn free, void *user) {
        check(sg_context_set_device_allocator(get(), alloc, free, user));
    }
    // sg_context_device_memory: device bytes the library holds now, and the most at once.
    std::pair<std::size_t, std::size_t> device_memory() const {
        std::size_t in_use = 0, peak = 0;
        check(sg_context_device_memory(get(), &in_use, &peak));
        return {in_use, peak};
    }
    // sg_context_synchronize: waits for the work the `_device` calls queued.
    void synchronize() const { check(sg_context_synchronize(get())); }
    // SG_BACKEND_CPU or SG_BACKEND_CUDA.
    int32_t backend() const {
        int32_t b = 0;
        check(sg_context_backend(get(), &b));
        return b;
    }
    std::string describe() const {
        std::size_t needed = 0;
        sg_status s = sg_context_describe(get(), nullptr, 0, &needed);
        if (s != SG_ERR_BUFFER_TOO_SMALL) {
            check(s);
        }
        std::string text(needed, '\0');
        check(sg_context_describe(get(), text.data(), text.size(), &needed));
        text.resize(needed - 1);
        return text;
    }

private:
    static int call_progress(void *user, const char *stage, double fraction) noexcept {
        try {
            return (*static_cast<progress_fn *>(user))(stage, fraction) ? 1 : 0;
        } catch (...) {
            return 1;
        }
    }
    void remove_progress() noexcept {
        if (get() != nullptr && progress_) {
            sg_context_set_progress(get(), nullptr, nullptr);
        }
    }
    friend class detail::context_ref;
    std::shared_ptr<sg_context> handle_;
    std::unique_ptr<progress_fn> progress_;
};

namespace detail {

// The context a plan was made on, shared with the context object (and valid after it is
// gone), for the stream overloads of the plan's `_device` methods.
class context_ref {
public:
    explicit context_ref(const context &ctx) : handle_(ctx.handle_) {}
    // No context (a plan whose creation is about to be refused); set_stream then fails.
    context_ref() = default;
    // sg_context_set_stream on the plan's context.
    void set_stream(stream_t stream) const {
        check(sg_context_set_stream(handle_.get(), reinterpret_cast<uint64_t>(stream)));
    }

private:
    std::shared_ptr<sg_context> handle_;
};

} // namespace detail

// sg_dwt_*: batched wavelet transforms and denoising of traces of one length.
class dwt_plan : public detail::owner<sg_dwt_plan, sg_dwt_plan_destroy> {
public:
    // sg_dwt_plan_workspace_bytes: device bytes the plan holds (0 on a CPU context).
    std::size_t workspace_bytes() const {
        std::size_t bytes = 0;
        check(sg_dwt_plan_workspace_bytes(get(), &bytes));
        return bytes;
    }
    // sg_dwt_plan_reserve: room for device calls of up to n_traces traces (before a capture).
    void reserve(std::size_t n_traces) { check(sg_dwt_plan_reserve(get(), n_traces)); }
    dwt_plan(const context &ctx, int32_t family, int32_t member, std::size_t n_samples)
        : n_samples_(n_samples), ctx_(ctx) {
        check(sg_dwt_plan_create(ctx.get(), family, member, n_samples, out()));
    }
    std::size_t n_samples() const noexcept { return n_samples_; }

    // `n_traces` traces, trace t at element t·trace_stride (0: n_samples, dense).
    template <class T>
    void execute(int32_t direction, uint32_t n_levels, view<const T> input, view<T> output,
                 std::size_t n_traces, std::size_t trace_stride = 0) const {
        static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);
        std::size_t stride = trace_stride ? trace_stride : n_samples_;
        detail::need(input, detail::extent(n_traces, stride, n_samples_), "input");
        detail::need(output, detail::extent(n_traces, stride, n_samples_), "output");
        if constexpr (std::is_same_v<T, float>) {
            check(sg_dwt_execute_f32(get(), direction, n_levels, input.data(), output.data(),
                                     n_traces, stride));
        } else {
            check(sg_dwt_execute_f64(get(), direction, n_levels, input.data(), output.data(),
                                     n_traces, stride));
        }
    }
    template <class T>
    void execute(int32_t direction, uint32_t n_levels, const std::vector<T> &input,
                 std::vector<T> &output) const {
        output.resize(input.size());
        execute<T>(direction, n_levels, input, output, input.size() / n_samples_);
    }

    // Wavelet shrinkage; `thresholds` (empty: not wanted) receives n_traces × levels.
    template <class T>
    void denoise(const sg_dwt_denoise_options &options, view<const T> input, view<T> output,
                 std::size_t n_traces, std::size_t trace_stride = 0,
                 view<double> thresholds = {nullptr, 0}) const {
        static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);
        std::size_t stride = trace_stride ? trace_stride : n_samples_;
        detail::need(input, detail::extent(n_traces, stride, n_samples_), "input");
        detail::need(output, detail::extent(n_traces, stride, n_samples_), "output");
        double *t = nullptr;
        if (thresholds.size() > 0) {
            detail::need(thresholds, n_traces * levels(options.n_levels), "thresholds");
            t = thresholds.data();
        }
        if constexpr (std::is_same_v<T, float>) {
            check(sg_dwt_denoise_f32(get(), &options, input.data(), output.data(), n_traces,
                                     stride, t));
        } else {
            check(sg_dwt_denoise_f64(get(), &options, input.data(), output.data(), n_traces,
                                     stride, t));
        }
    }
    template <class T>
    void denoise(const sg_dwt_denoise_options &options, const std::vector<T> &input,
                 std::vector<T> &output) const {
        output.resize(input.size());
        denoise<T>(options, input, output, input.size() / n_samples_);
    }

    // `execute` on device memory (sg_dwt_execute_device_*): queued on the context's stream;
    // `input` and `output` may be the same array (in place).
    template <class T>
    void execute_device(int32_t direction, uint32_t n_levels, device_view<const T> input,
                        device_view<T> output, std::size_t n_traces,
                        std::size_t trace_stride = 0) const {
        static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);
        std::size_t stride = trace_stride ? trace_stride : n_samples_;
        detail::need(input, detail::extent(n_traces, stride, n_samples_), "input");
        detail::need(output, detail::extent(n_traces, stride, n_samples_), "output");
        if constexpr (std::is_same_v<T, float>) {
            check(sg_dwt_execute_device_f32(get(), direction, n_levels, input.address(),
                                            output.address(), n_traces, stride));
        } else {
            check(sg_dwt_execute_device_f64(get(), direction, n_levels, input.address(),
                                            output.address(), n_traces, stride));
        }
    }

    // `denoise` on device memory (sg_dwt_denoise_device_*); `thresholds` (host memory,
    // empty: not wanted) makes the call wait for the stream.
    template <class T>
    void denoise_device(const sg_dwt_denoise_options &options, device_view<const T> input,
                        device_view<T> output, std::size_t n_traces,
                        std::size_t trace_stride = 0,
                        view<double> thresholds = {nullptr, 0}) const {
        static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);
        std::size_t stride = trace_stride ? trace_stride : n_samples_;
        detail::need(input, detail::extent(n_traces, stride, n_samples_), "input");
        detail::need(output, detail::extent(n_traces, stride, n_samples_), "output");
        double *t = nullptr;
        if (thresholds.size() > 0) {
            detail::need(thresholds, n_traces * levels(options.n_levels), "thresholds");
            t = thresholds.data();
        }
        if constexpr (std::is_same_v<T, float>) {
            check(sg_dwt_denoise_device_f32(get(), &options, input.address(), output.address(),
                                            n_traces, stride, t));
        } else {
            check(sg_dwt_denoise_device_f64(get(), &options, input.address(), output.address(),
                                            n_traces, stride, t));
        }
    }

    // The same on `stream`, which becomes the context's stream (see stream_t).
    template <class T>
    void execute_device(stream_t stream, int32_t direction, uint32_t n_levels,
                        device_view<const T> input, device_view<T> output, std::size_t n_traces,
                        std::size_t trace_stride = 0) const {
        ctx_.set_stream(stream);
        execute_device<T>(direction, n_levels, input, output, n_traces, trace_stride);
    }
    template <class T>
    void denoise_device(stream_t stream, const sg_dwt_denoise_options &options,
                        device_view<const T> input, device_view<T> output, std::size_t n_traces,
                        std::size_t trace_stride = 0,
                        view<double> thresholds = {nullptr, 0}) const {
        ctx_.set_stream(stream);
        denoise_device<T>(options, input, output, n_traces, trace_stride, thresholds);
    }

private:
    // Levels of a transform of depth `n_levels` (0: all, log2 n_samples).
    std::size_t levels(uint32_t n_levels) const noexcept {
        if (n_levels != 0) {
            return n_levels;
        }
        std::size_t l = 0;
        for (std::size_t n = n_samples_; n > 1; n /= 2) {
            ++l;
        }
        return l;
    }
    std::size_t n_samples_;
    detail::context_ref ctx_;
};

// sg_fxdecon_*: F-X (2D) and F-XY (3D) deconvolution of one shape.
class fxdecon_plan : public detail::owner<sg_fxdecon_plan, sg_fxdecon_plan_destroy> {
public:
    // sg_fxdecon_plan_workspace_bytes: device bytes the plan holds (0 on a CPU context).
    std::size_t workspace_bytes() const {
        std::size_t bytes = 0;
        check(sg_fxdecon_plan_workspace_bytes(get(), &bytes));
        return bytes;
    }
    // A 2D plan for sections of n_traces traces of n_samples samples.
    static fxdecon_plan section(const context &ctx, const sg_fxdecon_options &options,
                                std::size_t n_samples, std::size_t n_traces) {
        fxdecon_plan p(ctx, n_samples, n_traces, 1);
        check(sg_fxdecon_plan_create_2d(ctx.get(), &options, n_samples, n_traces, p.out()));
        return p;
    }
    // A 3D plan for volumes of n_inline × n_crossline traces.
    static fxdecon_plan volume(const context &ctx, const sg_fxdecon_options &options,
                               std::size_t n_samples, std::size_t n_inline,
                               std::size_t n_crossline) {
        fxdecon_plan p(ctx, n_samples, n_inline, n_crossline);
        check(sg_fxdecon_plan_create_3d(ctx.get(), &options, n_samples, n_inline, n_crossline,
                                        p.out()));
        return p;
    }

    // 2D: trace t at element t·trace_stride (0: n_samples, dense).
    template <class T>
    void execute_2d(view<const T> input, view<T> output, std::size_t trace_stride = 0) const {
        static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);
        std::size_t stride = trace_stride ? trace_stride : n_samples_;
        detail::need(input, detail::extent(n_inline_, stride, n_samples_), "input");
        detail::need(output, detail::extent(n_inline_, stride, n_samples_), "output");
        if constexpr (std::is_same_v<T, float>) {
            check(sg_fxdecon_execute_2d_f32(get(), input.data(), output.data(), stride));
        } else {
            check(sg_fxdecon_execute_2d_f64(get(), input.data(), output.data(), stride));
        }
    }
    template <class T> void execute_2d(const std::vector<T> &input, std::vector<T> &output) const {
        output.resize(input.size());
        execute_2d(view<const T>(input), view<T>(output));
    }

    // 3D: trace (il, xl) at element il·inline_stride + xl·crossline_stride (0, 0: dense,
    // inline fastest).
    template <class T>
    void execute_3d(view<const T> input, view<T> output, std::size_t inline_stride = 0,
                    std::size_t crossline_stride = 0) const {
        static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);
        std::size_t is = inline_stride ? inline_stride : n_samples_;
        std::size_t xs = crossline_stride ? crossline_stride : n_samples_ * n_inline_;
        std::size_t needed = n_inline_ == 0 || n_crossline_ == 0
                                 ? 0
                                 : (n_inline_ - 1) * is + (n_crossline_ - 1) * xs + n_samples_;
        detail::need(input, needed, "input");
        detail::need(output, needed, "output");
        if constexpr (std::is_same_v<T, float>) {
            check(sg_fxdecon_execute_3d_f32(get(), input.data(), output.data(), is, xs));
        } else {
            check(sg_fxdecon_execute_3d_f64(get(), input.data(), output.data(), is, xs));
        }
    }
    template <class T> void execute_3d(const std::vector<T> &input, std::vector<T> &output) const {
        output.resize(input.size());
        execute_3d(view<const T>(input), view<T>(output));
    }

    // `execute_2d` / `execute_3d` on device memory (sg_fxdecon_execute_*_device_f32), queued
    // on the context's stream; `input` and `output` may be the same array. float only (the
    // GPU filter's precision).
    void execute_2d_device(device_view<const float> input, device_view<float> output,
                           std::size_t trace_stride = 0) const {
        std::size_t stride = trace_stride ? trace_stride : n_samples_;
        detail::need(input, detail::extent(n_inline_, stride, n_samples_), "input");
        detail::need(output, detail::extent(n_inline_, stride, n_samples_), "output");
        check(sg_fxdecon_execute_2d_device_f32(get(), input.address(), output.address(), stride));
    }
    void execute_3d_device(device_view<const float> input, device_view<float> output,
                           std::size_t inline_stride = 0, std::size_t crossline_stride = 0) const {
        std::size_t is = inline_stride ? inline_stride : n_samples_;
        std::size_t xs = crossline_stride ? crossline_stride : n_samples_ * n_inline_;
        std::size_t needed = n_inline_ == 0 || n_crossline_ == 0
                                 ? 0
                                 : (n_inline_ - 1) * is + (n_crossline_ - 1) * xs + n_samples_;
        detail::need(input, needed, "input");
        detail::need(output, needed, "output");
        check(sg_fxdecon_execute_3d_device_f32(get(), input.address(), output.address(), is, xs));
    }

    // The same on `stream`, which becomes the context's stream (see stream_t).
    void execute_2d_device(stream_t stream, device_view<const float> input,
                           device_view<float> output, std::size_t trace_stride = 0) const {
        ctx_.set_stream(stream);
        execute_2d_device(input, output, trace_stride);
    }
    void execute_3d_device(stream_t stream, device_view<const float> input,
                           device_view<float> output, std::size_t inline_stride = 0,
                           std::size_t crossline_stride = 0) const {
        ctx_.set_stream(stream);
        execute_3d_device(input, output, inline_stride, crossline_stride);
    }

private:
    fxdecon_plan(const context &ctx, std::size_t n_samples, std::size_t n_inline,
                 std::size_t n_crossline)
        : n_samples_(n_samples), n_inline_(n_inline), n_crossline_(n_crossline), ctx_(ctx) {}
    std::size_t n_samples_, n_inline_, n_crossline_;
    detail::context_ref ctx_;
};

// sg_usfft_*: type 1/2/3 nonuniform FFTs in 1 to 3 dimensions.
class usfft_plan : public detail::owner<sg_usfft_plan, sg_usfft_plan_destroy> {
public:
    // sg_usfft_plan_workspace_bytes: device bytes the plan holds (0 on a CPU context).
    std::size_t workspace_bytes() const {
        std::size_t bytes = 0;
        check(sg_usfft_plan_workspace_bytes(get(), &bytes));
        return bytes;
    }
    usfft_plan(const context &ctx, int32_t type, const std::vector<std::size_t> &n_modes,
               int32_t sign, double tolerance, int32_t precision, std::size_t n_vectors = 1,
               const sg_usfft_options *options = nullptr)
        : n_vectors_(n_vectors), n_modes_total_(1), ctx_(ctx) {
        for (std::size_t n : n_modes) {
            n_modes_total_ *= n;
        }
        check(sg_usfft_plan_create(ctx.get(), type, static_cast<int32_t>(n_modes.size()),
                                   n_modes.data(), sign, tolerance, precision, n_vectors,
                                   options, out()));
    }

    // A type-3 plan of `dim` dimensions (no mode counts: set_points3 sizes its grid).
    static usfft_plan type3(const context &ctx, int32_t dim, int32_t sign, double tolerance,
                            int32_t precision, std::size_t n_vectors = 1,
                            const sg_usfft_options *options = nullptr) {
        return usfft_plan(ctx, dim, sign, tolerance, precision, n_vectors, options);
    }

    // Type 3: the m points x (y, z) and the n frequencies s (t, u); arrays of unused
    // dimensions empty. execute then reads n_vectors × m strengths and writes n_vectors × n
    // values.
    template <class T>
    void set_points3(view<const T> x, view<const T> y, view<const T> z, view<const T> s,
                     view<const T> t, view<const T> u) {
        static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);
        std::size_t m = x.size(), n = s.size();
        if (y.size() > 0) {
            detail::need(y, m, "y");
        }
        if (z.size() > 0) {
            detail::need(z, m, "z");
        }
        if (t.size() > 0) {
            detail::need(t, n, "t");
        }
        if (u.size() > 0) {
            detail::need(u, n, "u");
        }
        if constexpr (std::is_same_v<T, float>) {
            check(sg_usfft_set_points3_f32(get(), m, x.data(), y.data(), z.data(), n, s.data(),
                                           t.data(), u.data()));
        } else {
            check(sg_usfft_set_points3_f64(get(), m, x.data(), y.data(), z.data(), n, s.data(),
                                           t.data(), u.data()));
        }
        n_points_ = m;
        n_modes_total_ = n;
    }

    // The points' coordinates in radians; y, z empty below 2 resp. 3 dimensions.
    template <class T>
    void set_points(view<const T> x, view<const T> y = {nullptr, 0},
                    view<const T> z = {nullptr, 0}) {
        static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);
        std::size_t m = x.size();
        if (y.size() > 0) {
            detail::need(y, m, "y");
        }
        if (z.size() > 0) {
            detail::need(z, m, "z");
        }
        if constexpr (std::is_same_v<T, float>) {
            check(sg_usfft_set_points_f32(get(), m, x.data(), y.data(), z.data()));
        } else {
            check(sg_usfft_set_points_f64(get(), m, x.data(), y.data(), z.data()));
        }
        n_points_ = m;
    }

    // `c`: n_vectors × M complex strengths, `f`: n_vectors × modes complex modes (type 3:
    // n_vectors × N values at the frequencies), both interleaved (re, im).
    template <class T> void execute(view<T> c, view<T> f) const {
        static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);
        detail::need(c, 2 * n_vectors_ * n_points_, "c");
        detail::need(f, 2 * n_vectors_ * n_modes_total_, "f");
        if constexpr (std::is_same_v<T, float>) {
            check(sg_usfft_execute_f32(get(), c.data(), f.data()));
        } else {
            check(sg_usfft_execute_f64(get(), c.data(), f.data()));
        }
    }

    // `set_points` from coordinates in device memory (sg_usfft_set_points_device_*).
    template <class T>
    void set_points_device(device_view<const T> x, device_view<const T> y = {nullptr, 0},
                           device_view<const T> z = {nullptr, 0}) {
        static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);
        std::size_t m = x.size();
        if (y.size() > 0) {
            detail::need(y, m, "y");
        }
        if (z.size() > 0) {
            detail::need(z, m, "z");
        }
        if constexpr (std::is_same_v<T, float>) {
            check(sg_usfft_set_points_device_f32(get(), m, x.address(), y.address(), z.address()));
        } else {
            check(sg_usfft_set_points_device_f64(get(), m, x.address(), y.address(), z.address()));
        }
        n_points_ = m;
    }

    // `execute` on device memory (sg_usfft_execute_device_*), queued on the context's stream.
    template <class T> void execute_device(device_view<T> c, device_view<T> f) const {
        static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);
        detail::need(c, 2 * n_vectors_ * n_points_, "c");
        detail::need(f, 2 * n_vectors_ * n_modes_total_, "f");
        if constexpr (std::is_same_v<T, float>) {
            check(sg_usfft_execute_device_f32(get(), c.address(), f.address()));
        } else {
            check(sg_usfft_execute_device_f64(get(), c.address(), f.address()));
        }
    }

    // The same on `stream`, which becomes the context's stream (see stream_t).
    template <class T>
    void set_points_device(stream_t stream, device_view<const T> x,
                           device_view<const T> y = {nullptr, 0},
                           device_view<const T> z = {nullptr, 0}) {
        ctx_.set_stream(stream);
        set_points_device<T>(x, y, z);
    }
    template <class T> void execute_device(stream_t stream, device_view<T> c, device_view<T> f) const {
        ctx_.set_stream(stream);
        execute_device<T>(c, f);
    }

private:
    usfft_plan(const context &ctx, int32_t dim, int32_t sign, double tolerance,
               int32_t precision, std::size_t n_vectors, const sg_usfft_options *options)
        : n_vectors_(n_vectors), n_modes_total_(0), ctx_(ctx) {
        check(sg_usfft_plan_create(ctx.get(), SG_USFFT_TYPE3, dim, nullptr, sign, tolerance,
                                   precision, n_vectors, options, out()));
    }
    std::size_t n_vectors_, n_modes_total_, n_points_ = 0;
    detail::context_ref ctx_;
};

// What an iterative inverse did: conjugate-gradient iterations and the final residual.
struct inverse_report {
    std::size_t iterations;
    double residual;
};

// How a sparse approximation went: the non-zero coefficients and ‖f − C*c‖/‖f‖.
struct sparse_report {
    std::size_t kept;
    double residual;
};

// A wave-packet box layout of one data shape and its transforms in one precision
// (sg_wavepacket_*). Coefficients are interleaved (re, im), box after box.
class wavepacket_layout
    : public detail::owner<sg_wavepacket_layout, sg_wavepacket_layout_destroy> {
public:
    // sg_wavepacket_layout_workspace_bytes: device bytes the plan holds (0 on a CPU context).
    std::size_t workspace_bytes() const {
        std::size_t bytes = 0;
        check(sg_wavepacket_layout_workspace_bytes(get(), &bytes));
        return bytes;
    }
    // `shape`: 2 or 3 sizes, axis 1 fastest; `precision`: SG_WAVEPACKET_F32 or _F64;
    // `options` nullptr for the defaults.
    wavepacket_layout(const context &ctx, const std::vector<std::size_t> &shape,
                      int32_t precision, const sg_wavepacket_layout_options *options = nullptr)
        : ctx_(ctx) {
        check(sg_wavepacket_layout_create_with_options(ctx.get(),
                                                       static_cast<int32_t>(shape.size()),
                                                       shape.data(), precision, options, out()));
        check(sg_wavepacket_layout_sizes(get(), &n_samples_, &n_coefficients_, &n_boxes_,
                                         &levels_, &n_directions_));
    }

    std::size_t n_samples() const noexcept { return n_samples_; }
    std::size_t n_coefficients() const noexcept { return n_coefficients_; }
    std::size_t n_boxes() const noexcept { return n_boxes_; }
    std::size_t levels() const noexcept { return levels_; }
    std::size_t n_directions() const noexcept { return n_directions_; }

    // C: `data` (n_samples) → `coeffs` (2·n_coefficients).
    template <class T> void forward(view<const T> data, view<T> coeffs) const {
        sizes(data, coeffs);
        if constexpr (std::is_same_v<T, float>) {
            check(sg_wavepacket_forward_f32(get(), data.data(), coeffs.data()));
        } else {
            check(sg_wavepacket_forward_f64(get(), data.data(), coeffs.data()));
        }
    }

    // C*: `coeffs` → `data`, the real part of the exact adjoint.
    template <class T> void adjoint(view<const T> coeffs, view<T> data) const {
        sizes(data, coeffs);
        if constexpr (std::is_same_v<T, float>) {
            check(sg_wavepacket_adjoint_f32(get(), coeffs.data(), data.data()));
        } else {
            check(sg_wavepacket_adjoint_f64(get(), coeffs.data(), data.data()));
        }
    }

    // The data whose coefficients are closest to `coeffs` (correction filter, then
    // conjugate gradients to `tolerance` or `max_iterations`).
    template <class T>
    inverse_report inverse(view<const T> coeffs, view<T> data, double tolerance,
                           std::size_t max_iterations) const {
        sizes(data, coeffs);
        inverse_report r{0, 0.0};
        if constexpr (std::is_same_v<T, float>) {
            check(sg_wavepacket_inverse_f32(get(), coeffs.data(), data.data(), tolerance,
                                            max_iterations, &r.iterations, &r.residual));
        } else {
            check(sg_wavepacket_inverse_f64(get(), coeffs.data(), data.data(), tolerance,
                                            max_iterations, &r.iterations, &r.residual));
        }
        return r;
    }

    // σ of white noise in the data these coefficients came from (the finest level's).
    template <class T> double estimate_noise(view<const T> coeffs) const {
        detail::need(coeffs, 2 * n_coefficients_, "coeffs");
        double sigma = 0.0;
        if constexpr (std::is_same_v<T, float>) {
            check(sg_wavepacket_estimate_noise_f32(get(), coeffs.data(), &sigma));
        } else {
            check(sg_wavepacket_estimate_noise_f64(get(), coeffs.data(), &sigma));
        }
        return sigma;
    }

    // In place: `mode` (SG_WAVEPACKET_HARD or _SOFT) thresholds at k·σ·‖ψ_b‖ per box.
    template <class T> void threshold_noise(view<T> coeffs, int32_t mode, double k, double sigma) const {
        detail::need(coeffs, 2 * n_coefficients_, "coeffs");
        if constexpr (std::is_same_v<T, float>) {
            check(sg_wavepacket_threshold_noise_f32(get(), coeffs.data(), mode, k, sigma));
        } else {
            check(sg_wavepacket_threshold_noise_f64(get(), coeffs.data(), mode, k, sigma));
        }
    }

    // In place: `mode` (SG_WAVEPACKET_HARD or _SOFT) at `kind` SG_WAVEPACKET_THRESHOLD_VALUE
    // (`value` itself) or SG_WAVEPACKET_THRESHOLD_SIGMA (`value`·σ of each level).
    template <class T> void threshold(view<T> coeffs, int32_t mode, int32_t kind, double value) const {
        detail::need(coeffs, 2 * n_coefficients_, "coeffs");
        if constexpr (std::is_same_v<T, float>) {
            check(sg_wavepacket_threshold_f32(get(), coeffs.data(), mode, kind, value));
        } else {
            check(sg_wavepacket_threshold_f64(get(), coeffs.data(), mode, kind, value));
        }
    }

    // `forward` / `adjoint` / `threshold` on device memory (sg_wavepacket_*_device_*),
    // queued on the context's stream; coefficients interleaved (re, im).
    template <class T> void forward_device(device_view<const T> data, device_view<T> coeffs) const {
        static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);
        detail::need(data, n_samples_, "data");
        detail::need(coeffs, 2 * n_coefficients_, "coeffs");
        if constexpr (std::is_same_v<T, float>) {
            check(sg_wavepacket_forward_device_f32(get(), data.address(), coeffs.address()));
        } else {
            check(sg_wavepacket_forward_device_f64(get(), data.address(), coeffs.address()));
        }
    }
    template <class T> void adjoint_device(device_view<const T> coeffs, device_view<T> data) const {
        static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);
        detail::need(data, n_samples_, "data");
        detail::need(coeffs, 2 * n_coefficients_, "coeffs");
        if constexpr (std::is_same_v<T, float>) {
            check(sg_wavepacket_adjoint_device_f32(get(), coeffs.address(), data.address()));
        } else {
            check(sg_wavepacket_adjoint_device_f64(get(), coeffs.address(), data.address()));
        }
    }
    template <class T>
    void threshold_device(device_view<T> coeffs, int32_t mode, int32_t kind, double value) const {
        static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);
        detail::need(coeffs, 2 * n_coefficients_, "coeffs");
        if constexpr (std::is_same_v<T, float>) {
            check(sg_wavepacket_threshold_device_f32(get(), coeffs.address(), mode, kind, value));
        } else {
            check(sg_wavepacket_threshold_device_f64(get(), coeffs.address(), mode, kind, value));
        }
    }
    // `keep_largest` / `threshold_noise` on device coefficients, in place, queued on the
    // context's stream; `estimate_noise_device` waits for σ (a host value).
    template <class T> void keep_largest_device(device_view<T> coeffs, std::size_t s) const {
        static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);
        detail::need(coeffs, 2 * n_coefficients_, "coeffs");
        if constexpr (std::is_same_v<T, float>) {
            check(sg_wavepacket_keep_largest_device_f32(get(), coeffs.address(), s));
        } else {
            check(sg_wavepacket_keep_largest_device_f64(get(), coeffs.address(), s));
        }
    }
    template <class T>
    void threshold_noise_device(device_view<T> coeffs, int32_t mode, double k, double sigma) const {
        static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);
        detail::need(coeffs, 2 * n_coefficients_, "coeffs");
        if constexpr (std::is_same_v<T, float>) {
            check(sg_wavepacket_threshold_noise_device_f32(get(), coeffs.address(), mode, k, sigma));
        } else {
            check(sg_wavepacket_threshold_noise_device_f64(get(), coeffs.address(), mode, k, sigma));
        }
    }
    template <class T> double estimate_noise_device(device_view<const T> coeffs) const {
        static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);
        detail::need(coeffs, 2 * n_coefficients_, "coeffs");
        double sigma = 0.0;
        if constexpr (std::is_same_v<T, float>) {
            check(sg_wavepacket_estimate_noise_device_f32(get(), coeffs.address(), &sigma));
        } else {
            check(sg_wavepacket_estimate_noise_device_f64(get(), coeffs.address(), &sigma));
        }
        return sigma;
    }
    // `inverse` on device memory (sg_wavepacket_inverse_device_*): the call waits (each
    // iteration's stopping test reads the residual on the host); `data` is written on the
    // context's stream.
    template <class T>
    inverse_report inverse_device(device_view<const T> coeffs, device_view<T> data,
                                  double tolerance, std::size_t max_iterations) const {
        static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);
        detail::need(data, n_samples_, "data");
        detail::need(coeffs, 2 * n_coefficients_, "coeffs");
        inverse_report r{0, 0.0};
        if constexpr (std::is_same_v<T, float>) {
            check(sg_wavepacket_inverse_device_f32(get(), coeffs.address(), data.address(),
                                                   tolerance, max_iterations, &r.iterations,
                                                   &r.residual));
        } else {
            check(sg_wavepacket_inverse_device_f64(get(), coeffs.address(), data.address(),
                                                   tolerance, max_iterations, &r.iterations,
                                                   &r.residual));
        }
        return r;
    }
    // POCS on device `data`, in place (sg_wavepacket_pocs_device_*): `live` one 0 or 1 per
    // trace, `options` nullptr for the defaults. The call waits (each iteration's
    // correction filter runs on the host); `data` is written on the context's stream.
    template <class T>
    void pocs_device(device_view<T> data, view<const int32_t> live,
                     const sg_wavepacket_pocs_options *options = nullptr) const {
        static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);
        detail::need(data, n_samples_, "data");
        if constexpr (std::is_same_v<T, float>) {
            check(sg_wavepacket_pocs_device_f32(get(), data.address(), live.data(), live.size(),
                                                options));
        } else {
            check(sg_wavepacket_pocs_device_f64(get(), data.address(), live.data(), live.size(),
                                                options));
        }
    }
    // The sparse approximation of device `data` into device `coeffs`
    // (sg_wavepacket_sparse_approximation_device_*): at most `s` non-zero coefficients;
    // `options` nullptr for the defaults. The call waits (the support is chosen on the
    // host); `coeffs` is written on the context's stream.
    template <class T>
    sparse_report sparse_approximation_device(
        device_view<const T> data, device_view<T> coeffs, std::size_t s,
        const sg_wavepacket_sparse_options *options = nullptr) const {
        static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);
        detail::need(data, n_samples_, "data");
        detail::need(coeffs, 2 * n_coefficients_, "coeffs");
        sparse_report r{0, 0.0};
        if constexpr (std::is_same_v<T, float>) {
            check(sg_wavepacket_sparse_approximation_device_f32(
                get(), data.address(), coeffs.address(), s, options, &r.kept, &r.residual));
        } else {
            check(sg_wavepacket_sparse_approximation_device_f64(
                get(), data.address(), coeffs.address(), s, options, &r.kept, &r.residual));
        }
        return r;
    }

    // The same on `stream`, which becomes the context's stream (see stream_t).
    template <class T>
    void forward_device(stream_t stream, device_view<const T> data, device_view<T> coeffs) const {
        ctx_.set_stream(stream);
        forward_device<T>(data, coeffs);
    }
    template <class T>
    void adjoint_device(stream_t stream, device_view<const T> coeffs, device_view<T> data) const {
        ctx_.set_stream(stream);
        adjoint_device<T>(coeffs, data);
    }
    template <class T>
    void threshold_device(stream_t stream, device_view<T> coeffs, int32_t mode, int32_t kind,
                          double value) const {
        ctx_.set_stream(stream);
        threshold_device<T>(coeffs, mode, kind, value);
    }
    template <class T>
    inverse_report inverse_device(stream_t stream, device_view<const T> coeffs,
                                  device_view<T> data, double tolerance,
                                  std::size_t max_iterations) const {
        ctx_.set_stream(stream);
        return inverse_device<T>(coeffs, data, tolerance, max_iterations);
    }
    template <class T>
    void keep_largest_device(stream_t stream, device_view<T> coeffs, std::size_t s) const {
        ctx_.set_stream(stream);
        keep_largest_device<T>(coeffs, s);
    }
    template <class T>
    void threshold_noise_device(stream_t stream, device_view<T> coeffs, int32_t mode, double k,
                                double sigma) const {
        ctx_.set_stream(stream);
        threshold_noise_device<T>(coeffs, mode, k, sigma);
    }
    template <class T> double estimate_noise_device(stream_t stream, device_view<const T> coeffs) const {
        ctx_.set_stream(stream);
        return estimate_noise_device<T>(coeffs);
    }
    template <class T>
    void pocs_device(stream_t stream, device_view<T> data, view<const int32_t> live,
                     const sg_wavepacket_pocs_options *options = nullptr) const {
        ctx_.set_stream(stream);
        pocs_device<T>(data, live, options);
    }
    template <class T>
    sparse_report sparse_approximation_device(
        stream_t stream, device_view<const T> data, device_view<T> coeffs, std::size_t s,
        const sg_wavepacket_sparse_options *options = nullptr) const {
        ctx_.set_stream(stream);
        return sparse_approximation_device<T>(data, coeffs, s, options);
    }

private:
    template <class D, class C> void sizes(const view<D> &data, const view<C> &coeffs) const {
        detail::need_data_and_coeffs(data, coeffs, n_samples_, n_coefficients_);
    }

    std::size_t n_samples_ = 0, n_coefficients_ = 0, n_boxes_ = 0, levels_ = 0,
                n_directions_ = 0;
    detail::context_ref ctx_;
};

// A volume larger than one layout, cut into tiles whose coefficients lie on one common grid
// per box (sg_wavepacket_volume_*). Coefficients are interleaved (re, im), box after box.
class wavepacket_volume
    : public detail::owner<sg_wavepacket_volume, sg_wavepacket_volume_destroy> {
public:
    // sg_wavepacket_volume_workspace_bytes: device bytes the plan holds (0 on a CPU context).
    std::size_t workspace_bytes() const {
        std::size_t bytes = 0;
        check(sg_wavepacket_volume_workspace_bytes(get(), &bytes));
        return bytes;
    }
    // `volume_shape` and `tile_shape`: 2 or 3 sizes each, axis 1 fastest; the rest as
    // wavepacket_layout's.
    wavepacket_volume(const context &ctx, const std::vector<std::size_t> &volume_shape,
                      const std::vector<std::size_t> &tile_shape, int32_t precision,
                      const sg_wavepacket_layout_options *options = nullptr)
        : ctx_(ctx) {
        dims(volume_shape, tile_shape);
        check(sg_wavepacket_volume_create(ctx.get(), static_cast<int32_t>(volume_shape.size()),
                                          volume_shape.data(), tile_shape.data(), precision,
                                          options, out()));
        read_sizes();
    }

    // The tiles dealt out over `contexts` (e.g. one per GPU; tile i on context i mod K, one
    // thread each), each context's device memory capped at `max_device_bytes` (0: none;
    // sg_wavepacket_volume_create_capped). The contexts must outlive the volume; the device
    // calls take arrays on the first one's device and order them on its stream.
    wavepacket_volume(const std::vector<const context *> &contexts,
                      const std::vector<std::size_t> &volume_shape,
                      const std::vector<std::size_t> &tile_shape, int32_t precision,
                      const sg_wavepacket_layout_options *options = nullptr,
                      std::size_t max_device_bytes = 0)
        : ctx_(first(contexts)) {
        dims(volume_shape, tile_shape);
        std::vector<const sg_context *> handles;
        for (const context *c : contexts) {
            handles.push_back(c != nullptr ? c->get() : nullptr);
        }
        check(sg_wavepacket_volume_create_capped(
            handles.data(), handles.size(), static_cast<int32_t>(volume_shape.size()),
            volume_shape.data(), tile_shape.data(), precision, options, max_device_bytes,
            out()));
        read_sizes();
    }

    std::size_t n_samples() const noexcept { return n_samples_; }
    std::size_t n_coefficients() const noexcept { return n_coefficients_; }
    std::size_t n_boxes() const noexcept { return n_boxes_; }
    // Tiles along axes 1, 2, 3 (1 for an unused axis).
    std::vector<std::size_t> tiles() const { return {tiles_[0], tiles_[1], tiles_[2]}; }

    // C: `data` (n_samples) → `coeffs` (2·n_coefficients).
    template <class T> void forward(view<const T> data, view<T> coeffs) const {
        sizes(data, coeffs);
        if constexpr (std::is_same_v<T, float>) {
            check(sg_wavepacket_volume_forward_f32(get(), data.data(), coeffs.data()));
        } else {
            check(sg_wavepacket_volume_forward_f64(get(), data.data(), coeffs.data()));
        }
    }

    // C*: `coeffs` → `data`, the real part of the exact adjoint.
    template <class T> void adjoint(view<const T> coeffs, view<T> data) const {
        sizes(data, coeffs);
        if constexpr (std::is_same_v<T, float>) {
            check(sg_wavepacket_volume_adjoint_f32(get(), coeffs.data(), data.data()));
        } else {
            check(sg_wavepacket_volume_adjoint_f64(get(), coeffs.data(), data.data()));
        }
    }

    // The volume whose coefficients are closest to `coeffs` (each tile's correction
    // filter, then conjugate gradients to `tolerance` or `max_iterations`).
    template <class T>
    inverse_report inverse(view<const T> coeffs, view<T> data, double tolerance,
                           std::size_t max_iterations) const {
        sizes(data, coeffs);
        inverse_report r{0, 0.0};
        if constexpr (std::is_same_v<T, float>) {
            check(sg_wavepacket_volume_inverse_f32(get(), coeffs.data(), data.data(), tolerance,
                                                   max_iterations, &r.iterations, &r.residual));
        } else {
            check(sg_wavepacket_volume_inverse_f64(get(), coeffs.data(), data.data(), tolerance,
                                                   max_iterations, &r.iterations, &r.residual));
        }
        return r;
    }

    // C, C* and the inverse on device memory (sg_wavepacket_volume_*_device_*), ordered on
    // the context's stream. C and C* of a volume on one context run on the device and
    // return without waiting; over several contexts they wait (the tiles' coefficients are
    // added on the host), as the inverse always does.
    template <class T> void forward_device(device_view<const T> data, device_view<T> coeffs) const {
        static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);
        detail::need(data, n_samples_, "data");
        detail::need(coeffs, 2 * n_coefficients_, "coeffs");
        if constexpr (std::is_same_v<T, float>) {
            check(sg_wavepacket_volume_forward_device_f32(get(), data.address(), coeffs.address()));
        } else {
            check(sg_wavepacket_volume_forward_device_f64(get(), data.address(), coeffs.address()));
        }
    }
    template <class T> void adjoint_device(device_view<const T> coeffs, device_view<T> data) const {
        static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);
        detail::need(data, n_samples_, "data");
        detail::need(coeffs, 2 * n_coefficients_, "coeffs");
        if constexpr (std::is_same_v<T, float>) {
            check(sg_wavepacket_volume_adjoint_device_f32(get(), coeffs.address(), data.address()));
        } else {
            check(sg_wavepacket_volume_adjoint_device_f64(get(), coeffs.address(), data.address()));
        }
    }
    template <class T>
    inverse_report inverse_device(device_view<const T> coeffs, device_view<T> data,
                                  double tolerance, std::size_t max_iterations) const {
        static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);
        detail::need(data, n_samples_, "data");
        detail::need(coeffs, 2 * n_coefficients_, "coeffs");
        inverse_report r{0, 0.0};
        if constexpr (std::is_same_v<T, float>) {
            check(sg_wavepacket_volume_inverse_device_f32(get(), coeffs.address(), data.address(),
                                                          tolerance, max_iterations,
                                                          &r.iterations, &r.residual));
        } else {
            check(sg_wavepacket_volume_inverse_device_f64(get(), coeffs.address(), data.address(),
                                                          tolerance, max_iterations,
                                                          &r.iterations, &r.residual));
        }
        return r;
    }

    // The same on `stream`, which becomes the (first) context's stream (see stream_t).
    template <class T>
    void forward_device(stream_t stream, device_view<const T> data, device_view<T> coeffs) const {
        ctx_.set_stream(stream);
        forward_device<T>(data, coeffs);
    }
    template <class T>
    void adjoint_device(stream_t stream, device_view<const T> coeffs, device_view<T> data) const {
        ctx_.set_stream(stream);
        adjoint_device<T>(coeffs, data);
    }
    template <class T>
    inverse_report inverse_device(stream_t stream, device_view<const T> coeffs,
                                  device_view<T> data, double tolerance,
                                  std::size_t max_iterations) const {
        ctx_.set_stream(stream);
        return inverse_device<T>(coeffs, data, tolerance, max_iterations);
    }

private:
    // The first of `contexts` (none for an empty list or a null entry, which the C call
    // refuses).
    static detail::context_ref first(const std::vector<const context *> &contexts) {
        if (contexts.empty() || contexts.front() == nullptr) {
            return detail::context_ref();
        }
        return detail::context_ref(*contexts.front());
    }

    // The C call reads `dim` sizes from each: both must hold that many.
    static void dims(const std::vector<std::size_t> &volume_shape,
                     const std::vector<std::size_t> &tile_shape) {
        if (volume_shape.size() != tile_shape.size()) {
            throw error(SG_ERR_INVALID_ARGUMENT,
                        "wavepacket_volume: volume_shape has " +
                            std::to_string(volume_shape.size()) + " sizes, tile_shape " +
                            std::to_string(tile_shape.size()));
        }
    }

    void read_sizes() {
        check(sg_wavepacket_volume_sizes(get(), &n_samples_, &n_coefficients_, tiles_,
                                         &n_boxes_));
    }

    template <class D, class C> void sizes(const view<D> &data, const view<C> &coeffs) const {
        detail::need_data_and_coeffs(data, coeffs, n_samples_, n_coefficients_);
    }

    std::size_t n_samples_ = 0, n_coefficients_ = 0, n_boxes_ = 0;
    std::size_t tiles_[3] = {1, 1, 1};
    detail::context_ref ctx_;
};

// One day of window spectra (sg_xcorr_spectra_*), made by xcorr_plan::preprocess.
class xcorr_spectra : public detail::owner<sg_xcorr_spectra, sg_xcorr_spectra_destroy> {
public:
    struct sizes_t {
        std::size_t n_stations, n_windows, band_start, band_len, nfft;
    };
    sizes_t sizes() const {
        sizes_t s{};
        check(sg_xcorr_spectra_sizes(get(), &s.n_stations, &s.n_windows, &s.band_start,
                                     &s.band_len, &s.nfft));
        return s;
    }
    // `values` (2·band_len·n_stations·n_windows floats) and `kept` (n_stations·n_windows);
    // either may be empty.
    void copy(view<float> values, view<uint8_t> kept) const {
        sizes_t s = sizes();
        if (values.size() > 0) {
            detail::need(values, 2 * s.band_len * s.n_stations * s.n_windows, "values");
        }
        if (kept.size() > 0) {
            detail::need(kept, s.n_stations * s.n_windows, "kept");
        }
        check(sg_xcorr_spectra_copy(get(), values.size() ? values.data() : nullptr,
                                    kept.size() ? kept.data() : nullptr));
    }

private:
    friend class xcorr_plan;
    xcorr_spectra() = default;
};

// sg_xcorr_*: ambient-noise preprocessing, correlation and stacking.
class xcorr_plan : public detail::owner<sg_xcorr_plan, sg_xcorr_plan_destroy> {
public:
    // sg_xcorr_plan_workspace_bytes: device bytes the plan holds (0 on a CPU context).
    std::size_t workspace_bytes() const {
        std::size_t bytes = 0;
        check(sg_xcorr_plan_workspace_bytes(get(), &bytes));
        return bytes;
    }
    xcorr_plan(const context &ctx, const sg_xcorr_options &options) : ctx_(ctx) {
        check(sg_xcorr_plan_create(ctx.get(), &options, out()));
    }
    struct sizes_t {
        std::size_t n_windows, n_lags;
    };
    sizes_t sizes(std::size_t n_samples) const {
        sizes_t s{};
        check(sg_xcorr_plan_sizes(get(), n_samples, &s.n_windows, &s.n_lags));
        return s;
    }
    // Station s at element s·station_stride (0: n_samples); `valid` empty: no gaps.
    xcorr_spectra preprocess(view<const float> station_days, std::size_t n_stations,
                             std::size_t n_samples, std::size_t station_stride = 0,
                             view<const uint8_t> valid = {nullptr, 0}) const {
        std::size_t stride = station_stride ? station_stride : n_samples;
        detail::need(station_days, detail::extent(n_stations, stride, n_samples),
                     "station_days");
        if (valid.size() > 0) {
            detail::need(valid, detail::extent(n_stations, stride, n_samples), "valid");
        }
        xcorr_spectra s;
        check(sg_xcorr_preprocess_f32(get(), station_days.data(), n_stations, n_samples,
                                      stride, valid.size() ? valid.data() : nullptr, s.out()));
        return s;
    }
    std::size_t pair_count(std::size_t n_stations, std::size_t i0, std::size_t ni,
                           std::size_t j0, std::size_t nj) const {
        std::size_t n = 0;
        check(sg_xcorr_pair_count(get(), n_stations, i0, ni, j0, nj, &n));
        return n;
    }
    std::pair<std::size_t, std::size_t> pair_stations(std::size_t n_stations, std::size_t i0,
                                                      std::size_t ni, std::size_t j0,
                                                      std::size_t nj, std::size_t pair) const {
        std::size_t i = 0, j = 0;
        check(sg_xcorr_pair_stations(get(), n_stations, i0, ni, j0, nj, pair, &i, &j));
        return {i, j};
    }
    // Pair p's n_lags samples (sizes(n_samples).n_lags) at stacks[p·pair_stride], so
    // `stacks` holds pairs × pair_stride floats; `n_windows` (empty: not wanted) receives
    // the windows stacked per pair.
    void correlate(const std::vector<const xcorr_spectra *> &days, std::size_t i0,
                   std::size_t ni, std::size_t j0, std::size_t nj, view<float> stacks,
                   std::size_t pair_stride, view<uint32_t> n_windows = {nullptr, 0}) const {
        std::size_t pairs = block_pairs(days, i0, ni, j0, nj);
        detail::need(stacks, pairs * pair_stride, "stacks");
        optional_rows(n_windows, pairs, "n_windows");
        check(sg_xcorr_correlate_f32(get(), handles(days).data(), days.size(), i0, ni, j0, nj,
                                     stacks.data(), pair_stride, or_null(n_windows)));
    }

    // Window labels by time (sg_xcorr_substack_groups): `day_windows[d]` windows of day d,
    // which starts at `day_start[d]` seconds; the labels of all days' windows and the
    // number of groups.
    std::pair<std::vector<int32_t>, std::size_t>
    substack_groups(view<const std::size_t> day_windows, view<const double> day_start,
                    double substack_len) const {
        detail::need(day_start, day_windows.size(), "day_start");
        std::size_t total = 0;
        for (std::size_t i = 0; i < day_windows.size(); ++i) {
            total += day_windows.data()[i];
        }
        std::vector<int32_t> labels(total);
        std::size_t n_groups = 0;
        check(sg_xcorr_substack_groups(get(), day_windows.size(), day_windows.data(),
                                       day_start.data(), substack_len, labels.data(),
                                       &n_groups));
        return {std::move(labels), n_groups};
    }

    // `correlate`, and the linear stack of each group of windows: `labels` holds a label
    // per window of day 0, then day 1, … (a group < n_groups or SG_XCORR_NO_GROUP); group
    // g's stack of pair p at substacks[(g·pairs + p)·pair_stride], its window count at
    // substack_windows[g·pairs + p] (empty: not wanted).
    void correlate_substacks(const std::vector<const xcorr_spectra *> &days, std::size_t i0,
                             std::size_t ni, std::size_t j0, std::size_t nj,
                             view<const int32_t> labels, std::size_t n_groups,
                             view<float> stacks, std::size_t pair_stride,
                             view<uint32_t> n_windows, view<float> substacks,
                             view<uint32_t> substack_windows = {nullptr, 0}) const {
        std::size_t pairs = block_pairs(days, i0, ni, j0, nj);
        detail::need(labels, total_windows(days), "labels");
        detail::need(stacks, pairs * pair_stride, "stacks");
        detail::need(substacks, n_groups * pairs * pair_stride, "substacks");
        optional_rows(n_windows, pairs, "n_windows");
        optional_rows(substack_windows, n_groups * pairs, "substack_windows");
        check(sg_xcorr_correlate_substacks_f32(
            get(), handles(days).data(), days.size(), i0, ni, j0, nj, labels.data(), n_groups,
            stacks.data(), pair_stride, or_null(n_windows), substacks.data(),
            or_null(substack_windows)));
    }

    // `preprocess` of station-days in device memory (sg_xcorr_preprocess_device_f32):
    // queued on the context's stream, then the call waits for it (the spectra's kept
    // windows are host values); the spectra stay on the device. `valid` empty: no gaps.
    xcorr_spectra preprocess_device(device_view<const float> station_days,
                                    std::size_t n_stations, std::size_t n_samples,
                                    std::size_t station_stride = 0,
                                    device_view<const uint8_t> valid = {nullptr, 0}) const {
        std::size_t stride = station_stride ? station_stride : n_samples;
        std::size_t span = detail::extent(n_stations, stride, n_samples);
        detail::need(station_days, span, "station_days");
        if (valid.size() > 0) {
            detail::need(valid, span, "valid");
        }
        xcorr_spectra s;
        check(sg_xcorr_preprocess_device_f32(get(), station_days.address(), n_stations,
                                             n_samples, stride,
                                             valid.size() ? valid.address() : 0, s.out()));
        return s;
    }

    // `correlate` into device memory (sg_xcorr_correlate_device_f32): queued on the
    // context's stream, returns without waiting; `n_windows` is host memory, written
    // before the call returns.
    void correlate_device(const std::vector<const xcorr_spectra *> &days, std::size_t i0,
                          std::size_t ni, std::size_t j0, std::size_t nj,
                          device_view<float> stacks, std::size_t pair_stride,
                          view<uint32_t> n_windows = {nullptr, 0}) const {
        std::size_t pairs = block_pairs(days, i0, ni, j0, nj);
        detail::need(stacks, pairs * pair_stride, "stacks");
        optional_rows(n_windows, pairs, "n_windows");
        check(sg_xcorr_correlate_device_f32(get(), handles(days).data(), days.size(), i0, ni,
                                            j0, nj, stacks.address(), pair_stride,
                                            or_null(n_windows)));
    }

    // `correlate_substacks` into device memory (sg_xcorr_correlate_substacks_device_f32):
    // `stacks` and `substacks` on the device (not overlapping), the labels and window
    // counts on the host; queued on the context's stream, returns without waiting.
    void correlate_substacks_device(const std::vector<const xcorr_spectra *> &days,
                                    std::size_t i0, std::size_t ni, std::size_t j0,
                                    std::size_t nj, view<const int32_t> labels,
                                    std::size_t n_groups, device_view<float> stacks,
                                    std::size_t pair_stride, view<uint32_t> n_windows,
                                    device_view<float> substacks,
                                    view<uint32_t> substack_windows = {nullptr, 0}) const {
        std::size_t pairs = block_pairs(days, i0, ni, j0, nj);
        detail::need(labels, total_windows(days), "labels");
        detail::need(stacks, pairs * pair_stride, "stacks");
        detail::need(substacks, n_groups * pairs * pair_stride, "substacks");
        optional_rows(n_windows, pairs, "n_windows");
        optional_rows(substack_windows, n_groups * pairs, "substack_windows");
        check(sg_xcorr_correlate_substacks_device_f32(
            get(), handles(days).data(), days.size(), i0, ni, j0, nj, labels.data(), n_groups,
            stacks.address(), pair_stride, or_null(n_windows), substacks.address(),
            or_null(substack_windows)));
    }

    // The same on `stream`, which becomes the context's stream (see stream_t).
    xcorr_spectra preprocess_device(stream_t stream, device_view<const float> station_days,
                                    std::size_t n_stations, std::size_t n_samples,
                                    std::size_t station_stride = 0,
                                    device_view<const uint8_t> valid = {nullptr, 0}) const {
        ctx_.set_stream(stream);
        return preprocess_device(station_days, n_stations, n_samples, station_stride, valid);
    }
    void correlate_device(stream_t stream, const std::vector<const xcorr_spectra *> &days,
                          std::size_t i0, std::size_t ni, std::size_t j0, std::size_t nj,
                          device_view<float> stacks, std::size_t pair_stride,
                          view<uint32_t> n_windows = {nullptr, 0}) const {
        ctx_.set_stream(stream);
        correlate_device(days, i0, ni, j0, nj, stacks, pair_stride, n_windows);
    }
    void correlate_substacks_device(stream_t stream,
                                    const std::vector<const xcorr_spectra *> &days,
                                    std::size_t i0, std::size_t ni, std::size_t j0,
                                    std::size_t nj, view<const int32_t> labels,
                                    std::size_t n_groups, device_view<float> stacks,
                                    std::size_t pair_stride, view<uint32_t> n_windows,
                                    device_view<float> substacks,
                                    view<uint32_t> substack_windows = {nullptr, 0}) const {
        ctx_.set_stream(stream);
        correlate_substacks_device(days, i0, ni, j0, nj, labels, n_groups, stacks, pair_stride,
                                   n_windows, substacks, substack_windows);
    }

private:
    // The C handles of `days` (a null entry stays null: the C call refuses it).
    static std::vector<const sg_xcorr_spectra *>
    handles(const std::vector<const xcorr_spectra *> &days) {
        std::vector<const sg_xcorr_spectra *> h;
        h.reserve(days.size());
        for (const xcorr_spectra *d : days) {
            h.push_back(d != nullptr ? d->get() : nullptr);
        }
        return h;
    }
    // The pairs of the block, for sizing the outputs; 0 where there is no first day to
    // count stations from (the C call refuses that).
    std::size_t block_pairs(const std::vector<const xcorr_spectra *> &days, std::size_t i0,
                            std::size_t ni, std::size_t j0, std::size_t nj) const {
        if (days.empty() || days.front() == nullptr) {
            return 0;
        }
        return pair_count(days.front()->sizes().n_stations, i0, ni, j0, nj);
    }
    // The windows of all days: one label each.
    static std::size_t total_windows(const std::vector<const xcorr_spectra *> &days) {
        std::size_t total = 0;
        for (const xcorr_spectra *d : days) {
            total += d != nullptr ? d->sizes().n_windows : 0;
        }
        return total;
    }
    static void optional_rows(const view<uint32_t> &counts, std::size_t rows, const char *what) {
        if (counts.size() > 0) {
            detail::need(counts, rows, what);
        }
    }
    static uint32_t *or_null(const view<uint32_t> &counts) {
        return counts.size() > 0 ? counts.data() : nullptr;
    }

    detail::context_ref ctx_;
};

// The outcome of an EM-logging search (sg_emlog_result_*), made by emlog_plan::search or
// search_device; p = the plan's searched parameters.
class emlog_result : public detail::owner<sg_emlog_result, sg_emlog_result_destroy> {
public:
    struct summary_t {
        uint64_t total, count, best_index;
        std::vector<double> best_model; // p values
        double best_misfit;
        std::vector<double> value_min, value_max; // p values each; NaN where none
        std::size_t n_models;
        bool more_models;
    };
    std::size_t n_parameters() const noexcept { return axis_count_.size(); }
    summary_t summary() const {
        const std::size_t p = n_parameters();
        summary_t s{0, 0, 0, std::vector<double>(p), 0.0, std::vector<double>(p),
                    std::vector<double>(p), 0, false};
        int32_t more = 0;
        check(sg_emlog_result_summary(get(), &s.total, &s.count, &s.best_index,
                                      s.best_model.data(), &s.best_misfit, s.value_min.data(),
                                      s.value_max.data(), &s.n_models, &more));
        s.more_models = more != 0;
        return s;
    }

    // Equivalent models per value of axis `parameter` (one count per value of the axis).
    void marginal(std::size_t parameter, view<uint64_t> counts) const {
        check(sg_emlog_result_marginal(get(), parameter, counts.data(), counts.size()));
    }
    std::vector<uint64_t> marginal(std::size_t parameter) const {
        std::vector<uint64_t> counts(axis(parameter));
        marginal(parameter, counts);
        return counts;
    }
    // Equivalent models per (i_a, i_b) of requested pair `pair` = (a, b), at i_a + n_a·i_b.
    void pair(std::size_t pair, view<uint64_t> counts) const {
        check(sg_emlog_result_pair(get(), pair, counts.data(), counts.size()));
    }
    std::vector<uint64_t> pair(std::size_t pair) const {
        if (pair >= pairs_.size() / 2) {
            throw error(SG_ERR_INVALID_ARGUMENT, "pair " + std::to_string(pair) + " of " +
                                                     std::to_string(pairs_.size() / 2));
        }
        std::vector<uint64_t> counts(axis(std::size_t(pairs_[2 * pair])) *
                                     axis(std::size_t(pairs_[2 * pair + 1])));
        this->pair(pair, counts);
        return counts;
    }
    // The listed equivalent models: `indices` (room for n models) and `values` (p per model).
    void models(view<uint64_t> indices, view<double> values) const {
        detail::need(values, indices.size() * n_parameters(), "values");
        check(sg_emlog_result_models(get(), indices.data(), values.data(), indices.size()));
    }

    // Into device memory (sg_emlog_result_*_device), queued on the context's stream;
    // return without waiting.
    void marginal_device(std::size_t parameter, device_view<uint64_t> counts) const {
        check(sg_emlog_result_marginal_device(get(), parameter, counts.address(), counts.size()));
    }
    void pair_device(std::size_t pair, device_view<uint64_t> counts) const {
        check(sg_emlog_result_pair_device(get(), pair, counts.address(), counts.size()));
    }
    void models_device(device_view<uint64_t> indices, device_view<double> values) const {
        detail::need(values, indices.size() * n_parameters(), "values");
        check(sg_emlog_result_models_device(get(), indices.address(), values.address(),
                                            indices.size()));
    }

    // The same on `stream`, which becomes the context's stream (see stream_t).
    void marginal_device(stream_t stream, std::size_t parameter,
                         device_view<uint64_t> counts) const {
        ctx_.set_stream(stream);
        marginal_device(parameter, counts);
    }
    void pair_device(stream_t stream, std::size_t pair, device_view<uint64_t> counts) const {
        ctx_.set_stream(stream);
        pair_device(pair, counts);
    }
    void models_device(stream_t stream, device_view<uint64_t> indices,
                       device_view<double> values) const {
        ctx_.set_stream(stream);
        models_device(indices, values);
    }

private:
    friend class emlog_plan;
    emlog_result(const detail::context_ref &ctx, std::vector<std::size_t> axis_count,
                 std::vector<int32_t> pairs)
        : axis_count_(std::move(axis_count)), pairs_(std::move(pairs)), ctx_(ctx) {}
    // The values of axis `parameter`.
    std::size_t axis(std::size_t parameter) const {
        if (parameter >= axis_count_.size()) {
            throw error(SG_ERR_INVALID_ARGUMENT, "parameter " + std::to_string(parameter) +
                                                     " of " + std::to_string(n_parameters()));
        }
        return axis_count_[parameter];
    }
    std::vector<std::size_t> axis_count_;
    std::vector<int32_t> pairs_;
    detail::context_ref ctx_;
};

// sg_emlog_*: the linearised EM-logging problem f_syn = f₀ + A(σ − σ₀) and searches of its
// equivalent models over grids of the searched conductivities.
class emlog_plan : public detail::owner<sg_emlog_plan, sg_emlog_plan_destroy> {
public:
    // sg_emlog_plan_workspace_bytes: device bytes the plan holds (0 on a CPU context).
    std::size_t workspace_bytes() const {
        std::size_t bytes = 0;
        check(sg_emlog_plan_workspace_bytes(get(), &bytes));
        return bytes;
    }
    // A is n × m, element (i, j) at a[i·row_stride + j·col_stride]; sigma0 (m); f0, f_exp,
    // delta (n); `searched`: the searched columns (1 to 16), in grid-axis order.
    emlog_plan(const context &ctx, std::size_t n, std::size_t m, view<const double> a,
               std::size_t row_stride, std::size_t col_stride, view<const double> sigma0,
               view<const double> f0, view<const double> f_exp, view<const double> delta,
               view<const int32_t> searched)
        : p_(searched.size()), ctx_(ctx) {
        problem(n, m, a, row_stride, col_stride, sigma0, f0, f_exp, delta);
        check(sg_emlog_plan_create(ctx.get(), n, m, a.data(), row_stride, col_stride,
                                   sigma0.data(), f0.data(), f_exp.data(), delta.data(),
                                   searched.size(), searched.data(), out()));
    }
    // The same from arrays in device memory (sg_emlog_plan_create_device; `searched` stays
    // on the host): the searched columns are gathered on the context's stream and the call
    // waits for them.
    static emlog_plan create_device(const context &ctx, std::size_t n, std::size_t m,
                                    device_view<const double> a, std::size_t row_stride,
                                    std::size_t col_stride, device_view<const double> sigma0,
                                    device_view<const double> f0,
                                    device_view<const double> f_exp,
                                    device_view<const double> delta,
                                    view<const int32_t> searched) {
        emlog_plan p(ctx, searched.size());
        problem(n, m, a, row_stride, col_stride, sigma0, f0, f_exp, delta);
        check(sg_emlog_plan_create_device(ctx.get(), n, m, a.address(), row_stride, col_stride,
                                          sigma0.address(), f0.address(), f_exp.address(),
                                          delta.address(), searched.size(), searched.data(),
                                          p.out()));
        return p;
    }
    // The same on `stream`, which becomes the context's stream (see stream_t).
    static emlog_plan create_device(context &ctx, stream_t stream, std::size_t n, std::size_t m,
                                    device_view<const double> a, std::size_t row_stride,
                                    std::size_t col_stride, device_view<const double> sigma0,
                                    device_view<const double> f0,
                                    device_view<const double> f_exp,
                                    device_view<const double> delta,
                                    view<const int32_t> searched) {
        ctx.set_stream(stream);
        return create_device(ctx, n, m, a, row_stride, col_stride, sigma0, f0, f_exp, delta,
                             searched);
    }

    std::size_t n_parameters() const noexcept { return p_; }

    // The closed-form answer (sg_emlog_analytic) for `criterion` (SG_EMLOG_*) at `level`.
    struct analytic_t {
        std::vector<double> sigma_star; // p: the least-squares model
        double f_min;                   // its misfit
        bool empty;                     // the criterion cannot be met
        std::vector<double> lower, upper, singular_values; // p each
        std::vector<double> right_vectors;                 // p × p, vector c at [k·p + c]
    };
    analytic_t analytic(int32_t criterion, double level) const {
        analytic_t r{std::vector<double>(p_), 0.0, false, std::vector<double>(p_),
                     std::vector<double>(p_), std::vector<double>(p_),
                     std::vector<double>(p_ * p_)};
        int32_t empty = 0;
        check(sg_emlog_analytic(get(), criterion, level, r.sigma_star.data(), &r.f_min, &empty,
                                r.lower.data(), r.upper.data(), r.singular_values.data(),
                                r.right_vectors.data()));
        r.empty = empty != 0;
        return r;
    }

    // A grid search: axis k is `axis_kind[k]` (SG_EMLOG_AXIS_*) of `axis_count[k]` values
    // from `axis_min[k]` to `axis_max[k]`, or the next `axis_count[k]` of `list_values`;
    // `pairs` (2 per pair: parameter indices) asks for 2D marginals; `options` nullptr:
    // the defaults.
    emlog_result search(view<const int32_t> axis_kind, view<const std::size_t> axis_count,
                        view<const double> axis_min, view<const double> axis_max,
                        view<const double> list_values = {nullptr, 0},
                        view<const int32_t> pairs = {nullptr, 0},
                        const sg_emlog_options *options = nullptr) const {
        emlog_result r = grid(axis_kind, axis_count, axis_min, axis_max, pairs);
        check(sg_emlog_search(get(), axis_kind.data(), axis_count.data(), axis_min.data(),
                              axis_max.data(), or_null(list_values), list_values.size(),
                              pairs.size() / 2, or_null(pairs), options, r.out()));
        return r;
    }
    // `search` after the work queued on the context's stream (sg_emlog_search_device): the
    // call waits for the search; the result's histograms also stay in device memory, for
    // its `_device` outputs.
    emlog_result search_device(view<const int32_t> axis_kind, view<const std::size_t> axis_count,
                               view<const double> axis_min, view<const double> axis_max,
                               view<const double> list_values = {nullptr, 0},
                               view<const int32_t> pairs = {nullptr, 0},
                               const sg_emlog_options *options = nullptr) const {
        emlog_result r = grid(axis_kind, axis_count, axis_min, axis_max, pairs);
        check(sg_emlog_search_device(get(), axis_kind.data(), axis_count.data(),
                                     axis_min.data(), axis_max.data(), or_null(list_values),
                                     list_values.size(), pairs.size() / 2, or_null(pairs),
                                     options, r.out()));
        return r;
    }
    // The same on `stream`, which becomes the context's stream (see stream_t).
    emlog_result search_device(stream_t stream, view<const int32_t> axis_kind,
                               view<const std::size_t> axis_count, view<const double> axis_min,
                               view<const double> axis_max,
                               view<const double> list_values = {nullptr, 0},
                               view<const int32_t> pairs = {nullptr, 0},
                               const sg_emlog_options *options = nullptr) const {
        ctx_.set_stream(stream);
        return search_device(axis_kind, axis_count, axis_min, axis_max, list_values, pairs,
                             options);
    }

private:
    emlog_plan(const context &ctx, std::size_t p) : p_(p), ctx_(ctx) {}

    // The problem's arrays hold what the C call reads (host or device views).
    template <class V>
    static void problem(std::size_t n, std::size_t m, const V &a, std::size_t row_stride,
                        std::size_t col_stride, const V &sigma0, const V &f0, const V &f_exp,
                        const V &delta) {
        detail::need(a, n == 0 || m == 0 ? 0 : (n - 1) * row_stride + (m - 1) * col_stride + 1,
                     "a");
        detail::need(sigma0, m, "sigma0");
        detail::need(f0, n, "f0");
        detail::need(f_exp, n, "f_exp");
        detail::need(delta, n, "delta");
    }
    // A result for a grid of these axes, after checking that each holds p values and that
    // `pairs` holds whole pairs.
    emlog_result grid(const view<const int32_t> &axis_kind,
                      const view<const std::size_t> &axis_count,
                      const view<const double> &axis_min, const view<const double> &axis_max,
                      const view<const int32_t> &pairs) const {
        detail::need(axis_kind, p_, "axis_kind");
        detail::need(axis_count, p_, "axis_count");
        detail::need(axis_min, p_, "axis_min");
        detail::need(axis_max, p_, "axis_max");
        if (pairs.size() % 2 != 0) {
            throw error(SG_ERR_INVALID_ARGUMENT, "pairs holds " + std::to_string(pairs.size()) +
                                                     " indices; each pair takes two");
        }
        return emlog_result(ctx_,
                            std::vector<std::size_t>(axis_count.data(), axis_count.data() + p_),
                            std::vector<int32_t>(pairs.data(), pairs.data() + pairs.size()));
    }
    template <class T> static T *or_null(const view<T> &v) {
        return v.size() > 0 ? v.data() : nullptr;
    }

    std::size_t p_;
    detail::context_ref ctx_;
};

} // namespace seisgpu

#endif // SEISGPU_HPP
