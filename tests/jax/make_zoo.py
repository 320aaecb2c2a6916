#!/usr/bin/env python3
"""Regenerates tests/jax/zoo/: small JAX models captured as XLA HLO.

For every model in MODELS this writes, into zoo/:
  NAME.before.pb     XLA's before-optimizations HloModuleProto (the bytes of
                     HloProto.hlo_module from XLA's dump, unchanged)
  NAME.before.txt    the same module as HLO text, as XLA dumped it
  NAME.after.txt     XLA:CPU's after-optimizations HLO text (fusion reference)
  NAME.snapshot.pb   xla.HloSnapshot: the before-optimizations module, the
                     arguments in entry-parameter order, and XLA:CPU's result
and one MANIFEST.tsv for all of them.

Each model is jitted and compiled in its own child process, so that XLA's
module counter, module ids and dump folder are the same on every run and do
not depend on which other models exist. Inputs come from numpy generators
with fixed seeds; every tensor, weights included, is a real jit argument.

Usage (CPU only; needs protoc on PATH and the pinned protobuf, see README.md):
  python3 tests/jax/make_zoo.py            # all models
  python3 tests/jax/make_zoo.py softmax    # some models
"""

import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
ZOO = os.path.join(HERE, "zoo")
PROTOS = ["hlo/hlo.proto", "hlo/xla_data.proto"]
# hlo/*.proto as a FileDescriptorSet, for machines without protoc (the GPU
# machine): `make_zoo.py --write-descriptors` regenerates it.
DESCRIPTORS = os.path.join(HERE, "hlo_descriptors.binpb")
MAX_SNAPSHOT_BYTES = 1 << 20

# --------------------------------------------------------------------------
# Models. Each entry: name -> (make_args(rng) -> list of np arrays, function,
# one-line summary). The function's __name__ must equal the model name, so
# XLA names its module jit_NAME.
# --------------------------------------------------------------------------


def _models():
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax import lax

    f32, i32 = np.float32, np.int32
    bf16 = jnp.bfloat16

    def normal(rng, shape, scale=1.0, dtype=f32):
        return (rng.standard_normal(shape) * scale).astype(dtype)

    def ln(x, g, b, eps=1e-5):
        mu = jnp.mean(x, axis=-1, keepdims=True)
        var = jnp.mean(jnp.square(x - mu), axis=-1, keepdims=True)
        return (x - mu) * lax.rsqrt(var + eps) * g + b

    def mha(x, wq, wk, wv, wo, heads, mask=None):
        b, s, d = x.shape
        hd = d // heads

        def split(t):
            return t.reshape(b, s, heads, hd).transpose(0, 2, 1, 3)

        q, k, v = split(x @ wq), split(x @ wk), split(x @ wv)
        logits = jnp.einsum("bhqd,bhkd->bhqk", q, k) / np.sqrt(hd).astype(f32)
        if mask is not None:
            logits = jnp.where(mask, logits, jnp.finfo(f32).min)
        p = jax.nn.softmax(logits, axis=-1)
        o = jnp.einsum("bhqk,bhkd->bhqd", p, v).transpose(0, 2, 1, 3)
        return o.reshape(b, s, d) @ wo

    def conv_nhwc(x, w, stride=1, groups=1):
        return lax.conv_general_dilated(
            x, w, (stride, stride), "SAME",
            dimension_numbers=("NHWC", "HWIO", "NHWC"),
            feature_group_count=groups)

    def bn(x, scale, offset, mean, var, eps=1e-3):
        return (x - mean) * (scale * lax.rsqrt(var + eps)) + offset

    def bn_params(rng, c):
        return [normal(rng, (c,), 0.1) + 1, normal(rng, (c,), 0.1),
                normal(rng, (c,), 0.1), rng.uniform(0.5, 1.5, (c,)).astype(f32)]

    models = {}

    def model(summary, make_args):
        def register(fn):
            models[fn.__name__] = (make_args, fn, summary)
            return fn
        return register

    @model("gelu(x@w1+b1)@w2+b2; x[8,32] w1[32,64] w2[64,16]",
           lambda r: [normal(r, (8, 32)), normal(r, (32, 64), 0.2),
                      normal(r, (64,), 0.1), normal(r, (64, 16), 0.2),
                      normal(r, (16,), 0.1)])
    def mlp_gelu(x, w1, b1, w2, b2):
        return jax.nn.gelu(x @ w1 + b1) @ w2 + b2

    @model("layer_norm(x)*g+b over last axis; x[8,64]",
           lambda r: [normal(r, (8, 64), 2.0) + 1, normal(r, (64,), 0.1) + 1,
                      normal(r, (64,), 0.1)])
    def layer_norm(x, g, b):
        return ln(x, g, b)

    @model("jax.nn.softmax(x, axis=-1); x[8,128]",
           lambda r: [normal(r, (8, 128), 3.0)])
    def softmax(x):
        return jax.nn.softmax(x, axis=-1)

    @model("4-head self-attention with bool mask; x[2,16,64] w*[64,64] mask[16,16]",
           lambda r: [normal(r, (2, 16, 64)),
                      *[normal(r, (64, 64), 0.125) for _ in range(4)],
                      np.tril(np.ones((16, 16), np.bool_))])
    def attention(x, wq, wk, wv, wo, mask):
        return mha(x, wq, wk, wv, wo, heads=4, mask=mask)

    @model("pre-LN block: x+MHA(LN(x)); y+MLP(LN(y)); x[2,16,32] 4 heads, mlp 64",
           lambda r: [normal(r, (2, 16, 32)),
                      normal(r, (32,), 0.1) + 1, normal(r, (32,), 0.1),
                      *[normal(r, (32, 32), 0.18) for _ in range(4)],
                      normal(r, (32,), 0.1) + 1, normal(r, (32,), 0.1),
                      normal(r, (32, 64), 0.18), normal(r, (64,), 0.1),
                      normal(r, (64, 32), 0.125), normal(r, (32,), 0.1)])
    def transformer_block(x, g1, b1, wq, wk, wv, wo, g2, b2, w1, c1, w2, c2):
        y = x + mha(ln(x, g1, b1), wq, wk, wv, wo, heads=4)
        return y + jax.nn.gelu(ln(y, g2, b2) @ w1 + c1) @ w2 + c2

    @model("relu(bn(conv(x,w))) NHWC/HWIO SAME; x[2,16,16,8] w[3,3,8,16]",
           lambda r: [normal(r, (2, 16, 16, 8)), normal(r, (3, 3, 8, 16), 0.12),
                      *bn_params(r, 16)])
    def conv_bn_relu(x, w, scale, offset, mean, var):
        return jax.nn.relu(bn(conv_nhwc(x, w), scale, offset, mean, var))

    @model("relu(x + bn(conv(relu(bn(conv(x)))))); x[2,8,8,16] w[3,3,16,16]",
           lambda r: [normal(r, (2, 8, 8, 16)),
                      normal(r, (3, 3, 16, 16), 0.08), *bn_params(r, 16),
                      normal(r, (3, 3, 16, 16), 0.08), *bn_params(r, 16)])
    def resnet_block(x, w1, s1, o1, m1, v1, w2, s2, o2, m2, v2):
        y = jax.nn.relu(bn(conv_nhwc(x, w1), s1, o1, m1, v1))
        return jax.nn.relu(x + bn(conv_nhwc(y, w2), s2, o2, m2, v2))

    @model("depthwise conv NHWC, feature_group_count=8; x[2,16,16,8] w[3,3,1,8]",
           lambda r: [normal(r, (2, 16, 16, 8)), normal(r, (3, 3, 1, 8), 0.3)])
    def depthwise_conv(x, w):
        return conv_nhwc(x, w, groups=8)

    @model("(sum ax0, max ax(1,2), mean ax(0,2), sum all, min ax-1, argmax ax1); x[4,8,16]",
           lambda r: [normal(r, (4, 8, 16))])
    def reductions(x):
        return (jnp.sum(x, axis=0), jnp.max(x, axis=(1, 2)),
                jnp.mean(x, axis=(0, 2)), jnp.sum(x), jnp.min(x, axis=-1),
                jnp.argmax(x, axis=1))

    def scan_step(carry, x):
        carry = carry * 0.9 + x
        return carry, jnp.cumsum(carry)

    @model("lax.scan c=0.9c+x_t, ys=cumsum(c); c0[8] xs[32,8] -> (c, ys)",
           lambda r: [normal(r, (8,)), normal(r, (32, 8))])
    def cumsum_scan(c0, xs):
        return lax.scan(scan_step, c0, xs)

    @model("(table[ids], table.at[ids].add(upd)); table[64,16] ids[12] upd[12,16]",
           lambda r: [normal(r, (64, 16)),
                      np.array([3, 7, 3, 0, 63, 12, 7, 7, 40, 1, 0, 25], i32),
                      normal(r, (12, 16))])
    def embedding_scatter(table, ids, upd):
        return table[ids], table.at[ids].add(upd)

    @model("(top_k(x,5) vals, idx, sort(x,-1), argsort(x,-1)); x[4,32]",
           lambda r: [r.permutation(128).reshape(4, 32).astype(f32) * 0.25 - 16])
    def topk_sort(x):
        vals, idx = lax.top_k(x, 5)
        return vals, idx, jnp.sort(x, axis=-1), jnp.argsort(x, axis=-1)

    @model("s=dynamic_slice(x,(i,j),(4,4)); dynamic_update_slice(x,u+s,(j,i)); x[16,16]",
           lambda r: [normal(r, (16, 16)), normal(r, (4, 4)),
                      np.array(5, i32), np.array(11, i32)])
    def dynamic_slice(x, u, i, j):
        s = lax.dynamic_slice(x, (i, j), (4, 4))
        return s, lax.dynamic_update_slice(x, u + s, (j, i))

    @model("bf16 relu(x@w1+b1)@w2+b2; x[8,32] w1[32,64] w2[64,16]",
           lambda r: [normal(r, (8, 32), 1, bf16), normal(r, (32, 64), 0.2, bf16),
                      normal(r, (64,), 0.1, bf16), normal(r, (64, 16), 0.2, bf16),
                      normal(r, (16,), 0.1, bf16)])
    def bf16_mlp(x, w1, b1, w2, b2):
        return jax.nn.relu(x @ w1 + b1) @ w2 + b2

    def grow_cond(state):
        x, n, limit = state
        return jnp.sum(jnp.abs(x)) < limit

    def grow_body(state):
        x, n, limit = state
        return x * 1.5 + 0.25, n + 1, limit

    @model("while sum|x|<limit: x=1.5x+.25, n+=1; x[8] limit[] -> (x, n)",
           lambda r: [normal(r, (8,), 0.1), np.array(1000.0, f32)])
    def while_loop(x, limit):
        x, n, _ = lax.while_loop(grow_cond, grow_body, (x, jnp.int32(0), limit))
        return x, n

    @model("lax.conv_general_dilated NCHW/OIHW stride 2 SAME; x[1,4,12,12] w[8,4,5,5]",
           lambda r: [normal(r, (1, 4, 12, 12)), normal(r, (8, 4, 5, 5), 0.1)])
    def conv2d(x, w):
        return lax.conv_general_dilated(x, w, (2, 2), "SAME")

    # Linear algebra: on the CPU, JAX lowers these to LAPACK custom calls
    # (lapack_*_ffi), which hloc runs with the system's LAPACK.
    def well_conditioned(r, n, batch=()):
        return (r.standard_normal(batch + (n, n)) + n * np.eye(n)).astype(f32)

    @model("(solve(a,b), inv(a), slogdet(a)) via getrf+trsm; a[6,6] b[6,3]",
           lambda r: [well_conditioned(r, 6), normal(r, (6, 3))])
    def linalg_solve(a, b):
        sign, logdet = jnp.linalg.slogdet(a)
        return jnp.linalg.solve(a, b), jnp.linalg.inv(a), sign, logdet

    @model("(cholesky(m m^T+I), qr(x), solve_triangular) via potrf/geqrf/orgqr/trsm; m[2,5,5] x[6,4]",
           lambda r: [normal(r, (2, 5, 5)), normal(r, (6, 4))])
    def linalg_cholesky_qr(m, x):
        spd = m @ jnp.swapaxes(m, -1, -2) + jnp.eye(5, dtype=m.dtype)
        c = jnp.linalg.cholesky(spd)
        q, rr = jnp.linalg.qr(x)
        y = jax.scipy.linalg.solve_triangular(c[0], spd[1], lower=True)
        return c, q, rr, y

    @model("(eigh(s): w, |V|; svd(x): s, |U|, |Vt|) via syevd/gesdd; s[3,4,4] x[5,3]",
           lambda r: [normal(r, (3, 4, 4)), normal(r, (5, 3))])
    def linalg_eigh_svd(s, x):
        sym = s + jnp.swapaxes(s, -1, -2)
        w, v = jnp.linalg.eigh(sym)
        u, sv, vt = jnp.linalg.svd(x, full_matrices=False)
        # Eigen/singular vectors are defined up to sign: compare what is not.
        return w, jnp.abs(v), sv, jnp.abs(u), jnp.abs(vt)

    return models


# --------------------------------------------------------------------------
# Literal encoding (XLA's LiteralProto; see xla_data.proto).
# --------------------------------------------------------------------------

# numpy dtype name -> (PrimitiveType name, LiteralProto field, packed-as-bytes)
_LITERAL_FIELDS = {
    "bool": ("PRED", "preds", False),
    "int8": ("S8", "s8s", True),
    "uint8": ("U8", "u8s", True),
    "int16": ("S16", "s16s", True),
    "uint16": ("U16", "u16s", True),
    "int32": ("S32", "s32s", False),
    "uint32": ("U32", "u32s", False),
    "int64": ("S64", "s64s", False),
    "uint64": ("U64", "u64s", False),
    "float16": ("F16", "f16s", True),
    "bfloat16": ("BF16", "bf16s", True),
    "float32": ("F32", "f32s", False),
    "float64": ("F64", "f64s", False),
    "complex64": ("C64", "c64s", False),
    "complex128": ("C128", "c128s", False),
}


# LiteralProto's field numbers of f32s and f64s (hlo/xla_data.proto).
_PACKED_FIELD_NUMBERS = {"float32": 8, "float64": 9}


def _varint_bytes(value):
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _array_shape(xla, shape_proto, arr):
    ptype = _LITERAL_FIELDS[arr.dtype.name][0]
    shape_proto.element_type = xla.PrimitiveType.Value(ptype)
    shape_proto.dimensions.extend(arr.shape)
    shape_proto.is_dynamic_dimension.extend([False] * arr.ndim)
    shape_proto.layout.minor_to_major.extend(range(arr.ndim - 1, -1, -1))
    shape_proto.layout.tail_padding_alignment_in_elements = 1  # as Layout::ToProto


def _fill_literal(xla, lit, arr):
    import numpy as np
    _, field, as_bytes = _LITERAL_FIELDS[arr.dtype.name]
    _array_shape(xla, lit.shape, arr)
    flat = np.ascontiguousarray(arr).reshape(-1)
    if as_bytes:  # XLA keeps these as little-endian raw bytes
        assert sys.byteorder == "little"
        setattr(lit, field, flat.tobytes())
    elif arr.dtype.name in _PACKED_FIELD_NUMBERS and flat.size > 0:
        # A packed repeated float/double field is the raw little-endian
        # values: parse it in instead of a Python list (big arrays).
        assert sys.byteorder == "little"
        data = flat.tobytes()
        lit.MergeFromString(_varint_bytes(_PACKED_FIELD_NUMBERS[arr.dtype.name] << 3 | 2) +
                            _varint_bytes(len(data)) + data)
    elif arr.dtype.kind == "c":  # interleaved (real, imag)
        getattr(lit, field).extend(np.stack([flat.real, flat.imag], -1).reshape(-1).tolist())
    else:
        getattr(lit, field).extend(flat.tolist())


def _literal_for(xla, shape_proto, value):
    """A LiteralProto of `value` (array or tuple of arrays) shaped as `shape_proto`."""
    lit = xla.LiteralProto()
    if shape_proto.element_type == xla.TUPLE:
        assert isinstance(value, (tuple, list)), "tuple result but one output"
        assert len(value) == len(shape_proto.tuple_shapes), (len(value), shape_proto)
        lit.shape.element_type = xla.TUPLE
        for sub_shape, sub in zip(shape_proto.tuple_shapes, value):
            lit.shape.tuple_shapes.add().CopyFrom(sub_shape)
            lit.tuple_literals.add().CopyFrom(_literal_for(xla, sub_shape, sub))
        return lit
    if isinstance(value, (tuple, list)):
        assert len(value) == 1, "array result but several outputs"
        value = value[0]
    _fill_literal(xla, lit, value)
    _check_shape(xla, shape_proto, lit.shape, "result")
    return lit


def _row_major(shape_proto):
    """A copy of `shape_proto` with every array layout made row-major."""
    out = type(shape_proto)()
    out.CopyFrom(shape_proto)

    def fix(shape):
        for element in shape.tuple_shapes:
            fix(element)
        if shape.HasField("layout"):
            del shape.layout.minor_to_major[:]
            shape.layout.minor_to_major.extend(reversed(range(len(shape.dimensions))))
    fix(out)
    return out


def _check_shape(xla, want, got, what):
    """Asserts `got`, built from numpy, is exactly the HLO's shape proto."""
    assert want == got, (
        f"{what}: HLO has {xla.PrimitiveType.Name(want.element_type)}"
        f"{list(want.dimensions)}, argument is "
        f"{xla.PrimitiveType.Name(got.element_type)}{list(got.dimensions)}\n"
        f"{want}\nvs\n{got}")


# --------------------------------------------------------------------------
# Child: jit, compile and run one model with XLA dumping into a fresh folder.
# --------------------------------------------------------------------------

def _hlo_module_bytes(hlo_proto_bytes):
    """Field 1 (hlo_module) of a serialized xla.HloProto, byte for byte."""
    pos, out = 0, None
    while pos < len(hlo_proto_bytes):
        key, pos = _varint(hlo_proto_bytes, pos)
        field, wire = key >> 3, key & 7
        assert wire == 2, f"unexpected wire type {wire} in HloProto"
        size, pos = _varint(hlo_proto_bytes, pos)
        if field == 1:
            out = hlo_proto_bytes[pos:pos + size]
        pos += size
    assert out is not None, "dump has no hlo_module"
    return out


def _varint(buf, pos):
    value, shift = 0, 0
    while True:
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return value, pos


def _unknown_fields(msg, path="msg"):
    """Paths of the innermost sub-messages carrying fields hlo.proto lacks."""
    clean = type(msg)()
    clean.CopyFrom(msg)
    clean.DiscardUnknownFields()
    if clean.ByteSize() == msg.ByteSize():
        return []
    found = []
    for fd, value in msg.ListFields():
        if fd.type != fd.TYPE_MESSAGE:
            continue
        # protobuf 6 drops FieldDescriptor.label for is_repeated.
        repeated = (fd.is_repeated if hasattr(fd, "is_repeated")
                    else fd.label == fd.LABEL_REPEATED)
        if not repeated:
            found += _unknown_fields(value, f"{path}.{fd.name}")
        elif not fd.message_type.GetOptions().map_entry:
            for i, sub in enumerate(value):
                found += _unknown_fields(sub, f"{path}.{fd.name}[{i}]")
    return found or [path]


def _read(path, mode="rb"):
    with open(path, mode) as f:
        return f.read()


def _write(path, data):
    # Through a temporary name, so a run killed while writing leaves no
    # truncated file behind.
    with open(path + ".tmp", "wb" if isinstance(data, bytes) else "w") as f:
        f.write(data)
    os.replace(path + ".tmp", path)


def run_child(name, pb2_dir, dump_dir, platform="cpu"):
    """Captures one model. `platform`: the JAX backend that compiles and runs
    it ("cpu" for the committed zoo; make_large_zoo.py --gpu records XLA:GPU's
    result, whose dumps need not hold a snapshot to cross-check)."""
    hlo_pb2, xla = load_bindings(pb2_dir)
    import jax
    import numpy as np

    # Source paths in HLO metadata: keep only the base name, so the dumps do
    # not depend on where the checkout lives.
    jax.config.update("jax_hlo_source_file_canonicalization_regex", ".*/")
    assert jax.default_backend() == platform, (jax.default_backend(), platform)

    make_args, fn, summary = _models()[name]
    seed = sum(name.encode())  # fixed per model, independent of model order
    args = [np.asarray(a) for a in make_args(np.random.default_rng(seed))]
    compiled = jax.jit(fn, keep_unused=True).lower(*args).compile()
    outputs = compiled(*args)
    flat_out, _ = jax.tree_util.tree_flatten(outputs)
    flat_out = [np.asarray(o) for o in flat_out]

    prefix = os.path.join(dump_dir, "module_*.jit_" + name)
    pbs = glob.glob(prefix + ".before_optimizations.hlo.pb")
    assert len(pbs) == 1, (name, sorted(os.listdir(dump_dir)))
    stem = pbs[0][:-len(".before_optimizations.hlo.pb")]
    module_bytes = _hlo_module_bytes(_read(pbs[0]))
    module = hlo_pb2.HloModuleProto.FromString(module_bytes)

    # Entry parameters, by parameter_number, must match the arguments.
    entry = [c for c in module.computations if c.id == module.entry_computation_id]
    assert len(entry) == 1, name
    params = sorted((i for i in entry[0].instructions if i.opcode == "parameter"),
                    key=lambda i: i.parameter_number)
    assert [p.parameter_number for p in params] == list(range(len(args))), name
    assert len(module.host_program_shape.parameters) == len(args), name

    snapshot = hlo_pb2.HloSnapshot()
    snapshot.hlo.hlo_module.CopyFrom(module)
    for i, (param, arg) in enumerate(zip(params, args)):
        lit = snapshot.arguments.add()
        _fill_literal(xla, lit, arg)
        _check_shape(xla, param.shape, lit.shape, f"{name} param {i}")
        _check_shape(xla, module.host_program_shape.parameters[i], lit.shape,
                     f"{name} program param {i}")
    root = [i for i in entry[0].instructions if i.id == entry[0].root_id]
    assert len(root) == 1, name
    # Results come back from JAX in row-major order whatever layout XLA
    # chose for them (LAPACK results are column-major): the snapshot records
    # them row-major.
    result_shape = _row_major(module.host_program_shape.result)
    assert _row_major(root[0].shape) == result_shape, name
    snapshot.result.CopyFrom(_literal_for(xla, result_shape, flat_out))
    snapshot.execution_platform = platform

    def check(condition, message):
        # The committed CPU zoo is held to every check; a GPU capture (made
        # once on a machine lent for a run) warns instead of losing the model.
        if platform == "cpu":
            assert condition, message
        elif not condition:
            print(f"warning: {message}", file=sys.stderr)

    # Cross-check the literal encoding against the snapshot XLA itself dumped
    # for the run (--xla_dump_hlo_snapshots; its module is the optimized one).
    xla_snaps = glob.glob(stem + ".snapshot.*.pb")
    check(len(xla_snaps) == 1, (name, xla_snaps))
    if xla_snaps:
        xla_snap = hlo_pb2.HloSnapshot.FromString(_read(xla_snaps[0]))
        check(list(xla_snap.arguments) == list(snapshot.arguments),
              f"{name}: arguments differ from XLA's")
        check(xla_snap.result == snapshot.result, f"{name}: result differs from XLA's")

    snapshot_bytes = snapshot.SerializeToString(deterministic=True)
    assert len(snapshot_bytes) < MAX_SNAPSHOT_BYTES, (name, len(snapshot_bytes))
    # Every field XLA wrote must be known to hlo.proto.
    unknown = _unknown_fields(hlo_pb2.HloSnapshot.FromString(snapshot_bytes),
                              "HloSnapshot")
    check(not unknown, f"{name}: fields unknown to hlo.proto at " + ", ".join(unknown[:8]))
    # XLA:CPU names it NAME.cpu_after_optimizations.*, XLA:GPU with its target.
    after_pb = sorted(glob.glob(stem + ".*after_optimizations.hlo.pb"))
    after_txt = sorted(glob.glob(stem + ".*after_optimizations.txt"))
    check(after_pb and after_txt, (name, sorted(os.listdir(dump_dir))))
    if after_pb:
        after = hlo_pb2.HloProto.FromString(_read(after_pb[0]))
        unknown = _unknown_fields(after, "after_optimizations HloProto")
        if unknown:  # only the text form is kept; still worth knowing
            print(f"warning: {name}: fields unknown to hlo.proto at "
                  + ", ".join(unknown[:8]), file=sys.stderr)

    _write(os.path.join(ZOO, name + ".before.pb"), module_bytes)
    _write(os.path.join(ZOO, name + ".before.txt"),
           _read(stem + ".before_optimizations.txt"))
    if after_txt:
        _write(os.path.join(ZOO, name + ".after.txt"), _read(after_txt[0]))
    _write(os.path.join(ZOO, name + ".snapshot.pb"), snapshot_bytes)

    dtypes = sorted({a.dtype.name for a in args})
    max_abs = max(float(np.max(np.abs(o.astype(np.float64)))) if o.size else 0.0
                  for o in flat_out)
    print("\t".join([name, ",".join(dtypes), str(len(args)), summary,
                     f"{max_abs:.6g}"]))


# --------------------------------------------------------------------------
# Parent: generate the python bindings, run one child per model, write the
# manifest.
# --------------------------------------------------------------------------

def generate_bindings(out_dir):
    """Python bindings of hlo/*.proto in `out_dir`: protoc's when protoc is
    on PATH (and then DESCRIPTORS is checked to be current), else a copy of
    DESCRIPTORS, which load_bindings turns into message classes."""
    for proto in PROTOS:
        assert os.path.exists(os.path.join(REPO, proto)), f"missing {proto}"
    if shutil.which("protoc") is None:
        shutil.copy(DESCRIPTORS, os.path.join(out_dir, os.path.basename(DESCRIPTORS)))
        return
    subprocess.run(["protoc", f"--proto_path={REPO}", f"--python_out={out_dir}",
                    *PROTOS], check=True)
    # Python 3 namespace packages need no __init__.py; add one anyway so an
    # unrelated installed `hlo` package cannot shadow ours.
    _write(os.path.join(out_dir, "hlo", "__init__.py"), "")
    fresh = os.path.join(out_dir, "descriptors.binpb")
    write_descriptors(fresh)
    if not os.path.exists(DESCRIPTORS) or _read(fresh) != _read(DESCRIPTORS):
        print(f"warning: {os.path.relpath(DESCRIPTORS, REPO)} is stale; regenerate it with "
              "python3 tests/jax/make_zoo.py --write-descriptors", file=sys.stderr)


def write_descriptors(path):
    """hlo/*.proto as a serialized FileDescriptorSet (protoc needed)."""
    subprocess.run(["protoc", f"--proto_path={REPO}", f"--descriptor_set_out={path}",
                    "--include_imports", *PROTOS], check=True)


def load_bindings(pb2_dir):
    """(hlo_pb2, xla_data_pb2) from `pb2_dir`: protoc's modules when there,
    else module-like namespaces built from the FileDescriptorSet there (no
    protoc needed, and independent of the protobuf version)."""
    if os.path.exists(os.path.join(pb2_dir, "hlo", "hlo_pb2.py")):
        sys.path.insert(0, pb2_dir)
        from hlo import hlo_pb2, xla_data_pb2
        return hlo_pb2, xla_data_pb2
    import types
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    from google.protobuf.internal import enum_type_wrapper
    files = descriptor_pb2.FileDescriptorSet.FromString(
        _read(os.path.join(pb2_dir, os.path.basename(DESCRIPTORS))))
    pool = descriptor_pool.DescriptorPool()
    for f in files.file:  # dependencies first, as protoc lists them
        pool.AddSerializedFile(f.SerializeToString())
    factory = None
    modules = {}
    for f in files.file:
        fd = pool.FindFileByName(f.name)
        module = types.SimpleNamespace()
        for name, desc in fd.message_types_by_name.items():
            if hasattr(message_factory, "GetMessageClass"):
                cls = message_factory.GetMessageClass(desc)
            else:  # protobuf before 4.22
                factory = factory or message_factory.MessageFactory(pool)
                cls = factory.GetPrototype(desc)
            setattr(module, name, cls)
        for name, desc in fd.enum_types_by_name.items():
            setattr(module, name, enum_type_wrapper.EnumTypeWrapper(desc))
            for value in desc.values:
                setattr(module, value.name, value.number)
        modules[f.name] = module
    return modules["hlo/hlo.proto"], modules["hlo/xla_data.proto"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("models", nargs="*", help="default: all")
    parser.add_argument("--write-descriptors", action="store_true",
                        help="only rewrite tests/jax/hlo_descriptors.binpb (needs protoc)")
    parser.add_argument("--child", nargs=3, metavar=("NAME", "PB2_DIR", "DUMP_DIR"),
                        help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.child:
        run_child(*opts.child)
        return
    if opts.write_descriptors:
        write_descriptors(DESCRIPTORS)
        return

    os.environ["JAX_PLATFORMS"] = "cpu"  # the table imports jax; nothing compiles here
    names = list(_models())
    chosen = opts.models or names
    unknown = sorted(set(chosen) - set(names))
    if unknown:
        parser.error("unknown models: " + ", ".join(unknown))
    os.makedirs(ZOO, exist_ok=True)

    rows = {}
    manifest = os.path.join(ZOO, "MANIFEST.tsv")
    if os.path.exists(manifest):  # keep rows of models not regenerated now
        for line in _read(manifest, "r").splitlines()[1:]:
            rows[line.split("\t")[0]] = line
    with tempfile.TemporaryDirectory(prefix="make_zoo.") as tmp:
        pb2_dir = os.path.join(tmp, "pb2")
        os.makedirs(pb2_dir)
        generate_bindings(pb2_dir)
        for name in chosen:
            dump_dir = os.path.join(tmp, "dump", name)
            os.makedirs(dump_dir)
            env = dict(os.environ, JAX_PLATFORMS="cpu", XLA_FLAGS=" ".join([
                f"--xla_dump_to={dump_dir}", "--xla_dump_hlo_as_proto",
                "--xla_dump_hlo_as_text", "--xla_dump_hlo_snapshots"]))
            out = subprocess.run(
                [sys.executable, os.path.abspath(__file__), "--child", name,
                 pb2_dir, dump_dir],
                env=env, check=True, stdout=subprocess.PIPE, text=True).stdout
            rows[name] = out.strip().splitlines()[-1]
            print(rows[name])
    header = "model\tdtypes\tnum_args\tjax_expression\tmax_abs_result"
    ordered = [rows[n] for n in names if n in rows]
    _write(manifest, "\n".join([header, *ordered]) + "\n")


if __name__ == "__main__":
    main()
