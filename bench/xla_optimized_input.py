#!/usr/bin/env python3
"""hloc's host backend on modules XLA:CPU has already optimized, against the
same models as JAX hands them over (tests/jax_large's real-size zoo).

Users feed hloc either form: the module JAX lowers (`compiler_ir("hlo")`) or
the one XLA dumps after its own pipeline (`compiled.as_text()`, the
`cpu_after_optimizations` files of `--xla_dump_to`), which arrives fused
(loop fusions, YNNPACK dot fusions), with layouts on every shape and bitcasts
that are transposes. hloc unfuses it first (FusionInliner) and optimizes it
again. This measures how close that gets to hloc on JAX's own module.

Per model, in one run: both modules written by jax from make_large_zoo.py's
functions and arguments; bench/host_bench on each (host pipeline, random
arguments from one seed, warm median of runs over --min-time), the two
alternating for --rounds rounds, best median kept; XLA:CPU's own time for the
compiled function (warm, block_until_ready, median) for scale.

--baseline PATH/host_bench (another build, e.g. the commit before a change)
adds a column: that build on XLA's optimized module, timed in the same
alternation.

Usage:
  python3 bench/xla_optimized_input.py --bin PATH/host_bench [--models a,b]
        [--threads N] [--min-time S] [--rounds R] [--baseline PATH/host_bench]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import jax
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests", "jax_large"))


def host_bench(binary, path, threads, min_time):
    cmd = [binary, path, "--backend=host", f"--threads={threads}", f"--min-time={min_time}",
           "--repeat=100000"]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"{path}: {(out.stderr or out.stdout).strip()[-300:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def xla_time(compiled, args, min_time):
    def jax_block(out):
        for leaf in jax.tree_util.tree_leaves(out):
            leaf.block_until_ready()

    jax_block(compiled(*args))
    times, start = [], time.perf_counter()
    while time.perf_counter() - start < min_time or len(times) < 5:
        t = time.perf_counter()
        jax_block(compiled(*args))
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def fmt(seconds):
    return f"{seconds * 1e3:.2f} ms" if seconds >= 1e-3 else f"{seconds * 1e6:.1f} us"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True, help="host_bench binary (opt build)")
    parser.add_argument("--models", help="comma-separated subset")
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--min-time", type=float, default=1.0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--baseline", help="host_bench of another build, run on XLA's module")
    options = parser.parse_args()

    import make_large_zoo
    models = make_large_zoo._models("cpu")
    names = options.models.split(",") if options.models else list(models)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            make_args, fn, _ = models[name]
            args = make_args(np.random.default_rng(0))
            lowered = jax.jit(fn, keep_unused=True).lower(*args)
            compiled = lowered.compile()
            paths = {
                "jax": os.path.join(tmp, f"{name}.jax.pb"),
                "xla": os.path.join(tmp, f"{name}.xla_optimized.pb"),
            }
            with open(paths["jax"], "wb") as f:
                f.write(lowered.compiler_ir("hlo").as_serialized_hlo_module_proto())
            module = compiled.runtime_executable().hlo_modules()[0]
            with open(paths["xla"], "wb") as f:
                f.write(module.as_serialized_hlo_module_proto())
            fusions = compiled.as_text().count(" fusion(")
            runs = [("jax", options.bin), ("xla", options.bin)]
            if options.baseline:
                runs.append(("baseline", options.baseline))
            best = {side: float("inf") for side, _ in runs}
            for _ in range(options.rounds):
                for side, binary in runs:
                    path = paths["jax" if side == "jax" else "xla"]
                    result = host_bench(binary, path, options.threads, options.min_time)
                    best[side] = min(best[side], result["median_s"])
            xla = xla_time(compiled, args, options.min_time)
            rows.append((name, best, xla, fusions))
            print(f"{name}: hloc on JAX's module {fmt(best['jax'])}, on XLA's optimized "
                  f"module {fmt(best['xla'])} ({best['xla'] / best['jax']:.2f}x), "
                  f"XLA:CPU {fmt(xla)}", file=sys.stderr, flush=True)
    baseline = " | baseline, XLA's optimized module" if options.baseline else ""
    print(f"| model | XLA fusions | hloc, JAX's module | hloc, XLA's optimized module{baseline} | "
          "optimized / JAX's | XLA:CPU |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |" + (" ---: |" if options.baseline else ""))
    ratios = []
    for name, best, xla, fusions in rows:
        mine, theirs = best["jax"], best["xla"]
        ratios.append(theirs / mine)
        before = f" | {fmt(best['baseline'])}" if options.baseline else ""
        print(f"| {name} | {fusions} | {fmt(mine)} | {fmt(theirs)}{before} | "
              f"{theirs / mine:.2f} | {fmt(xla)} |")
    geo = statistics.geometric_mean(ratios)
    print(f"\ngeometric mean (optimized / JAX's): {geo:.2f} over {len(rows)} models, "
          f"{options.threads} threads")


if __name__ == "__main__":
    main()
