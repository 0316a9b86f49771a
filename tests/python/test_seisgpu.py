"""The Python binding (python/seisgpu.py) against known answers, without NumPy:
an orthonormal Haar transform of a constant, DWT round trips, denoising that brings a noisy
trace closer to the clean one, F-X decon that does too, USFFT types 1 and 2 against direct
sums, the wave packets' exact adjoint and inverse (a layout, and a volume in tiles), progress
reports and cancellation, and errors raised with the library's status and message."""

import cmath

import array
import math
import os
import random
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import seisgpu  # noqa: E402


def rel_l2(a, b):
    num = sum((x - y) ** 2 for x, y in zip(a, b))
    return math.sqrt(num / sum(y * y for y in b))


class Binding(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.ctx = seisgpu.Context("cpu")

    def test_version_and_context(self):
        self.assertRegex(seisgpu.version(), r"^\d+\.\d+\.\d+")
        self.assertIn("CPU", self.ctx.description)
        with self.assertRaises(KeyError):
            seisgpu.Context("tpu")

    def test_haar_of_a_constant_and_round_trips(self):
        haar = seisgpu.Dwt(self.ctx, 8, "haar", 2)
        c = haar.transform(array.array("d", [1.0] * 8))
        # Orthonormal: the approximation holds sqrt(8), every detail is 0.
        self.assertAlmostEqual(c[0], math.sqrt(8.0), places=12)
        self.assertTrue(all(abs(v) < 1e-12 for v in c[1:]))
        rng = random.Random(3)
        for code, tol in (("f", 1e-5), ("d", 1e-12)):
            x = array.array(code, [rng.uniform(-1, 1) for _ in range(4 * 256)])
            dwt = seisgpu.Dwt(self.ctx, 256)
            back = dwt.transform(dwt.transform(x), inverse=True)
            self.assertLess(rel_l2(back, x), tol)
            self.assertEqual(back.typecode, code)

    def test_denoising_brings_a_noisy_trace_closer(self):
        rng = random.Random(7)
        n = 1024
        clean = [math.sin(2 * math.pi * 5 * i / n) for i in range(n)]
        noisy = array.array("f", [v + rng.gauss(0, 0.3) for v in clean])
        out = seisgpu.Dwt(self.ctx, n).denoise(noisy)
        self.assertLess(rel_l2(out, clean), 0.6 * rel_l2(noisy, clean))

    def test_wavepacket_adjoint_and_inverse(self):
        rng = random.Random(11)
        for precision, code, tol in (("f64", "d", 1e-9), ("f32", "f", 1e-5)):
            wp = seisgpu.WavepacketLayout(self.ctx, (48, 40), precision, directions=8,
                                          tolerance=1e-12 if code == "d" else 1e-6)
            self.assertGreater(wp.n_coefficients, wp.n_samples)
            f = array.array(code, [rng.uniform(-1, 1) for _ in range(wp.n_samples)])
            c = array.array(code, [rng.uniform(-1, 1) for _ in range(2 * wp.n_coefficients)])
            cf, ac = wp.forward(f), wp.adjoint(c)
            lhs = sum(a * b for a, b in zip(cf, c))
            rhs = sum(a * b for a, b in zip(f, ac))
            scale = math.sqrt(sum(v * v for v in cf) * sum(v * v for v in c))
            self.assertLess(abs(lhs - rhs) / scale, tol)
            back, iterations, residual = wp.inverse(cf, tolerance=tol / 10, max_iterations=60)
            self.assertLess(rel_l2(back, f), tol * 10)
            self.assertGreater(iterations, 0)

    def test_fx_decon_brings_a_noisy_section_closer(self):
        rng = random.Random(9)
        ns, nt = 500, 48

        def ricker(t):
            a = (math.pi * 25.0 * t) ** 2
            return (1.0 - 2.0 * a) * math.exp(-a)
        clean = [ricker(0.004 * s - 0.4 - 0.002 * x) - 0.7 * ricker(0.004 * s - 1.0)
                 for x in range(nt) for s in range(ns)]
        noisy = array.array("f", [v + rng.gauss(0, 0.2) for v in clean])
        out = seisgpu.FxDecon(self.ctx, ns, nt).filter(noisy)
        # The default band leaves the noise outside it alone: about 0.79 of the error stays
        # (0.79-0.81 over seeds and noise levels); the identity would leave all of it.
        self.assertLess(rel_l2(out, clean), 0.85 * rel_l2(noisy, clean))

    def test_usfft_against_direct_sums(self):
        rng = random.Random(5)
        m, n1, n2 = 40, 12, 10
        x = array.array("d", [rng.uniform(-math.pi, math.pi) for _ in range(m)])
        y = array.array("d", [rng.uniform(-math.pi, math.pi) for _ in range(m)])
        modes = [(k1, k2) for k2 in range(-n2 // 2, n2 - n2 // 2)
                 for k1 in range(-n1 // 2, n1 - n1 // 2)]
        # Type 1: f(k) = sum_j c_j exp(-i k.x_j), modes centred, dimension 1 fastest.
        t1 = seisgpu.Usfft(self.ctx, 1, (n1, n2), "f64", sign=-1, tolerance=1e-12)
        t1.set_points(x, y)
        c = array.array("d", [rng.uniform(-1, 1) for _ in range(2 * m)])
        f = t1.execute(c)
        want = [sum(complex(c[2 * j], c[2 * j + 1]) * cmath.exp(-1j * (k1 * x[j] + k2 * y[j]))
                    for j in range(m)) for k1, k2 in modes]
        got = [complex(f[2 * i], f[2 * i + 1]) for i in range(len(modes))]
        err = math.sqrt(sum(abs(a - b) ** 2 for a, b in zip(got, want)) /
                        sum(abs(b) ** 2 for b in want))
        self.assertLess(err, 1e-10)
        # Type 2: c_j = sum_k f(k) exp(+i k.x_j), in single precision.
        t2 = seisgpu.Usfft(self.ctx, 2, (n1, n2), "f32", sign=1, tolerance=1e-5)
        t2.set_points(array.array("f", x), array.array("f", y))
        fm = array.array("f", [rng.uniform(-1, 1) for _ in range(2 * n1 * n2)])
        cv = t2.execute(fm)
        want = [sum(complex(fm[2 * i], fm[2 * i + 1]) * cmath.exp(1j * (k1 * x[j] + k2 * y[j]))
                    for i, (k1, k2) in enumerate(modes)) for j in range(m)]
        got = [complex(cv[2 * j], cv[2 * j + 1]) for j in range(m)]
        err = math.sqrt(sum(abs(a - b) ** 2 for a, b in zip(got, want)) /
                        sum(abs(b) ** 2 for b in want))
        self.assertLess(err, 1e-4)
        with self.assertRaises(ValueError):
            t1.set_points(x)

    def test_a_volume_in_tiles_round_trips(self):
        rng = random.Random(13)
        v = seisgpu.WavepacketVolume(self.ctx, (40, 70), (40, 32), "f64", directions=8,
                                     tolerance=1e-12)
        self.assertEqual(v.tiles, (1, 3, 1))
        f = array.array("d", [rng.uniform(-1, 1) for _ in range(v.n_samples)])
        back, iterations, _ = v.inverse(v.forward(f), tolerance=1e-11, max_iterations=60)
        self.assertLess(rel_l2(back, f), 1e-9)
        self.assertGreater(iterations, 0)
        # The tiles dealt out over two contexts: the same coefficients, bit for bit.
        two = seisgpu.WavepacketVolume([self.ctx, seisgpu.Context("cpu")], (40, 70), (40, 32),
                                       "f64", directions=8, tolerance=1e-12)
        self.assertEqual(list(two.forward(f)), list(v.forward(f)))
        with self.assertRaises(seisgpu.Error):
            seisgpu.WavepacketVolume([], (40, 70), (40, 32), "f64")

    def test_progress_reports_and_cancels(self):
        ctx = seisgpu.Context("cpu")
        dwt = seisgpu.Dwt(ctx, 1024)
        rng = random.Random(17)
        traces = array.array("f", [rng.uniform(-1, 1) for _ in range(512 * 1024)])
        seen = []
        ctx.set_progress(lambda stage, fraction: seen.append((stage, fraction)) and False)
        dwt.denoise(traces)
        fractions = [f for _, f in seen]
        self.assertTrue(fractions and fractions[-1] == 1.0)
        self.assertEqual(fractions, sorted(fractions))
        self.assertTrue(all(stage for stage, _ in seen))
        ctx.set_progress(lambda stage, fraction: True)
        with self.assertRaises(seisgpu.Error) as e:
            dwt.denoise(traces)
        self.assertEqual(e.exception.status, "SG_ERR_CANCELLED")

        def broken(stage, fraction):
            raise RuntimeError("a bug in the callback")
        ctx.set_progress(broken)
        with self.assertRaises(seisgpu.Error) as e:
            dwt.denoise(traces)
        self.assertEqual(e.exception.status, "SG_ERR_CANCELLED")
        ctx.set_progress(None)
        self.assertEqual(len(dwt.denoise(traces)), len(traces))

    def test_errors_carry_the_status_and_message(self):
        wp = seisgpu.WavepacketLayout(self.ctx, (32, 32), "f32", directions=4)
        data = array.array("f", [0.5] * wp.n_samples)
        data[77] = float("nan")
        with self.assertRaises(seisgpu.Error) as e:
            wp.forward(data)
        self.assertEqual(e.exception.status, "SG_ERR_NON_FINITE")
        self.assertIn("77", e.exception.message)
        with self.assertRaises(ValueError):
            wp.forward(array.array("f", [0.0] * (wp.n_samples - 1)))
        with self.assertRaises(TypeError):
            wp.forward(array.array("d", [0.0] * wp.n_samples))
        with self.assertRaises(seisgpu.Error) as e:
            seisgpu.WavepacketLayout(self.ctx, (32, 4))
        self.assertIn("shape[1]", e.exception.message)
        with self.assertRaises(seisgpu.Error) as e:
            seisgpu.Dwt(self.ctx, 100)
        self.assertEqual(e.exception.status, "SG_ERR_UNSUPPORTED")
        with self.assertRaises(TypeError):
            seisgpu.WavepacketLayout(self.ctx, (32, 32), spin=1)


if __name__ == "__main__":
    unittest.main(verbosity=2)
