#!/usr/bin/env python3
"""hloc's host backend vs XLA:CPU (through JAX) vs hloc's interpreter on the JAX zoo.

For every model of tests/jax/zoo (NAME.snapshot.pb: the module JAX gave XLA,
its recorded arguments and XLA:CPU's result) this times, in one run and on
the same inputs:

  hloc host     bench/host_bench FILE --backend=host: the host pipeline,
                then CompileForHost; warm (one run first), median of repeats;
                compile excluded from the run time.
  XLA:CPU       jax.jit of the same function from tests/jax/make_zoo.py on the
                arguments make_zoo draws from its fixed seed (checked equal to
                the snapshot's, literal by literal), warm, block_until_ready,
                median of repeats.
  interpreter   bench/host_bench FILE --backend=interpreter, same repeats.

Threads: XLA:CPU uses every core of the machine; hloc's host backend and
interpreter get the same count (--threads, default: all cores).

Compile time: hloc's pipeline + codegen (LLVM IR emission, O3, ORC JIT,
thunks and buffer assignment, a fresh kernel compiler with no cache), and
XLA:CPU's jit(...).lower(...).compile() of the same function, for every zoo
model; also hloc's for mobilenet_v2 from the corpus (random arguments).

Usage:
  python3 bench/host_vs_xla.py [--bin PATH/host_bench] [--threads N]
        [--min-time S] [--models a,b] [--markdown]
Without --bin the script builds //bench:host_bench with `bazel build -c opt`
(output base from $HLOC_BAZEL_OUTPUT_BASE when set).
"""

import argparse
import glob
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
ZOO = os.path.join(REPO, "tests", "jax", "zoo")
MOBILENET = "xla/xla_tools_data_benchmarking_mobilenet_v2.hlo"


def bazel_cmd():
    base = os.environ.get("HLOC_BAZEL_OUTPUT_BASE")
    return ["bazel"] + ([f"--output_base={base}"] if base else [])


def build_bench():
    subprocess.run(bazel_cmd() + ["build", "-c", "opt", "//bench:host_bench"], cwd=REPO,
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    bin_dir = subprocess.run(bazel_cmd() + ["info", "-c", "opt", "bazel-bin"], cwd=REPO,
                             check=True, capture_output=True, text=True).stdout.strip()
    return os.path.join(bin_dir, "bench", "host_bench")


def run_bench(binary, path, backend, threads, min_time, extra=()):
    cmd = [binary, path, f"--backend={backend}", f"--threads={threads}",
           f"--min-time={min_time}", *(extra or ["--repeat=100000"])]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        return {"error": (out.stderr or out.stdout).strip().splitlines()[-1:]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def load_make_zoo():
    sys.path.insert(0, os.path.join(REPO, "tests", "jax"))
    import make_zoo  # noqa: E402
    return make_zoo


def check_arguments(make_zoo, name, args, pb2_dir):
    """True when `args` encode to exactly the snapshot's argument literals."""
    if pb2_dir is None:
        return None
    if pb2_dir not in sys.path:
        sys.path.insert(0, pb2_dir)
    from hlo import hlo_pb2, xla_data_pb2 as xla  # noqa: E402
    with open(os.path.join(ZOO, name + ".snapshot.pb"), "rb") as f:
        snapshot = hlo_pb2.HloSnapshot.FromString(f.read())
    if len(snapshot.arguments) != len(args):
        return False
    for recorded, arg in zip(snapshot.arguments, args):
        lit = xla.LiteralProto()
        make_zoo._fill_literal(xla, lit, arg)
        # The layout is not part of the values; compare everything else.
        lit.shape.ClearField("layout")
        want = xla.LiteralProto()
        want.CopyFrom(recorded)
        want.shape.ClearField("layout")
        if lit != want:
            return False
    return True


def median_call_time(compiled, device_args, min_time, cpu=None):
    """Median wall time of warm calls and their number; with a dict `cpu`,
    also cpu["cpu_s"]: the process's CPU time (every thread) over the timed
    calls divided by their number, host_bench's cpu_s."""
    import jax
    jax.block_until_ready(compiled(*device_args))  # warm-up
    times = []
    begin = time.perf_counter()
    cpu_begin = time.process_time()
    while len(times) < 5 or (time.perf_counter() - begin < min_time and len(times) < 100000):
        a = time.perf_counter()
        jax.block_until_ready(compiled(*device_args))
        times.append(time.perf_counter() - a)
    if cpu is not None:
        cpu["cpu_s"] = (time.process_time() - cpu_begin) / len(times)
    return statistics.median(times), len(times)


def time_xla(fn, args, min_time):
    """XLA:CPU through JAX; also the dispatch floor: the same arguments into a
    jitted function that only returns a scalar constant, i.e. what JAX's call
    path costs before any work (the hloc side has no Python in its loop)."""
    import jax
    import jax.numpy as jnp
    start = time.perf_counter()
    compiled = jax.jit(fn, keep_unused=True).lower(*args).compile()
    compile_s = time.perf_counter() - start
    device_args = [jax.device_put(a) for a in args]
    median_s, runs = median_call_time(compiled, device_args, min_time)

    def floor(*unused):
        return jnp.zeros((), jnp.float32)

    floor_compiled = jax.jit(floor, keep_unused=True).lower(*args).compile()
    floor_s, _ = median_call_time(floor_compiled, device_args, min_time / 2)
    return {"compile_s": compile_s, "median_s": median_s, "runs": runs, "floor_s": floor_s}


def fmt_time(seconds):
    if seconds is None:
        return "-"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} us"
    if seconds < 1:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.2f} s"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin", help="host_bench binary (default: build it)")
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--min-time", type=float, default=0.5,
                        help="seconds of timed runs per model and side (at least 5 runs)")
    parser.add_argument("--models", help="comma-separated subset of the zoo")
    parser.add_argument("--corpus", default=os.environ.get("HLOC_CORPUS_DIR",
                                                            os.path.join(REPO, "..", "shared",
                                                                         "corpus")))
    parser.add_argument("--json", help="also write every measurement here")
    opts = parser.parse_args()

    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    binary = opts.bin or build_bench()
    make_zoo = load_make_zoo()
    import jax
    import numpy as np
    assert jax.default_backend() == "cpu", jax.default_backend()
    models = make_zoo._models()
    names = sorted(os.path.basename(p)[:-len(".snapshot.pb")]
                   for p in glob.glob(os.path.join(ZOO, "*.snapshot.pb")))
    if opts.models:
        names = [n for n in names if n in opts.models.split(",")]

    pb2_dir = None
    tmp = tempfile.TemporaryDirectory(prefix="host_vs_xla.")
    try:
        make_zoo.generate_bindings(tmp.name)
        pb2_dir = tmp.name
    except Exception as e:  # protoc missing: inputs are then not cross-checked
        print(f"note: cannot check inputs against the snapshots ({e})", file=sys.stderr)

    rows = []
    for name in names:
        make_args, fn, _ = models[name]
        seed = sum(name.encode())  # make_zoo's seed for this model
        args = [np.asarray(a) for a in make_args(np.random.default_rng(seed))]
        same_inputs = check_arguments(make_zoo, name, args, pb2_dir)
        path = os.path.join(ZOO, name + ".snapshot.pb")
        host = run_bench(binary, path, "host", opts.threads, opts.min_time)
        xla = time_xla(fn, args, opts.min_time)
        interp = run_bench(binary, path, "interpreter", opts.threads, opts.min_time)
        rows.append({"model": name, "host": host, "xla": xla, "interpreter": interp,
                     "same_inputs": same_inputs})
        print(f"{name}: host {fmt_time(host.get('median_s'))}, xla {fmt_time(xla['median_s'])}, "
              f"interpreter {fmt_time(interp.get('median_s'))}", file=sys.stderr)

    mobilenet = None
    mobilenet_path = os.path.join(opts.corpus, MOBILENET)
    if os.path.exists(mobilenet_path):
        # A training step at batch 96: compiled, not run.
        mobilenet = run_bench(binary, mobilenet_path, "host", opts.threads, 0.0,
                              ["--repeat=0"])

    print(f"threads: hloc {opts.threads}, XLA:CPU all {os.cpu_count()} cores; "
          f"jax {jax.__version__}; min time per side {opts.min_time} s")
    print()
    print("| model | hloc host | XLA:CPU | hloc/XLA | JAX floor | hloc/(XLA-floor) "
          "| interpreter | interp/XLA "
          "| hloc kernels (fused) / library / interpreter calls "
          "| hloc compile (pipeline + codegen) | XLA compile |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: |")
    ratios, net_ratios = [], []
    for r in rows:
        h, x, i = r["host"], r["xla"], r["interpreter"]
        hs, xs, is_ = h.get("median_s"), x["median_s"], i.get("median_s")
        ratio = hs / xs if hs else None
        if ratio:
            ratios.append(ratio)
        flag = "" if h.get("matches_recorded", True) else " (result differs!)"
        if r["same_inputs"] is False:
            flag += " (inputs differ!)"
        kernels = (f"{h['kernels']} ({h['fused_kernels']}) / {h['library_calls']} / "
                   f"{h['interpreter_calls']}" if "kernels" in h else str(h.get("error")))
        compile_s = (h["pipeline_s"] + h["codegen_s"]) if "codegen_s" in h else None
        compile_text = (f"{fmt_time(compile_s)} ({fmt_time(h['pipeline_s'])} + "
                        f"{fmt_time(h['codegen_s'])})" if compile_s else "-")
        net = xs - x["floor_s"]
        net_ratio = hs / net if hs and net > 0 else None
        if net_ratio:
            net_ratios.append(net_ratio)
        cells = [r["model"] + flag, fmt_time(hs), fmt_time(xs),
                 f"{ratio:.2f}" if ratio else "-", fmt_time(x["floor_s"]),
                 f"{net_ratio:.2f}" if net_ratio else "-", fmt_time(is_),
                 f"{is_ / xs:.1f}" if is_ else "-", kernels, compile_text,
                 fmt_time(x["compile_s"])]
        print("| " + " | ".join(cells) + " |")
    if ratios:
        geomean = math.exp(sum(math.log(v) for v in ratios) / len(ratios))
        print()
        print(f"geometric mean hloc/XLA:CPU over {len(ratios)} models: {geomean:.2f}")
    if net_ratios:
        geomean = math.exp(sum(math.log(v) for v in net_ratios) / len(net_ratios))
        print(f"geometric mean hloc/(XLA:CPU - JAX floor) over {len(net_ratios)} models: "
              f"{geomean:.2f}")
    if mobilenet is not None:
        if "codegen_s" in mobilenet:
            print(f"mobilenet_v2 ({MOBILENET}): hloc compile "
                  f"{fmt_time(mobilenet['pipeline_s'] + mobilenet['codegen_s'])} "
                  f"(pipeline {fmt_time(mobilenet['pipeline_s'])} + codegen "
                  f"{fmt_time(mobilenet['codegen_s'])}, of which LLVM "
                  f"{fmt_time(mobilenet['kernel_compile_s'])}; {mobilenet['kernels']} kernels, "
                  f"{mobilenet['library_calls']} library calls, "
                  f"{mobilenet['interpreter_calls']} interpreter calls; not run)")
        else:
            print(f"mobilenet_v2: {mobilenet.get('error')}")
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump({"rows": rows, "mobilenet": mobilenet}, f, indent=1)
    tmp.cleanup()


if __name__ == "__main__":
    main()
