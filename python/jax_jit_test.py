"""hloc.jax.jit against jax.jit on the same inputs: every JAX zoo model, a
grad training step, lax.scan and while_loop, pytrees, static and keyword
arguments, bf16 / f16 / int8, host callbacks (jax.debug.print,
pure_callback, io_callback)."""

import sys
import unittest

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

import hloc
import hloc.jax
import make_zoo


def assert_trees_close(test, got, want, rtol=1e-5, atol=1e-5):
    got_leaves, got_tree = jax.tree_util.tree_flatten(got)
    want_leaves, want_tree = jax.tree_util.tree_flatten(want)
    test.assertEqual(got_tree, want_tree)
    for g, w in zip(got_leaves, want_leaves):
        test.assertIsInstance(g, jax.Array)
        test.assertEqual(g.shape, w.shape)
        test.assertEqual(g.dtype, w.dtype)
        if w.dtype == jnp.bfloat16 or w.dtype == jnp.float16:
            np.testing.assert_allclose(np.asarray(g, np.float32), np.asarray(w, np.float32),
                                       rtol=2e-2, atol=2e-2)
        elif jnp.issubdtype(w.dtype, jnp.floating):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=atol)
        else:
            np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


class ZooTest(unittest.TestCase):
    def test_every_zoo_model(self):
        models = make_zoo._models()
        self.assertGreaterEqual(len(models), 16)
        for name, (make_args, fn, _) in sorted(models.items()):
            with self.subTest(model=name):
                seed = sum(name.encode())
                args = [np.asarray(a) for a in make_args(np.random.default_rng(seed))]
                want = jax.jit(fn)(*args)
                jitted = hloc.jax.jit(fn, backend="host")
                got = jitted(*args)
                # Reductions of many terms may round differently.
                assert_trees_close(self, got, want, rtol=2e-4, atol=2e-4)
                self.assertEqual(jitted.executable(*args).stats["backend"], "host")


class FeatureTest(unittest.TestCase):
    def test_grad_training_step(self):
        def loss(params, x, y):
            h = jnp.tanh(x @ params["w1"] + params["b1"])
            p = h @ params["w2"]
            return jnp.mean((p - y) ** 2)

        def step(params, x, y, lr):
            l, g = jax.value_and_grad(loss)(params, x, y)
            return jax.tree_util.tree_map(lambda p, d: p - lr * d, params, g), l

        rng = np.random.default_rng(0)
        params = {"w1": rng.standard_normal((16, 32), np.float32) * 0.1,
                  "b1": np.zeros(32, np.float32),
                  "w2": rng.standard_normal((32, 4), np.float32) * 0.1}
        x = rng.standard_normal((8, 16), np.float32)
        y = rng.standard_normal((8, 4), np.float32)
        hstep = hloc.jax.jit(step, backend="host", donate_argnums=0)
        jstep = jax.jit(step)
        hp, jp = params, params
        for _ in range(5):
            hp, hl = hstep(hp, x, y, 0.1)
            jp, jl = jstep(jp, x, y, 0.1)
            assert_trees_close(self, (hp, hl), (jp, jl))
        self.assertLess(float(hl), float(loss(params, x, y)))

    def test_scan_and_while(self):
        def rnn(h0, xs, w):
            def cell(h, x):
                h = jnp.tanh(h @ w + x)
                return h, h.sum()
            return lax.scan(cell, h0, xs)

        rng = np.random.default_rng(1)
        args = (np.zeros(8, np.float32), rng.standard_normal((20, 8), np.float32),
                rng.standard_normal((8, 8), np.float32) * 0.3)
        assert_trees_close(self, hloc.jax.jit(rnn, backend="host")(*args), jax.jit(rnn)(*args))
        grad = jax.grad(lambda w: rnn(args[0], args[1], w)[1].sum())
        assert_trees_close(self, hloc.jax.jit(grad, backend="host")(args[2]),
                           jax.jit(grad)(args[2]), rtol=1e-4, atol=1e-4)

        def collatz(n):
            return lax.while_loop(lambda s: s[0] != 1,
                                  lambda s: (jnp.where(s[0] % 2 == 0, s[0] // 2, 3 * s[0] + 1),
                                             s[1] + 1), (n, 0))
        assert_trees_close(self, hloc.jax.jit(collatz)(jnp.int32(27)),
                           jax.jit(collatz)(jnp.int32(27)))

    def test_dtypes(self):
        def f(a, b, q, s):
            deq = q.astype(jnp.float32) * s
            return (a * 2 + 1).astype(jnp.bfloat16), b.astype(jnp.float16) * 3, deq @ deq.T

        rng = np.random.default_rng(2)
        args = (jnp.asarray(rng.standard_normal(16), jnp.bfloat16),
                rng.standard_normal(16).astype(np.float16),
                rng.integers(-128, 127, (8, 8)).astype(np.int8), np.float32(0.05))
        assert_trees_close(self, hloc.jax.jit(f, backend="host")(*args), jax.jit(f)(*args),
                           rtol=1e-4, atol=1e-4)

    def test_static_keyword_and_pytree_arguments(self):
        def f(x, n, *, scale, mode):
            out = {"sum": x["a"] * scale + x["b"]}
            for _ in range(n):
                out["sum"] = out["sum"] * 2
            return out if mode == "dict" else [out["sum"]]

        x = {"a": np.ones(4, np.float32), "b": np.arange(4, dtype=np.float32)}
        hf = hloc.jax.jit(f, static_argnums=1, static_argnames="mode")
        for n, mode in [(1, "dict"), (2, "list"), (1, "dict")]:
            assert_trees_close(self, hf(x, n, scale=3.0, mode=mode),
                               jax.jit(f, static_argnums=1, static_argnames="mode")(
                                   x, n, scale=3.0, mode=mode))
        self.assertEqual(len(hf.hloc._cache), 2)

    def test_calls_go_through_jax_dispatch_to_hloc(self):
        # JAX on the CPU: the program JAX runs is one custom call to hloc's
        # FFI handler; the module's ops are all in the hloc executable.
        def f(x, y):
            return jnp.tanh(x @ y) + 1

        rng = np.random.default_rng(3)
        x = rng.standard_normal((8, 16), np.float32)
        y = rng.standard_normal((16, 4), np.float32)
        hf = hloc.jax.jit(f, backend="host")
        self.assertIsNotNone(hf.hloc._dispatch)
        outer = hf.lower(x, y).as_text()
        self.assertIn("hloc_run_executable", outer)
        for op in ("dot_general", "tanh", "stablehlo.add"):
            self.assertNotIn(op, outer)
        got = hf(x, y)
        assert_trees_close(self, got, jax.jit(f)(x, y))
        # The path from Python (used where the FFI can't serve) agrees.
        assert_trees_close(self, hf.hloc._call_from_python((x, y), {}), got)
        self.assertEqual(hf.executable(x, y).stats["interpreter_ops"], 0)

    def test_donated_arguments_hold_results(self):
        # Only the dot reads w, before anything writes the result: hloc can
        # compute the result in w's memory.
        def step(w, g):
            return w @ g + g

        w = jnp.asarray(np.full((32, 32), 3.0, np.float32))
        g = jnp.asarray(np.full((32, 32), 0.01, np.float32))
        want = jax.jit(step)(w, g)
        hstep = hloc.jax.jit(step, backend="host", donate_argnums=0)
        got = hstep(w, g)
        self.assertTrue(w.is_deleted())
        assert_trees_close(self, got, want)
        self.assertIn(0, hstep.executable(got, g)._native.aliased_arguments)

    def test_eight_threads_call_one_function(self):
        # JAX's dispatch from several threads runs hloc's handler at once.
        import threading

        def f(x, y):
            return jnp.tanh(x @ y) * 2 + x.sum()

        rng = np.random.default_rng(5)
        inputs = [(rng.standard_normal((16, 16), np.float32),
                   rng.standard_normal((16, 16), np.float32)) for _ in range(8)]
        hf = hloc.jax.jit(f, backend="host")
        want = [jax.jit(f)(x, y) for x, y in inputs]
        got = [None] * 8
        errors = []

        def work(t):
            try:
                for _ in range(200):
                    got[t] = hf(*inputs[t]).block_until_ready()
            except Exception as e:  # reported below, on the main thread
                errors.append(e)

        threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        for g, w in zip(got, want):
            assert_trees_close(self, g, w)

    def test_host_callbacks(self):
        # jax.debug.print, pure_callback and io_callback (ordered too) lower
        # to custom calls back into Python, which hloc runs; ordered
        # callbacks keep the order of calls.
        import contextlib
        import io
        from jax.experimental import io_callback

        def f(x):
            jax.debug.print("x={x}", x=x)
            y = jax.pure_callback(lambda a: np.sin(a) * 2,
                                  jax.ShapeDtypeStruct(x.shape, x.dtype), x)
            return y + 1

        x = np.array([0.0, 0.5, 1.0], np.float32)
        hf = hloc.jax.jit(f, backend="host")
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            got = hf(x)
            jax.effects_barrier()
        self.assertIn("x=[0.  0.5 1. ]", printed.getvalue())
        assert_trees_close(self, got, jax.jit(f)(x))
        self.assertEqual(hf.executable(x).stats["interpreter_ops"], 0)

        seen = []

        def g(x):
            def body(c, i):
                c = c + io_callback(lambda a, i: (seen.append(int(i)), a * 2)[1],
                                    jax.ShapeDtypeStruct(c.shape, c.dtype), c, i)
                return c, c.sum()
            return lax.scan(body, x, jnp.arange(4))

        assert_trees_close(self, hloc.jax.jit(g, backend="host")(x), jax.jit(g)(x))
        self.assertEqual(seen[:4], [0, 1, 2, 3])

        order = []

        def k(i):
            jax.debug.print("i={i}", i=i, ordered=True)
            return io_callback(lambda a: (order.append(int(a)), a + 1)[1],
                               jax.ShapeDtypeStruct((), jnp.int32), i, ordered=True) * 2

        hk = hloc.jax.jit(k, backend="host")
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            results = [hk(jnp.int32(i)) for i in range(50)]
            jax.effects_barrier()
        self.assertEqual(order, list(range(50)))
        self.assertEqual([int(r) for r in results], [2 * (i + 1) for i in range(50)])
        self.assertEqual(printed.getvalue().split(), [f"i={i}" for i in range(50)])

        def broken(x):
            return jax.pure_callback(lambda a: 1 / 0, jax.ShapeDtypeStruct(x.shape, x.dtype), x)

        with self.assertRaisesRegex(Exception, "ZeroDivisionError"):
            np.asarray(hloc.jax.jit(broken, backend="host")(x))

    def test_a_freed_function_fails_cleanly(self):
        import gc
        hf = hloc.jax.jit(lambda x: x * 2, backend="host")
        x = np.ones(4, np.float32)
        compiled = hf.lower(x).compile()
        np.testing.assert_array_equal(np.asarray(compiled(x)), x * 2)
        del hf
        gc.collect()
        with self.assertRaisesRegex(Exception, "is gone"):
            np.asarray(compiled(x))

    def test_compile_error_surfaces(self):
        # A function JAX lowers fine but whose module hloc cannot take would
        # raise hloc.Error; an unknown backend is a ValueError before that.
        with self.assertRaises(ValueError):
            hloc.jax.jit(lambda x: x + 1, backend="tpu")(np.ones(2, np.float32))


if __name__ == "__main__":
    result = unittest.main(exit=False, verbosity=2).result
    failed = len(result.failures) + len(result.errors)
    print(f"{result.testsRun - failed - len(result.skipped)} passed, {failed} failed, "
          f"{len(result.skipped)} skipped")
    sys.exit(0 if result.wasSuccessful() else 1)
