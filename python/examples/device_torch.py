"""PyTorch CUDA tensors through seisgpu without leaving the GPU: the Penobscot crossline,
noisy, denoised with wavelets (levels above the signal band), then the spectrum of 40
irregularly placed denoised traces by the non-uniform FFT (type 1), all on a PyTorch stream
of one's own; checked against the same calls on NumPy arrays (the denoise bit for bit, the
type-1 USFFT to rounding). Prints "skipped: …" and exits with status 0 where PyTorch, a GPU
or seisgpu's CUDA backend is missing."""

import sys
from typing import NoReturn

import numpy as np

import seisgpu
from _data import penobscot, snr_db


def skip(reason: str) -> NoReturn:
    print(f"skipped: {reason}")
    sys.exit(0)


try:
    import torch
except ImportError:
    skip("no PyTorch")
if not torch.cuda.is_available():
    skip("no GPU for PyTorch")
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
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):  # every call below is queued on `stream`
        t_noisy = torch.from_numpy(noisy).cuda()
        t_clean = dwt.denoise(t_noisy, thresholded_levels=levels)
        t_filtered = fx.filter(t_clean)
        usfft.set_points(*(torch.from_numpy(p).cuda() for p in points))
        rows = torch.from_numpy(keep).cuda()
        t_spectrum = usfft.execute(t_clean[rows].reshape(-1).to(torch.complex64))
    stream.synchronize()
    # The same on the host: NumPy arrays in and out.
    clean = dwt.denoise(noisy, thresholded_levels=levels)
    filtered = fx.filter(clean)
    usfft.set_points(*points)
    spectrum = usfft.execute(clean[keep].ravel().astype(np.complex64))

got_clean, got_spectrum = t_clean.cpu().numpy(), t_spectrum.cpu().numpy()
print(f"denoised on the GPU: torch.Tensor {tuple(t_clean.shape)} {t_clean.dtype} on "
      f"{t_clean.device}; SNR {snr_db(noisy, section):.1f} dB → "
      f"{snr_db(got_clean, section):.1f} dB")
print(f"F-X filtered on the GPU: SNR {snr_db(t_filtered.cpu().numpy(), section):.1f} dB")
print(f"spectrum of 40 irregular traces: {tuple(t_spectrum.shape)} {t_spectrum.dtype}")
# The denoise is bit for bit; F-X (overlapping windows) and the type-1 USFFT (spreading) add
# atomically, in an order that follows the threads' timing: equal to rounding.
spread = np.max(np.abs(np.ascontiguousarray(got_spectrum) - spectrum)) / np.max(np.abs(spectrum))
fx_spread = np.max(np.abs(t_filtered.cpu().numpy() - filtered)) / np.max(np.abs(filtered))
same = np.array_equal(got_clean.view(np.uint32), clean.view(np.uint32))
same = same and spread < 1e-5 and fx_spread < 1e-5
if not same:
    sys.exit("the GPU pipeline differs from the host calls")
print(f"PyTorch pipeline: the denoise equals the host call bit for bit, the F-X filter to "
      f"{fx_spread:.1e}, the spectrum to {spread:.1e}")
