#!/usr/bin/env python3
"""Regenerates tests/jax_sharded/zoo/: sharded JAX programs on 4 host devices.

For every model NAME this writes, into zoo/:
  NAME.partitioned.hlo  the per-device module XLA gives after SPMD partitioning
                        (dump after the spmd-partitioning pass; num_partitions=4):
                        what one device runs
  NAME.sdy.hlo          the before-optimizations module as JAX lowers it with
                        Shardy (global shapes, shardings, xla.sdy.* custom calls
                        around a manual computation)
  NAME.partitioned.pb   (spmd_* models) the same module as XLA's HloProto dump:
                        its collectives carry mesh_axes_replica_group_list,
                        the proto form of replica_groups=mesh[...] {...}
  NAME.io.txt           inputs and JAX's outputs: per-device arrays (what the
                        partitioned module takes and returns on each device) and
                        global arrays (what the sdy module takes and returns)

io.txt is line based, one array per line, values as HLO literal text:
  device_input  D I SHAPE VALUE     argument I of device D
  device_output D I SHAPE VALUE     result I of device D
  global_input  I SHAPE VALUE
  global_output I SHAPE VALUE
Floats are printed with 9 significant digits (exact for f32).

Each model runs in its own child process with
XLA_FLAGS=--xla_force_host_platform_device_count=4 and a dump folder, so the
module numbering is the same on every run. Inputs come from numpy generators
with fixed seeds.

Usage: python3 tests/jax_sharded/make_sharded_zoo.py [NAME ...]
"""

import glob
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ZOO = os.path.join(HERE, "zoo")
DEVICES = 4
# jax.jit over sharded inputs (no shard_map): inputs to hloc's SPMD partitioner.
SPMD_MODELS = ["spmd_mlp_dp", "spmd_tp_matmul", "spmd_reduce", "spmd_reshard_chain",
               "spmd_mesh2x2", "spmd_dp_train_step", "spmd_mesh2x2_mlp", "spmd_attention_2d",
               "spmd_attention_2d_train", "spmd_embedding", "spmd_uneven"]


def _models():
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax import lax
    from jax.sharding import Mesh, PartitionSpec as P

    try:
        from jax import shard_map
    except ImportError:  # older spelling
        from jax.experimental.shard_map import shard_map

    f32, i32 = np.float32, np.int32
    mesh = Mesh(np.array(jax.devices()[:DEVICES]), ("d",))

    def normal(rng, shape, scale=1.0):
        return (rng.standard_normal(shape) * scale).astype(f32)

    def smap(f, in_specs, out_specs):
        return shard_map(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs)

    # Data parallel: each device has a quarter of the batch; gradients psum'd.
    def dp_train_step(w1, b1, w2, x, y):
        def local(w1, b1, w2, x, y):
            def loss(params):
                w1, b1, w2 = params
                h = jnp.tanh(x @ w1 + b1)
                return jnp.mean(jnp.square(h @ w2 - y))

            l, grads = jax.value_and_grad(loss)((w1, b1, w2))
            grads = jax.tree_util.tree_map(lambda g: lax.psum(g, "d") / DEVICES, grads)
            l = lax.pmean(l, "d")
            new = [p - 0.1 * g for p, g in zip((w1, b1, w2), grads)]
            return new[0], new[1], new[2], l

        return smap(local, (P(), P(), P(), P("d"), P("d")), (P(), P(), P(), P()))(
            w1, b1, w2, x, y)

    def dp_args(rng):
        return [normal(rng, (8, 16), 0.3), normal(rng, (16,), 0.1), normal(rng, (16, 4), 0.3),
                normal(rng, (32, 8)), normal(rng, (32, 4))]

    # Tensor parallel MLP: all-gather the batch-sharded activations, column- then
    # row-parallel matmuls, reduce-scatter the partial sums back to batch shards.
    def tp_mlp(x, w1, w2):
        def local(x, w1, w2):
            xs = lax.all_gather(x, "d", axis=0, tiled=True)
            h = jax.nn.relu(xs @ w1)
            return lax.psum_scatter(h @ w2, "d", scatter_dimension=0, tiled=True)

        return smap(local, (P("d"), P(None, "d"), P("d", None)), P("d"))(x, w1, w2)

    def tp_args(rng):
        return [normal(rng, (16, 8)), normal(rng, (8, 32), 0.3), normal(rng, (32, 8), 0.3)]

    # Ring attention: queries stay, key/value blocks travel the ring (ppermute)
    # inside a loop, combined with an online softmax.
    def ring_attention(q, k, v):
        def local(q, k, v):
            perm = [(i, (i + 1) % DEVICES) for i in range(DEVICES)]
            scale = 1.0 / np.sqrt(q.shape[-1]).astype(f32)

            def step(_, carry):
                k, v, m, l, o = carry
                s = (q @ k.T) * scale
                m_new = jnp.maximum(m, s.max(axis=-1))
                p = jnp.exp(s - m_new[:, None])
                corr = jnp.exp(m - m_new)
                l = l * corr + p.sum(axis=-1)
                o = o * corr[:, None] + p @ v
                k = lax.ppermute(k, "d", perm)
                v = lax.ppermute(v, "d", perm)
                return k, v, m_new, l, o

            n = q.shape[0]
            varying = lambda a: lax.pcast(a, ("d",), to="varying")
            init = (k, v, varying(jnp.full((n,), -jnp.inf, f32)),
                    varying(jnp.zeros((n,), f32)), jnp.zeros_like(q))
            _, _, _, l, o = lax.fori_loop(0, DEVICES, step, init)
            return o / l[:, None]

        return smap(local, (P("d"), P("d"), P("d")), P("d"))(q, k, v)

    def ring_args(rng):
        return [normal(rng, (16, 8)), normal(rng, (16, 8)), normal(rng, (16, 8))]

    # Mixture of experts: top-1 routing with a fixed capacity, tokens sent to
    # the device of their expert with all_to_all and brought back the same way.
    def moe_all_to_all(x, wg, we):
        capacity = 4

        def local(x, wg, we):
            t = x.shape[0]
            expert = jnp.argmax(x @ wg, axis=-1)                       # [t]
            onehot = jax.nn.one_hot(expert, DEVICES, dtype=i32)        # [t, E]
            slot = jnp.cumsum(onehot, axis=0) * onehot - 1             # [t, E]
            pos = slot.max(axis=-1)                                    # [t]
            keep = (pos < capacity).astype(f32)
            dispatch = (jax.nn.one_hot(expert, DEVICES, dtype=f32)[:, :, None]
                        * jax.nn.one_hot(pos, capacity, dtype=f32)[:, None, :]
                        * keep[:, None, None])                         # [t, E, C]
            sent = jnp.einsum("tec,td->ecd", dispatch, x)              # [E, C, D]
            got = lax.all_to_all(sent, "d", 0, 0, tiled=True)          # [E(src), C, D]
            out = jnp.tanh(got @ we[0])
            back = lax.all_to_all(out, "d", 0, 0, tiled=True)          # [E, C, D]
            return jnp.einsum("tec,ecd->td", dispatch, back)

        return smap(local, (P("d"), P(), P("d")), P("d"))(x, wg, we)

    def moe_args(rng):
        return [normal(rng, (32, 8)), normal(rng, (8, 4)), normal(rng, (4, 8, 8), 0.5)]

    # pmap: one replica per device; gradients averaged with pmean. JAX 0.10
    # lowers pmap through shard_map, so this too is a num_partitions=4 module
    # (replica_count=4 modules are covered by hand-written HLO tests).
    def pmap_step(w, x, y):
        def step(w, x, y):
            def loss(w):
                return jnp.mean(jnp.square(jnp.tanh(x @ w) - y))

            l, g = jax.value_and_grad(loss)(w)
            g = lax.pmean(g, "i")
            return w - 0.1 * g, lax.pmean(l, "i"), lax.axis_index("i")

        return jax.pmap(step, axis_name="i")(w, x, y)

    def pmap_args(rng):
        w = normal(rng, (8, 4), 0.3)
        return [np.stack([w] * DEVICES), normal(rng, (DEVICES, 8, 8)),
                normal(rng, (DEVICES, 8, 4))]

    # jax.jit over NamedSharding arguments, no shard_map: the module carries
    # sharding annotations only and needs an SPMD partitioner
    # (passes/sharding/spmd_partitioner.h). An entry may add jax.jit keyword
    # arguments (out_shardings) as a third element.
    from jax.sharding import NamedSharding

    def placed(a, *spec, on=mesh):
        return jax.device_put(a, NamedSharding(on, P(*spec)))

    def spmd_mlp_dp(x, w1, b1, w2):
        return jnp.tanh(x @ w1 + b1) @ w2

    def spmd_mlp_dp_args(rng):
        return [placed(normal(rng, (16, 8)), "d", None), placed(normal(rng, (8, 16), 0.3)),
                placed(normal(rng, (16,))), placed(normal(rng, (16, 4), 0.3))]

    # Megatron-style: w1 split on its output dimension, w2 on its contracting one.
    def spmd_tp_matmul(x, w1, w2):
        return jax.nn.relu(x @ w1) @ w2

    def spmd_tp_matmul_args(rng):
        return [placed(normal(rng, (8, 16))), placed(normal(rng, (16, 32), 0.3), None, "d"),
                placed(normal(rng, (32, 16), 0.3), "d", None)]

    def spmd_reduce(x):
        return x.sum(axis=0), x.max(axis=0), x.mean(axis=1)

    def spmd_reduce_args(rng):
        return [placed(normal(rng, (16, 8)), "d", None)]

    def spmd_reshard_chain(x, y):
        z = jnp.exp(x + y) * 2.0
        z = lax.with_sharding_constraint(z, NamedSharding(mesh, P(None, "d")))
        return z - 1.0

    def spmd_reshard_chain_args(rng):
        return [placed(normal(rng, (8, 8), 0.5), "d", None),
                placed(normal(rng, (8, 8), 0.5), None, "d")]

    # A data-parallel training step by jax.jit alone: the batch split, the
    # weights replicated; the partitioner finds the gradient all-reduces.
    def spmd_dp_train_step(w1, b1, w2, x, y):
        def loss(params):
            w1, b1, w2 = params
            return jnp.mean(jnp.square(jnp.tanh(x @ w1 + b1) @ w2 - y))

        l, (g1, gb, g2) = jax.value_and_grad(loss)((w1, b1, w2))
        return w1 - 0.1 * g1, b1 - 0.1 * gb, w2 - 0.1 * g2, l

    def spmd_dp_train_step_args(rng):
        return [placed(normal(rng, (8, 16), 0.3)), placed(normal(rng, (16,), 0.1)),
                placed(normal(rng, (16, 4), 0.3)), placed(normal(rng, (32, 8)), "d", None),
                placed(normal(rng, (32, 4)), "d", None)]

    # An uneven constraint (6 rows over 4 devices; jit allows it where
    # device_put does not): XLA pads the last tile, hloc keeps the rows whole.
    def spmd_uneven(x, w):
        h = jnp.tanh(x @ w).T
        h = lax.with_sharding_constraint(h, NamedSharding(mesh, P("d", None)))
        return jnp.sum(h, axis=0), jnp.max(h * 2.0, axis=1)

    def spmd_uneven_args(rng):
        return [placed(normal(rng, (8, 6), 0.5), "d", None), placed(normal(rng, (6, 6), 0.5))]

    mesh2 = Mesh(np.array(jax.devices()[:DEVICES]).reshape(2, 2), ("a", "b"))

    def spmd_mesh2x2(x, w):
        return jnp.sum(x @ w, axis=0)

    def spmd_mesh2x2_args(rng):
        return [placed(normal(rng, (8, 4)), "a", "b", on=mesh2),
                placed(normal(rng, (4, 6)), "b", None, on=mesh2)]

    # Data and tensor parallel at once: the batch by "a", the hidden
    # dimension by "b" (w1's columns, w2's rows).
    def spmd_mesh2x2_mlp(x, w1, w2):
        return jnp.tanh(x @ w1) @ w2

    def spmd_mesh2x2_mlp_args(rng):
        return [placed(normal(rng, (8, 8)), "a", None, on=mesh2),
                placed(normal(rng, (8, 16), 0.3), None, "b", on=mesh2),
                placed(normal(rng, (16, 8), 0.3), "b", None, on=mesh2)]

    # A causal attention block with RMS norm on a ("data", "model") mesh:
    # batch by data, heads (q/k/v columns, wo rows) by model.
    def spmd_attention_2d(x, wq, wk, wv, wo):
        b, t, d = x.shape
        heads = 4

        def split(a):
            return a.reshape(b, t, heads, d // heads)

        q, k, v = split(x @ wq), split(x @ wk), split(x @ wv)
        s = jnp.einsum("bthd,bshd->bhts", q, k) / np.sqrt(d // heads)
        s = jnp.where(jnp.tril(jnp.ones((t, t), bool)), s, -1e9)
        o = jnp.einsum("bhts,bshd->bthd", jax.nn.softmax(s, axis=-1), v).reshape(b, t, d)
        y = x + o @ wo
        return y / jnp.sqrt(jnp.mean(y * y, axis=-1, keepdims=True) + 1e-6)

    def spmd_attention_2d_args(rng):
        return [placed(normal(rng, (4, 8, 16)), "a", None, None, on=mesh2)] + [
            placed(normal(rng, (16, 16), 0.3), None, "b", on=mesh2) for _ in range(3)] + [
            placed(normal(rng, (16, 16), 0.3), "b", None, on=mesh2)]

    # Its training step: gradients through the heads and the norm.
    def spmd_attention_2d_train(x, wq, wk, wv, wo):
        def loss(ws):
            return jnp.mean(jnp.square(spmd_attention_2d(x, *ws) - 0.5))

        l, g = jax.value_and_grad(loss)((wq, wk, wv, wo))
        return tuple(w - 0.1 * d for w, d in zip((wq, wk, wv, wo), g)) + (l,)

    # Embedding lookup with the token ids split by batch, the table replicated.
    def spmd_embedding(ids, table, w):
        h = jnp.mean(jnp.take(table, ids, axis=0), axis=1)
        return jax.nn.log_softmax(h @ w, axis=-1)

    def spmd_embedding_args(rng):
        ids = rng.integers(0, 32, size=(8, 4)).astype(i32)
        return [placed(ids, "d", None), placed(normal(rng, (32, 16))),
                placed(normal(rng, (16, 10), 0.3))]

    return {
        "spmd_embedding": (spmd_embedding_args, spmd_embedding),
        "spmd_uneven": (spmd_uneven_args, spmd_uneven, {"out_shardings": NamedSharding(mesh, P())}),
        "spmd_attention_2d_train": (spmd_attention_2d_args, spmd_attention_2d_train),
        "spmd_attention_2d": (spmd_attention_2d_args, spmd_attention_2d),
        "spmd_mesh2x2_mlp": (spmd_mesh2x2_mlp_args, spmd_mesh2x2_mlp),
        "spmd_mlp_dp": (spmd_mlp_dp_args, spmd_mlp_dp),
        "spmd_tp_matmul": (spmd_tp_matmul_args, spmd_tp_matmul,
                           {"out_shardings": NamedSharding(mesh, P())}),
        "spmd_reduce": (spmd_reduce_args, spmd_reduce),
        "spmd_reshard_chain": (spmd_reshard_chain_args, spmd_reshard_chain,
                               {"out_shardings": NamedSharding(mesh, P(None, "d"))}),
        "spmd_mesh2x2": (spmd_mesh2x2_args, spmd_mesh2x2),
        "spmd_dp_train_step": (spmd_dp_train_step_args, spmd_dp_train_step),
        "dp_train_step": (dp_args, dp_train_step),
        "tp_mlp": (tp_args, tp_mlp),
        "ring_attention": (ring_args, ring_attention),
        "moe_all_to_all": (moe_args, moe_all_to_all),
        "pmap_step": (pmap_args, pmap_step),
    }


def _literal_text(a):
    import numpy as np
    kind = {np.dtype("float32"): "f32", np.dtype("int32"): "s32", np.dtype("uint32"): "u32",
            np.dtype("bool"): "pred"}[a.dtype]
    shape = "%s[%s]" % (kind, ",".join(str(d) for d in a.shape))

    def value(x):
        if kind == "f32":
            return "%.9g" % float(x)
        if kind == "pred":
            return "true" if x else "false"
        return str(int(x))

    def nested(x):
        if x.ndim == 0:
            return value(x)
        return "{" + ", ".join(nested(e) for e in x) + "}"

    return shape + " " + nested(a)


def _child(name, dump):
    import jax
    import numpy as np
    entry = _models()[name]
    make_args, fn = entry[:2]
    jit_options = entry[2] if len(entry) > 2 else {}
    seed = sum(ord(c) for c in name)
    args = make_args(np.random.default_rng(seed))
    lines = []
    jitted = jax.jit(fn, keep_unused=True, **jit_options)
    outs = jitted(*args)
    outs = outs if isinstance(outs, (tuple, list)) else (outs,)
    for i, a in enumerate(args):
        lines.append("global_input %d %s" % (i, _literal_text(np.asarray(a))))
    for i, o in enumerate(outs):
        lines.append("global_output %d %s" % (i, _literal_text(np.asarray(o))))
    # What each device sees: the shards of the arguments as the compiled
    # program lays them out, and the shards of its results.
    compiled = jitted.lower(*args).compile()
    in_shardings = compiled.input_shardings[0]
    for i, (a, s) in enumerate(zip(args, in_shardings)):
        placed = jax.device_put(a, s)
        shards = sorted(placed.addressable_shards, key=lambda s: s.device.id)
        for shard in shards:
            lines.append("device_input %d %d %s" % (
                shard.device.id, i, _literal_text(np.asarray(shard.data))))
    for i, o in enumerate(outs):
        for shard in sorted(o.addressable_shards, key=lambda s: s.device.id):
            lines.append("device_output %d %d %s" % (
                shard.device.id, i, _literal_text(np.asarray(shard.data))))
    with open(os.path.join(ZOO, name + ".io.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


def _strip_metadata(text):
    import re
    return re.sub(r", metadata=\{[^}]*\}", "", text)


def _generate(name):
    with tempfile.TemporaryDirectory() as dump:
        env = dict(os.environ)
        env["JAX_PLATFORMS"] = "cpu"
        env["XLA_FLAGS"] = " ".join([
            "--xla_force_host_platform_device_count=%d" % DEVICES,
            "--xla_dump_to=" + dump, "--xla_dump_hlo_as_text", "--xla_dump_hlo_as_proto",
            "--xla_dump_hlo_pass_re=spmd-partitioning"])
        subprocess.run([sys.executable, __file__, "--child", name, dump], check=True, env=env)
        files = sorted(os.listdir(dump))
        # The jitted module (pmap's inner one is named jit__fun).
        before = [f for f in files if f.endswith("before_optimizations.txt")]
        spmd = [f for f in files if "after_spmd-partitioning" in f and f.endswith(".txt")]
        if len(before) != 1 or len(spmd) != 1:
            raise SystemExit("%s: expected one module in the dump, got %s" % (name, files))
        read = lambda f: _strip_metadata(open(os.path.join(dump, f)).read())
        with open(os.path.join(ZOO, name + ".sdy.hlo"), "w") as out:
            out.write(read(before[0]))
        with open(os.path.join(ZOO, name + ".partitioned.hlo"), "w") as out:
            out.write(read(spmd[0]))
        if name in SPMD_MODELS:
            proto = [f for f in files if "after_spmd-partitioning" in f and f.endswith(".hlo.pb")]
            if len(proto) != 1:
                raise SystemExit("%s: expected one partitioned proto, got %s" % (name, proto))
            with open(os.path.join(dump, proto[0]), "rb") as src:
                with open(os.path.join(ZOO, name + ".partitioned.pb"), "wb") as out:
                    out.write(src.read())
        print(name, "->", before + spmd)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        _child(sys.argv[2], sys.argv[3])
        return
    os.makedirs(ZOO, exist_ok=True)
    names = sys.argv[1:] or ["dp_train_step", "tp_mlp", "ring_attention", "moe_all_to_all",
                             "pmap_step"] + SPMD_MODELS
    for name in names:
        _generate(name)


if __name__ == "__main__":
    main()
