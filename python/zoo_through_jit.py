#!/usr/bin/env python3
"""Takes every JAX zoo model (tests/jax/make_zoo.py) through hloc.jax.jit and
compares with jax.jit (XLA:CPU) on the same inputs; one line per model, exit
status 1 when any differs. Used by tools/main.sh.

  PYTHONPATH=$(bazel info -c opt bazel-bin)/python:tests/jax python3 python/zoo_through_jit.py
"""
import sys

import jax
import numpy as np

import hloc.jax
import make_zoo


def main():
    failures = 0
    print(f"{'model':20s} {'kernels':>8s} {'library':>8s} {'interp':>7s}  vs jax.jit")
    for name, (make_args, fn, _) in sorted(make_zoo._models().items()):
        args = [np.asarray(a) for a in make_args(np.random.default_rng(sum(name.encode())))]
        want = jax.tree_util.tree_leaves(jax.jit(fn)(*args))
        jitted = hloc.jax.jit(fn, backend="host")
        got = jax.tree_util.tree_leaves(jitted(*args))
        stats = jitted.executable(*args).stats
        worst = 0.0
        ok = len(got) == len(want)
        for g, w in zip(got, want):
            g32, w32 = np.asarray(g, np.float64), np.asarray(w, np.float64)
            ok = ok and g.shape == w.shape and g.dtype == w.dtype
            tol = 2e-2 if w.dtype.itemsize == 2 and w.dtype.kind in "fV" else 2e-4
            if g32.size:
                worst = max(worst, float(np.max(np.abs(g32 - w32))))
            ok = ok and np.allclose(g32, w32, rtol=tol, atol=tol, equal_nan=True)
        failures += not ok
        print(f"{name:20s} {stats['kernels']:8d} {stats['library_calls']:8d} "
              f"{stats['interpreter_ops']:7d}  {'OK' if ok else 'MISMATCH'} (max abs diff {worst:.3g})")
    print(f"hloc.jax.jit: {len(make_zoo._models()) - failures} models match jax.jit, {failures} differ")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
