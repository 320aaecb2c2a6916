"""Executable.profile: per-thunk times of the host backend as a structured
object with a readable str; other backends raise."""

import json
import os
import unittest

import numpy as np

import hloc

# A 4-step loop whose body runs a gemm, then an fft (the host's FFT
# routine, a library call).
LOOP = """
HloModule profiled

body {
  p = (s32[], f32[16,16]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  m = f32[16,16] get-tuple-element(p), index=1
  d = f32[16,16] dot(m, m), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  s = f32[16,16] tanh(d)
  one = s32[] constant(1)
  j = s32[] add(i, one)
  ROOT t = (s32[], f32[16,16]) tuple(j, s)
}

cond {
  p = (s32[], f32[16,16]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  four = s32[] constant(4)
  ROOT lt = pred[] compare(i, four), direction=LT
}

ENTRY main {
  x = f32[16,16] parameter(0)
  c = c64[8] parameter(1)
  zero = s32[] constant(0)
  init = (s32[], f32[16,16]) tuple(zero, x)
  w = (s32[], f32[16,16]) while(init), condition=cond, body=body
  y = f32[16,16] get-tuple-element(w), index=1
  f = c64[8] fft(c), fft_type=FFT, fft_length={8}
  ROOT out = (f32[16,16], c64[8]) tuple(y, f)
}
"""


class ProfileTest(unittest.TestCase):
    def setUp(self):
        os.environ["HLOC_MACHINE_PEAK"] = "10,100"  # No calibration in tests.
        self.x = np.full((16, 16), 0.01, np.float32)
        self.c = np.ones(8, np.complex64)

    def test_host_profile(self):
        # Four trips would be unrolled; the test is about a loop's rows.
        exe = hloc.compile(LOOP, backend="host", disabled_passes=["while-loop-unroller"])
        profile = exe.profile(self.x, self.c, repeats=4)
        self.assertIsInstance(profile, hloc.Profile)
        self.assertEqual(profile.runs, 4)
        self.assertGreater(profile.mean_seconds, 0)
        self.assertEqual(profile.peak["bandwidth_gbps"], 10)
        by_name = {e["name"]: e for e in profile.entries}
        self.assertEqual(by_name["%w"]["category"], "loop")
        body = [e for e in profile.entries if e["parent"] == "%w body"]
        self.assertTrue(any(e["category"] == "library" for e in body), body)
        for e in body:
            self.assertEqual(e["calls"], 4, e)
        for e in profile.entries:
            if e["parent"] == "%w condition":
                self.assertEqual(e["calls"], 5, e)
        interpreter = [e["name"] for e in profile.entries if e["category"] == "interpreter"]
        self.assertEqual(interpreter, [])
        self.assertEqual(exe.stats["interpreter_ops"], 0)
        self.assertEqual(by_name["%f"]["category"], "library")
        shares = sum(e["share"] for e in profile.entries)
        runtime = [c for c in profile.categories if c["category"] == "runtime"][0]
        self.assertAlmostEqual(shares + runtime["share"], 1.0, places=6)
        self.assertAlmostEqual(sum(c["share"] for c in profile.categories), 1.0, places=6)
        times = [e["self_seconds"] for e in profile.entries]
        self.assertEqual(times, sorted(times, reverse=True))
        text = str(profile)
        self.assertIn("by category:", text)
        self.assertIn("[%w body]", text)
        self.assertIn("4 runs", text)
        json.dumps(profile.data)  # Plain data all the way down.
        # The profile's runs leave the results as a plain call computes them.
        self.assertTrue(np.allclose(exe(self.x, self.c)[0], exe(self.x, self.c)[0]))

    def test_bad_arguments_and_backends(self):
        exe = hloc.compile(LOOP, backend="host")
        with self.assertRaises(ValueError):
            exe.profile(self.x, self.c, repeats=0)
        with self.assertRaises(TypeError):
            exe.profile(self.x)
        interpreted = hloc.compile(LOOP, backend="interpreter")
        with self.assertRaisesRegex(hloc.Error, "host backend only"):
            interpreted.profile(self.x, self.c)


if __name__ == "__main__":
    unittest.main()
