"""F-X decon against Seismic Unix `sufxdecon`'s own outputs on the Penobscot crossline
(tests/data/sufxdecon/, the subsets tests/fxdecon_su_reference.rs compares): relative RMS
difference ≤ 1e-3 over the finite reference samples, float32 and float64; the 3D call on
any layout; options."""

from __future__ import annotations

import json

import numpy as np
import pytest

import seisgpu
from conftest import BACKEND, PENOBSCOT_SAMPLES


def su_reference(source, name):
    meta = json.loads((source / f"tests/data/sufxdecon/{name}.json").read_text())
    traces = np.array(meta["subset_traces"])
    ref = np.fromfile(source / f"tests/data/sufxdecon/{name}.f32", dtype="<f4")
    return traces, ref.reshape(len(traces), PENOBSCOT_SAMPLES), meta


def rel_rms_finite(out, ref):
    ok = np.isfinite(ref)
    d = out[ok].astype(np.float64) - ref[ok]
    return float(np.sqrt((d * d).sum() / (ref[ok].astype(np.float64) ** 2).sum())), int((~ok).sum())


SU_CASES = {
    "su_defaults": (dict(fft_length=3080), 0),
    "su_w20_f5": (dict(time_window_s=0.5, window_traces=20, operator_traces=5, fmin_hz=5.0,
                       fmax_hz=60.0, fft_length=280), 13380),
}


@pytest.mark.parametrize("name", list(SU_CASES))
def test_seismic_unix_mode_matches_sufxdecon(ctx, source, penobscot, name):
    options, nan_samples = SU_CASES[name]
    traces, ref, meta = su_reference(source, name)
    assert meta["sufxdecon_reported"]["nfft"] == options["fft_length"]
    plan = seisgpu.FxDecon(ctx, penobscot.shape, preset="seismic_unix", **options)
    for dtype in (np.float32, np.float64):
        out = plan.filter(penobscot.astype(dtype))
        assert out.dtype == dtype and out.shape == penobscot.shape
        assert np.isfinite(out).all()
        err, excluded = rel_rms_finite(out[traces], ref)
        print(f"{name} {np.dtype(dtype)}: relative RMS difference to sufxdecon {err:.2e} "
              f"({excluded} NaN reference samples excluded)")
        assert excluded == nan_samples
        assert err <= 1e-3


def events(n_samples, shape, dips):
    """25 Hz Ricker plane events on traces of `shape`, dt 4 ms."""
    t = np.arange(n_samples) * 0.004
    grid = np.indices(shape)
    out = np.zeros(shape + (n_samples,))
    for t0, *p in dips:
        te = t0 + sum(pi * g for pi, g in zip(p, grid))
        a = (np.pi * 25.0 * (t - te[..., None])) ** 2
        out += (1 - 2 * a) * np.exp(-a)
    return out


def test_3d_volume_any_layout_and_denoising(ctx):
    rng = np.random.default_rng(4)
    clean = events(200, (24, 30), [(0.2, 0.002, 0.001), (0.5, -0.001, 0.0015)])
    noisy = (clean + 0.3 * rng.standard_normal(clean.shape)).astype(np.float32)
    plan = seisgpu.FxDecon(ctx, noisy.shape, sample_interval_s=0.004, fmin_hz=1, fmax_hz=110)
    out = plan.filter(noisy)
    gain = np.linalg.norm(noisy - clean) / np.linalg.norm(out - clean)
    print(f"F-XY on a 24 × 30 × 200 synthetic: error reduced {gain:.2f}×")
    assert gain > 2.0
    # The same volume stored crossline-major (a transposed view): read without a copy, and
    # the same result; and a plan on the transposed shape sees the transposed volume.
    # Bit for bit on the CPU; on a GPU a strided volume is gathered into slabs of another
    # width, whose batched FFTs may round differently in the last place.
    same = np.testing.assert_array_equal if BACKEND == "cpu" else _within_ulps
    xl_major = np.ascontiguousarray(noisy.transpose(1, 0, 2)).transpose(1, 0, 2)
    same(plan.filter(xl_major), out)
    wide = np.zeros((24, 30, 260), np.float32)
    wide[..., 30:230] = noisy
    same(plan.filter(wide[..., 30:230]), out)


def _within_ulps(got, want):
    np.testing.assert_allclose(got, want, rtol=0, atol=4 * np.finfo(np.float32).eps * np.abs(want).max())


def test_options_and_presets(ctx, penobscot):
    section = penobscot[:64, 300:800]
    freqs = np.fft.rfftfreq(section.shape[1], 0.004)

    def energy_above_70_hz(x):
        return float((np.abs(np.fft.rfft(x, axis=1))[:, freqs > 70] ** 2).sum())

    kept = {}
    for out_of_band in ("pass", "zero"):
        plan = seisgpu.FxDecon(ctx, section.shape, fmin_hz=5, fmax_hz=50,
                               prediction="forward_backward", out_of_band=out_of_band)
        assert plan.options["prediction"] == "forward_backward"
        assert plan.options["out_of_band"] == out_of_band
        kept[out_of_band] = energy_above_70_hz(plan.filter(section)) / energy_above_70_hz(
            section)
    print(f"energy above 70 Hz kept (band 5–50 Hz): passed {kept['pass']:.2f}, "
          f"zeroed {kept['zero']:.2f}")
    assert kept["pass"] > 0.8 and kept["zero"] < 0.3
    with pytest.raises(seisgpu.ArgumentTypeError, match="unknown option 'window'"):
        seisgpu.FxDecon(ctx, section.shape, window=10)
    with pytest.raises(seisgpu.InvalidArgumentError, match="prediction"):
        seisgpu.FxDecon(ctx, section.shape, prediction="sideways")
    with pytest.raises(seisgpu.InvalidArgumentError) as e:
        seisgpu.FxDecon(ctx, section.shape, fmin_hz=80, fmax_hz=20)
    assert e.value.status == "SG_ERR_INVALID_ARGUMENT" and e.value.message
    with pytest.raises(seisgpu.UnsupportedError):
        seisgpu.FxDecon(ctx, (8, 8, 100), preset="seismic_unix")
