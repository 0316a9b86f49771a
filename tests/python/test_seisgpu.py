"""The Python binding (python/seisgpu.py) against known answers, without NumPy:
an orthonormal Haar transform of a constant, DWT round trips, denoising that brings a noisy
trace closer to the clean one, the wave packets' exact adjoint and inverse, and errors
raised with the library's status and message."""

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
