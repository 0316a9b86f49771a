// denoise.cpp: seisgpu from C++ through include/seisgpu.hpp.
//
// Makes a CPU context, prints its description, then checks known answers and exits
// non-zero if one fails:
//   1. a Haar forward transform of [1, 2, 3, 4] gives [5, −2, −1/√2, −1/√2] (GSL layout);
//   2. forward then inverse Daubechies-8 of 16 noisy traces returns them (max error < 1e-4);
//   3. F-X decon of three flat Ricker events plus Gaussian noise lowers the error
//      against the clean section (std::vector overloads);
//   4. failures throw seisgpu::error with the status and the library's message: a
//      length the wavelet refuses (SG_ERR_UNSUPPORTED), a view shorter than the call
//      needs (SG_ERR_INVALID_ARGUMENT), NaN input (SG_ERR_NON_FINITE);
//   5. owners are move-only: a moved-from plan holds no handle;
//   6. a progress callback (any callable) sees fractions that only grow, ending at 1;
//   7. wave packets of the same noisy section: forward then inverse of the clean one
//      returns it (relative error < 1e-4), and per-box thresholds at 2.5 σ‖ψ_b‖ for the
//      known σ lower the error against the clean section;
//   8. the section as a tiled volume (two tiles along time) on one context and dealt out
//      over two: the same coefficients, and its inverse returns the section;
//   9. an EM-logging search of two conductivities (4 noise-free measurements, a 5 × 5
//      grid through the truth): the best model is the truth at F ≈ 0, and the marginals
//      and the 2D marginal each sum to the equivalent models' count;
//  10. ambient noise at three stations, each 2 s later than the last: every pair stacks
//      every window, pair (0, 1) peaks at lag +2 s, and the substacks of 900 s groups
//      share out each pair's windows;
//  11. device methods on a CPU context throw SG_ERR_UNSUPPORTED, the stream overloads too.
//
// Build: see tests/cpp/run.sh (any C++17 compiler; -I include -L target/release -lseisgpu).

#include "seisgpu.hpp"

#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

namespace {

int failures = 0;

void expect(bool ok, const char *what) {
    std::printf("  [%s] %s\n", ok ? "ok" : "FAIL", what);
    failures += ok ? 0 : 1;
}

// Runs `call` and reports whether it threw seisgpu::error with `status` and a message.
template <class F> bool throws(sg_status status, F call) {
    try {
        call();
    } catch (const seisgpu::error &e) {
        std::printf("    (%s)\n", e.what());
        return e.status() == status && !e.message().empty();
    }
    return false;
}

constexpr double pi = 3.14159265358979323846;

double ricker(double t) {
    const double a = (pi * 25.0 * t) * (pi * 25.0 * t);
    return (1.0 - 2.0 * a) * std::exp(-a);
}

double rms(const std::vector<float> &a, const std::vector<float> &b) {
    double s = 0.0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        s += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
    }
    return std::sqrt(s / double(a.size()));
}

// f = A·σ, A 4 × 2 (row-major), σ = (1, 1), δ = 5 %; both columns searched on 0.8 … 1.2.
void em_search(const seisgpu::context &ctx) {
    const std::vector<double> a{1, 0, 0, 1, 1, 1, 1, 2}, sigma0{1, 1}, f{1, 1, 2, 3};
    const std::vector<double> delta(4, 0.05), lo(2, 0.8), hi(2, 1.2);
    const std::vector<int32_t> searched{0, 1}, kinds(2, SG_EMLOG_AXIS_LINEAR), pairs{0, 1};
    const std::vector<std::size_t> counts(2, 5);
    seisgpu::emlog_plan em(ctx, 4, 2, a, 2, 1, sigma0, f, f, delta, searched);
    const auto exact = em.analytic(SG_EMLOG_FIT_WITHIN_ERRORS, 1.0);
    const seisgpu::emlog_result r = em.search(kinds, counts, lo, hi, {nullptr, 0}, pairs);
    const auto s = r.summary();
    auto sum = [](const std::vector<uint64_t> &v) {
        uint64_t t = 0;
        for (uint64_t c : v) {
            t += c;
        }
        return t;
    };
    std::printf("    EM search: %llu of %llu models equivalent, best %llu at F = %g\n",
                (unsigned long long)s.count, (unsigned long long)s.total,
                (unsigned long long)s.best_index, s.best_misfit);
    expect(std::fabs(exact.sigma_star[0] - 1) < 1e-9 && std::fabs(exact.sigma_star[1] - 1) < 1e-9 &&
               s.total == 25 && s.best_index == 12 && s.best_misfit < 1e-12 &&
               std::fabs(s.best_model[0] - 1) < 1e-12 && std::fabs(s.best_model[1] - 1) < 1e-12,
           "EM search: the least-squares and the grid's best model are the truth");
    expect(s.count > 0 && sum(r.marginal(0)) == s.count && sum(r.marginal(1)) == s.count &&
               sum(r.pair(0)) == s.count && r.pair(0).size() == 25,
           "EM search: marginals and the 2D marginal sum to the equivalent models");
}

// One hour at 1 Hz of a shared random field, station s delayed by 2·s seconds.
void xcorr_substacks(const seisgpu::context &ctx) {
    const std::size_t stations = 3, n = 3600, pairs = 3;
    std::mt19937 rng(7);
    std::normal_distribution<float> g(0.0f, 1.0f);
    std::vector<float> field(n + 8), days(stations * n);
    for (float &v : field) {
        v = g(rng);
    }
    for (std::size_t s = 0; s < stations; ++s) {
        for (std::size_t t = 0; t < n; ++t) {
            days[s * n + t] = field[t + 8 - 2 * s] + 0.3f * g(rng);
        }
    }
    sg_xcorr_options o = sg_xcorr_options_default();
    o.sampling_rate = 1.0;
    o.cc_len = 300.0;
    o.step = 150.0;
    o.freqmin = 0.05;
    o.freqmax = 0.3;
    o.maxlag = 30.0;
    seisgpu::xcorr_plan plan(ctx, o);
    const auto sz = plan.sizes(n);
    const seisgpu::xcorr_spectra day = plan.preprocess(days, stations, n);
    const std::vector<const seisgpu::xcorr_spectra *> list{&day};
    std::vector<float> stacks(pairs * sz.n_lags), sub;
    std::vector<uint32_t> windows(pairs), sub_windows;
    plan.correlate(list, 0, stations, 0, stations, stacks, sz.n_lags, windows);
    std::size_t peak = 0;
    for (std::size_t k = 1; k < sz.n_lags; ++k) {
        peak = stacks[k] > stacks[peak] ? k : peak;
    }
    const std::vector<std::size_t> per_day{sz.n_windows};
    const std::vector<double> start{0.0};
    const auto [labels, groups] = plan.substack_groups(per_day, start, 900.0);
    sub.resize(groups * pairs * sz.n_lags);
    sub_windows.resize(groups * pairs);
    plan.correlate_substacks(list, 0, stations, 0, stations, labels, groups, stacks, sz.n_lags,
                             windows, sub, sub_windows);
    bool shared = true;
    for (std::size_t p = 0; p < pairs; ++p) {
        uint32_t total = 0;
        for (std::size_t gi = 0; gi < groups; ++gi) {
            total += sub_windows[gi * pairs + p];
        }
        shared = shared && windows[p] == sz.n_windows && total == windows[p];
    }
    std::printf("    xcorr: %zu windows, %zu groups, pair (0, 1) peaks at %+ld s\n", sz.n_windows,
                groups, long(peak) - long(sz.n_lags / 2));
    expect(shared && long(peak) - long(sz.n_lags / 2) == 2,
           "xcorr: pair (0, 1) peaks at +2 s; the substacks share out every window");
}

// A CPU context has no device calls: each method says so, with or without a stream.
void device_refused(const seisgpu::context &ctx, const seisgpu::dwt_plan &dwt) {
    std::vector<float> host(dwt.n_samples());
    const seisgpu::device_view<float> d(host.data(), host.size());
    const sg_dwt_denoise_options opt = sg_dwt_denoise_options_default();
    const std::vector<double> a{1, 0, 0, 1}, ones{1, 1}, delta{0.05, 0.05};
    const std::vector<int32_t> searched{0};
    seisgpu::emlog_plan em(ctx, 2, 2, a, 2, 1, ones, ones, ones, delta, searched);
    const std::vector<int32_t> kinds{SG_EMLOG_AXIS_LINEAR};
    const std::vector<std::size_t> counts{3};
    const std::vector<double> lo{0.5}, hi{1.5};
    expect(throws(SG_ERR_UNSUPPORTED, [&] { dwt.denoise_device<float>(opt, d, d, 1); }) &&
               throws(SG_ERR_UNSUPPORTED,
                      [&] { dwt.denoise_device<float>(nullptr, opt, d, d, 1); }) &&
               throws(SG_ERR_UNSUPPORTED, [&] { em.search_device(kinds, counts, lo, hi); }) &&
               throws(SG_ERR_UNSUPPORTED,
                      [&] { em.search_device(nullptr, kinds, counts, lo, hi); }),
           "device methods on a CPU context throw SG_ERR_UNSUPPORTED, stream overloads too");
}

} // namespace

int main() {
    static_assert(!std::is_copy_constructible_v<seisgpu::dwt_plan>);
    static_assert(std::is_nothrow_move_constructible_v<seisgpu::dwt_plan>);
    try {
        seisgpu::context ctx(SG_BACKEND_CPU);
        std::printf("%s\n", ctx.describe().c_str());

        seisgpu::dwt_plan haar(ctx, SG_WAVELET_HAAR, 2, 4);
        const std::vector<double> x{1, 2, 3, 4};
        std::vector<double> c;
        haar.execute(SG_DWT_FORWARD, 0, x, c);
        const double r = std::sqrt(0.5);
        expect(std::fabs(c[0] - 5) < 1e-12 && std::fabs(c[1] + 2) < 1e-12 &&
                   std::fabs(c[2] + r) < 1e-12 && std::fabs(c[3] + r) < 1e-12,
               "Haar coefficients of [1, 2, 3, 4] are [5, -2, -1/sqrt2, -1/sqrt2]");

        const std::size_t n = 256, traces = 16;
        std::mt19937 rng(13);
        std::normal_distribution<float> noise(0.0f, 1.0f);
        std::vector<float> section(n * traces), coeffs, back;
        for (float &v : section) {
            v = noise(rng);
        }
        seisgpu::dwt_plan db8(ctx, SG_WAVELET_DAUBECHIES, 8, n);
        db8.execute(SG_DWT_FORWARD, 0, section, coeffs);
        db8.execute(SG_DWT_INVERSE, 0, coeffs, back);
        double worst = 0.0;
        for (std::size_t i = 0; i < section.size(); ++i) {
            worst = std::fmax(worst, std::fabs(double(back[i]) - section[i]));
        }
        expect(worst < 1e-4, "Daubechies-8 forward then inverse returns the traces");

        const std::size_t ns = 500, nt = 64;
        std::vector<float> clean(ns * nt), noisy(ns * nt), filtered;
        for (std::size_t t = 0; t < nt; ++t) {
            for (std::size_t s = 0; s < ns; ++s) {
                const double time = 0.004 * double(s);
                const double v = ricker(time - 0.4) - 0.7 * ricker(time - 1.0) +
                                 0.5 * ricker(time - 1.5);
                clean[t * ns + s] = float(v);
                noisy[t * ns + s] = float(v + 0.2 * noise(rng));
            }
        }
        sg_fxdecon_options fx = sg_fxdecon_options_default();
        fx.fmin_hz = 1.0; // filter the whole band the noise covers
        fx.fmax_hz = 110.0;
        auto plan = seisgpu::fxdecon_plan::section(ctx, fx, ns, nt);
        plan.execute_2d(noisy, filtered);
        const double before = rms(noisy, clean), after = rms(filtered, clean);
        std::printf("    F-X decon: RMS error %.4f before, %.4f after\n", before, after);
        expect(after < 0.7 * before, "F-X decon removes at least 30 % of the noise");

        expect(throws(SG_ERR_UNSUPPORTED, [&] { seisgpu::dwt_plan(ctx, SG_WAVELET_HAAR, 2, 6); }),
               "a 6-sample Haar plan throws SG_ERR_UNSUPPORTED");
        expect(throws(SG_ERR_INVALID_ARGUMENT,
                      [&] {
                          std::vector<float> out(n);
                          db8.execute<float>(SG_DWT_FORWARD, 0, section, out, traces);
                      }),
               "an output view shorter than the batch throws SG_ERR_INVALID_ARGUMENT");
        expect(throws(SG_ERR_NON_FINITE,
                      [&] {
                          std::vector<double> bad{1, std::numeric_limits<double>::quiet_NaN(), 3, 4};
                          std::vector<double> out;
                          haar.execute(SG_DWT_FORWARD, 0, bad, out);
                      }),
               "NaN input throws SG_ERR_NON_FINITE");

        std::vector<double> fractions;
        ctx.set_progress([&fractions](const char *, double f) {
            fractions.push_back(f);
            return false;
        });
        db8.execute(SG_DWT_FORWARD, 0, section, coeffs);
        ctx.set_progress({});
        bool growing = true;
        for (std::size_t i = 1; i < fractions.size(); ++i) {
            growing = growing && fractions[i - 1] <= fractions[i];
        }
        expect(!fractions.empty() && growing && fractions.back() == 1.0,
               "the progress callback sees growing fractions ending at 1");

        sg_wavepacket_layout_options wo = sg_wavepacket_layout_options_default();
        wo.directions = 16;
        wo.cutoff = 0.2;
        seisgpu::wavepacket_layout wp(ctx, {ns, nt}, SG_WAVEPACKET_F32, &wo);
        std::vector<float> wc(2 * wp.n_coefficients()), wback(ns * nt);
        wp.forward<float>(clean, wc);
        const auto report = wp.inverse<float>(wc, wback, 1e-6, 30);
        const double rel = rms(wback, clean) / rms(clean, std::vector<float>(clean.size()));
        std::printf("    wave packets: redundancy %.1f, round trip %.1e after %zu iterations\n",
                    double(wp.n_coefficients()) / double(wp.n_samples()), rel,
                    report.iterations);
        expect(rel < 1e-4, "wave packets: inverse(C f) returns the section");
        wp.forward<float>(noisy, wc);
        wp.threshold_noise<float>(wc, SG_WAVEPACKET_HARD, 2.5, 0.2);
        wp.inverse<float>(wc, wback, 1e-4, 30);
        std::printf("    wave packets: RMS error %.4f before, %.4f after\n", before,
                    rms(wback, clean));
        expect(rms(wback, clean) < 0.7 * before, "wave-packet thresholds remove at least 30 % of the noise");

        seisgpu::wavepacket_volume vol(ctx, {ns, nt}, {256, nt}, SG_WAVEPACKET_F32, &wo);
        seisgpu::context second(SG_BACKEND_CPU);
        seisgpu::wavepacket_volume dealt({&ctx, &second}, {ns, nt}, {256, nt},
                                         SG_WAVEPACKET_F32, &wo);
        std::vector<float> vc(2 * vol.n_coefficients()), vc2(vc.size()), vback(ns * nt);
        vol.forward<float>(clean, vc);
        dealt.forward<float>(clean, vc2);
        expect(vol.tiles()[0] == 2 && vc == vc2,
               "a volume in two tiles: two contexts give one context's coefficients");
        vol.inverse<float>(vc, vback, 1e-6, 30);
        const double vrel = rms(vback, clean) / rms(clean, std::vector<float>(clean.size()));
        std::printf("    tiled volume: %zu tiles, redundancy %.1f, round trip %.1e\n",
                    vol.tiles()[0] * vol.tiles()[1],
                    double(vol.n_coefficients()) / double(vol.n_samples()), vrel);
        expect(vrel < 1e-4, "tiled volume: inverse(C f) returns the section");

        em_search(ctx);
        xcorr_substacks(ctx);
        device_refused(ctx, db8);

        seisgpu::dwt_plan moved(std::move(haar));
        expect(haar.get() == nullptr && moved.get() != nullptr,
               "a moved-from plan holds no handle, the new owner does");
    } catch (const seisgpu::error &e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
    std::printf("cpp example: %d failed\n", failures);
    return failures == 0 ? 0 : 1;
}
