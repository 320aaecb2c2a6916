"""The hloc Python package: compile and run, zero-copy arguments and results,
errors as exceptions, many threads on one Executable."""

import ctypes
import os
import sys
import tempfile
import threading
import unittest

import numpy as np

import hloc

ADD = """
HloModule add

ENTRY main {
  x = f32[8] parameter(0)
  y = f32[8] parameter(1)
  s = f32[8] add(x, y)
  ROOT out = (f32[8]) tuple(s)
}
"""

# The dot reads w before the result is written, so the result may live in
# w's memory when w is donated.
ALIASED = """
HloModule step, input_output_alias={ {0}: (0, {}, may-alias) }

ENTRY main {
  w = f32[16,16] parameter(0)
  g = f32[16,16] parameter(1)
  d = f32[16,16] dot(w, g), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  next = f32[16,16] subtract(d, g)
  ROOT out = (f32[16,16]) tuple(next)
}
"""


class CompileAndRunTest(unittest.TestCase):
    def test_add_on_host_and_interpreter(self):
        x = np.arange(8, dtype=np.float32)
        y = np.full(8, 10, dtype=np.float32)
        for backend in ["host", "interpreter"]:
            exe = hloc.compile(ADD, backend=backend)
            (out,) = exe(x, y)
            np.testing.assert_array_equal(out, x + y)
            self.assertEqual(out.dtype, np.float32)
            self.assertEqual(exe.stats["backend"], backend)
            self.assertEqual(exe.stats["interpreter_ops"], 0)
        self.assertIn("ENTRY", exe.optimized_hlo)
        self.assertIn("f32[8]", repr(exe))

    def test_module_forms(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "add.hlo")
            with open(path, "w") as f:
                f.write(ADD)
            x = np.ones(8, np.float32)
            for module in [ADD, ADD.encode(), path, __import__("pathlib").Path(path)]:
                (out,) = hloc.compile(module, backend="host")(x, x)
                np.testing.assert_array_equal(out, 2 * x)
        with open("tests/jax/zoo/softmax.before.pb", "rb") as f:
            proto = f.read()
        exe = hloc.compile(proto, backend="host")
        self.assertGreater(exe.stats["kernels"], 0)
        self.assertTrue(exe.ledger)

    def test_same_request_same_executable(self):
        a = hloc.compile(ADD, backend="host")
        hits = hloc._client().cache_hits
        b = hloc.compile(ADD, backend="host")
        self.assertEqual(a.fingerprint, b.fingerprint)
        self.assertEqual(hloc._client().cache_hits, hits + 1)

    def test_arguments_are_not_copied_and_results_are_views(self):
        exe = hloc.compile(ALIASED, backend="host")
        w = np.full((16, 16), 3, np.float32)
        g = np.ones((16, 16), np.float32)
        (kept,) = exe(w, g)
        self.assertEqual(w[0, 0], 3)
        np.testing.assert_array_equal(kept, 47)
        # Donated: the result lives in w's memory.
        (donated,) = exe(w, g, donate=[0])
        self.assertEqual(donated.__array_interface__["data"][0], w.__array_interface__["data"][0])
        np.testing.assert_array_equal(w, 47)
        # Results export the buffer protocol and dlpack without a copy.
        self.assertEqual(np.from_dlpack(kept).__array_interface__["data"][0],
                         kept.__array_interface__["data"][0])
        self.assertEqual(memoryview(kept).nbytes, 1024)

    def test_dlpack_producers_and_non_contiguous_inputs(self):
        import jax
        import jax.numpy as jnp
        exe = hloc.compile(ADD, backend="host")
        # A CPU array (a GPU one is refused by a host executable; on a GPU
        # machine JAX's default device is the GPU).
        x = jax.device_put(jnp.arange(8, dtype=jnp.float32), jax.devices("cpu")[0])
        (out,) = exe(x, x)
        np.testing.assert_array_equal(out, 2 * np.arange(8))
        strided = np.arange(16, dtype=np.float32)[::2]
        (out,) = exe(strided, strided)
        np.testing.assert_array_equal(out, 2 * strided)

    def test_bf16_and_int8(self):
        import ml_dtypes
        module = """
HloModule m
ENTRY e {
  a = bf16[4] parameter(0)
  b = s8[4] parameter(1)
  c = bf16[4] convert(b)
  s = bf16[4] add(a, c)
  ROOT t = (bf16[4], s8[4]) tuple(s, b)
}"""
        exe = hloc.compile(module, backend="host")
        a = np.array([1.5, 2, 3, 4], ml_dtypes.bfloat16)
        b = np.array([1, -2, 3, 127], np.int8)
        s, b2 = exe(a, b)
        self.assertEqual(s.dtype, np.dtype(ml_dtypes.bfloat16))
        np.testing.assert_array_equal(s.astype(np.float32), [2.5, 0, 6, 131])
        np.testing.assert_array_equal(b2, b)


class DynamicShapeTest(unittest.TestCase):
    """Bounded dynamic parameters (f32[<=8]): arrays of any size up to the
    bound in, the result at its runtime size out."""

    MODULE = """
HloModule dyn
ENTRY e {
  x = f32[<=8] parameter(0)
  two = f32[] constant(2)
  b = f32[<=8] broadcast(two), dimensions={}
  ROOT y = f32[<=8] multiply(x, b)
}"""

    TUPLE = """
HloModule dyn_tuple
ENTRY e {
  p = (f32[<=8], s32[]) parameter(0)
  x = f32[<=8] get-tuple-element(p), index=0
  k = s32[] get-tuple-element(p), index=1
  kf = f32[] convert(k)
  b = f32[<=8] broadcast(kf), dimensions={}
  ROOT y = f32[<=8] add(x, b)
}"""

    ARGSORT = """
HloModule argsort
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ROOT r = pred[] compare(a, b), direction=LT
}
ENTRY e {
  x = f32[<=8] parameter(0)
  n = s32[] get-dimension-size(x), dimensions={0}
  i = s32[8] iota(), iota_dimension=0
  j = s32[<=8] set-dimension-size(i, n), dimensions={0}
  s = (f32[<=8], s32[<=8]) sort(x, j), dimensions={0}, to_apply=lt, is_stable=true
  ROOT r = s32[<=8] get-tuple-element(s), index=1
}"""

    BACKENDS = ("interpreter", "host")

    def test_sizes_up_to_the_bound(self):
        for backend in self.BACKENDS:
            exe = hloc.compile(self.MODULE, backend=backend)
            for n in (0, 3, 8):
                x = np.arange(n, dtype=np.float32)
                (y,) = exe(x)
                np.testing.assert_array_equal(y, 2 * x)
            with self.assertRaises(ValueError) as cm:
                exe(np.ones(9, np.float32))
            self.assertIn("(parameter %x) dimension 0 has size 9, above its bound 8",
                          str(cm.exception))

    def test_tuple_parameter_is_its_leaves(self):
        for backend in self.BACKENDS:
            exe = hloc.compile(self.TUPLE, backend=backend)
            for n in (0, 5, 8):
                x = np.linspace(-1, 1, n, dtype=np.float32)
                (y,) = exe(x, np.array(3, np.int32))
                np.testing.assert_array_equal(y, x + 3)
            with self.assertRaises(ValueError) as cm:
                exe(np.ones(9, np.float32), np.array(3, np.int32))
            self.assertIn("(parameter %p, tuple element 0) dimension 0 has size 9",
                          str(cm.exception))

    def test_argsort_along_a_dynamic_dimension(self):
        # The padding (zeros) would sort among these values if it leaked.
        values = np.array([0.5, -2, 3, -1, 0.25, 7, -4, 1], np.float32)
        for backend in self.BACKENDS:
            exe = hloc.compile(self.ARGSORT, backend=backend)
            for n in (0, 1, 4, 8):
                (order,) = exe(values[:n].copy())
                np.testing.assert_array_equal(order, np.argsort(values[:n], kind="stable"))


class ErrorTest(unittest.TestCase):
    def test_compile_errors_carry_locations(self):
        with self.assertRaises(hloc.CompileError) as cm:
            hloc.compile("HloModule m\nENTRY e {\n  x = f32[ parameter(0)\n}", backend="host")
        self.assertIn(":3:", str(cm.exception))
        with self.assertRaises(hloc.CompileError) as cm:
            hloc.compile("HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n"
                         "  ROOT y = f32[5] negate(x)\n}", backend="host")
        self.assertIn("module fails verification", str(cm.exception))
        self.assertTrue(issubclass(hloc.CompileError, hloc.Error))
        with self.assertRaises(hloc.CompileError):
            hloc.compile(b"\x08\x96\x01\xff\xff", backend="host")
        with self.assertRaises(hloc.CompileError):
            hloc.compile("/nonexistent/file.hlo", backend="host")

    def test_bad_options(self):
        with self.assertRaises(ValueError):
            hloc.compile(ADD, backend="tpu")
        with self.assertRaises(ValueError):
            hloc.compile(ADD, backend="host", pipeline="fastest")
        with self.assertRaises(TypeError):
            hloc.compile(42)
        if hloc.unavailable_reason("cuda"):
            with self.assertRaises(hloc.BackendUnavailableError):
                hloc.compile(ADD, backend="cuda")

    def test_bad_arguments_name_the_argument(self):
        exe = hloc.compile(ADD, backend="host")
        x = np.ones(8, np.float32)
        with self.assertRaises(TypeError) as cm:
            exe(x)
        self.assertIn("takes 2 arguments, got 1", str(cm.exception))
        with self.assertRaises(TypeError) as cm:
            exe(x, np.ones(8, np.int32))
        self.assertIn("argument 1", str(cm.exception))
        with self.assertRaises(ValueError) as cm:
            exe(np.ones(9, np.float32), x)
        self.assertIn("argument 0", str(cm.exception))
        with self.assertRaises(ValueError):
            exe(x, x, donate=[7])
        ro = np.ones(8, np.float32)
        ro.setflags(write=False)
        with self.assertRaises(ValueError):
            exe(ro, x, donate=[0])


class CollectiveTimeoutTest(unittest.TestCase):
    """hloc.compile(collective_timeout=...): the NCCL watchdog's seconds. A
    client given it does not read $HLOC_NCCL_TIMEOUT (so a bad value there
    fails only the clients that would read it)."""

    def test_given_timeout_is_used_instead_of_the_environment(self):
        x = np.arange(8, dtype=np.float32)
        saved = os.environ.get("HLOC_NCCL_TIMEOUT")
        os.environ["HLOC_NCCL_TIMEOUT"] = "soon"
        try:
            # num_threads=7: a client no other test has made.
            with self.assertRaisesRegex(ValueError, "HLOC_NCCL_TIMEOUT=soon"):
                hloc.compile(ADD, backend="host", num_threads=7)
            for seconds in (5, 2.5, 0):
                exe = hloc.compile(ADD, backend="host", num_threads=7,
                                   collective_timeout=seconds)
                (out,) = exe(x, x)
                np.testing.assert_array_equal(out, 2 * x)
        finally:
            if saved is None:
                del os.environ["HLOC_NCCL_TIMEOUT"]
            else:
                os.environ["HLOC_NCCL_TIMEOUT"] = saved

    def test_bad_timeouts(self):
        with self.assertRaises(TypeError):
            hloc.compile(ADD, backend="host", collective_timeout="5")
        with self.assertRaises(TypeError):
            hloc.compile(ADD, backend="host", collective_timeout=True)
        for bad in (-1, float("nan")):
            with self.assertRaisesRegex(ValueError, "collective_timeout"):
                hloc.compile(ADD, backend="host", collective_timeout=bad)


class _FakeCudaArray:
    """A DLPack producer claiming f32[8] on cuda:0 at a made-up address: no
    byte of it is ever read, as every path below fails before running."""

    class _Device(ctypes.Structure):
        _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]

    class _DType(ctypes.Structure):
        _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                    ("lanes", ctypes.c_uint16)]

    _Deleter = ctypes.CFUNCTYPE(None, ctypes.c_void_p)

    class _Managed(ctypes.Structure):
        pass

    _Managed._fields_ = [
        ("data", ctypes.c_void_p), ("device", _Device), ("ndim", ctypes.c_int32),
        ("dtype", _DType), ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64),
        ("manager_ctx", ctypes.c_void_p), ("deleter", _Deleter)]

    def __init__(self):
        self._shape = (ctypes.c_int64 * 1)(8)
        self._deleter = self._Deleter(lambda _: None)
        self._managed = self._Managed(
            0x7f0000000000, self._Device(2, 0), 1, self._DType(2, 32, 1), self._shape,
            None, 0, None, self._deleter)

    def __dlpack_device__(self):
        return (2, 0)

    def __dlpack__(self, **kwargs):
        new = ctypes.pythonapi.PyCapsule_New
        new.restype = ctypes.py_object
        new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        return new(ctypes.addressof(self._managed), b"dltensor", None)


class DeviceArrayTest(unittest.TestCase):
    """CUDA arrays in and out (DLPack kDLCUDA): the checks that need no GPU.
    The GPU paths are api_cuda_device_test's (C++) on a GPU machine."""

    def test_results_option(self):
        exe = hloc.compile(ADD, backend="host")
        x = np.ones(8, np.float32)
        with self.assertRaises(ValueError) as cm:
            exe(x, x, results="gpu")
        self.assertIn("results='gpu'", str(cm.exception))
        with self.assertRaises(ValueError) as cm:
            exe(x, x, results="device")
        self.assertIn("runs on the host", str(cm.exception))
        for where in ("auto", "host"):
            out = exe(x, x, results=where)
            self.assertIsInstance(out[0], np.ndarray)
            np.testing.assert_array_equal(out[0], 2 * x)

    def test_cuda_argument_to_a_host_executable(self):
        exe = hloc.compile(ADD, backend="host")
        x = np.ones(8, np.float32)
        fake = _FakeCudaArray()
        if hloc.unavailable_reason("cuda"):
            # No GPU: the device array cannot even be wrapped.
            with self.assertRaises(hloc.BackendUnavailableError) as cm:
                exe(x, fake)
            self.assertIn("cuda:0", str(cm.exception))
        else:
            with self.assertRaises(ValueError) as cm:
                exe(x, fake)
            self.assertIn("argument 1 is on cuda:0", str(cm.exception))
        # The executable still runs on host arrays afterwards.
        np.testing.assert_array_equal(exe(x, x)[0], 2 * x)


# The custom call's operands are a producer's result (fused on the host) and a
# parameter; its result is a tuple.
CUSTOM = """
HloModule custom

ENTRY main {
  x = f32[6] parameter(0)
  n = s32[3] parameter(1)
  e = f32[6] exponential(x)
  l = f32[6] log(e)
  c = (f32[6], s32[]) custom-call(l, n), custom_call_target="%s", backend_config="2"
  a = f32[6] get-tuple-element(c), index=0
  s = s32[] get-tuple-element(c), index=1
  ROOT out = (f32[6], s32[]) tuple(a, s)
}
"""


class CustomCallTest(unittest.TestCase):
    def run_custom(self, target, backend):
        exe = hloc.compile(CUSTOM % target, backend=backend)
        x = np.arange(6, dtype=np.float32)
        n = np.array([1, 2, 3], np.int32)
        return exe(x, n)

    def test_registered_function_on_host_and_interpreter(self):
        seen = []

        def scale_and_sum(x, n, backend_config):
            seen.append((x.flags.writeable, n.dtype, backend_config))
            return x * float(backend_config), n.sum()

        hloc.register_custom_call("py_scale_and_sum", scale_and_sum, pass_backend_config=True)
        for backend in ["host", "interpreter"]:
            a, s = self.run_custom("py_scale_and_sum", backend)
            np.testing.assert_allclose(a, np.arange(6, dtype=np.float32) * 2, rtol=1e-5)
            self.assertEqual(a.dtype, np.float32)
            self.assertEqual(int(s), 6)
        # Operands came as read-only numpy views.
        self.assertEqual(seen, [(False, np.dtype(np.int32), "2")] * 2)

    def test_operands_are_views_not_copies(self):
        # On the host, parameter n's buffer is the caller's array itself.
        addresses = []

        def record(x, n):
            addresses.append(n.__array_interface__["data"][0])
            return x, n.sum()

        hloc.register_custom_call("py_record", record)
        exe = hloc.compile(CUSTOM % "py_record", backend="host")
        n = np.array([1, 2, 3], np.int32)
        exe(np.zeros(6, np.float32), n)
        self.assertEqual(addresses, [n.__array_interface__["data"][0]])

    def test_exceptions_become_hloc_errors(self):
        def broken(x, n):
            raise KeyError("no such widget")

        hloc.register_custom_call("py_broken", broken)
        for backend in ["host", "interpreter"]:
            with self.assertRaises(hloc.Error) as caught:
                self.run_custom("py_broken", backend)
            message = str(caught.exception)
            self.assertIn('custom-call %c (target "py_broken")', message)
            self.assertIn("KeyError", message)
            self.assertIn("no such widget", message)

    def test_wrong_results_are_errors(self):
        hloc.register_custom_call("py_one_result", lambda x, n: x)
        hloc.register_custom_call("py_bad_shape",
                                  lambda x, n: (np.zeros(5, np.float32), np.int32(0)))
        hloc.register_custom_call("py_bad_kind",
                                  lambda x, n: (np.zeros(6, np.complex64), np.int32(0)))
        for target, part in [("py_one_result", "tuple of 2 arrays"),
                             ("py_bad_shape", "shape (5,)"),
                             ("py_bad_kind", "complex64")]:
            with self.assertRaises(hloc.Error) as caught:
                self.run_custom(target, "host")
            self.assertIn(part, str(caught.exception))

    def test_unknown_target_and_bad_registrations(self):
        with self.assertRaises(hloc.CompileError) as caught:
            hloc.compile(CUSTOM % "py_never_registered", backend="host")
        self.assertIn('"py_never_registered"', str(caught.exception))
        with self.assertRaises(ValueError):
            hloc.register_custom_call("", lambda: None)
        with self.assertRaises(TypeError):
            hloc.register_custom_call("py_x", 42)
        with self.assertRaises(ValueError):
            hloc.register_custom_call("TopK", lambda x: x)

    def test_executable_scoped_functions(self):
        # compile(custom_calls=...) gives one executable its own functions,
        # over a registered function of the same name; others keep theirs.
        hloc.register_custom_call("py_scoped", lambda x, n: (x, n.sum()))
        x = np.arange(6, dtype=np.float32)
        n = np.array([1, 2, 3], np.int32)
        for backend in ["host", "interpreter"]:
            exes = [hloc.compile(CUSTOM % "py_scoped", backend=backend, custom_calls={
                "py_scoped": hloc.CustomCall(
                    lambda x, n, backend_config, k=k: (x * float(backend_config) + k, n.sum()),
                    pass_backend_config=True)}) for k in (10, 20)]
            plain = hloc.compile(CUSTOM % "py_scoped", backend=backend, custom_calls={
                "py_scoped": lambda x, n: (-x, n.sum() + 1)})
            registered = hloc.compile(CUSTOM % "py_scoped", backend=backend)
            np.testing.assert_allclose(exes[0](x, n)[0], x * 2 + 10, rtol=1e-6)
            np.testing.assert_allclose(exes[1](x, n)[0], x * 2 + 20, rtol=1e-6)
            self.assertEqual(int(plain(x, n)[1]), 7)
            np.testing.assert_allclose(registered(x, n)[0], x, rtol=1e-6)
        with self.assertRaisesRegex(TypeError, "py_scoped"):
            hloc.compile(CUSTOM % "py_scoped", custom_calls={"py_scoped": 3})
        with self.assertRaises(TypeError):
            hloc.compile(CUSTOM % "py_scoped", custom_calls=[("py_scoped", abs)])
        with self.assertRaises(ValueError):
            hloc.compile(CUSTOM % "py_scoped", backend="host",
                         custom_calls={"TopK": lambda x: x})

    def test_side_effects_nothing_reads_run(self):
        # As jax.debug.print lowers: a side-effecting custom call whose
        # (empty) result nothing reads still runs, once per call.
        module = """
HloModule printed
ENTRY main {
  x = f32[3] parameter(0)
  e = f32[3] exponential(x)
  p = () custom-call(e), custom_call_target="py_print", custom_call_has_side_effect=true
  ROOT n = f32[3] negate(x)
}
"""
        seen = []
        for backend in ["host", "interpreter"]:
            exe = hloc.compile(module, backend=backend, custom_calls={
                "py_print": lambda e: (seen.append(e.copy()), ())[1]})
            x = np.array([0, 1, 2], np.float32)
            for _ in range(2):
                np.testing.assert_array_equal(exe(x)[0], -x)
        self.assertEqual(len(seen), 4)
        np.testing.assert_allclose(seen[-1], np.exp([0, 1, 2]), rtol=1e-5)

    def test_reregistering_compiles_anew(self):
        hloc.register_custom_call("py_version", lambda x, n: (x + 1, n.sum()))
        first = hloc.compile(CUSTOM % "py_version", backend="host")
        hloc.register_custom_call("py_version", lambda x, n: (x + 2, n.sum()))
        second = hloc.compile(CUSTOM % "py_version", backend="host")
        self.assertNotEqual(first.fingerprint, second.fingerprint)
        x = np.zeros(6, np.float32)
        n = np.zeros(3, np.int32)
        self.assertEqual(float(first(x, n)[0][0]), 1.0)
        self.assertEqual(float(second(x, n)[0][0]), 2.0)

    def test_threads_call_back_into_python(self):
        calls = []
        lock = threading.Lock()

        def counted(x, n):
            with lock:
                calls.append(1)
            return x, n.sum()

        hloc.register_custom_call("py_counted", counted)
        exe = hloc.compile(CUSTOM % "py_counted", backend="host")
        errors = []

        def work():
            x = np.arange(6, dtype=np.float32)
            for _ in range(20):
                a, s = exe(x, np.ones(3, np.int32))
                if not np.allclose(a, x, rtol=1e-5) or int(s) != 3:
                    errors.append((a, s))

        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        self.assertEqual(len(calls), 80)


class ThreadTest(unittest.TestCase):
    def test_eight_threads_share_one_executable(self):
        module = """
HloModule mlp
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY main {
  x = f32[64,256] parameter(0)
  w = f32[256,128] parameter(1)
  d = f32[64,128] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t = f32[64,128] tanh(d)
  z = f32[] constant(0)
  ROOT s = f32[64] reduce(t, z), dimensions={1}, to_apply=add
}"""
        exe = hloc.compile(module, backend="host")
        errors = []

        def work(seed):
            rng = np.random.default_rng(seed)
            x = rng.standard_normal((64, 256), dtype=np.float32) * 0.1
            w = rng.standard_normal((256, 128), dtype=np.float32) * 0.1
            want = np.tanh(x @ w).sum(axis=1)
            for _ in range(25):
                (got,) = exe(x, w)
                if not np.allclose(got, want, rtol=1e-4, atol=1e-4):
                    errors.append((seed, float(np.abs(got - want).max())))
                    return

        threads = [threading.Thread(target=work, args=(s,)) for s in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])


if __name__ == "__main__":
    result = unittest.main(exit=False, verbosity=2).result
    failed = len(result.failures) + len(result.errors)
    print(f"{result.testsRun - failed - len(result.skipped)} passed, {failed} failed, "
          f"{len(result.skipped)} skipped")
    sys.exit(0 if result.wasSuccessful() else 1)
