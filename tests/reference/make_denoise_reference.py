#!/usr/bin/env python3
"""Writes tests/data/denoise_reference.{txt,bin}: a NumPy reference for seisgpu's
wavelet denoising (sg_dwt_denoise_*), independent of the library's Rust code.

The periodic DWT is built here as dense matrices, one per level, from the filter
taps alone, with GSL's conventions:

  forward, level of length m:  a[i] = sum_k h1[k] x[(2i + k - off) mod m]
                               d[i] = sum_k g1[k] x[(2i + k - off) mod m]
  inverse:                     x[(2i + k - off) mod m] += h2[k] a[i] + g2[k] d[i]
  g1[k] = s (-1)^k h2[nc-1-k],  g2[k] = s (-1)^k h1[nc-1-k]
  s = -1 for B-spline members 2xx and 3xx, else +1;  off = nc/2 when centered, else 0
  layout after L levels: [a_L | d_L | ... | d_1], d_j at [n >> j, n >> (j-1))

The low-pass taps (h1 = analysis, h2 = synthesis) are read from src/dwt/filters.rs.
The matrices are checked for perfect reconstruction (and orthogonality where the
wavelet is orthogonal) and, when libgsl can be loaded through ctypes, against GSL's
own gsl_wavelet_transform_forward/inverse.

Denoising (Donoho-Johnstone): sigma = median(|d|) / 0.6745 from the finest level d_1
(or from each level), universal threshold lambda = sigma * sqrt(2 ln n), n the trace
length, or a fixed lambda; soft or hard; only levels whose bit j-1 is set in the mask;
approximation untouched. Reported thresholds are 0 for levels left alone.

Usage: python3 tests/reference/make_denoise_reference.py   (needs numpy; see README.md)
"""

import ctypes
import ctypes.util
import math
import os
import re
import struct
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FILTERS_RS = os.path.join(ROOT, "src", "dwt", "filters.rs")
OUT_TXT = os.path.join(ROOT, "tests", "data", "denoise_reference.txt")
OUT_BIN = os.path.join(ROOT, "tests", "data", "denoise_reference.bin")

# The C ABI's codes (include/seisgpu.h).
DAUBECHIES, DAUBECHIES_CENTERED, HAAR, HAAR_CENTERED, BSPLINE, BSPLINE_CENTERED = 1, 2, 3, 4, 5, 6
UNIVERSAL, FIXED = 0, 1
SOFT, HARD = 0, 1
FINEST, PER_LEVEL = 0, 1
ALL = (1 << 64) - 1
CENTERED = {DAUBECHIES_CENTERED, HAAR_CENTERED, BSPLINE_CENTERED}
BASE = {
    DAUBECHIES: "DAUBECHIES", DAUBECHIES_CENTERED: "DAUBECHIES",
    HAAR: "HAAR", HAAR_CENTERED: "HAAR",
    BSPLINE: "BSPLINE", BSPLINE_CENTERED: "BSPLINE",
}
GSL_NAME = {
    DAUBECHIES: "gsl_wavelet_daubechies", DAUBECHIES_CENTERED: "gsl_wavelet_daubechies_centered",
    HAAR: "gsl_wavelet_haar", HAAR_CENTERED: "gsl_wavelet_haar_centered",
    BSPLINE: "gsl_wavelet_bspline", BSPLINE_CENTERED: "gsl_wavelet_bspline_centered",
}


# ---------------------------------------------------------------- filter taps

def read_taps():
    """{('DAUBECHIES', 8): (h1, h2), ...} from src/dwt/filters.rs."""
    src = open(FILTERS_RS).read()
    number = r"-?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?"
    taps_re = re.compile(
        r"member:\s*(\d+),\s*analysis:\s*&\[([^\]]*)\],\s*synthesis:\s*&\[([^\]]*)\]", re.S)
    sections = []
    for name in ("HAAR", "DAUBECHIES", "BSPLINE"):
        m = re.search(r"pub const %s\b" % name, src)
        if not m:
            sys.exit("filters.rs has no `pub const %s`" % name)
        sections.append((m.start(), name))
    sections.sort()
    out = {}
    for idx, (start, name) in enumerate(sections):
        end = sections[idx + 1][0] if idx + 1 < len(sections) else len(src)
        for m in taps_re.finditer(src, start, end):
            h1 = np.array([float(v) for v in re.findall(number, m.group(2))])
            h2 = np.array([float(v) for v in re.findall(number, m.group(3))])
            assert len(h1) == len(h2) and len(h1) >= 2, (name, m.group(1))
            out[(name, int(m.group(1)))] = (h1, h2)
    expected = [("HAAR", 2)] + [("DAUBECHIES", k) for k in range(4, 21, 2)] + [
        ("BSPLINE", k) for k in (103, 105, 202, 204, 206, 208, 301, 303, 305, 307, 309)]
    missing = [k for k in expected if k not in out]
    if missing or len(out) != len(expected):
        sys.exit("unexpected members in filters.rs: missing %s, found %s" % (missing, sorted(out)))
    return out


class Wavelet:
    def __init__(self, taps, family, member):
        h1, h2 = taps[(BASE[family], member)]
        nc = len(h1)
        s = -1.0 if family in (BSPLINE, BSPLINE_CENTERED) and member >= 200 else 1.0
        alt = np.array([1.0 if k % 2 == 0 else -1.0 for k in range(nc)])
        self.family, self.member = family, member
        self.h1, self.h2 = h1, h2
        self.g1 = s * alt * h2[::-1]
        self.g2 = s * alt * h1[::-1]
        self.offset = nc // 2 if family in CENTERED else 0
        self.orthogonal = family in (DAUBECHIES, DAUBECHIES_CENTERED, HAAR, HAAR_CENTERED)
        self._cache = {}

    def step(self, m):
        """Dense forward (W) and inverse (V) matrices of one level of length m."""
        if m not in self._cache:
            nc, half = len(self.h1), m // 2
            W = np.zeros((m, m))
            V = np.zeros((m, m))
            for i in range(half):
                for k in range(nc):
                    j = (2 * i + k - self.offset) % m
                    W[i, j] += self.h1[k]
                    W[half + i, j] += self.g1[k]
                    V[j, i] += self.h2[k]
                    V[j, half + i] += self.g2[k]
            self._cache[m] = (W, V)
        return self._cache[m]

    def forward(self, x, levels):
        c = np.array(x, dtype=np.float64)
        n = len(c)
        for l in range(levels):
            m = n >> l
            c[:m] = self.step(m)[0] @ c[:m]
        return c

    def inverse(self, c, levels):
        x = np.array(c, dtype=np.float64)
        n = len(x)
        for l in reversed(range(levels)):
            m = n >> l
            x[:m] = self.step(m)[1] @ x[:m]
        return x

    def self_check(self, n):
        r2 = math.sqrt(2.0)
        assert abs(self.h1.sum() - r2) < 1e-14 and abs(self.h2.sum() - r2) < 1e-14
        assert abs(self.g1.sum()) < 1e-14 and abs(self.g2.sum()) < 1e-14
        m = n
        while m >= 2:
            W, V = self.step(m)
            assert np.abs(V @ W - np.eye(m)).max() < 1e-12, ("no perfect reconstruction", m)
            if self.orthogonal:
                assert np.abs(W @ W.T - np.eye(m)).max() < 1e-12, ("not orthogonal", m)
                assert np.abs(V - W.T).max() < 1e-15
            m //= 2


# ---------------------------------------------------------------- optional GSL cross-check

def load_gsl():
    try:
        cblas = ctypes.util.find_library("gslcblas")
        if cblas:
            ctypes.CDLL(cblas, mode=ctypes.RTLD_GLOBAL)
        lib = ctypes.CDLL(ctypes.util.find_library("gsl") or "libgsl.so")
    except OSError:
        return None
    lib.gsl_set_error_handler_off.restype = ctypes.c_void_p
    lib.gsl_set_error_handler_off()
    lib.gsl_wavelet_alloc.restype = ctypes.c_void_p
    lib.gsl_wavelet_alloc.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    lib.gsl_wavelet_workspace_alloc.restype = ctypes.c_void_p
    lib.gsl_wavelet_workspace_alloc.argtypes = [ctypes.c_size_t]
    for f in ("gsl_wavelet_transform_forward", "gsl_wavelet_transform_inverse"):
        getattr(lib, f).argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t,
                                    ctypes.c_size_t, ctypes.c_void_p]
    lib.gsl_wavelet_free.argtypes = [ctypes.c_void_p]
    lib.gsl_wavelet_workspace_free.argtypes = [ctypes.c_void_p]
    return lib


def gsl_check(lib, wav, n):
    """Our dense full-depth transforms against GSL's, on random data; returns the error."""
    t = ctypes.c_void_p.in_dll(lib, GSL_NAME[wav.family]).value
    w = lib.gsl_wavelet_alloc(t, wav.member)
    assert w, "GSL lacks this wavelet"
    work = lib.gsl_wavelet_workspace_alloc(n)
    rng = SplitMix(4242 + n)
    x = np.array([rng.uniform() * 2 - 1 for _ in range(n)])
    levels = n.bit_length() - 1
    err = 0.0
    for fn, ours in ((lib.gsl_wavelet_transform_forward, wav.forward(x, levels)),
                     (lib.gsl_wavelet_transform_inverse, wav.inverse(x, levels))):
        buf = np.ascontiguousarray(x.copy())
        assert fn(w, buf.ctypes.data, 1, n, work) == 0
        err = max(err, np.abs(ours - buf).max() / np.abs(buf).max())
    lib.gsl_wavelet_workspace_free(work)
    lib.gsl_wavelet_free(w)
    assert err < 1e-12, ("dense transform disagrees with GSL", wav.family, wav.member, n, err)
    return err


# ---------------------------------------------------------------- test signals

class SplitMix:
    """SplitMix64 and Box-Muller, so that the fixture is reproducible bit for bit."""

    def __init__(self, seed):
        self.s = seed & 0xFFFFFFFFFFFFFFFF

    def next(self):
        self.s = (self.s + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
        z = self.s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
        return z ^ (z >> 31)

    def uniform(self):
        return (self.next() >> 11) * (1.0 / (1 << 53))

    def gauss(self):
        u1 = 1.0 - self.uniform()
        u2 = self.uniform()
        return math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)


def clean_signal(n):
    """Piecewise smooth: steps ("blocks"), narrow peaks ("bumps") and a slow chirp."""
    t = (np.arange(n) + 0.5) / n
    jumps = [0.10, 0.13, 0.15, 0.23, 0.25, 0.40, 0.44, 0.65, 0.76, 0.78, 0.81]
    steps = [4.0, -5.0, 3.0, -4.0, 5.0, -4.2, 2.1, 4.3, -3.1, 2.1, -4.2]
    blocks = sum(h * (t > p) for p, h in zip(jumps, steps))
    peaks = [(0.30, 4.0, 0.005), (0.52, 5.0, 0.008), (0.60, 3.0, 0.004), (0.90, 4.5, 0.010)]
    bumps = sum(h / (1.0 + np.abs((t - p) / w)) ** 4 for p, h, w in peaks)
    chirp = 1.5 * np.sin(2 * np.pi * (3 * t + 4 * t * t))
    return blocks + bumps + chirp


def snr_db(clean, estimate):
    return 10.0 * math.log10(np.sum(clean ** 2) / np.sum((estimate - clean) ** 2))


# ---------------------------------------------------------------- the denoising rule

def denoise(wav, x, rule, mode, noise, fixed, levels, mask):
    n = len(x)
    L = levels or (n.bit_length() - 1)
    c = wav.forward(x, L)
    sigma = lambda j: np.median(np.abs(c[n >> j: n >> (j - 1)])) / 0.6745
    sqrt2logn = math.sqrt(2.0 * math.log(n))
    finest = sigma(1)
    thresholds, margin = [], math.inf
    for j in range(1, L + 1):
        if not (mask >> (j - 1)) & 1:
            thresholds.append(0.0)
            continue
        if rule == FIXED:
            lam = fixed
        elif noise == FINEST:
            lam = finest * sqrt2logn
        else:
            lam = sigma(j) * sqrt2logn
        thresholds.append(lam)
        d = c[n >> j: n >> (j - 1)]
        if lam > 0:
            margin = min(margin, float(np.min(np.abs(np.abs(d) - lam))) / lam)
        if mode == SOFT:
            d[:] = np.sign(d) * np.maximum(np.abs(d) - lam, 0.0)
        else:
            d[:] = np.where(np.abs(d) > lam, d, 0.0)
    return wav.inverse(c, L), thresholds, float(margin)


# ---------------------------------------------------------------- the cases

SIGNALS = [  # name, n, noise sigma, seed
    ("s1024", 1024, 2.0, 20240601),
    ("s4096", 4096, 2.0, 20240602),
]

CASES = [  # name, signal, family, member, rule, mode, noise, fixed, levels, mask
    ("db8_soft_finest", "s1024", DAUBECHIES, 8, UNIVERSAL, SOFT, FINEST, 0.0, 0, ALL),
    ("db8_hard_finest", "s1024", DAUBECHIES, 8, UNIVERSAL, HARD, FINEST, 0.0, 0, ALL),
    ("db8_soft_perlevel", "s1024", DAUBECHIES, 8, UNIVERSAL, SOFT, PER_LEVEL, 0.0, 0, ALL),
    ("haar_soft_finest", "s1024", HAAR, 2, UNIVERSAL, SOFT, FINEST, 0.0, 0, ALL),
    ("haar_hard_perlevel", "s1024", HAAR, 2, UNIVERSAL, HARD, PER_LEVEL, 0.0, 0, ALL),
    ("bs309_soft_finest", "s1024", BSPLINE, 309, UNIVERSAL, SOFT, FINEST, 0.0, 0, ALL),
    ("bs309c_soft_perlevel", "s1024", BSPLINE_CENTERED, 309, UNIVERSAL, SOFT, PER_LEVEL, 0.0, 0, ALL),
    ("db8c_hard_finest", "s1024", DAUBECHIES_CENTERED, 8, UNIVERSAL, HARD, FINEST, 0.0, 0, ALL),
    ("db8_fixed_soft", "s1024", DAUBECHIES, 8, FIXED, SOFT, FINEST, 2.5, 0, ALL),
    ("db8_fixed_hard_mask101", "s1024", DAUBECHIES, 8, FIXED, HARD, PER_LEVEL, 3.0, 0, 0b101),
    ("bs309_soft_finest_mask0110", "s1024", BSPLINE, 309, UNIVERSAL, SOFT, FINEST, 0.0, 0, 0b0110),
    ("db8_partial4_soft_perlevel", "s1024", DAUBECHIES, 8, UNIVERSAL, SOFT, PER_LEVEL, 0.0, 4, ALL),
    ("db8_soft_finest_4096", "s4096", DAUBECHIES, 8, UNIVERSAL, SOFT, FINEST, 0.0, 0, ALL),
    ("bs309c_partial6_hard_perlevel_mask_4096", "s4096", BSPLINE_CENTERED, 309, UNIVERSAL, HARD,
     PER_LEVEL, 0.0, 6, 0b111011),
]


def main():
    taps = read_taps()
    gsl = load_gsl()
    blob = []  # float64 values, concatenated

    def put(values):
        off = sum(len(b) for b in blob)
        blob.append(np.asarray(values, dtype=np.float64))
        return off

    lines = [
        "# seisgpu wavelet denoising reference; written by tests/reference/make_denoise_reference.py",
        "# offsets count float64 values (little-endian) in denoise_reference.bin",
        "format seisgpu-denoise-reference 1",
    ]
    signals = {}
    for name, n, sigma, seed in SIGNALS:
        clean = clean_signal(n)
        rng = SplitMix(seed)
        noisy = clean + sigma * np.array([rng.gauss() for _ in range(n)])
        print("  signal %s: n=%d, noise sigma %g, SNR %.2f dB" % (name, n, sigma, snr_db(clean, noisy)))
        signals[name] = (clean, noisy)
        lines.append("signal name=%s n=%d sigma=%r seed=%d clean=%d noisy=%d snr=%r" % (
            name, n, sigma, seed, put(clean), put(noisy), snr_db(clean, noisy)))

    checked = set()
    for (name, sig, fam, member, rule, mode, noise, fixed, levels, mask) in CASES:
        clean, noisy = signals[sig]
        n = len(noisy)
        wav = Wavelet(taps, fam, member)
        if (fam, member, n) not in checked:
            wav.self_check(n)
            note = "no libgsl" if gsl is None else "GSL agrees to %.1e" % gsl_check(gsl, wav, n)
            print("  family %d member %d n=%d: matrices checked (%s)" % (fam, member, n, note))
            checked.add((fam, member, n))
        out, thr, margin = denoise(wav, noisy, rule, mode, noise, fixed, levels, mask)
        if mode == HARD:
            # Keep hard thresholding away from ties, so rounding cannot flip a coefficient.
            assert margin > 1e-9, (name, margin)
        lines.append(
            "case name=%s signal=%s family=%d member=%d rule=%d mode=%d noise=%d fixed=%r "
            "levels=%d mask=%d output=%d thresholds=%d n_thresholds=%d margin=%r snr=%r" % (
                name, sig, fam, member, rule, mode, noise, fixed, levels, mask, put(out),
                put(thr), len(thr), margin, snr_db(clean, out)))
        print("  %-40s SNR %+.2f dB, thresholds %s, min ||d|-lambda|/lambda %.1e" % (
            name, snr_db(clean, out) - snr_db(clean, noisy),
            " ".join("%.3g" % t for t in thr), margin))

    data = np.concatenate(blob).astype("<f8")
    os.makedirs(os.path.dirname(OUT_BIN), exist_ok=True)
    with open(OUT_BIN, "wb") as f:
        f.write(data.tobytes())
    with open(OUT_TXT, "w") as f:
        f.write("\n".join(lines) + "\n")
    # Read back what was written.
    back = np.frombuffer(open(OUT_BIN, "rb").read(), dtype="<f8")
    assert np.array_equal(back, data)
    assert struct.unpack("<d", open(OUT_BIN, "rb").read(8))[0] == data[0]
    size = os.path.getsize(OUT_BIN) + os.path.getsize(OUT_TXT)
    print("wrote %s and %s (%d bytes)" % (OUT_TXT, OUT_BIN, size))
    assert size < 300_000


if __name__ == "__main__":
    main()
