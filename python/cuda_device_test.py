"""The Python package on a GPU: hloc.compile(backend="cuda") on numpy
arrays, CUDA arrays of torch, CuPy and JAX in through DLPack without a copy
through the host, device results out, donation, registered Python custom
calls between GPU kernels, and hloc.jax.jit on JAX's GPU arrays. Each result is compared with the host backend's (or JAX's).

Without a GPU every test reports SKIPPED with the reason hloc gives (the
checks that need no GPU are hloc_test.py's). A test whose array library is
not installed (torch, cupy, a CUDA jax) is skipped naming it. On a GPU
machine: PYTHONPATH=<the package's folder> python3 python/cuda_device_test.py
"""

import importlib
import os
import unittest

import numpy as np

import hloc

NO_GPU = hloc.unavailable_reason("cuda")

# Softmax over rows after a dot: a library call (gemm), a reduction and
# elementwise kernels.
DENSE_SOFTMAX = """
HloModule dense_softmax

max_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}

add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY main {
  x = f32[64,128] parameter(0)
  w = f32[128,32] parameter(1)
  d = f32[64,32] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ninf = f32[] constant(-inf)
  m = f32[64] reduce(d, ninf), dimensions={1}, to_apply=max_f32
  mb = f32[64,32] broadcast(m), dimensions={0}
  c = f32[64,32] subtract(d, mb)
  e = f32[64,32] exponential(c)
  zero = f32[] constant(0)
  s = f32[64] reduce(e, zero), dimensions={1}, to_apply=add_f32
  sb = f32[64,32] broadcast(s), dimensions={0}
  ROOT p = f32[64,32] divide(e, sb)
}
"""

# The result takes over the donated first argument.
ALIASED = """
HloModule aliased, input_output_alias={ {}: (0, {}, must-alias) }

ENTRY main {
  acc = f32[1024] parameter(0)
  g = f32[1024] parameter(1)
  k = f32[] constant(0.5)
  kb = f32[1024] broadcast(k), dimensions={}
  step = f32[1024] multiply(g, kb)
  ROOT next = f32[1024] subtract(acc, step)
}
"""


def _inputs(seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((64, 128), dtype=np.float32),
            rng.standard_normal((128, 32), dtype=np.float32))


def _library(name):
    """The module, or None when it is missing or sees no CUDA device."""
    try:
        module = importlib.import_module(name)
    except Exception:  # Missing, or broken by a CUDA mismatch: skipped.
        return None
    try:
        if name == "torch" and not module.cuda.is_available():
            return None
        if name == "cupy" and module.cuda.runtime.getDeviceCount() < 1:
            return None
        if name == "jax" and not module.devices("gpu"):
            return None
    except Exception:
        return None
    return module


@unittest.skipIf(NO_GPU, f"no GPU: {NO_GPU}")
class CudaExecutableTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.cuda = hloc.compile(DENSE_SOFTMAX, backend="cuda")
        cls.host = hloc.compile(DENSE_SOFTMAX, backend="host")
        cls.x, cls.w = _inputs()
        cls.expected = cls.host(cls.x, cls.w)[0]

    def test_numpy_in_numpy_out(self):
        out = self.cuda(self.x, self.w)
        self.assertIsInstance(out[0], np.ndarray)
        np.testing.assert_allclose(out[0], self.expected, rtol=2e-3, atol=1e-5)

    def test_device_results_feed_the_next_call(self):
        # The numpy arguments go up once; the result stays on the GPU.
        first = self.cuda(self.x, self.w, results="device")
        self.assertEqual(first[0].__dlpack_device__()[0], 2)  # kDLCUDA
        identity = hloc.compile("""
HloModule twice
ENTRY main {
  p = f32[64,32] parameter(0)
  ROOT t = f32[64,32] add(p, p)
}
""", backend="cuda")
        twice = identity(first[0], results="host")
        np.testing.assert_allclose(twice[0], 2 * self.expected, rtol=2e-3, atol=1e-5)

    def test_wrong_shape_is_an_error(self):
        with self.assertRaises((ValueError, TypeError)) as cm:
            self.cuda(self.x[:32], self.w)
        self.assertIn("argument 0", str(cm.exception))

    def test_many_threads(self):
        from concurrent.futures import ThreadPoolExecutor
        with ThreadPoolExecutor(8) as pool:
            outs = list(pool.map(lambda _: self.cuda(self.x, self.w)[0], range(32)))
        for out in outs:
            np.testing.assert_allclose(out, self.expected, rtol=2e-3, atol=1e-5)


@unittest.skipIf(NO_GPU, f"no GPU: {NO_GPU}")
class CudaArraysTest(unittest.TestCase):
    """Arrays already on the GPU, from each library that is installed."""

    @classmethod
    def setUpClass(cls):
        cls.cuda = hloc.compile(DENSE_SOFTMAX, backend="cuda")
        cls.x, cls.w = _inputs(1)
        cls.expected = hloc.compile(DENSE_SOFTMAX, backend="host")(cls.x, cls.w)[0]

    def test_torch(self):
        torch = _library("torch")
        if torch is None:
            self.skipTest("torch with CUDA is not installed here")
        x = torch.from_numpy(self.x).cuda()
        w = torch.from_numpy(self.w).cuda()
        out = self.cuda(x, w)  # results="auto": on the device, as the arguments
        y = torch.from_dlpack(out[0])
        self.assertTrue(y.is_cuda)
        np.testing.assert_allclose(y.cpu().numpy(), self.expected, rtol=2e-3, atol=1e-5)
        # torch's own answer, as a second reference.
        ref = torch.softmax(x @ w, dim=1)
        np.testing.assert_allclose(y.cpu().numpy(), ref.cpu().numpy(), rtol=2e-3, atol=1e-5)
        # A non-contiguous CUDA view is refused or handled, never misread.
        try:
            out_t = self.cuda(x.t().contiguous().t(), w)
        except (ValueError, TypeError) as e:
            self.assertIn("argument 0", str(e))
        else:
            np.testing.assert_allclose(torch.from_dlpack(out_t[0]).cpu().numpy(), self.expected,
                                       rtol=2e-3, atol=1e-5)

    def test_torch_work_on_another_stream(self):
        """Arguments torch is still writing on a side stream are waited for,
        and results torch still reads on a side stream after dropping them
        are not overwritten by the next call's (hloc reuses released device
        memory only once the device was idle)."""
        torch = _library("torch")
        if torch is None:
            self.skipTest("torch with CUDA is not installed here")
        side = torch.cuda.Stream()
        busy = torch.empty(1 << 28, device="cuda")  # 1 GiB: fills take a while
        x_src = torch.from_numpy(self.x).cuda()
        w = torch.from_numpy(self.w).cuda()
        zeros = torch.zeros_like(x_src)
        torch.cuda.synchronize()
        for _ in range(3):
            x = torch.zeros_like(x_src)
            torch.cuda.synchronize()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                for _ in range(4):
                    busy.fill_(1.0)
                x.copy_(x_src)  # Lands only after the fills.
            out = self.cuda(x, w)
            y = torch.from_dlpack(out[0])
            np.testing.assert_allclose(y.cpu().numpy(), self.expected, rtol=2e-3, atol=1e-5)
            # The side stream copies the result late, after dropping it.
            seen = torch.empty_like(y)
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                for _ in range(4):
                    busy.fill_(2.0)
                seen.copy_(y)
            del y, out
            other = self.cuda(zeros, w)  # A different result, maybe in the same memory.
            torch.cuda.synchronize()
            np.testing.assert_allclose(seen.cpu().numpy(), self.expected, rtol=2e-3, atol=1e-5)
            del other

    def test_cupy(self):
        cupy = _library("cupy")
        if cupy is None:
            self.skipTest("cupy with CUDA is not installed here")
        x = cupy.asarray(self.x)
        w = cupy.asarray(self.w)
        out = self.cuda(x, w)
        y = cupy.from_dlpack(out[0])
        np.testing.assert_allclose(cupy.asnumpy(y), self.expected, rtol=2e-3, atol=1e-5)

    def test_jax(self):
        jax = _library("jax")
        if jax is None:
            self.skipTest("jax with a GPU is not installed here")
        gpu = jax.devices("gpu")[0]
        x = jax.device_put(self.x, gpu)
        w = jax.device_put(self.w, gpu)
        out = self.cuda(x, w)
        y = jax.dlpack.from_dlpack(out[0])
        np.testing.assert_allclose(np.asarray(y), self.expected, rtol=2e-3, atol=1e-5)

    def test_donated_device_argument_takes_the_result(self):
        torch = _library("torch")
        if torch is None:
            self.skipTest("torch with CUDA is not installed here")
        exe = hloc.compile(ALIASED, backend="cuda")
        acc = torch.ones(1024, device="cuda")
        g = torch.arange(1024, dtype=torch.float32, device="cuda")
        out = exe(acc, g, donate=(0,))
        y = torch.from_dlpack(out[0])
        expected = 1 - 0.5 * np.arange(1024, dtype=np.float32)
        np.testing.assert_array_equal(y.cpu().numpy(), expected)


# A registered Python function between GPU kernels: its operand is a fused
# kernel's result, its result feeds another kernel.
CUSTOM = """
HloModule custom_on_gpu

ENTRY main {
  x = f32[256] parameter(0)
  e = f32[256] exponential(x)
  c = (f32[256], f32[]) custom-call(e), custom_call_target="py_gpu_scale_and_sum", backend_config="3"
  a = f32[256] get-tuple-element(c), index=0
  s = f32[] get-tuple-element(c), index=1
  sb = f32[256] broadcast(s), dimensions={}
  ROOT out = f32[256] divide(a, sb)
}
"""


@unittest.skipIf(NO_GPU, f"no GPU: {NO_GPU}")
class CustomCallOnCudaTest(unittest.TestCase):

    def test_registered_function_between_kernels(self):
        calls = []

        def scale_and_sum(e, backend_config):
            calls.append(e.shape)
            k = float(backend_config)
            return e * k, np.float32(e.sum())

        hloc.register_custom_call("py_gpu_scale_and_sum", scale_and_sum,
                                  pass_backend_config=True)
        x = np.linspace(-2, 2, 256, dtype=np.float32)
        cuda = hloc.compile(CUSTOM, backend="cuda")
        self.assertEqual(cuda.stats["interpreter_ops"], 0, cuda.stats)
        expected = hloc.compile(CUSTOM, backend="host")(x)[0]
        self.assertEqual(len(calls), 1)
        for _ in range(3):
            np.testing.assert_allclose(cuda(x)[0], expected, rtol=1e-5)
        self.assertEqual(len(calls), 4)  # one host run, then one call per cuda run

    def test_exception_is_an_error_and_the_gpu_runs_on(self):
        def broken(e, backend_config):
            raise RuntimeError("widget jammed")

        hloc.register_custom_call("py_gpu_scale_and_sum", broken, pass_backend_config=True)
        exe = hloc.compile(CUSTOM, backend="cuda")
        x = np.zeros(256, np.float32)
        with self.assertRaises(hloc.Error) as cm:
            exe(x)
        self.assertIn('target "py_gpu_scale_and_sum"', str(cm.exception))
        self.assertIn("widget jammed", str(cm.exception))
        ok = hloc.compile(DENSE_SOFTMAX, backend="cuda")
        self.assertEqual(ok(*_inputs())[0].shape, (64, 32))


@unittest.skipIf(NO_GPU, f"no GPU: {NO_GPU}")
class JaxJitOnCudaTest(unittest.TestCase):

    def test_jit_on_gpu_arrays(self):
        jax = _library("jax")
        if jax is None:
            self.skipTest("jax with a GPU is not installed here")
        import hloc.jax
        import jax.numpy as jnp

        def mlp(x, w1, w2):
            return jnp.tanh(jax.nn.gelu(x @ w1) @ w2).sum(axis=1)

        rng = np.random.default_rng(2)
        gpu = jax.devices("gpu")[0]
        args = [jax.device_put(rng.standard_normal(s, dtype=np.float32) * 0.1, gpu)
                for s in ((32, 64), (64, 128), (128, 16))]
        jitted = hloc.jax.jit(mlp, backend="cuda")
        ours = jitted(*args)
        theirs = jax.jit(mlp)(*args)
        stats = jitted.executable(*args).stats
        self.assertEqual(stats["backend"], "cuda")
        self.assertEqual(stats["interpreter_ops"], 0, stats)
        # The result stays on the GPU: a jax.Array there, not a host copy.
        self.assertIsInstance(ours, jax.Array)
        self.assertEqual({d.platform for d in ours.devices()}, {"gpu"})
        self.assertEqual(ours.shape, theirs.shape)
        np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-3, atol=1e-4)


if __name__ == "__main__":
    print("cuda:", "available" if not NO_GPU else f"unavailable ({NO_GPU})",
          "| hloc from", os.path.dirname(hloc.__file__))
    unittest.main(verbosity=2)
