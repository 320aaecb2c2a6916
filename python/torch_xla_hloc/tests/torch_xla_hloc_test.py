"""PyTorch on hloc, end to end: one model of train_models.py runs on
PJRT_DEVICE=CPU (XLA:CPU, the reference) and on hloc, each in its own process
(torch_xla takes one device type per process), and the two must agree:
losses to 1e-5 relative, parameters to float rounding.

hloc is reached the way a user reaches it: the torch_xla_hloc package is
pip-installed (into a temporary folder on PYTHONPATH, its entry point found by
torch_xla) and PJRT_DEVICE=HLOC; or, with --library, with no package:
PJRT_DEVICE=LIBRARY PJRT_LIBRARY_PATH=libhloc_pjrt.so.

    python torch_xla_hloc_test.py PLUGIN.so PACKAGE_DIR MODEL [--library]
"""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
PLUGIN = os.path.abspath(sys.argv[1])
PACKAGE = os.path.abspath(sys.argv[2])
MODEL = sys.argv[3]
USE_LIBRARY = "--library" in sys.argv[4:]

# AdamW's learning rate and steps in train_models.transformer.
ADAMW_LR, ADAMW_STEPS = 1e-3, 4


def run_model(env_update, out):
    env = dict(os.environ)
    env.update(env_update)
    result = subprocess.run([sys.executable, os.path.join(HERE, "train_models.py"), MODEL, out],
                            env=env, capture_output=True, text=True, timeout=800)
    summary = [line for line in result.stdout.splitlines() if " on " in line]
    print("\n".join(summary) or result.stdout[-2000:], flush=True)
    if result.returncode != 0:
        raise AssertionError(f"{MODEL} failed with {env_update}:\n{result.stderr[-4000:]}")
    return np.load(out)


class TorchXlaOnHlocTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
        if USE_LIBRARY:
            hloc_env = {"PJRT_DEVICE": "LIBRARY", "PJRT_LIBRARY_PATH": PLUGIN}
        else:
            # pip builds in the source folder: give it a copy, not the runfiles.
            source = os.path.join(cls.tmp, "src")
            shutil.copytree(PACKAGE, source, symlinks=False,
                            ignore=shutil.ignore_patterns("tests", "BUILD", "lib", "build",
                                                          "*.egg-info"))
            site = os.path.join(cls.tmp, "site")
            subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                            "--no-build-isolation", "--target", site, source],
                           env=dict(os.environ, HLOC_PJRT_LIBRARY=PLUGIN), check=True)
            hloc_env = {"PJRT_DEVICE": "HLOC", "PYTHONPATH": site}
        cls.cpu = run_model({"PJRT_DEVICE": "CPU"}, os.path.join(cls.tmp, "cpu.npz"))
        cls.hloc = run_model(hloc_env, os.path.join(cls.tmp, "hloc.npz"))

    def test_runs_on_hloc_device(self):
        # The device type is the platform's name, either way hloc is loaded.
        self.assertEqual(str(self.hloc["device"]), "HLOC:0")
        self.assertEqual(str(self.cpu["device"]), "CPU:0")

    def test_losses_match_xla_cpu(self):
        np.testing.assert_allclose(self.hloc["losses"], self.cpu["losses"], rtol=1e-5, atol=0)

    def test_parameters_match_xla_cpu(self):
        names = [k for k in self.cpu.files if k.startswith("param/")]
        self.assertEqual(sorted(names), sorted(k for k in self.hloc.files if k.startswith("param/")))
        self.assertTrue(names)
        for name in names:
            expected = self.cpu[name].astype(np.float64)
            actual = self.hloc[name].astype(np.float64)
            self.assertEqual(expected.shape, actual.shape, name)
            if expected.size == 0:
                continue
            scale = max(np.max(np.abs(expected)), 1e-6)
            if name.endswith("self_attn.in_proj_bias"):
                # The key bias's gradient is zero in exact arithmetic (softmax
                # ignores a shift), so both sides train it on rounding noise,
                # which AdamW normalizes into steps of up to lr each.
                d = expected.shape[0] // 3
                np.testing.assert_allclose(actual[d:2 * d], expected[d:2 * d], rtol=0,
                                           atol=2 * ADAMW_LR * ADAMW_STEPS, err_msg=name)
                expected = np.concatenate([expected[:d], expected[2 * d:]])
                actual = np.concatenate([actual[:d], actual[2 * d:]])
            # AdamW's first steps move each weight by about lr * sign(gradient),
            # so a weight whose gradient is near zero moves by rounding noise:
            # hloc's and XLA's exp/tanh approximations differ by an ulp or two,
            # and such a weight may end up to 2 * lr * steps apart. That may
            # happen to a few weights, never to many (a wrong kernel would
            # move most of them), and no weight may go beyond that bound.
            diff = np.abs(actual - expected)
            tight = 5e-5 * scale
            np.testing.assert_array_less(diff, 2 * ADAMW_LR * ADAMW_STEPS, err_msg=name)
            beyond = int(np.count_nonzero(diff > tight))
            self.assertLessEqual(
                beyond, max(1, expected.size // 200),
                f"{name}: {beyond} of {expected.size} weights differ by more than {tight:.3g} "
                f"(largest {diff.max():.3g})")


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
