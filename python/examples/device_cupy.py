"""CuPy arrays through seisgpu without leaving the GPU: the Penobscot crossline, noisy,
denoised with wavelets (levels above the signal band), F-X prediction filtered, then the
spectrum of 40 irregularly placed denoised traces by the non-uniform FFT (type 1), all on a
CuPy stream of one's own; checked against the same calls on NumPy arrays (the denoise bit for
bit, the F-X filter and the type-1 USFFT to rounding). Prints "skipped: …" and exits
with status 0 where CuPy, a GPU or seisgpu's CUDA backend is missing."""

import sys
from typing import NoReturn

import numpy as np

import seisgpu
from _data import penobscot, snr_db


def skip(reason: str) -> NoReturn:
    print(f"skipped: {reason}")
    sys.exit(0)


try:
    import cupy
except ImportError:
    skip("no CuPy")
try:
    if cupy.cuda.runtime.getDeviceCount() == 0:
        skip("no GPU")
except Exception as e:  # noqa: BLE001 - no driver, no device
    skip(f"no GPU ({e})")
try:
    ctx = seisgpu.Context("cuda")
except seisgpu.Error as e:
    skip(f"no CUDA context for seisgpu ({e.message})")

section = penobscot()[:, 400:1424]  # 601 traces × 1024 samples, dt 4 ms
rng = np.random.default_rng(0)
noisy = section + 0.5 * section.std() * rng.standard_normal(section.shape).astype(np.float32)
keep = np.sort(rng.choice(section.shape[0], 40, replace=False))
to_radians = lambda i, n: (2 * np.pi * np.asarray(i, float) / n).astype(np.float32)  # noqa: E731
xt, xs = np.meshgrid(keep, np.arange(1024), indexing="ij")
points = to_radians(xt.ravel(), section.shape[0]), to_radians(xs.ravel(), 1024)

with ctx:
    dwt = seisgpu.Dwt(ctx, 1024, "daubechies", 8)
    levels = seisgpu.levels_above(60.0, 0.004, 1024)
    usfft = seisgpu.Usfft(ctx, 1, section.shape, dtype=np.complex64, tolerance=1e-5)
    fx = seisgpu.FxDecon(ctx, section.shape)
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:  # every call below is queued on `stream`, none waits for the GPU
        d_noisy = cupy.asarray(noisy)
        d_clean = dwt.denoise(d_noisy, thresholded_levels=levels)
        d_filtered = fx.filter(d_clean)
        usfft.set_points(*(cupy.asarray(p) for p in points))
        d_spectrum = usfft.execute(d_clean[cupy.asarray(keep)].ravel().astype(cupy.complex64))
    stream.synchronize()
    # The same on the host: NumPy arrays in and out.
    clean = dwt.denoise(noisy, thresholded_levels=levels)
    filtered = fx.filter(clean)
    usfft.set_points(*points)
    spectrum = usfft.execute(clean[keep].ravel().astype(np.complex64))

print(f"denoised on the GPU: {type(d_clean).__module__}.{type(d_clean).__name__} "
      f"{d_clean.shape} {d_clean.dtype}; SNR {snr_db(noisy, section):.1f} dB → "
      f"{snr_db(cupy.asnumpy(d_clean), section):.1f} dB")
print(f"F-X filtered on the GPU: SNR {snr_db(cupy.asnumpy(d_filtered), section):.1f} dB")
print(f"spectrum of 40 irregular traces: {type(d_spectrum).__name__} {d_spectrum.shape} "
      f"{d_spectrum.dtype}")
# The denoise is bit for bit; F-X (overlapping windows) and the type-1 USFFT (spreading) add
# atomically, in an order that follows the threads' timing: equal to rounding.
spread = np.max(np.abs(cupy.asnumpy(d_spectrum) - spectrum)) / np.max(np.abs(spectrum))
fx_spread = np.max(np.abs(cupy.asnumpy(d_filtered) - filtered)) / np.max(np.abs(filtered))
same = np.array_equal(cupy.asnumpy(d_clean).view(np.uint32), clean.view(np.uint32))
same = same and spread < 1e-5 and fx_spread < 1e-5
if not same:
    sys.exit("the GPU pipeline differs from the host calls")
print(f"CuPy pipeline: the denoise equals the host call bit for bit, the F-X filter to "
      f"{fx_spread:.1e}, the spectrum to {spread:.1e}")
