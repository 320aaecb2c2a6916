#!/usr/bin/env python3
"""hloc's CUDA backend vs XLA on the same GPU (through JAX), in one run.

Three tables, written to --out (markdown) and beside it as JSON:

  zoo        every model of tests/jax/zoo. hloc: `gpu_bench NAME.snapshot.pb`
             (the snapshot's module and recorded arguments; OptimizeForGpu +
             CompileForGpu, CUDA graph, arguments on the device). XLA:
             jax.jit of the same function from tests/jax/make_zoo.py on the
             arguments make_zoo draws from its fixed seed (checked equal to
             the snapshot's through byte checksums gpu_bench prints),
             arguments on the device, warm. Two comparisons:
               device  hloc: CUDA events around one run (graph launch
                       included); XLA: JAX's profiler (CUPTI), first kernel
                       start to last kernel end of one call. The main ratio.
               loop    a run's share of back-to-back runs: hloc's graph
                       launches vs XLA calls blocked once at the end, which
                       still pay JAX's per-call dispatch (the "JAX floor"
                       column: a jitted function returning a constant).
             A one-kernel module gives each measure's floor.
  bandwidth  `gpu_bench --bandwidth`: big fused elementwise, broadcast,
             reduction and transpose kernels vs cuMemcpyDtoD of the same
             traffic; the same functions through XLA beside them (device
             time from the profiler).
  gemm       `gpu_bench --gemm`: hloc's cuBLASLt gemms vs cublasGemmEx (same
             compute type); the same products through XLA beside them
             (precision HIGHEST for the f32 rows, DEFAULT = TF32 for the tf32
             row, bf16/f16 as given).

Precision: XLA on GPU lets DEFAULT-precision f32 dots use TF32; hloc does so
only with --tf32, which this script passes (--precision=highest instead sets
jax_default_matmul_precision to "highest" and leaves hloc at full f32).

Usage (on the GPU machine, from the repository root):
  python3 bench/gpu_vs_xla.py --bin ./gpu_bench --out $OUT/gpu_bench.md
        [--models a,b] [--min-time S] [--skip bandwidth,gemm,zoo]
        [--precision default|highest] [--timeout S]
  python3 bench/gpu_vs_xla.py --bin PATH --out F --dry-run
        # no GPU needed: gpu_bench --dry-run compiles everything for sm_90,
        # XLA runs on whatever JAX has (JAX_PLATFORMS=cpu), small sizes.

One failing model (or mode) puts its error in its row and the run goes on.
Needs jax, numpy; the CUDA libraries JAX's pip packages bring are put on
gpu_bench's LD_LIBRARY_PATH (gpu_bench dlopens libcublasLt, libcudnn).
"""

import argparse
import glob
import json
import math
import os
import site
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
ZOO = os.path.join(REPO, "tests", "jax", "zoo")


# ---------------------------------------------------------------- helpers

def geomean(values):
    values = [v for v in values if v and v > 0]
    if not values:
        return None
    return math.exp(sum(math.log(v) for v in values) / len(values))


def fmt_us(us):
    if us is None:
        return "-"
    if us < 1000:
        return f"{us:.1f} us"
    if us < 1e6:
        return f"{us / 1e3:.2f} ms"
    return f"{us / 1e6:.2f} s"


def fmt_s(s):
    return "-" if s is None else fmt_us(s * 1e6)


def fmt_ratio(r, digits=2):
    return "-" if r is None else f"{r:.{digits}f}"


def cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def checksum(arr):
    """gpu_bench's argument checksum: sum_i (i + 1) * byte_i mod 2^64."""
    import numpy as np
    data = np.frombuffer(np.ascontiguousarray(arr).tobytes(), dtype=np.uint8).astype(np.uint64)
    weights = np.arange(1, data.size + 1, dtype=np.uint64)
    with np.errstate(over="ignore"):
        return str(int(np.sum(data * weights, dtype=np.uint64)))


def bench_env():
    """gpu_bench's environment: the CUDA libraries of JAX's pip packages and
    of a toolkit under /usr/local/cuda on the loader path; ptxas and
    libdevice from the pip packages when the toolkit has none."""
    env = dict(os.environ)
    lib_dirs, bin_dirs, libdevice = [], [], []
    roots = []
    try:
        roots = site.getsitepackages() + [site.getusersitepackages()]
    except AttributeError:  # virtualenvs without site.getsitepackages
        roots = [p for p in sys.path if p.endswith("site-packages")]
    for root in roots:
        lib_dirs += sorted(glob.glob(os.path.join(root, "nvidia", "*", "lib")))
        bin_dirs += sorted(glob.glob(os.path.join(root, "nvidia", "*", "bin")))
        libdevice += sorted(glob.glob(os.path.join(root, "nvidia", "**", "libdevice.10.bc"),
                                      recursive=True))
    for d in ("/usr/local/cuda/lib64", "/usr/local/cuda/targets/x86_64-linux/lib"):
        if os.path.isdir(d):
            lib_dirs.append(d)
    if lib_dirs:
        old = env.get("LD_LIBRARY_PATH", "")
        env["LD_LIBRARY_PATH"] = ":".join(lib_dirs + ([old] if old else []))
    if "HLOC_PTXAS" not in env and not os.path.exists("/usr/local/cuda/bin/ptxas"):
        for d in bin_dirs:
            if os.path.exists(os.path.join(d, "ptxas")):
                env["HLOC_PTXAS"] = os.path.join(d, "ptxas")
                break
    if ("HLOC_LIBDEVICE" not in env and libdevice and
            not os.path.exists("/usr/local/cuda/nvvm/libdevice/libdevice.10.bc")):
        env["HLOC_LIBDEVICE"] = libdevice[0]
    return env


def run_bench(binary, args, env, timeout):
    """gpu_bench's JSON lines, or one {"error": ...} naming what went wrong."""
    cmd = [binary] + list(args)
    start = time.perf_counter()
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        partial = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        lines = parse_lines(partial)
        return lines + [{"error": f"timed out after {timeout} s: {' '.join(cmd)}"}]
    except OSError as e:
        return [{"error": f"cannot run {binary}: {e}"}]
    lines = parse_lines(out.stdout)
    tail = " / ".join((out.stderr or "").strip().splitlines()[-3:])
    if out.returncode < 0:
        lines.append({"error": f"gpu_bench died with signal {-out.returncode} after "
                               f"{time.perf_counter() - start:.1f} s: {tail}"})
    elif not lines:
        lines.append({"error": f"gpu_bench exit {out.returncode}, no output: {tail}"})
    return lines


def one_result(lines):
    """The single-module result among gpu_bench's lines, with the errors of
    the others (a crash, an unparsable line) added to it."""
    result = next((l for l in lines if "model" in l or "dry_run" in l or "skipped" in l), {})
    errors = [l["error"] for l in lines if "error" in l and l is not result]
    if errors:
        result = dict(result, error="; ".join(([result["error"]] if "error" in result else [])
                                              + errors))
    return result


def parse_lines(text):
    lines = []
    for line in (text or "").splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                lines.append(json.loads(line))
            except ValueError:
                lines.append({"error": f"unparsable line: {line[:200]}"})
    return lines


# ------------------------------------------------------------------ XLA side

def time_jax(compiled, device_args, min_time):
    """Wall time per call: (median of call + block, median per call in a
    loop blocked at the end). Microseconds."""
    import jax
    for _ in range(3):
        jax.block_until_ready(compiled(*device_args))
    sync = []
    begin = time.perf_counter()
    while len(sync) < 5 or (time.perf_counter() - begin < min_time / 2 and len(sync) < 20000):
        a = time.perf_counter()
        jax.block_until_ready(compiled(*device_args))
        sync.append((time.perf_counter() - a) * 1e6)
    sync_us = statistics.median(sync)
    per_loop = int(min(1000, max(10, math.ceil(2000.0 / max(sync_us, 1e-3)))))
    loops = []
    begin = time.perf_counter()
    while len(loops) < 5 or (time.perf_counter() - begin < min_time / 2 and len(loops) < 1000):
        a = time.perf_counter()
        out = None
        for _ in range(per_loop):
            out = compiled(*device_args)
        jax.block_until_ready(out)
        loops.append((time.perf_counter() - a) * 1e6 / per_loop)
    return sync_us, statistics.median(loops), len(sync), per_loop


def xla_device_time(compiled, device_args, calls=30):
    """XLA's device time per call from JAX's profiler (CUPTI): the calls are
    traced one at a time (blocked), every GPU event is given to the call
    whose host dispatch began last before it, and per call the span from
    its first kernel's start to its last kernel's end, the sum of kernel
    durations and the kernel count are taken; medians over the calls."""
    import gzip
    import shutil
    import tempfile
    import jax
    trace_dir = tempfile.mkdtemp(prefix="gpu_vs_xla_trace.")
    try:
        jax.profiler.start_trace(trace_dir, create_perfetto_trace=True)
        try:
            for _ in range(calls):
                jax.block_until_ready(compiled(*device_args))
        finally:
            jax.profiler.stop_trace()
        paths = glob.glob(os.path.join(trace_dir, "**", "perfetto_trace.json.gz"), recursive=True)
        if not paths:
            return {"error": "the profiler wrote no perfetto trace"}
        with gzip.open(max(paths, key=os.path.getmtime)) as f:
            data = json.load(f)
    finally:
        shutil.rmtree(trace_dir, ignore_errors=True)
    events = data["traceEvents"] if isinstance(data, dict) else data
    gpu_pids = {e.get("pid") for e in events
                if e.get("ph") == "M" and e.get("name") == "process_name"
                and str(e.get("args", {}).get("name", "")).startswith("/device:GPU")}
    kernels = sorted((e for e in events if e.get("ph") == "X" and e.get("pid") in gpu_pids),
                     key=lambda e: e["ts"])
    starts = sorted(e["ts"] for e in events if e.get("ph") == "X" and e.get("pid") not in gpu_pids
                    and str(e.get("name", "")).startswith("PjitFunction("))
    if not kernels or not starts:
        return {"error": f"trace has {len(kernels)} GPU events and {len(starts)} calls"}
    import bisect
    per_call = {}
    for e in kernels:
        i = bisect.bisect_right(starts, e["ts"]) - 1
        if i >= 0:
            per_call.setdefault(i, []).append(e)
    spans = [max(e["ts"] + e["dur"] for e in es) - min(e["ts"] for e in es)
             for es in per_call.values()]
    busy = [sum(e["dur"] for e in es) for es in per_call.values()]
    counts = [len(es) for es in per_call.values()]
    return {"device_us": statistics.median(spans), "busy_us": statistics.median(busy),
            "kernels": statistics.median(counts), "calls": len(per_call)}


def xla_model(fn, args, min_time):
    import jax
    import jax.numpy as jnp
    start = time.perf_counter()
    compiled = jax.jit(fn, keep_unused=True).lower(*args).compile()
    compile_s = time.perf_counter() - start
    device_args = [jax.device_put(a) for a in args]
    sync_us, loop_us, runs, per_loop = time_jax(compiled, device_args, min_time)

    def floor(*unused):
        return jnp.zeros((), jnp.float32)

    floor_compiled = jax.jit(floor, keep_unused=True).lower(*args).compile()
    floor_us, floor_loop_us, _, _ = time_jax(floor_compiled, device_args, min_time / 2)
    try:
        device = xla_device_time(compiled, device_args)
    except Exception as e:  # no CUPTI, another profiler running, ...
        device = {"error": f"{type(e).__name__}: {e}"}
    return {"compile_s": compile_s, "sync_us": sync_us, "loop_us": loop_us, "runs": runs,
            "per_loop": per_loop, "floor_us": floor_us, "floor_loop_us": floor_loop_us,
            "device": device}


def bandwidth_fn(name):
    """The JAX function of a gpu_bench bandwidth case (by its name) and the
    shapes/dtypes of its arguments for n elements."""
    import jax.numpy as jnp
    f32 = jnp.float32
    if name.startswith("fma"):
        return (lambda a, b, c: a * b + c), lambda n: [((n,), f32)] * 3
    if name.startswith("exp"):
        return (lambda a, b: jnp.exp(a) * b), lambda n: [((n,), f32)] * 2
    if name.startswith("bf16 convert"):
        return ((lambda a: (a.astype(jnp.bfloat16).astype(f32) * a).astype(jnp.bfloat16)),
                lambda n: [((n,), f32)])
    if name.startswith("broadcast-add"):
        return (lambda x, b: x + b[None, :]), lambda n: [((n // 1024, 1024), f32), ((1024,), f32)]
    if name.startswith("row reduce"):
        return (lambda x: jnp.sum(x, axis=1)), lambda n: [((n // 1024, 1024), f32)]
    if name.startswith("column reduce"):
        return (lambda x: jnp.sum(x, axis=0)), lambda n: [((1024, n // 1024), f32)]
    if name.startswith("transpose"):
        return (lambda x: x.T), lambda n: [((n // 4096, 4096), f32)]
    return None, None


def gemm_fn(row):
    import jax
    import jax.numpy as jnp
    dtype = {"f32": jnp.float32, "bf16": jnp.bfloat16, "f16": jnp.float16}[row["gemm"].split()[0]]
    precision = (jax.lax.Precision.DEFAULT if "tf32" in row["gemm"] or dtype != jnp.float32
                 else jax.lax.Precision.HIGHEST)
    b, m, n, k = row["batch"], row["m"], row["n"], row["k"]
    lead = (b,) if b > 1 else ()
    shapes = [(lead + (m, k), dtype), (lead + (k, n), dtype)]
    if "bias" in row["gemm"]:
        shapes.append(((n,), dtype))

        def fn(a, w, bias):
            return jax.nn.relu(jnp.matmul(a, w, precision=precision) + bias)
    else:
        def fn(a, w):
            return jnp.matmul(a, w, precision=precision)
    return fn, shapes, precision


def xla_array_op(fn, shapes, min_time):
    """A big op through XLA: its device time from the profiler (median
    span), else the per-call time of a loop blocked once (which small ops
    spend in JAX's dispatch). Microseconds, and which of the two."""
    import jax
    import jax.numpy as jnp
    keys = jax.random.split(jax.random.PRNGKey(0), len(shapes))
    args = [jax.random.uniform(k, s, dtype=jnp.float32, minval=-1, maxval=1).astype(d)
            for k, (s, d) in zip(keys, shapes)]
    compiled = jax.jit(fn).lower(*args).compile()
    _, loop_us, _, _ = time_jax(compiled, args, min_time)
    try:
        device = xla_device_time(compiled, args, calls=20)
    except Exception as e:
        device = {"error": f"{type(e).__name__}: {e}"}
    del args
    if "device_us" in device:
        return device["device_us"], "device", loop_us
    return loop_us, "loop", loop_us


# ----------------------------------------------------------------- the run

def run_zoo(opts, env, names, make_zoo, report):
    import numpy as np
    import tempfile
    models = make_zoo._models()
    rows = []
    extra = ["--min-time", str(opts.min_time)] + (["--tf32"] if opts.precision == "default" else [])
    # What one tiny kernel costs each side: hloc's figures include a graph
    # launch and two events, XLA's profiler span only the kernel.
    with tempfile.TemporaryDirectory(prefix="gpu_vs_xla.") as tmp:
        tiny = os.path.join(tmp, "tiny.hlo")
        with open(tiny, "w") as f:
            f.write("HloModule tiny\nENTRY main {\n  p = f32[1] parameter(0)\n"
                    "  ROOT n = f32[1] negate(p)\n}\n")
        lines = run_bench(opts.bin, [tiny] + (["--dry-run"] if opts.dry_run else extra), env,
                          opts.timeout)
    floor = {"hloc": one_result(lines)}
    try:
        floor["xla"] = xla_model(lambda p: -p, [np.zeros((1,), np.float32)], opts.min_time)
    except Exception as e:
        floor["xla"] = {"error": f"{type(e).__name__}: {e}"}
    report["one_kernel_floor"] = floor
    for name in names:
        row = {"model": name}
        path = os.path.join(ZOO, name + ".snapshot.pb")
        flags = ["--dry-run"] if opts.dry_run else extra
        lines = run_bench(opts.bin, [path] + flags, env, opts.timeout)
        row["hloc"] = one_result(lines)
        try:
            make_args, fn, _ = models[name]
            seed = sum(name.encode())  # make_zoo's seed for this model
            args = [np.asarray(a) for a in make_args(np.random.default_rng(seed))]
            sums = row["hloc"].get("arg_checksums")
            row["same_inputs"] = (None if sums is None else
                                  [checksum(a) for a in args] == [str(s) for s in sums])
            row["xla"] = xla_model(fn, args, opts.min_time)
        except Exception as e:  # one model failing must not stop the run
            row["xla"] = {"error": f"{type(e).__name__}: {e}"}
        rows.append(row)
        h, x = row["hloc"], row["xla"]
        print(f"{name}: hloc {fmt_us(h.get('loop_us'))} {h.get('error', '')}"
              f"{h.get('skipped', '')}, XLA {fmt_us(x.get('loop_us'))} {x.get('error', '')}",
              file=sys.stderr, flush=True)
    report["zoo"] = rows
    return rows, floor


def zoo_table(result, opts):
    rows, floor = result
    out = ["| model | hloc device | XLA device | **hloc/XLA device** | hloc loop | XLA loop "
           "| hloc/XLA loop | XLA call | JAX floor (call / loop) "
           "| hloc kernels (fused) / library | XLA GPU ops | hloc compile | XLA compile | check |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: "
           "| ---: | --- |"]
    device_ratios, loop_ratios = [], []
    for r in rows:
        h, x = r["hloc"], r["xla"]
        xd = x.get("device", {})
        device = (h["median_us"] / xd["device_us"]
                  if h.get("median_us") and xd.get("device_us") else None)
        loop = (h["loop_us"] / x["loop_us"]) if h.get("loop_us") and x.get("loop_us") else None
        if device:
            device_ratios.append(device)
        if loop:
            loop_ratios.append(loop)
        checks = []
        if "error" in h:
            checks.append(f"hloc: {h['error']}")
        if "skipped" in h:
            checks.append(h["skipped"])
        if "error" in x:
            checks.append(f"XLA: {x['error']}")
        if "error" in xd:
            checks.append(f"XLA profile: {xd['error']}")
        if h.get("verified") not in (None, "ok"):
            checks.append(f"interpreter: {h['verified']}")
        elif h.get("verified") == "ok":
            checks.append("= interpreter")
        if h.get("matches_recorded") is False:
            checks.append("differs from XLA:CPU's recorded result")
        if r.get("same_inputs") is False:
            checks.append("INPUTS DIFFER")
        if h.get("graph") is False:
            checks.append("no CUDA graph")
        if "dry_run" in h and "error" not in h:
            checks.append("compiled for sm_90 (dry run)")
        kernels = (f"{h['kernels']} ({h['fused_kernels']}) / {h['library_calls']}"
                   if "kernels" in h else "-")
        jax_floor = (f"{fmt_us(x['floor_us'])} / {fmt_us(x['floor_loop_us'])}"
                     if "floor_us" in x else "-")
        out.append("| " + " | ".join(cell(c) for c in [
            r["model"], fmt_us(h.get("median_us")), fmt_us(xd.get("device_us")),
            f"**{fmt_ratio(device)}**" if device else "-", fmt_us(h.get("loop_us")),
            fmt_us(x.get("loop_us")), fmt_ratio(loop), fmt_us(x.get("sync_us")), jax_floor, kernels,
            f"{xd['kernels']:g}" if "kernels" in xd else "-", fmt_s(h.get("compile_s")), fmt_s(x.get("compile_s")),
            "; ".join(checks) or "-"]) + " |")
    out += ["",
            f"geometric mean hloc/XLA, device time: **{fmt_ratio(geomean(device_ratios))}** over "
            f"{len(device_ratios)} models; pipelined loop: {fmt_ratio(geomean(loop_ratios))} over "
            f"{len(loop_ratios)} models (below 1: hloc faster).",
            "",
            "hloc device: CUDA events around one run (graph launch included). XLA device: JAX's "
            "profiler (CUPTI), first kernel start to last kernel end of one call. Loop: a run's "
            "share of back-to-back runs; XLA's loop includes JAX's per-call dispatch (JAX floor: "
            "a jitted function returning a constant), hloc's loop only cuGraphLaunch."]
    h, x = floor["hloc"], floor["xla"]
    out += ["",
            f"One-kernel module (f32[1] negate), the floor of each measure: hloc device "
            f"{fmt_us(h.get('median_us'))}, loop {fmt_us(h.get('loop_us'))}; XLA device "
            f"{fmt_us(x.get('device', {}).get('device_us'))}, loop {fmt_us(x.get('loop_us'))}, "
            f"call {fmt_us(x.get('sync_us'))}"
            f"{'; ' + str(h.get('error') or h.get('skipped')) if 'error' in h or 'skipped' in h else ''}"
            f"{'; XLA: ' + x['error'] if 'error' in x else ''}."]
    return out


def run_bandwidth(opts, env, report):
    flags = (["--dry-run", "--bandwidth", "--log2-elements", "16"] if opts.dry_run
             else ["--bandwidth", "--min-time", str(opts.min_time)])
    lines = run_bench(opts.bin, flags, env, opts.timeout * 3)
    rows = []
    for line in lines:
        name = line.get("bandwidth") or line.get("dry_run", "").replace("bandwidth: ", "")
        if "dry_run" in line and not line["dry_run"].startswith("bandwidth: "):
            continue
        row = {"name": name or "?", "hloc": line}
        fn, shapes = bandwidth_fn(name) if name else (None, None)
        if fn is not None and ("gb_s" in line or opts.dry_run):
            try:
                n = line.get("elements", 1 << 16)
                us, how, loop_us = xla_array_op(fn, shapes(n), opts.min_time)
                row["xla"] = {"us": us, "how": how, "loop_us": loop_us,
                              "gb_s": line["bytes"] / (us * 1e-6) / 1e9
                              if "bytes" in line else None}
            except Exception as e:
                row["xla"] = {"error": f"{type(e).__name__}: {e}"}
        rows.append(row)
    report["bandwidth"] = rows
    notes = ["", "Bytes: parameters + outputs of the module. hloc: CUDA events around 10 "
             "back-to-back runs; copy: cuMemcpyDtoD moving half those bytes (so it reads and "
             "writes as many), same timing. XLA: device time from JAX's profiler (\"device\") "
             "or a loop's per-call time (\"loop\"); its GB/s counts the same bytes."]
    out = ["| kernel | bytes read + written | hloc | hloc GB/s | copy GB/s | hloc/copy "
           "| XLA | XLA GB/s | XLA/copy | hloc kernels | check |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for r in rows:
        h, x = r["hloc"], r.get("xla", {})
        copy = h.get("copy_gb_s")
        xg = x.get("gb_s")
        check = (h.get("error") or h.get("skipped") or x.get("error") or h.get("verified") or
                 ("compiled for sm_90 (dry run)" if "dry_run" in h else "-"))
        out.append("| " + " | ".join(cell(c) for c in [
            r["name"], f"{h['bytes'] / 2**20:.0f} MiB" if "bytes" in h else "-",
            fmt_us(h.get("median_us")), f"{h['gb_s']:.0f}" if "gb_s" in h else "-",
            f"{copy:.0f}" if copy else "-", fmt_ratio(h.get("ratio_to_copy")),
            f"{fmt_us(x['us'])} ({x['how']})" if "us" in x else "-", f"{xg:.0f}" if xg else "-",
            fmt_ratio(xg / copy) if xg and copy else "-", h.get("kernels", "-"), check]) + " |")
    return out + notes


def run_gemm(opts, env, report):
    flags = (["--dry-run", "--gemm", "--quick"] if opts.dry_run
             else ["--gemm", "--min-time", str(opts.min_time)])
    lines = run_bench(opts.bin, flags, env, opts.timeout * 3)
    rows = []
    for line in lines:
        if "dry_run" in line:
            if not line["dry_run"].startswith("gemm: "):
                continue
            # Small stand-ins so the XLA side runs quickly on a CPU.
            line = dict(line, gemm=line["dry_run"][len("gemm: "):], batch=1, m=128, n=128, k=128)
        row = {"name": line.get("gemm", "?"), "hloc": line}
        if "m" in line:
            try:
                fn, shapes, precision = gemm_fn(line)
                us, how, loop_us = xla_array_op(fn, shapes, opts.min_time)
                flops = 2.0 * line["batch"] * line["m"] * line["n"] * line["k"]
                row["xla"] = {"us": us, "how": how, "loop_us": loop_us,
                              "tflops": flops / (us * 1e-6) / 1e12,
                              "precision": str(precision).split(".")[-1]}
            except Exception as e:
                row["xla"] = {"error": f"{type(e).__name__}: {e}"}
        rows.append(row)
    report["gemm"] = rows
    out = ["| gemm | hloc plan compute | hloc | hloc TFLOP/s | cuBLAS TFLOP/s | hloc/cuBLAS "
           "| XLA (precision) | XLA TFLOP/s | hloc/XLA | check |",
           "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for r in rows:
        h, x = r["hloc"], r.get("xla", {})
        ht, xt = h.get("hloc_tflops"), x.get("tflops")
        check = (h.get("error") or h.get("skipped") or x.get("error") or
                 ("= cuBLAS" if h.get("matches_cublas") else
                  ("DIFFERS from cuBLAS" if "matches_cublas" in h else
                   ("compiled for sm_90 (dry run)" if "dry_run" in h else "-"))))
        if h.get("baseline", "").startswith("cublasGemmEx without"):
            check += " (cuBLAS side: gemm only, epilogue on the host)"
        out.append("| " + " | ".join(cell(c) for c in [
            r["name"], h.get("compute", "-"), fmt_us(h.get("hloc_us")),
            f"{ht:.1f}" if ht else "-",
            f"{h['cublas_tflops']:.1f}" if "cublas_tflops" in h else "-",
            fmt_ratio(h.get("ratio")),
            f"{fmt_us(x['us'])} ({x['how']}, {x['precision']})" if "us" in x else "-",
            f"{xt:.1f}" if xt else "-", fmt_ratio(ht / xt) if ht and xt else "-",
            check]) + " |")
    out.append("")
    out.append("TFLOP/s: higher is better; ratios > 1 favour hloc. hloc and cuBLAS: CUDA events "
               "around back-to-back CUDA graph launches (one gemm each). XLA: device time from "
               "JAX's profiler (\"device\"), or a call's share of a loop (\"loop\") when "
               "no profile could be taken.")
    return out


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n")[0],
        epilog="See the top of bench/gpu_vs_xla.py for what each column measures.")
    parser.add_argument("--bin", required=True, help="the gpu_bench binary")
    parser.add_argument("--out", required=True,
                        help="markdown report; the JSON goes beside it (same name, .json)")
    parser.add_argument("--models", help="comma-separated subset of the zoo")
    parser.add_argument("--skip", default="", help="comma-separated: zoo, bandwidth, gemm")
    parser.add_argument("--min-time", type=float, default=0.3,
                        help="seconds of timed runs per measurement and side (default 0.3)")
    parser.add_argument("--precision", choices=["default", "highest"], default="default",
                        help="default: TF32 allowed on both sides (XLA's default); "
                             "highest: full f32 on both sides")
    parser.add_argument("--timeout", type=float, default=120,
                        help="seconds per gpu_bench model run (x3 for bandwidth and gemm)")
    parser.add_argument("--dry-run", action="store_true",
                        help="no GPU needed: gpu_bench --dry-run, XLA on JAX's default backend")
    opts = parser.parse_args()

    # JAX must not take most of the GPU's memory while gpu_bench runs beside it.
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    if opts.dry_run:
        os.environ.setdefault("JAX_PLATFORMS", "cpu")
        opts.min_time = min(opts.min_time, 0.05)
    sys.path.insert(0, os.path.join(REPO, "tests", "jax"))
    import jax
    import make_zoo  # noqa: E402
    if opts.precision == "highest":
        jax.config.update("jax_default_matmul_precision", "highest")
    env = bench_env()
    skip = set(s for s in opts.skip.split(",") if s)
    started = time.perf_counter()
    names = sorted(os.path.basename(p)[:-len(".snapshot.pb")]
                   for p in glob.glob(os.path.join(ZOO, "*.snapshot.pb")))
    if opts.models:
        names = [n for n in names if n in opts.models.split(",")]

    device = f"{jax.devices()[0].device_kind} ({jax.default_backend()})"
    report = {"device": device, "jax": jax.__version__, "precision": opts.precision,
              "min_time": opts.min_time, "dry_run": opts.dry_run, "bin": opts.bin,
              "ld_library_path": env.get("LD_LIBRARY_PATH", "")}
    md = ["# hloc CUDA backend vs XLA (JAX) on the GPU", "",
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; JAX {jax.__version__} on "
          f"{device}; gpu_bench `{opts.bin}`; precision {opts.precision}"
          f"{' (TF32 allowed on both sides)' if opts.precision == 'default' else ''}; "
          f"{opts.min_time} s of timed runs per side and measurement"
          f"{'; DRY RUN (compile only for hloc, XLA on ' + jax.default_backend() + ')' if opts.dry_run else ''}.",
          ""]
    sections = [("zoo", "JAX zoo models", lambda: zoo_table(run_zoo(opts, env, names, make_zoo,
                                                                     report), opts)),
                ("bandwidth", "Bandwidth (memory-bound kernels)",
                 lambda: run_bandwidth(opts, env, report)),
                ("gemm", "Gemm", lambda: run_gemm(opts, env, report))]
    for key, title, run in sections:
        if key in skip:
            continue
        md += [f"## {title}", ""]
        try:
            md += run()
        except Exception as e:  # a section failing must not lose the others
            md.append(f"section failed: {type(e).__name__}: {e}")
            report[key + "_error"] = f"{type(e).__name__}: {e}"
        md.append("")
    report["total_s"] = time.perf_counter() - started
    md.append(f"total {report['total_s']:.0f} s")
    text = "\n".join(md) + "\n"
    print(text)
    os.makedirs(os.path.dirname(os.path.abspath(opts.out)), exist_ok=True)
    with open(opts.out, "w") as f:
        f.write(text)
    json_path = os.path.splitext(opts.out)[0] + ".json"
    if json_path == opts.out:
        json_path += ".json"
    with open(json_path, "w") as f:
        json.dump(report, f, indent=1, default=str)
    print(f"wrote {opts.out} and {json_path}", file=sys.stderr)


if __name__ == "__main__":
    main()
