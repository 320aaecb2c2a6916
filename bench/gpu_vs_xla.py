#!/usr/bin/env python3
"""hloc's CUDA backend vs XLA on the same GPU (through JAX), in one run.

Sections, written to --out (markdown) and beside it as JSON (rewritten
after every model, so a run cut short keeps what it measured):

  floor      a one-kernel module (f32[1] negate): each measure's floor.
  zoo        --zoo small: every model of tests/jax/zoo; --zoo large: the
             folder make_large_zoo.py wrote (--large-dir; on the GPU machine
             `make_large_zoo.py --gpu --out DIR`, real sizes, XLA:GPU's
             result recorded). hloc: `gpu_bench NAME.snapshot.pb` (the
             snapshot's module and arguments; OptimizeForGpu + CompileForGpu,
             CUDA graph, arguments on the device). XLA: jax.jit of the same
             function on the arguments the generator draws from its fixed
             seed (checked equal to the snapshot's through byte checksums
             gpu_bench prints), arguments on the device, warm. Measured the
             same way on both sides, medians:
               device  CUPTI activity trace of --trace-steps calls, each
                       blocked on: per call, first start to last end of its
                       kernels, memcpys and memsets (device_spans below;
                       hloc: gpu_bench's own trace, bench/cupti_trace.h;
                       XLA: JAX's profiler). The main ratio.
               wall    host clock from the call to results ready, arguments
                       on the device: hloc one graph launch + stream sync
                       (GpuExecutable::RunInPlace), XLA
                       f(*args).block_until_ready() (JAX's dispatch included).
             Also hloc's CUDA-event time of one run ("hloc events", the
             issue-7 measure) and, for the small zoo, the pipelined loop (a
             run's share of back-to-back runs) and the JAX floor. Summary per
             zoo: geometric means of both ratios and the models above 1.3.
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
        [--zoo small,large --large-dir DIR] [--models a,b] [--min-time S]
        [--trace-steps N] [--budget S per zoo] [--skip floor,zoo,bandwidth,gemm]
        [--precision default|highest] [--timeout S]
  python3 bench/gpu_vs_xla.py --bin PATH --out F --dry-run
        # no GPU needed: gpu_bench --dry-run compiles everything for sm_90,
        # XLA runs on whatever JAX has (JAX_PLATFORMS=cpu), small sizes.

One failing model (or mode) puts its error in its row and the run goes on;
each gpu_bench run is bounded by --timeout, each zoo by --budget (its models
after that are listed as skipped). Progress goes to stderr with UTC times.
Needs jax, numpy; the CUDA libraries JAX's pip packages bring are put on
gpu_bench's LD_LIBRARY_PATH (gpu_bench dlopens libcublasLt, libcudnn and
libcupti).
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
    data = np.frombuffer(np.ascontiguousarray(arr).tobytes(), dtype=np.uint8)
    total = np.uint64(0)
    chunk = 1 << 24  # bytes at a time: real-size arguments are hundreds of MB
    with np.errstate(over="ignore"):
        for begin in range(0, data.size, chunk):
            part = data[begin:begin + chunk].astype(np.uint64)
            weights = np.arange(begin + 1, begin + part.size + 1, dtype=np.uint64)
            total = np.uint64(total + np.sum(part * weights, dtype=np.uint64))
    return str(int(total))


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
    cupti = []
    for root in roots:
        lib_dirs += sorted(glob.glob(os.path.join(root, "nvidia", "*", "lib")))
        cupti += sorted(glob.glob(os.path.join(root, "nvidia", "**", "libcupti.so*"),
                                  recursive=True))
        bin_dirs += sorted(glob.glob(os.path.join(root, "nvidia", "*", "bin")))
        libdevice += sorted(glob.glob(os.path.join(root, "nvidia", "**", "libdevice.10.bc"),
                                      recursive=True))
    for d in ("/usr/local/cuda/lib64", "/usr/local/cuda/targets/x86_64-linux/lib"):
        if os.path.isdir(d):
            lib_dirs.append(d)
    if lib_dirs:
        old = env.get("LD_LIBRARY_PATH", "")
        env["LD_LIBRARY_PATH"] = ":".join(lib_dirs + ([old] if old else []))
    # gpu_bench's device time: the libcupti JAX's packages bring (the one JAX's
    # profiler uses), wherever in them it lies; newest soname first.
    cupti = sorted((p for p in cupti if os.path.basename(p).startswith("libcupti.so.1")),
                   key=os.path.basename, reverse=True)
    if "HLOC_CUPTI_LIBRARY" not in env and cupti:
        env["HLOC_CUPTI_LIBRARY"] = cupti[0]
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

def time_jax(compiled, device_args, min_time, loop=True):
    """Wall time per call, microseconds: (median of call + block -- the
    "wall" column: host call to results ready --, median per call in a
    loop blocked at the end, samples, calls per loop). loop=False skips the
    loop (None)."""
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
    if not loop:
        return sync_us, None, len(sync), 0
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


# Lines of a device's trace that repeat its stream events grouped another
# way (xprof's derived lines); their events are not device activities.
DERIVED_LINES = ("XLA Modules", "XLA Ops", "XLA TraceMe", "Steps", "Framework Ops",
                 "Framework Name Scope", "Source code", "TensorFlow Ops", "TensorFlow Name Scope")


def device_spans(events, call_starts):
    """Per-call device time from trace events, the definition gpu_bench's
    CUPTI trace uses for hloc (bench/cupti_trace.h):

      activities  every complete event ("X") on a /device:GPU process's
                  stream lines: kernels, memcpys and memsets, as CUPTI
                  reports them (derived lines such as "XLA Ops" left out)
      a call      the activities starting at or after its host dispatch
                  (call_starts, ascending) and before the next call's; each
                  call was blocked on before the next began
      span        last activity end - first activity start of one call;
                  also the sum of durations ("busy") and the count
      reported    medians over the calls that had an activity

    Times in microseconds (the trace's unit)."""
    import bisect
    gpu_pids = gpu_processes(events)
    lines = {(e.get("pid"), e.get("tid")): str(e.get("args", {}).get("name", ""))
             for e in events if e.get("ph") == "M" and e.get("name") == "thread_name"
             and e.get("pid") in gpu_pids}
    device_events = [e for e in events if e.get("ph") == "X" and e.get("pid") in gpu_pids]
    streams = {k for k, v in lines.items() if v.startswith("Stream")}
    if streams:  # xprof names a device's stream lines "Stream #N(...)"
        chosen = [e for e in device_events if (e.get("pid"), e.get("tid")) in streams]
    else:
        chosen = [e for e in device_events
                  if lines.get((e.get("pid"), e.get("tid")), "") not in DERIVED_LINES]
    used_lines = sorted({lines.get((e.get("pid"), e.get("tid")), str(e.get("tid")))
                         for e in chosen})
    per_call = {}
    for e in sorted(chosen, key=lambda e: e["ts"]):
        i = bisect.bisect_right(call_starts, e["ts"]) - 1
        if i >= 0:
            per_call.setdefault(i, []).append(e)
    if not per_call:
        return {"error": f"trace has {len(chosen)} device events on {len(used_lines)} lines "
                         f"and {len(call_starts)} calls, none matched"}

    def is_copy(e):
        name = str(e.get("name", "")).lower()
        return name.startswith("memcpy") or name.startswith("memset")

    spans = [max(e["ts"] + e["dur"] for e in es) - min(e["ts"] for e in es)
             for es in per_call.values()]
    busy = [sum(e["dur"] for e in es) for es in per_call.values()]
    counts = [len(es) for es in per_call.values()]
    kernels = [sum(1 for e in es if not is_copy(e)) for es in per_call.values()]
    return {"device_us": statistics.median(spans), "busy_us": statistics.median(busy),
            "activities": statistics.median(counts), "kernels": statistics.median(kernels),
            "calls": len(per_call), "lines": used_lines[:8]}


def xla_device_time(compiled, device_args, calls=30):
    """XLA's device time per call from JAX's profiler (CUPTI): `calls` calls
    traced one at a time (each blocked on), split and measured as
    device_spans describes (the same definition as hloc's cupti_us)."""
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
    starts = host_call_starts(events)
    if not starts:
        return {"error": "trace has no PjitFunction call events"}
    result = device_spans(events, starts)
    result["host_calls"] = len(starts)
    return result


def gpu_processes(events):
    return {e.get("pid") for e in events
            if e.get("ph") == "M" and e.get("name") == "process_name"
            and str(e.get("args", {}).get("name", "")).startswith("/device:GPU")}


def host_call_starts(events):
    """When each call began on the host: JAX's dispatch events of the jitted
    function, outermost only (a call may show nested PjitFunction events)."""
    gpu_pids = gpu_processes(events)
    dispatch = sorted((e["ts"], e.get("dur", 0)) for e in events
                      if e.get("ph") == "X" and e.get("pid") not in gpu_pids
                      and str(e.get("name", "")).startswith("PjitFunction("))
    starts, end = [], None
    for ts, dur in dispatch:
        if end is None or ts >= end:
            starts.append(ts)
            end = ts + dur
    return starts


def xla_model(fn, args, min_time, calls=30, extras=True):
    """XLA's side of one model: compile time, wall per call (sync_us), the
    loop and the JAX floor (extras=False skips both) and the device time
    of `calls` traced calls."""
    import jax
    import jax.numpy as jnp
    start = time.perf_counter()
    compiled = jax.jit(fn, keep_unused=True).lower(*args).compile()
    compile_s = time.perf_counter() - start
    device_args = [jax.device_put(a) for a in args]
    sync_us, loop_us, runs, per_loop = time_jax(compiled, device_args, min_time, loop=extras)
    result = {"compile_s": compile_s, "sync_us": sync_us, "loop_us": loop_us, "runs": runs,
              "per_loop": per_loop}
    if extras:
        def floor(*unused):
            return jnp.zeros((), jnp.float32)

        floor_compiled = jax.jit(floor, keep_unused=True).lower(*args).compile()
        floor_us, floor_loop_us, _, _ = time_jax(floor_compiled, device_args, min_time / 2)
        result.update(floor_us=floor_us, floor_loop_us=floor_loop_us)
    try:
        result["device"] = xla_device_time(compiled, device_args, calls)
    except Exception as e:  # no CUPTI, another profiler running, ...
        result["device"] = {"error": f"{type(e).__name__}: {e}"}
    del device_args
    return result


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

def log(message):
    """A progress line on stderr with the UTC time."""
    print(f"[{time.strftime('%H:%M:%S', time.gmtime())}] {message}", file=sys.stderr, flush=True)


def bench_flags(opts):
    if opts.dry_run:
        return ["--dry-run"]
    return (["--min-time", str(opts.min_time), "--trace-steps", str(opts.trace_steps)] +
            (["--tf32"] if opts.precision == "default" else []))


def run_floor(opts, env, report):
    """One tiny kernel through both sides: the floor of every measure."""
    import numpy as np
    import tempfile
    with tempfile.TemporaryDirectory(prefix="gpu_vs_xla.") as tmp:
        tiny = os.path.join(tmp, "tiny.hlo")
        with open(tiny, "w") as f:
            f.write("HloModule tiny\nENTRY main {\n  p = f32[1] parameter(0)\n"
                    "  ROOT n = f32[1] negate(p)\n}\n")
        floor = {"hloc": one_result(run_bench(opts.bin, [tiny] + bench_flags(opts), env,
                                              opts.timeout))}
    try:
        floor["xla"] = xla_model(lambda p: -p, [np.zeros((1,), np.float32)], opts.min_time,
                                 opts.trace_steps)
    except Exception as e:
        floor["xla"] = {"error": f"{type(e).__name__}: {e}"}
    report["one_kernel_floor"] = floor
    return floor


def small_zoo(make_zoo):
    """tests/jax/zoo: its snapshots and make_zoo's functions and arguments."""
    import numpy as np
    models = make_zoo._models()
    names = sorted(os.path.basename(p)[:-len(".snapshot.pb")]
                   for p in glob.glob(os.path.join(ZOO, "*.snapshot.pb")))

    def model(name):
        make_args, fn, _ = models[name]
        seed = sum(name.encode())  # make_zoo's seed for this model
        return fn, [np.asarray(a) for a in make_args(np.random.default_rng(seed))]

    return {"key": "zoo", "title": "JAX zoo models (tests/jax/zoo)", "dir": ZOO,
            "names": names, "model": model, "extras": True}


def large_zoo(directory):
    """A folder make_large_zoo.py wrote (--out DIR [--gpu]): its snapshots and
    the functions and arguments of the sizes it names in SIZES."""
    sys.path.insert(0, os.path.join(REPO, "tests", "jax_large"))
    import make_large_zoo  # noqa: E402
    sizes = make_large_zoo.read_sizes(directory)
    recorded_on = make_large_zoo.read_info(directory).get("recorded_on", "cpu")
    names = [os.path.basename(p)[:-len(".snapshot.pb")]
             for p in glob.glob(os.path.join(directory, "*.snapshot.pb"))]

    def module_bytes(name):
        path = os.path.join(directory, name + ".before.pb")
        return os.path.getsize(path) if os.path.exists(path) else 0

    # Smallest module first: compile time grows with it, so a run that
    # --budget cuts short loses the most expensive models.
    names.sort(key=lambda n: (module_bytes(n), n))

    def model(name):
        fn, args, _ = make_large_zoo.model_arguments(name, sizes)
        return fn, args

    return {"key": "large_zoo", "title": f"Real-size zoo ({sizes} sizes, {directory})",
            "dir": directory, "names": names, "model": model, "extras": False,
            "sizes": sizes, "recorded_on": recorded_on}


def run_zoo(opts, env, zoo, report, save):
    """Both sides on every model of `zoo`; models after --budget seconds are
    skipped. `save()` writes the report so far."""
    deadline = time.perf_counter() + opts.budget if opts.budget > 0 else float("inf")
    rows = []
    report[zoo["key"]] = rows
    log(f"{zoo['key']}: {len(zoo['names'])} models from {zoo['dir']}")
    for name in zoo["names"]:
        row = {"model": name}
        rows.append(row)
        if time.perf_counter() > deadline:
            row["hloc"], row["xla"] = {"skipped": "time budget spent"}, {}
            continue
        path = os.path.join(zoo["dir"], name + ".snapshot.pb")
        # The interpreter takes minutes on real sizes: the recorded result checks.
        flags = bench_flags(opts) + (["--no-verify"] if zoo["key"] == "large_zoo" and
                                     not opts.dry_run else [])
        row["hloc"] = one_result(run_bench(opts.bin, [path] + flags, env, opts.timeout))
        try:
            import numpy as np
            fn, args = zoo["model"](name)
            args = [np.asarray(a) for a in args]
            sums = row["hloc"].get("arg_checksums")
            row["same_inputs"] = (None if sums is None else
                                  [checksum(a) for a in args] == [str(s) for s in sums])
            row["xla"] = xla_model(fn, args, opts.min_time, opts.trace_steps, zoo["extras"])
            del args
        except Exception as e:  # one model failing must not stop the run
            row["xla"] = {"error": f"{type(e).__name__}: {e}"}
        h, x = row["hloc"], row["xla"]
        xd = x.get("device", {})
        log(f"{zoo['key']} {name}: hloc device {fmt_us(h.get('cupti_us'))} wall "
            f"{fmt_us(h.get('wall_us'))} {h.get('error', '')}{h.get('skipped', '')}"
            f"{h.get('cupti_error', '')}; XLA device {fmt_us(xd.get('device_us'))} wall "
            f"{fmt_us(x.get('sync_us'))} {x.get('error', '')}{xd.get('error', '')}")
        save()
    return rows


def ratio(a, b):
    return a / b if a and b else None


def row_checks(r):
    h, x = r["hloc"], r["xla"]
    xd = x.get("device", {})
    checks = []
    if "error" in h:
        checks.append(f"hloc: {h['error']}")
    if "skipped" in h:
        checks.append(h["skipped"])
    if "cupti_error" in h:
        checks.append(f"hloc CUPTI: {h['cupti_error']}")
    if "error" in x:
        checks.append(f"XLA: {x['error']}")
    if "error" in xd:
        checks.append(f"XLA profile: {xd['error']}")
    if h.get("verified") not in (None, "ok") and not str(h.get("verified")).startswith("skipped"):
        checks.append(f"interpreter: {h['verified']}")
    elif h.get("verified") == "ok":
        checks.append("= interpreter")
    recorded = r.get("recorded", "XLA:CPU")
    if h.get("matches_recorded") is True:
        checks.append(f"= {recorded}'s recorded result")
    elif h.get("matches_recorded") is False:
        checks.append(f"DIFFERS from {recorded}'s recorded result: "
                      f"{h.get('recorded_mismatch', '?')}")
    if r.get("same_inputs") is False:
        checks.append("INPUTS DIFFER")
    if h.get("graph") is False:
        checks.append("no CUDA graph")
    if "dry_run" in h and "error" not in h:
        checks.append("compiled for sm_90 (dry run)")
    return checks


def zoo_table(rows, zoo, opts):
    """Markdown rows and the summary of one zoo; the geomeans go into
    `zoo["summary"]` too."""
    loop = zoo["extras"]
    head = ["model", "hloc device", "XLA device", "**hloc/XLA device**", "hloc wall", "XLA wall",
            "hloc/XLA wall", "hloc events"]
    if loop:
        head += ["hloc loop", "XLA loop", "JAX floor (call / loop)"]
    head += ["kernels (CUPTI) hloc / XLA", "hloc plan: kernels (fused) / library",
             "hloc compile", "XLA compile", "check"]
    out = ["| " + " | ".join(head) + " |",
           "| --- | " + " | ".join("---:" for _ in head[1:-1]) + " | --- |"]
    device_ratios, wall_ratios, slow_device, slow_wall = [], [], [], []
    for r in rows:
        h, x = r["hloc"], r["xla"]
        xd = x.get("device", {})
        if zoo.get("recorded_on"):
            r["recorded"] = f"XLA:{zoo['recorded_on'].upper()}"
        device = ratio(h.get("cupti_us"), xd.get("device_us"))
        wall = ratio(h.get("wall_us"), x.get("sync_us"))
        if device:
            device_ratios.append(device)
            if device > 1.3:
                slow_device.append(f"{r['model']} {device:.2f}")
        if wall:
            wall_ratios.append(wall)
            if wall > 1.3:
                slow_wall.append(f"{r['model']} {wall:.2f}")
        plan = (f"{h['kernels']} ({h['fused_kernels']}) / {h['library_calls']}"
                if "kernels" in h else "-")

        def launched(kernels, activities):
            if kernels is None:
                return "-"
            copies = (activities or kernels) - kernels
            return f"{kernels:g}" + (f" (+{copies:g} copies)" if copies else "")

        kernels = (f"{launched(h.get('cupti_kernels'), h.get('cupti_activities'))} / "
                   f"{launched(xd.get('kernels'), xd.get('activities'))}")
        cells = [r["model"], fmt_us(h.get("cupti_us")), fmt_us(xd.get("device_us")),
                 f"**{fmt_ratio(device)}**" if device else "-", fmt_us(h.get("wall_us")),
                 fmt_us(x.get("sync_us")), fmt_ratio(wall), fmt_us(h.get("median_us"))]
        if loop:
            cells += [fmt_us(h.get("loop_us")), fmt_us(x.get("loop_us")),
                      f"{fmt_us(x['floor_us'])} / {fmt_us(x['floor_loop_us'])}"
                      if "floor_us" in x else "-"]
        cells += [kernels, plan, fmt_s(h.get("compile_s")), fmt_s(x.get("compile_s")),
                  "; ".join(row_checks(r)) or "-"]
        out.append("| " + " | ".join(cell(c) for c in cells) + " |")
    summary = {"device_geomean": geomean(device_ratios), "device_models": len(device_ratios),
               "wall_geomean": geomean(wall_ratios), "wall_models": len(wall_ratios),
               "device_above_1_3": slow_device, "wall_above_1_3": slow_wall}
    zoo["summary"] = summary
    out += ["",
            f"geometric mean hloc/XLA: device (CUPTI) **{fmt_ratio(summary['device_geomean'])}** "
            f"over {len(device_ratios)} models, {len(slow_device)} above 1.3"
            f"{' (' + ', '.join(slow_device) + ')' if slow_device else ''}; wall "
            f"**{fmt_ratio(summary['wall_geomean'])}** over {len(wall_ratios)} models, "
            f"{len(slow_wall)} above 1.3{' (' + ', '.join(slow_wall) + ')' if slow_wall else ''} "
            "(below 1: hloc faster).",
            "",
            "device: CUPTI activity trace on both sides (hloc: gpu_bench's own trace; XLA: JAX's "
            f"profiler), {opts.trace_steps} calls each blocked on, per call first start to last "
            "end of its kernels, memcpys and memsets, median. wall: host clock from the call to "
            "results ready on the device, arguments already on the device (hloc: a graph launch "
            "+ stream sync; XLA: f(*args).block_until_ready()), median. hloc events: CUDA events "
            "around one run (includes the graph launch)."]
    if loop:
        out.append("loop: a run's share of back-to-back runs; XLA's includes JAX's per-call "
                   "dispatch (JAX floor: a jitted function returning a constant), hloc's only "
                   "cuGraphLaunch.")
    return out


def floor_lines(floor):
    h, x = floor["hloc"], floor["xla"]
    xd = x.get("device", {})
    notes = [str(v) for v in (h.get("error"), h.get("skipped"), h.get("cupti_error"),
                              x.get("error"), xd.get("error")) if v]
    return ["",
            f"One-kernel module (f32[1] negate), the floor of each measure: device (CUPTI) hloc "
            f"{fmt_us(h.get('cupti_us'))}, XLA {fmt_us(xd.get('device_us'))}; wall hloc "
            f"{fmt_us(h.get('wall_us'))}, XLA {fmt_us(x.get('sync_us'))}; hloc events "
            f"{fmt_us(h.get('median_us'))}; loop hloc {fmt_us(h.get('loop_us'))}, XLA "
            f"{fmt_us(x.get('loop_us'))}{'; ' + '; '.join(notes) if notes else ''}."
            f"{' hloc traced with ' + h['cupti_library'] + '.' if 'cupti_library' in h else ''}"]


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


def versions(jax):
    """Card, driver and CUDA versions as nvidia-smi and JAX report them."""
    info = {"device": f"{jax.devices()[0].device_kind} ({jax.default_backend()})",
            "jax": jax.__version__}
    try:
        info["platform_version"] = jax.devices()[0].client.platform_version
    except Exception:  # noqa: BLE001 (an older or newer client without it)
        pass
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                              "--format=csv,noheader"], capture_output=True, text=True,
                             timeout=30).stdout.strip().splitlines()
        if out:
            info["nvidia_smi"] = out[0]
        header = subprocess.run(["nvidia-smi"], capture_output=True, text=True,
                                timeout=30).stdout
        for word in header.split("|"):
            if "CUDA Version" in word:
                info["cuda_driver_api"] = word.split("CUDA Version:")[-1].strip()
    except (OSError, subprocess.SubprocessError):
        pass
    return info


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n")[0],
        epilog="See the top of bench/gpu_vs_xla.py for what each column measures.")
    parser.add_argument("--bin", required=True, help="the gpu_bench binary")
    parser.add_argument("--out", required=True,
                        help="markdown report; the JSON goes beside it (same name, .json)")
    parser.add_argument("--models", help="comma-separated subset of the zoos' models")
    parser.add_argument("--zoo", default="small",
                        help="comma-separated: small (tests/jax/zoo), large (--large-dir)")
    parser.add_argument("--large-dir", default=os.path.join(REPO, "tests", "jax_large", "zoo"),
                        help="the folder make_large_zoo.py wrote (default tests/jax_large/zoo)")
    parser.add_argument("--skip", default="",
                        help="comma-separated: floor, zoo, bandwidth, gemm")
    parser.add_argument("--min-time", type=float, default=0.3,
                        help="seconds of timed runs per measurement and side (default 0.3)")
    parser.add_argument("--trace-steps", type=int, default=30,
                        help="calls traced for the device time, each side (default 30)")
    parser.add_argument("--budget", type=float, default=0,
                        help="seconds per zoo; its models after that are skipped (0: no limit)")
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
        opts.trace_steps = min(opts.trace_steps, 3)
    sys.path.insert(0, os.path.join(REPO, "tests", "jax"))
    import jax
    import make_zoo  # noqa: E402
    if opts.precision == "highest":
        jax.config.update("jax_default_matmul_precision", "highest")
    env = bench_env()
    skip = set(s for s in opts.skip.split(",") if s)
    started = time.perf_counter()
    zoos = []
    for which in (z for z in opts.zoo.split(",") if z):
        if which == "small":
            zoos.append(small_zoo(make_zoo))
        elif which == "large":
            zoos.append(large_zoo(opts.large_dir))
        else:
            parser.error(f"--zoo: unknown zoo {which}")
    if opts.models:
        for zoo in zoos:
            zoo["names"] = [n for n in zoo["names"] if n in opts.models.split(",")]

    info = versions(jax)
    report = dict(info, precision=opts.precision, min_time=opts.min_time,
                  trace_steps=opts.trace_steps, dry_run=opts.dry_run, bin=opts.bin,
                  ld_library_path=env.get("LD_LIBRARY_PATH", ""),
                  cupti_library=env.get("HLOC_CUPTI_LIBRARY", "(loader path)"))
    notes = []
    if opts.precision == "default":
        notes.append("TF32 allowed on both sides")
    if opts.dry_run:
        notes.append(f"DRY RUN (compile only for hloc, XLA on {jax.default_backend()})")
    if os.environ.get("JAX_COMPILATION_CACHE_DIR"):
        notes.append(f"JAX compilation cache {os.environ['JAX_COMPILATION_CACHE_DIR']} (XLA "
                     "compile: a cache load where make_large_zoo.py compiled first)")
    md = ["# hloc CUDA backend vs XLA (JAX) on the GPU", "",
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; JAX {jax.__version__} on "
          f"{info['device']}; card/driver (nvidia-smi): {info.get('nvidia_smi', '?')}; CUDA "
          f"(driver API) {info.get('cuda_driver_api', '?')}; XLA platform "
          f"{info.get('platform_version', '?')}; gpu_bench `{opts.bin}`; precision "
          f"{opts.precision}; {opts.min_time} s of timed runs per side and measurement, "
          f"{opts.trace_steps} traced calls{''.join('; ' + n for n in notes)}.",
          ""]
    json_path = os.path.splitext(opts.out)[0] + ".json"
    if json_path == opts.out:
        json_path += ".json"
    os.makedirs(os.path.dirname(os.path.abspath(opts.out)), exist_ok=True)

    def save(lines=None):
        text = "\n".join(md + (lines or [])) + "\n"
        with open(opts.out, "w") as f:
            f.write(text)
        with open(json_path, "w") as f:
            json.dump(report, f, indent=1, default=str)
        return text

    sections = []
    if "floor" not in skip:
        sections.append(("floor", "One-kernel floor", lambda: floor_lines(run_floor(opts, env,
                                                                                     report))))
    if "zoo" not in skip:
        for zoo in zoos:
            sections.append((zoo["key"], zoo["title"],
                             lambda zoo=zoo: zoo_table(run_zoo(opts, env, zoo, report, save),
                                                       zoo, opts)))
    sections += [("bandwidth", "Bandwidth (memory-bound kernels)",
                  lambda: run_bandwidth(opts, env, report)),
                 ("gemm", "Gemm", lambda: run_gemm(opts, env, report))]
    for key, title, run in sections:
        if key in skip:
            continue
        log(f"section {key}")
        md += [f"## {title}", ""]
        try:
            md += run()
        except Exception as e:  # a section failing must not lose the others
            md.append(f"section failed: {type(e).__name__}: {e}")
            report[key + "_error"] = f"{type(e).__name__}: {e}"
        md.append("")
        report["summaries"] = {z["key"]: z.get("summary") for z in zoos}
        save()
    report["total_s"] = time.perf_counter() - started
    md.append(f"total {report['total_s']:.0f} s")
    print(save())
    print(f"wrote {opts.out} and {json_path}", file=sys.stderr)


if __name__ == "__main__":
    main()
