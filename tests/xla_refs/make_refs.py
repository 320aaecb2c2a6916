#!/usr/bin/env python3
"""Regenerates tests/xla_refs/: XLA:CPU reference results for the fuzz HLO corpus.

For every fuzz module of the corpus (xla/xla_tests_fuzz_rand_*.hlo, and any
xla2023/*fuzz*.hlo) this parses the HLO text with XLA, draws inputs with numpy
from a seed derived from the file name, runs the module on XLA:CPU through
jaxlib and writes

  NAME.snapshot.pb   xla.HloSnapshot: hlo.hlo_module = the HloModuleProto XLA
                     parsed from the text, arguments in parameter order,
                     result = XLA:CPU's output (a tuple literal when the entry
                     returns a tuple), execution_platform = "cpu"

plus MANIFEST.tsv (one row per module: ok with shapes and a result checksum,
or skipped with the reason). See README.md for the jaxlib route.

Every module runs in its own child process so that XLA's module ids and dump
names do not depend on which other modules exist, and so that a module that
crashes XLA cannot take the others down.

Usage (CPU only; protoc 3.21 on PATH and tests/jax/requirements.txt installed):
  python3 tests/xla_refs/make_refs.py                 # all fuzz modules
  python3 tests/xla_refs/make_refs.py xla_tests_fuzz_rand_000000   # some
  python3 tests/xla_refs/make_refs.py --corpus /path/to/corpus
  python3 tests/xla_refs/make_refs.py --hlo-dir DIR --out OUT   # every DIR/*.hlo
        # into OUT (tests/random/make_xla_refs.sh: the random modules)
"""

import argparse
import glob
import hashlib
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "jax"))
sys.dont_write_bytecode = True  # no __pycache__ left in tests/jax
import make_zoo  # noqa: E402  (LiteralProto encoder and protoc bindings)

CORPUS_GLOBS = ["xla/xla_tests_fuzz_rand_*.hlo", "xla2023/*fuzz*.hlo"]
MAX_SNAPSHOT_BYTES = 16 << 20  # the largest fuzz module (rand_000062) needs 8.6 MB
SKIP_PREFIX = "SKIP\t"
ROW_PREFIX = "ROW\t"

# PrimitiveType name -> numpy dtype name, for the types we can draw and encode.
_NUMPY_DTYPES = {ptype: dtype for dtype, (ptype, _, _)
                 in make_zoo._LITERAL_FIELDS.items()}


# --------------------------------------------------------------------------
# Shapes: reading the module's program shape.
# --------------------------------------------------------------------------

def shape_text(xla, shape):
    """'f32[2,3]' / '(s8[4], pred[])' for a ShapeProto, layout left out."""
    if shape.element_type == xla.TUPLE:
        return "(" + ", ".join(shape_text(xla, s) for s in shape.tuple_shapes) + ")"
    name = xla.PrimitiveType.Name(shape.element_type).lower()
    return f"{name}[{','.join(str(d) for d in shape.dimensions)}]"


def array_leaves(xla, shape):
    """The array shapes of a (possibly nested tuple) shape, depth first."""
    if shape.element_type != xla.TUPLE:
        return [shape]
    return [leaf for s in shape.tuple_shapes for leaf in array_leaves(xla, s)]


def unsupported_type(xla, shape):
    """Why we cannot draw or encode `shape` (e.g. 'type F8E4M3FN'), or None."""
    for leaf in array_leaves(xla, shape):
        name = xla.PrimitiveType.Name(leaf.element_type)
        if name not in _NUMPY_DTYPES:
            return f"type {name}"
        if any(leaf.is_dynamic_dimension):
            return f"dynamic dimensions in {shape_text(xla, leaf)}"
    return None


# --------------------------------------------------------------------------
# Inputs.
# --------------------------------------------------------------------------

def seed_for(name):
    """A fixed seed per file name, independent of which other files exist."""
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "little")


def draw(rng, xla, shape):
    """A numpy array for one array-shaped parameter."""
    import numpy as np
    import ml_dtypes  # noqa: F401  (registers bfloat16 with numpy)
    dtype = np.dtype(_NUMPY_DTYPES[xla.PrimitiveType.Name(shape.element_type)])
    dims = tuple(shape.dimensions)
    if dtype == np.bool_:
        return rng.integers(0, 2, dims).astype(np.bool_)
    if dtype.kind == "i":
        return rng.integers(-5, 6, dims).astype(dtype)
    if dtype.kind == "u":
        return rng.integers(0, 11, dims).astype(dtype)
    if dtype.kind == "c":
        return ((rng.standard_normal(dims) + 1j * rng.standard_normal(dims))
                * 2).astype(dtype)
    return (rng.standard_normal(dims) * 2).astype(dtype)  # f16, bf16, f32, f64


# --------------------------------------------------------------------------
# Literals.
# --------------------------------------------------------------------------

def result_literal(xla, shape, arrays):
    """LiteralProto of the row-major `arrays` laid out as the tuple tree `shape`."""
    lit = xla.LiteralProto()
    if shape.element_type != xla.TUPLE:
        make_zoo._fill_literal(xla, lit, arrays.pop(0))
        got = (lit.shape.element_type, list(lit.shape.dimensions))
        want = (shape.element_type, list(shape.dimensions))
        assert got == want, f"result leaf {got} but program shape says {want}"
        return lit
    lit.shape.element_type = xla.TUPLE
    for sub in shape.tuple_shapes:
        sub_lit = result_literal(xla, sub, arrays)
        lit.shape.tuple_shapes.add().CopyFrom(sub_lit.shape)
        lit.tuple_literals.add().CopyFrom(sub_lit)
    return lit


def literal_leaves(xla, lit):
    if lit.shape.element_type != xla.TUPLE:
        return [lit]
    return [leaf for sub in lit.tuple_literals for leaf in literal_leaves(xla, sub)]


def checksum(data):
    return hashlib.sha256(data).hexdigest()[:16]


# --------------------------------------------------------------------------
# Child: parse, compile, run and encode one module.
# --------------------------------------------------------------------------

def skip(stage, err):
    msg = " ".join(str(err).split())[:300]
    print(f"{SKIP_PREFIX}{stage}: {type(err).__name__}: {msg}", flush=True)
    sys.exit(0)


def opcode_profile(xla, module):
    """Multiset of (opcode, shape) of a module, for a rough round-trip check.

    Tuples, get-tuple-elements and parameters are left out: the StableHLO round
    trip flattens the entry's result tuple and may rename or renumber freely.
    """
    profile = {}
    for comp in module.computations:
        for inst in comp.instructions:
            if inst.opcode in ("tuple", "get-tuple-element", "parameter"):
                continue
            key = (inst.opcode, shape_text(xla, inst.shape))
            profile[key] = profile.get(key, 0) + 1
    return profile


def cross_check(hlo_pb2, xla, name, dump_dir, snapshot, module):
    """Compares with what XLA itself dumped for the run; returns notes."""
    notes = []
    snaps = glob.glob(os.path.join(dump_dir, "*.snapshot.*.pb"))
    assert len(snaps) == 1, (name, sorted(os.listdir(dump_dir)))
    xla_snap = hlo_pb2.HloSnapshot.FromString(make_zoo._read(snaps[0]))
    assert list(xla_snap.arguments) == list(snapshot.arguments), (
        f"{name}: arguments differ from those XLA dumped")
    # XLA's executable returns the round-tripped module's (flattened) outputs.
    ours = literal_leaves(xla, snapshot.result)
    theirs = literal_leaves(xla, xla_snap.result)
    assert len(ours) == len(theirs), (name, len(ours), len(theirs))
    for i, (a, b) in enumerate(zip(ours, theirs)):
        if a.shape.layout != b.shape.layout:
            notes.append(f"output {i} layout differs from XLA's dump; not compared")
            continue
        # Bytes, not message equality: a NaN never equals itself as a field.
        assert (a.SerializeToString(deterministic=True) ==
                b.SerializeToString(deterministic=True)), (
                    f"{name}: output {i} differs from the one XLA dumped")

    befores = glob.glob(os.path.join(dump_dir, "*.before_optimizations.hlo.pb"))
    assert len(befores) == 1, (name, sorted(os.listdir(dump_dir)))
    compiled = hlo_pb2.HloProto.FromString(make_zoo._read(befores[0])).hlo_module
    want, got = opcode_profile(xla, module), opcode_profile(xla, compiled)
    changed = [f"{op} {shape}: {want.get((op, shape), 0)} -> {got.get((op, shape), 0)}"
               for op, shape in sorted(set(want) | set(got))
               if want.get((op, shape), 0) != got.get((op, shape), 0)]
    if changed:
        notes.append("round trip changed op counts: " + ", ".join(changed[:4]))
    return notes


def run_child(path, pb2_dir, dump_dir, out_dir):
    sys.path.insert(0, pb2_dir)
    from hlo import hlo_pb2, xla_data_pb2 as xla
    import numpy as np
    import jax
    from jax._src.lib import _jax, xla_client

    jax.config.update("jax_enable_x64", True)  # keep 64-bit arguments as they are
    assert jax.default_backend() == "cpu", jax.default_backend()
    device = jax.devices("cpu")[0]
    name = os.path.basename(path)[:-len(".hlo")]

    # 1. Parse with XLA's own text parser.
    try:
        parsed = xla_client.hlo.hlo_module_from_text(make_zoo._read(path, "r"))
        module_bytes = parsed.as_serialized_hlo_module_proto()
    except Exception as err:  # noqa: BLE001  (XLA reports every failure this way)
        skip("parse", err)
    module = hlo_pb2.HloModuleProto.FromString(module_bytes)
    unknown = make_zoo._unknown_fields(module, "HloModuleProto")
    assert not unknown, f"{name}: fields unknown to hlo.proto at {unknown[:8]}"
    program = module.host_program_shape
    for i, param in enumerate(program.parameters):
        bad = unsupported_type(xla, param)
        if bad:
            skip("inputs", ValueError(f"parameter {i}: {bad}"))
    bad = unsupported_type(xla, program.result)
    if bad:
        skip("inputs", ValueError(f"result: {bad}"))

    # 2. Inputs.
    rng = np.random.default_rng(seed_for(name))
    args = [draw(rng, xla, p) for p in program.parameters]

    snapshot = hlo_pb2.HloSnapshot()
    snapshot.hlo.hlo_module.CopyFrom(module)
    for i, arg in enumerate(args):
        lit = snapshot.arguments.add()
        make_zoo._fill_literal(xla, lit, arg)
        want = program.parameters[i]
        assert (lit.shape.element_type, list(lit.shape.dimensions)) == (
            want.element_type, list(want.dimensions)), (name, i)

    # 3. Compile: HloModuleProto -> StableHLO bytecode -> PjRt CPU executable.
    try:
        stablehlo = _jax.mlir.hlo_to_stablehlo(module_bytes)
        executable = device.client.compile_and_load(
            stablehlo, [device], xla_client.CompileOptions())
    except Exception as err:  # noqa: BLE001
        skip("compile", err)

    # 4. Run. The entry's result tuple comes back flattened, one array a leaf.
    try:
        buffers = [jax.device_put(a, device) for a in args]
        results = executable.execute_sharded(buffers)
        outputs = [np.asarray(r[0])
                   for r in results.disassemble_into_single_device_arrays()]
    except Exception as err:  # noqa: BLE001
        skip("execute", err)
    leaves = array_leaves(xla, program.result)
    assert len(outputs) == len(leaves), (name, len(outputs), len(leaves))
    snapshot.result.CopyFrom(result_literal(xla, program.result, list(outputs)))
    snapshot.execution_platform = "cpu"

    notes = cross_check(hlo_pb2, xla, name, dump_dir, snapshot, module)
    data = snapshot.SerializeToString(deterministic=True)
    if len(data) > MAX_SNAPSHOT_BYTES:
        skip("size", ValueError(
            f"snapshot would be {len(data)} bytes, over the {MAX_SNAPSHOT_BYTES} cap"))
    make_zoo._write(os.path.join(out_dir, name + ".snapshot.pb"), data)
    row = {
        "params": ", ".join(shape_text(xla, p) for p in program.parameters),
        "result": shape_text(xla, program.result),
        "bytes": len(data),
        "result_sha256": checksum(snapshot.result.SerializeToString(deterministic=True)),
        "note": "; ".join(notes),
    }
    print(ROW_PREFIX + json.dumps(row, sort_keys=True), flush=True)


# --------------------------------------------------------------------------
# Parent: find the modules, run one child each, write the manifest.
# --------------------------------------------------------------------------

HEADER = ["module", "status", "params", "result", "snapshot_bytes",
          "result_sha256", "note"]


def find_modules(corpus):
    paths = []
    for pattern in CORPUS_GLOBS:
        paths += sorted(glob.glob(os.path.join(corpus, pattern)))
    return paths


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("modules", nargs="*",
                        help="base names without .hlo; default: all")
    parser.add_argument("--corpus", default=os.environ.get(
        "HLOC_CORPUS_DIR", os.path.join(REPO, "..", "shared", "corpus")))
    parser.add_argument("--hlo-dir",
                        help="every *.hlo here instead of the corpus's fuzz modules")
    parser.add_argument("--out", default=HERE,
                        help="where snapshots and MANIFEST.tsv go (default: this folder)")
    parser.add_argument("--child", nargs=4,
                        metavar=("HLO", "PB2_DIR", "DUMP_DIR", "OUT_DIR"),
                        help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.child:
        run_child(*opts.child)
        return

    found = (sorted(glob.glob(os.path.join(opts.hlo_dir, "*.hlo"))) if opts.hlo_dir
             else find_modules(opts.corpus))
    paths = {os.path.basename(p)[:-len(".hlo")]: p for p in found}
    if not paths:
        parser.error(f"no modules under {opts.hlo_dir or opts.corpus}")
    out_dir = os.path.abspath(opts.out)
    os.makedirs(out_dir, exist_ok=True)
    chosen = opts.modules or sorted(paths)
    unknown = sorted(set(chosen) - set(paths))
    if unknown:
        parser.error("unknown modules: " + ", ".join(unknown))

    rows = {}
    manifest = os.path.join(out_dir, "MANIFEST.tsv")
    if opts.modules and os.path.exists(manifest):  # keep rows of other modules
        for line in make_zoo._read(manifest, "r").splitlines()[1:]:
            rows[line.split("\t")[0]] = line
    with tempfile.TemporaryDirectory(prefix="make_refs.") as tmp:
        pb2_dir = os.path.join(tmp, "pb2")
        os.makedirs(pb2_dir)
        make_zoo.generate_bindings(pb2_dir)
        for name in chosen:
            dump_dir = os.path.join(tmp, "dump", name)
            os.makedirs(dump_dir)
            target = os.path.join(out_dir, name + ".snapshot.pb")
            if os.path.exists(target):
                os.remove(target)
            env = dict(os.environ, JAX_PLATFORMS="cpu", XLA_FLAGS=" ".join([
                f"--xla_dump_to={dump_dir}", "--xla_dump_hlo_as_proto",
                "--xla_dump_hlo_snapshots"]))
            proc = subprocess.run(
                [sys.executable, os.path.abspath(__file__), "--child", paths[name],
                 pb2_dir, dump_dir, out_dir],
                env=env, stdout=subprocess.PIPE, text=True)
            out = proc.stdout.splitlines()
            skips = [l[len(SKIP_PREFIX):] for l in out if l.startswith(SKIP_PREFIX)]
            got = [json.loads(l[len(ROW_PREFIX):]) for l in out if l.startswith(ROW_PREFIX)]
            if proc.returncode < 0:  # XLA crashed the process: a property of the module
                skips = [f"crash: XLA killed the process with signal {-proc.returncode}"]
            elif proc.returncode != 0 or not (skips or got):
                sys.exit(f"{name}: child failed (exit {proc.returncode}); see above")
            if skips:
                cells = [name, "skipped", "", "", "", "", skips[0]]
            else:
                r = got[0]
                cells = [name, "ok", r["params"], r["result"], str(r["bytes"]),
                         r["result_sha256"], r["note"]]
            rows[name] = "\t".join(c.replace("\t", " ") for c in cells)
            print(rows[name], flush=True)
    if not opts.modules:  # a full run: drop snapshots of modules no longer ok
        ok = {n for n, row in rows.items() if row.split("\t")[1] == "ok"}
        for path in glob.glob(os.path.join(out_dir, "*.snapshot.pb")):
            if os.path.basename(path)[:-len(".snapshot.pb")] not in ok:
                os.remove(path)
    make_zoo._write(manifest, "\n".join(["\t".join(HEADER)]
                                        + [rows[n] for n in sorted(rows)]) + "\n")


if __name__ == "__main__":
    main()
