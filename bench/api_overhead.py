#!/usr/bin/env python3
"""Per-call overhead of the embedding APIs: a two-input f32[8] add called
N times (default 10,000) through hloc.jax.jit, through hloc.Executable with
numpy inputs, and through jax.jit, interleaved in one run. Prints the median
of 5 rounds per path in microseconds per call.

  bazel build -c opt //python:hloc
  PYTHONPATH=$(bazel info -c opt bazel-bin)/python python3 bench/api_overhead.py
"""
import argparse
import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np

import hloc
import hloc.jax


def add(x, y):
    return x + y


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=10000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()

    xn = np.arange(8, dtype=np.float32)
    yn = np.ones(8, dtype=np.float32)
    xj, yj = jnp.asarray(xn), jnp.asarray(yn)
    jax_add = jax.jit(add)
    hloc_add = hloc.jax.jit(add, backend="host")
    exe = hloc_add.executable(xj, yj)

    def via_jax():
        jax_add(xj, yj).block_until_ready()

    def via_hloc_jit():
        hloc_add(xj, yj).block_until_ready()

    def via_executable():
        exe(xn, yn)

    paths = [("jax.jit (XLA:CPU)", via_jax), ("hloc.jax.jit", via_hloc_jit),
             ("hloc.Executable, numpy", via_executable)]
    for _, fn in paths:  # warm up: compile, caches
        for _ in range(100):
            fn()
    times = {name: [] for name, _ in paths}
    for _ in range(args.rounds):
        for name, fn in paths:
            start = time.perf_counter()
            for _ in range(args.calls):
                fn()
            times[name].append((time.perf_counter() - start) / args.calls * 1e6)
    np.testing.assert_array_equal(np.asarray(hloc_add(xj, yj)), xn + yn)
    base = statistics.median(times[paths[0][0]])
    print(f"{'path':28s} {'us/call (median of ' + str(args.rounds) + ')':>24s} {'vs jax.jit':>10s}")
    for name, _ in paths:
        m = statistics.median(times[name])
        print(f"{name:28s} {m:24.2f} {m / base:10.2f}")


if __name__ == "__main__":
    main()
