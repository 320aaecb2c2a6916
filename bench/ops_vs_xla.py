#!/usr/bin/env python3
"""Single JAX operations of real size on hloc's host backend against XLA:CPU,
timed the same way in one process: jax.jit(f) and hloc.jax.jit(f,
backend="host") on the same inputs, each call waited for with
block_until_ready, median of --runs after a warm-up, and the two sides
interleaved run by run so that a noisy neighbour hits both alike.

    bazel build -c opt //python:hloc
    PYTHONPATH=<opt bazel-bin>/python python3 bench/ops_vs_xla.py [--only SUBSTRING]
"""
import argparse
import time

import jax
import jax.numpy as jnp
import numpy as np

import hloc
import hloc.jax


def interleaved_medians(calls, runs):
    for call in calls:
        call()
    times = [[] for _ in calls]
    for _ in range(runs):
        for i, call in enumerate(calls):
            start = time.perf_counter()
            call()
            times[i].append(time.perf_counter() - start)
    return [float(np.median(t)) * 1e3 for t in times]


def cases(rng):
    f32 = lambda *s: rng.standard_normal(s).astype(np.float32)
    spd = lambda b, n: (lambda a: (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(np.float32))(
        rng.standard_normal((b, n, n)))
    c64 = lambda *s: (rng.standard_normal(s) + 1j * rng.standard_normal(s)).astype(np.complex64)
    key = jax.random.PRNGKey(0)
    return [
        ("random.normal 2^20", lambda k: jax.random.normal(k, (1 << 20,)), (key,)),
        ("random.uniform 2^20", lambda k: jax.random.uniform(k, (1 << 20,)), (key,)),
        ("random.bernoulli 2^20", lambda k: jax.random.bernoulli(k, 0.3, (1 << 20,)), (key,)),
        ("linalg.inv f32[64,64,64]", jnp.linalg.inv, (spd(64, 64),)),
        ("cholesky f32[64,64,64]", jnp.linalg.cholesky, (spd(64, 64),)),
        ("cholesky f32[512,512]", jnp.linalg.cholesky, (spd(1, 512)[0],)),
        ("exp(z)*w c64[1M]", lambda z, w: jnp.exp(z) * w, (c64(1 << 20), c64(1 << 20))),
        ("log1p(x)**y f32[1M]", lambda x, y: jnp.log1p(jnp.abs(x)) ** y, (f32(1 << 20), f32(1 << 20))),
        ("histogram 1M, 64 bins", lambda x: jnp.histogram(x, bins=64, range=(-4.0, 4.0))[0], (f32(1 << 20),)),
        ("sort f32[1M]", jnp.sort, (f32(1 << 20),)),
        ("argsort f32[256,4096]", lambda x: jnp.argsort(x, axis=-1), (f32(256, 4096),)),
        ("softmax f32[512,4096]", jax.nn.softmax, (f32(512, 4096),)),
        ("layernorm f32[4096,1024]",
         lambda x: (x - x.mean(-1, keepdims=True)) / jnp.sqrt(x.var(-1, keepdims=True) + 1e-5),
         (f32(4096, 1024),)),
        ("erf f32[1M]", jax.scipy.special.erf, (f32(1 << 20),)),
        ("tanh f32[4M]", jnp.tanh, (f32(1 << 22),)),
    ]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    for name, fn, inputs in cases(rng):
        if args.only not in name:
            continue
        xla = jax.jit(fn)
        ours = hloc.jax.jit(fn, backend="host")
        got = np.asarray(ours(*inputs))
        want = np.asarray(xla(*inputs))
        if got.dtype == bool or np.issubdtype(got.dtype, np.integer):
            agree = "exact" if np.array_equal(got, want) else "DIFFERENT"
        else:
            agree = f"max|diff| {float(np.max(np.abs(got - want))):.1e}"
        t_xla, t_hloc = interleaved_medians(
            [lambda: xla(*inputs).block_until_ready(), lambda: ours(*inputs).block_until_ready()], args.runs)
        print(f"{name}: jax.jit {t_xla:.3f} ms, hloc.jax.jit {t_hloc:.3f} ms, "
              f"ratio {t_hloc / t_xla:.2f} ({agree})", flush=True)


if __name__ == "__main__":
    main()
