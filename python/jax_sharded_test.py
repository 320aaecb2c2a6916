"""hloc.jax.jit and hloc.compile(..., devices=N) on the sharded JAX zoo
(tests/jax_sharded/make_sharded_zoo.py) on 4 forced host CPU devices: each
model's results match jax.jit's, with the same output shardings, whether the
inputs are numpy arrays or jax.Arrays sharded as the shard_map takes them.
"""

import os

os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                           " --xla_force_host_platform_device_count=4").strip()
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import sys
import unittest

import jax
import numpy as np

import hloc
import hloc.jax

sys.path.insert(0, os.path.join(os.getcwd(), "tests", "jax_sharded"))
import make_sharded_zoo  # noqa: E402

MODELS = make_sharded_zoo._models()
ZOO = os.path.join(os.getcwd(), "tests", "jax_sharded", "zoo")
_COLUMNS = np.array([5, 0, 7, 2], np.int32)


def _args(name):
    make_args = MODELS[name][0]
    return make_args(np.random.default_rng(sum(ord(c) for c in name)))


def _leaves(tree):
    return jax.tree_util.tree_leaves(tree)


class ShardedJitTest(unittest.TestCase):
    def setUp(self):
        self.assertEqual(jax.device_count(), 4, "XLA_FLAGS did not give 4 CPU devices")

    def check_model(self, name, backend):
        # (An spmd_* model's jax.jit options, out_shardings, are for the zoo's
        # files; here both sides jit the bare function.)
        fn = MODELS[name][1]
        args = _args(name)
        expected = jax.jit(fn)(*args)
        f = hloc.jax.jit(fn, backend=backend)
        exe = f.executable(*args)
        self.assertEqual(exe.stats["devices"], 4)
        if backend == "host":
            self.assertEqual(exe.stats["interpreter_ops"], 0, exe.stats)
        # numpy inputs, then the inputs as JAX places them for its program.
        placed = [jax.device_put(a, s) for a, s in
                  zip(args, jax.jit(fn).lower(*args).compile().input_shardings[0])]
        for inputs in (args, placed):
            actual = f(*inputs)
            self.assertEqual(jax.tree_util.tree_structure(actual),
                             jax.tree_util.tree_structure(expected))
            for i, (a, e) in enumerate(zip(_leaves(actual), _leaves(expected))):
                self.assertIsInstance(a, jax.Array)
                self.assertEqual(a.shape, e.shape, f"{name} output {i}")
                self.assertEqual(a.dtype, e.dtype, f"{name} output {i}")
                np.testing.assert_allclose(np.asarray(a), np.asarray(e), rtol=1e-5, atol=1e-5,
                                           err_msg=f"{name} output {i} on {backend}")
                self.assertTrue(a.sharding.is_equivalent_to(e.sharding, a.ndim),
                                f"{name} output {i}: {a.sharding} vs {e.sharding}")

    def test_zoo_on_host(self):
        for name in MODELS:
            with self.subTest(name):
                self.check_model(name, "host")

    def test_zoo_on_interpreter(self):
        for name in ("dp_train_step", "ring_attention"):
            with self.subTest(name):
                self.check_model(name, "interpreter")

    def test_single_device_function_still_runs(self):
        f = hloc.jax.jit(lambda x: x * 2.0)
        x = np.arange(4, dtype=np.float32)
        np.testing.assert_array_equal(np.asarray(f(x)), x * 2)
        self.assertEqual(f.executable(x).stats["devices"], 1)

    def test_jit_over_sharded_inputs_runs_through_the_spmd_partitioner(self):
        # No shard_map: hloc's SPMD partitioner splits the jitted function.
        mesh = jax.sharding.Mesh(np.array(jax.devices()), ("d",))
        P = jax.sharding.PartitionSpec
        x = jax.device_put(np.arange(32, dtype=np.float32).reshape(8, 4) / 7,
                           jax.sharding.NamedSharding(mesh, P("d")))
        w = jax.device_put(np.linspace(-1, 1, 32, dtype=np.float32).reshape(4, 8),
                           jax.sharding.NamedSharding(mesh, P(None, "d")))

        def fn(x, w):
            h = x @ w[:, _COLUMNS]
            return jax.numpy.tanh(x).sum(axis=0), jax.numpy.exp(h), jax.numpy.argmax(h, axis=1)

        for backend in ("host", "interpreter"):
            f = hloc.jax.jit(fn, backend=backend)
            exe = f.executable(x, w)
            self.assertEqual(exe.stats["devices"], 4)
            self.assertIn("spmd-partition on 4 devices", exe.report)
            # argmax (a two-operand reduce) has no rule: it runs replicated, and says so.
            self.assertRegex(exe.report, r"1 replicated op\(s\): %\S+ \(reduce\)")
            for a, e in zip(f(x, w), jax.jit(fn)(x, w)):
                np.testing.assert_allclose(np.asarray(a), np.asarray(e), rtol=1e-5, atol=1e-5)


class CompileOnDevicesTest(unittest.TestCase):
    def test_shardy_module_takes_global_arrays(self):
        _, fn = MODELS["tp_mlp"]
        args = _args("tp_mlp")
        expected = np.asarray(jax.jit(fn)(*args))
        with open(os.path.join(ZOO, "tp_mlp.sdy.hlo")) as f:
            exe = hloc.compile(f.read(), backend="host", devices=4)
        self.assertEqual([p.shape for p in exe.parameters], [a.shape for a in args])
        (out,) = exe(*args)
        np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
        # DLPack inputs (jax.Arrays) work too.
        (again,) = exe(*[jax.numpy.asarray(a) for a in args])
        np.testing.assert_array_equal(again, out)

    def test_pmap_style_module_stacks(self):
        text = """HloModule m, replica_count=4
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p = f32[3] parameter(0)
  ROOT s = f32[3] all-reduce(p), replica_groups={}, to_apply=add
}
"""
        for backend in ("host", "interpreter"):
            exe = hloc.compile(text, backend=backend, devices=4)
            x = np.arange(12, dtype=np.float32).reshape(4, 3)
            (out,) = exe(x)
            np.testing.assert_array_equal(out, np.stack([x.sum(0)] * 4))

    def test_errors(self):
        with open(os.path.join(ZOO, "tp_mlp.sdy.hlo")) as f:
            text = f.read()
        with self.assertRaisesRegex(ValueError, "devices=2 but module .* mesh of 4"):
            hloc.compile(text, backend="host", devices=2)
        with self.assertRaises(ValueError):
            hloc.compile(text, backend="host", devices=-1)
        with self.assertRaises(TypeError):
            hloc.compile(text, backend="host", devices="4")
        exe = hloc.compile(text, backend="host", devices=4)
        with self.assertRaisesRegex(
                ValueError, r"argument 0 has shape f32\[4,8\], the parameter is f32\[16,8\]"):
            exe(np.zeros((4, 8), np.float32), np.zeros((8, 32), np.float32),
                np.zeros((32, 8), np.float32))


if __name__ == "__main__":
    unittest.main()
