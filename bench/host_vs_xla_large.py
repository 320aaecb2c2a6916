#!/usr/bin/env python3
"""hloc's host backend vs XLA:CPU on the real-size JAX zoo (tests/jax_large).

For every model of tests/jax_large/zoo (NAME.snapshot.pb, written by
tests/jax_large/make_large_zoo.py: the module JAX gave XLA, its arguments and
XLA:CPU's result) this measures, on the same inputs:

  hloc host   bench/host_bench FILE --backend=host: the host pipeline
              (expanders, simplify, outlining, fusion), CompileForHost, then
              warm runs (one first), median; compile excluded from run time.
  XLA:CPU     jax.jit of the same function from make_large_zoo.py on the
              arguments it draws from its fixed seed (checked equal to the
              snapshot's, literal by literal), warm, block_until_ready,
              median. Run in a child process per model.

each with one thread and with all cores, as the median wall time of a run
and as process CPU time per run (every thread of the process, over all
timed runs, divided by their number: steadier than wall time when other
work shares the machine, though it also counts threads that spin while
waiting, on both sides). One thread means the process is
pinned to CPU 0 (`taskset -c 0`) on both sides, and hloc also gets
--threads=1; all cores means no pinning and --threads=<cores>.

Also per model: hloc's result against XLA:CPU's recorded one (host_bench's
check: |a-e| <= 2e-2 + 2e-2 |e| per element, with the largest errors). Where
the two differ, the reference interpreter decides, since it defines the right
answer: `hloc run --backend=interpreter` and `--backend=host` on the snapshot's
arguments, then `hloc compare` of each side against the interpreter's result
(element-type tolerances), both verdicts in the table. Then the
ops hloc still runs through the interpreter (should be none), and compile
times side by side (hloc: pipeline + codegen with a fresh kernel compiler;
XLA: jit(...).lower(...).compile()).

Usage:
  python3 tests/jax_large/make_large_zoo.py        # once: writes the zoo
  python3 bench/host_vs_xla_large.py [--bin PATH/host_bench] [--hloc PATH/hloc]
        [--min-time S] [--models a,b] [--json OUT]
Without --bin the script builds //bench:host_bench with `bazel build -c opt`;
without --hloc it uses tools/hloc beside the host_bench binary's bench/ folder
(bazel-bin), and skips the interpreter's verdict when there is none.
"""

import argparse
import glob
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
LARGE = os.path.join(REPO, "tests", "jax_large")
ZOO = os.path.join(LARGE, "zoo")

sys.path.insert(0, HERE)
sys.path.insert(0, LARGE)
import host_vs_xla  # noqa: E402  (build_bench, run_bench, median_call_time, fmt_time)


def pinned(cmd, one_thread):
    if one_thread and shutil.which("taskset"):
        return ["taskset", "-c", "0"] + cmd
    return cmd


def run_host(binary, path, threads, min_time, one_thread):
    cmd = pinned([binary, path, "--backend=host", f"--threads={threads}",
                  f"--min-time={min_time}", "--repeat=100000"], one_thread)
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        return {"error": (out.stderr or out.stdout).strip().splitlines()[-1:]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_xla(name, min_time, one_thread):
    cmd = pinned([sys.executable, os.path.abspath(__file__), "--xla-child", name,
                  "--min-time", str(min_time)], one_thread)
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if out.returncode != 0:
        return {"error": (out.stderr or out.stdout).strip().splitlines()[-1:]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def interpreter_verdict(hloc, path):
    """hloc host and XLA:CPU (the snapshot's result) against the interpreter."""
    with tempfile.TemporaryDirectory(prefix="host_vs_xla_large.ref.") as tmp:
        outputs = {}
        for backend in ("interpreter", "host"):
            out = os.path.join(tmp, backend + ".pb")
            run = subprocess.run([hloc, "run", path, f"--backend={backend}", f"--output={out}"],
                                 capture_output=True, text=True)
            if run.returncode != 0:
                return {"error": f"{backend}: " + (run.stderr.strip().splitlines() or ["?"])[-1]}
            outputs[backend] = out
        verdict = {}
        for side, actual in (("hloc", outputs["host"]), ("xla", path)):
            cmp = subprocess.run([hloc, "compare", outputs["interpreter"], actual],
                                 capture_output=True, text=True)
            line = (cmp.stdout.strip().splitlines() or ["?"])[0]
            verdict[side] = {"ok": cmp.returncode == 0, "summary": line}
        return verdict


def verdict_text(verdict):
    if "error" in verdict:
        return f"interpreter verdict failed: {verdict['error']}"
    def one(side, label):
        v = verdict[side]
        if v["ok"]:
            return f"{label} = interpreter"
        m = re.search(r"(\d+) of (\d+) elements.*max abs error ([^,]+), max rel error ([^;]+)",
                      v["summary"])
        if not m:
            return f"{label} != interpreter ({v['summary']})"
        return (f"{label} != interpreter ({m.group(1)} of {m.group(2)} elements beyond "
                f"tolerance, max abs / rel err {m.group(3)} / {m.group(4)})")
    return one("hloc", "hloc") + "; " + one("xla", "XLA")


def same_as_snapshot(name, args, pb2_dir):
    """True when `args` encode to exactly the snapshot's argument literals."""
    import make_zoo
    hlo_pb2, xla = make_zoo.load_bindings(pb2_dir)
    with open(os.path.join(ZOO, name + ".snapshot.pb"), "rb") as f:
        snapshot = hlo_pb2.HloSnapshot.FromString(f.read())
    if len(snapshot.arguments) != len(args):
        return False
    for recorded, arg in zip(snapshot.arguments, args):
        lit = xla.LiteralProto()
        make_zoo._fill_literal(xla, lit, arg)
        lit.shape.ClearField("layout")
        want = xla.LiteralProto()
        want.CopyFrom(recorded)
        want.shape.ClearField("layout")
        if lit != want:
            return False
    return True


def xla_child(name, min_time):
    """Compiles and times one model on XLA:CPU; prints one JSON line."""
    import jax
    import make_large_zoo
    import make_zoo
    fn, args, _ = make_large_zoo.model_arguments(name)
    with tempfile.TemporaryDirectory(prefix="host_vs_xla_large.") as tmp:
        make_zoo.generate_bindings(tmp)
        same = same_as_snapshot(name, args, tmp)
    start = time.perf_counter()
    compiled = jax.jit(fn, keep_unused=True).lower(*args).compile()
    compile_s = time.perf_counter() - start
    device_args = [jax.device_put(a) for a in args]
    cpu = {}
    median_s, runs = host_vs_xla.median_call_time(compiled, device_args, min_time, cpu)
    print(json.dumps({"compile_s": compile_s, "median_s": median_s, "runs": runs,
                      "cpu_s": cpu["cpu_s"], "same_inputs": same,
                      "cpus": len(os.sched_getaffinity(0))}))


def ratio(a, b):
    return a / b if a and b else None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin", help="host_bench binary (default: build it)")
    parser.add_argument("--hloc", help="hloc CLI for the interpreter's verdict "
                        "(default: tools/hloc beside --bin's bench/)")
    parser.add_argument("--min-time", type=float, default=1.0,
                        help="seconds of timed runs per model, side and thread count")
    parser.add_argument("--models", help="comma-separated subset")
    parser.add_argument("--json", help="also write every measurement here")
    parser.add_argument("--xla-child", help=argparse.SUPPRESS)
    opts = parser.parse_args()
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    if opts.xla_child:
        xla_child(opts.xla_child, opts.min_time)
        return

    names = sorted(os.path.basename(p)[:-len(".snapshot.pb")]
                   for p in glob.glob(os.path.join(ZOO, "*.snapshot.pb")))
    if not names:
        sys.exit(f"no snapshots in {ZOO}: run tests/jax_large/make_large_zoo.py first")
    if opts.models:
        names = [n for n in names if n in opts.models.split(",")]
    binary = opts.bin or host_vs_xla.build_bench()
    hloc = opts.hloc or os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(binary))),
                                     "tools", "hloc")
    if not os.access(hloc, os.X_OK):
        print(f"no hloc CLI at {hloc}: mismatches with XLA get no interpreter verdict",
              file=sys.stderr)
        hloc = None
    cores = os.cpu_count()

    rows = []
    for name in names:
        path = os.path.join(ZOO, name + ".snapshot.pb")
        row = {"model": name}
        for label, threads, one in (("1t", 1, True), ("all", cores, False)):
            row["host_" + label] = run_host(binary, path, threads, opts.min_time, one)
            row["xla_" + label] = run_xla(name, opts.min_time, one)
        if hloc and "error" not in row["host_all"] and not row["host_all"].get("matches_recorded"):
            row["interpreter_verdict"] = interpreter_verdict(hloc, path)
        rows.append(row)
        print(f"{name}: 1 thread hloc {host_vs_xla.fmt_time(row['host_1t'].get('median_s'))} "
              f"xla {host_vs_xla.fmt_time(row['xla_1t'].get('median_s'))}; {cores} cores hloc "
              f"{host_vs_xla.fmt_time(row['host_all'].get('median_s'))} xla "
              f"{host_vs_xla.fmt_time(row['xla_all'].get('median_s'))}", file=sys.stderr)

    fmt = host_vs_xla.fmt_time
    print(f"1 thread: both sides pinned to CPU 0 (hloc --threads=1); all: {cores} cores, "
          f"hloc --threads={cores}; warm medians, at least {opts.min_time} s of runs each")
    print()
    print("| model | hloc 1T | XLA 1T | hloc/XLA 1T | CPU 1T | hloc all | XLA all | hloc/XLA all "
          "| CPU all | check vs XLA (max abs / rel err) | interpreter ops | hloc compile "
          "(pipeline + codegen) | XLA compile |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- | ---: | ---: |")
    logs = {"1t": [], "all": [], "cpu 1t": [], "cpu all": []}
    for r in rows:
        h1, x1, ha, xa = r["host_1t"], r["xla_1t"], r["host_all"], r["xla_all"]
        r1 = ratio(h1.get("median_s"), x1.get("median_s"))
        ra = ratio(ha.get("median_s"), xa.get("median_s"))
        c1 = ratio(h1.get("cpu_s"), x1.get("cpu_s"))
        ca = ratio(ha.get("cpu_s"), xa.get("cpu_s"))
        for key, value in (("1t", r1), ("all", ra), ("cpu 1t", c1), ("cpu all", ca)):
            if value:
                logs[key].append(math.log(value))
        if "error" in ha:
            check = f"error: {ha['error']}"
        else:
            ok = ha.get("matches_recorded")
            check = (f"{'ok' if ok else 'DIFFERS'} ({ha.get('max_abs_error')} / "
                     f"{ha.get('max_rel_error')})")
        if "interpreter_verdict" in r:
            check += "; " + verdict_text(r["interpreter_verdict"])
        if xa.get("same_inputs") is False:
            check += " (inputs differ!)"
        interp = ("-" if "interpreter_calls" not in ha else
                  str(ha["interpreter_calls"]) +
                  (": " + ", ".join(ha.get("fallback_ops", [])) if ha.get("fallback_ops") else ""))
        compile_text = (f"{fmt(ha['pipeline_s'] + ha['codegen_s'])} ({fmt(ha['pipeline_s'])} + "
                        f"{fmt(ha['codegen_s'])})" if "codegen_s" in ha else "-")
        cells = [r["model"], fmt(h1.get("median_s")), fmt(x1.get("median_s")),
                 f"{r1:.2f}" if r1 else "-", f"{c1:.2f}" if c1 else "-",
                 fmt(ha.get("median_s")), fmt(xa.get("median_s")),
                 f"{ra:.2f}" if ra else "-", f"{ca:.2f}" if ca else "-", check, interp,
                 compile_text, fmt(xa.get("compile_s"))]
        print("| " + " | ".join(cells) + " |")
    print()
    for label, text in (("1t", "1 thread, wall"), ("all", f"{cores} cores, wall"),
                        ("cpu 1t", "1 thread, process CPU time per run"),
                        ("cpu all", f"{cores} cores, process CPU time per run")):
        if logs[label]:
            print(f"geometric mean hloc/XLA:CPU, {text}, over {len(logs[label])} models: "
                  f"{math.exp(sum(logs[label]) / len(logs[label])):.2f}")
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
