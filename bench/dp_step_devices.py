#!/usr/bin/env python3
"""Data-parallel training step on 1, 2 and 4 host devices: hloc vs JAX/XLA:CPU.

The step is the sharded zoo's dp_train_step (tests/jax_sharded): a two-layer
tanh MLP, loss = mean squared error, gradients psum'd over the "d" axis of a
shard_map, SGD update. The global batch is fixed (strong scaling): with k
devices each holds batch/k rows. One process with
--xla_force_host_platform_device_count=4 builds meshes over the first 1, 2
and 4 CPU devices, so every configuration runs in the same process, on the
same inputs, timed the same way: per call, interleaved round-robin over the
paths (so a load spike hits them all), result blocked on.

Paths per device count:
  jax     jax.jit(step)                   XLA:CPU, inputs placed as its program wants
  hloc    hloc.jax.jit(step)              the same jax.Arrays in, jax.Arrays out
                                          (gathers inputs, hloc on k device threads,
                                          device_put of the results)
  exe     hloc.Executable from hloc.jax.jit(step).executable(...)
                                          called with global numpy arrays (no JAX
                                          on the way in or out)

  bazel build -c opt //python:hloc
  PYTHONPATH=$(bazel info -c opt bazel-bin)/python python3 bench/dp_step_devices.py
Prints one line per (size, devices, path): median and min ms per step.
"""
import os

os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                           " --xla_force_host_platform_device_count=4").strip()
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import argparse
import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

try:
    from jax import shard_map
except ImportError:
    from jax.experimental.shard_map import shard_map

import hloc
import hloc.jax

SIZES = {
    # name: (batch, features, hidden, outputs)
    "zoo": (32, 8, 16, 4),          # the sharded zoo's own shapes
    "large": (4096, 256, 512, 16),  # about 3 GFLOP per step
}


def make_step(k):
    mesh = Mesh(np.array(jax.devices()[:k]), ("d",))

    def local(w1, b1, w2, x, y):
        def loss(params):
            w1, b1, w2 = params
            h = jnp.tanh(x @ w1 + b1)
            return jnp.mean(jnp.square(h @ w2 - y))

        l, grads = jax.value_and_grad(loss)((w1, b1, w2))
        grads = jax.tree_util.tree_map(lambda g: lax.psum(g, "d") / k, grads)
        l = lax.pmean(l, "d")
        new = [p - 0.1 * g for p, g in zip((w1, b1, w2), grads)]
        return new[0], new[1], new[2], l

    def step(w1, b1, w2, x, y):
        return shard_map(local, mesh=mesh, in_specs=(P(), P(), P(), P("d"), P("d")),
                         out_specs=(P(), P(), P(), P()))(w1, b1, w2, x, y)

    shardings = [NamedSharding(mesh, s) for s in (P(), P(), P(), P("d"), P("d"))]
    return step, shardings


def args_for(size, seed=0):
    b, f, h, o = SIZES[size]
    rng = np.random.default_rng(seed)
    n = lambda shape, s=1.0: (rng.standard_normal(shape) * s).astype(np.float32)
    return [n((f, h), 0.3), n((h,), 0.1), n((h, o), 0.3), n((b, f)), n((b, o))]


def block(out):
    for leaf in jax.tree_util.tree_leaves(out):
        if hasattr(leaf, "block_until_ready"):
            leaf.block_until_ready()
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="zoo,large")
    parser.add_argument("--devices", default="1,2,4")
    parser.add_argument("--calls", type=int, default=0,
                        help="timed calls per path (default: 200 for zoo, 20 for large)")
    cli = parser.parse_args()
    assert jax.device_count() >= 4, "needs --xla_force_host_platform_device_count=4"
    print(f"jax {jax.__version__}, hloc {hloc.__version__}, {os.cpu_count()} cores, "
          f"load average {os.getloadavg()}")
    for size in cli.sizes.split(","):
        numpy_args = args_for(size)
        calls = cli.calls or (200 if size == "zoo" else 20)
        for k in [int(d) for d in cli.devices.split(",")]:
            step, shardings = make_step(k)
            placed = [jax.device_put(a, s) for a, s in zip(numpy_args, shardings)]
            jax_step = jax.jit(step)
            hloc_step = hloc.jax.jit(step, backend="host")
            exe = hloc_step.executable(*placed)
            assert exe.stats["devices"] == k, exe.stats
            expected = [np.asarray(o) for o in block(jax_step(*placed))]
            for got in (block(hloc_step(*placed)), exe(*numpy_args)):
                for e, g in zip(expected, got):
                    np.testing.assert_allclose(np.asarray(g), e, rtol=2e-4, atol=2e-5)
            paths = {
                "jax": lambda: block(jax_step(*placed)),
                "hloc": lambda: block(hloc_step(*placed)),
                "exe": lambda: exe(*numpy_args),
            }
            for run in paths.values():  # Warm-up.
                for _ in range(3):
                    run()
            times = {name: [] for name in paths}
            for _ in range(calls):
                for name, run in paths.items():
                    start = time.perf_counter()
                    run()
                    times[name].append(time.perf_counter() - start)
            for name, t in times.items():
                print(f"{size:6s} devices={k} {name:5s} median {1e3 * statistics.median(t):9.3f} ms"
                      f"  min {1e3 * min(t):9.3f} ms  ({calls} calls)", flush=True)
    print(f"load average at the end {os.getloadavg()}")


if __name__ == "__main__":
    main()
