"""The GPU peer's rows beside `bench_dwt`'s: ptwt (the PyTorch Wavelet Toolbox) on the same
cases, f32, data already on the GPU, timed with CUDA events (median of --reps after three
untimed calls).

    python3 bench/dwt/ptwt_rows.py [--cases 16,20,22,24,26,65536x1024] [--reps 21]

Needs torch with CUDA, ptwt and PyWavelets (`pip install ptwt`). The wavelet is GSL's
daubechies 8 (8 taps), which PyWavelets calls "db4". ptwt has no periodized transform of
GSL's layout: its "periodic" mode pads each level periodically and keeps (m + 7) // 2
coefficients of a level of m, so its work is a little larger and its coefficients are not
seisgpu's. Two rows per case:
- transform: `wavedec` to PyWavelets' deepest level for the length, then `waverec`;
- denoise: the same with the denoise rule `bench_dwt` times (σ = median |d₁| / 0.6745 of
  each trace's finest details, λ = σ·√(2 ln n), soft thresholds on every detail level).
Each row says how far waverec(wavedec(x)) is from x (relative max), as a check."""

import argparse
import math
import statistics
from importlib.metadata import version

import ptwt
import pywt
import torch

WAVELET = "db4"


def parse_case(text):
    """'26' → one signal of 2^26 samples; '65536x1024' → 65,536 traces of 1,024."""
    if "x" in text:
        traces, n = text.split("x")
        return int(traces), int(n)
    return 1, 1 << int(text)


def levels(n):
    return pywt.dwt_max_level(n, pywt.Wavelet(WAVELET).dec_len)


def transform(x, level):
    return ptwt.waverec(ptwt.wavedec(x, WAVELET, mode="periodic", level=level), WAVELET)


def denoise(x, level):
    coeffs = ptwt.wavedec(x, WAVELET, mode="periodic", level=level)
    n = x.shape[-1]
    sigma = coeffs[-1].abs().median(dim=-1, keepdim=True).values / 0.6745
    lam = sigma * math.sqrt(2.0 * math.log(n))
    shrunk = [coeffs[0]] + [c.sign() * (c.abs() - lam).clamp(min=0) for c in coeffs[1:]]
    return ptwt.waverec(shrunk, WAVELET)


def time_ms(call, reps):
    for _ in range(3):
        call()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(reps):
        start.record()
        call()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default="16,20,22,24,26,65536x1024")
    ap.add_argument("--reps", type=int, default=21)
    args = ap.parse_args()
    dev = torch.device("cuda")
    print(f"ptwt {version('ptwt')}, PyWavelets {pywt.__version__}, torch {torch.__version__}, "
          f"{torch.cuda.get_device_name(dev)}")
    print("| case | ptwt levels | ptwt transform (device) | ptwt denoise (device) | round trip max error |")
    print("| --- | ---: | ---: | ---: | ---: |")
    gen = torch.Generator(device=dev).manual_seed(7)
    for text in args.cases.split(","):
        traces, n = parse_case(text)
        x = torch.randn(traces, n, device=dev, dtype=torch.float32, generator=gen)
        level = levels(n)
        back = transform(x, level)[..., :n]
        err = ((back - x).abs().max() / x.abs().max()).item()
        t_tr = time_ms(lambda: transform(x, level), args.reps)
        t_dn = time_ms(lambda: denoise(x, level), args.reps)
        label = f"{traces:,} traces × {n:,}" if traces > 1 else f"1 signal × 2^{n.bit_length() - 1}"
        print(f"| {label} | {level} | {t_tr:.3f} ms | {t_dn:.3f} ms | {err:.1e} |", flush=True)


if __name__ == "__main__":
    main()
