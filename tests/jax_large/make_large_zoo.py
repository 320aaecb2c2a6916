#!/usr/bin/env python3
"""Generates tests/jax_large/zoo/: real-size JAX models captured as XLA HLO.

The small zoo (tests/jax/zoo, committed) checks correctness op by op; this
one sizes models the way they run: a training step of a small GPT with Adam,
a BERT encoder, a Llama block in bf16, a ResNet training step, ... each
taking roughly 5-50 ms on XLA:CPU on a 2-core machine (or, --gpu, about
1-20 ms on XLA on an H100). The files are too big
to commit (several MB each); they are generated on demand into zoo/, which
git ignores, and are byte-identical from run to run.

Per model NAME, exactly as tests/jax/make_zoo.py writes them (its helpers
are imported, not copied; see tests/jax/README.md):
  NAME.before.pb     XLA's before-optimizations HloModuleProto
  NAME.before.txt    the same as HLO text
  NAME.after.txt     XLA:CPU's after-optimizations HLO text
  NAME.snapshot.pb   xla.HloSnapshot: module, arguments, XLA:CPU's result
and MANIFEST.tsv. Inputs come from numpy generators seeded per model
(sum of the name's bytes, as make_zoo does); every tensor is a jit argument.

Two size sets (SIZES below): "cpu", the default, and "gpu" (--gpu), which
also compiles and runs the models with XLA on the GPU, so that the snapshots
record XLA:GPU's result; the folder's ZOO.json says which.

Usage (protoc on PATH, or tests/jax/hlo_descriptors.binpb used instead):
  python3 tests/jax_large/make_large_zoo.py              # all models
  python3 tests/jax_large/make_large_zoo.py gru_scan     # some
  python3 tests/jax_large/make_large_zoo.py --time       # XLA:CPU times only
  python3 tests/jax_large/make_large_zoo.py --gpu --out DIR --jobs 4
                                                         # GPU sizes, on the GPU
  python3 tests/jax_large/make_large_zoo.py --sizes gpu --out DIR
                                                         # GPU sizes on the CPU
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
ZOO = os.path.join(HERE, "zoo")
MAX_SNAPSHOT_BYTES = 256 << 20

sys.path.insert(0, os.path.join(REPO, "tests", "jax"))
import make_zoo  # noqa: E402  (the small zoo's capture and literal helpers)


# Sizes per set: "cpu" (the default: 5-50 ms per step on XLA:CPU on two
# cores) and "gpu" (--gpu: about 1-20 ms per step on XLA on an H100, and
# snapshots below MAX_SNAPSHOT_BYTES; memory-bound models stay shorter, as
# their arguments would pass that first). Every model reads its sizes here.
SIZES = {
    "cpu": {
        "gpt": dict(vocab=512, d=128, heads=4, layers=2, seq=64, batch=4, mlp=512),
        "bert": dict(d=256, heads=4, layers=2, seq=128, batch=4, mlp=1024),
        "llama": dict(d=256, q_heads=8, kv_heads=2, seq=128, batch=2, mlp=688),
        "gru": dict(seq=64, batch=16, inp=64, hidden=128),
        "moe": dict(tokens=512, d=256, experts=8, ffn=512, k=2, capacity=160),
        "unet": dict(batch=4, image=32, channels=32),
        "resnet": dict(batch=8, image=64, channels=32),
        "vit": dict(image=64, patch=8, d=192, heads=3, layers=2, mlp=768, batch=4),
        "int8": dict(m=512, k=1024, n=1024),
        "ln16": dict(rows=2048, cols=1024),
        "mlp": dict(batch=256, width=1024, layers=4),
        "convnet": dict(batch=8, image=64, channels=16, width=32),
    },
    "gpu": {
        "gpt": dict(vocab=4096, d=384, heads=6, layers=4, seq=256, batch=16, mlp=1536),
        "bert": dict(d=512, heads=8, layers=4, seq=512, batch=8, mlp=2048),
        "llama": dict(d=1024, q_heads=16, kv_heads=4, seq=512, batch=16, mlp=2816),
        "gru": dict(seq=128, batch=64, inp=256, hidden=512),
        "moe": dict(tokens=8192, d=512, experts=8, ffn=2048, k=2, capacity=2560),
        "unet": dict(batch=16, image=64, channels=64),
        "resnet": dict(batch=64, image=128, channels=64),
        "vit": dict(image=224, patch=16, d=384, heads=6, layers=4, mlp=1536, batch=32),
        "int8": dict(m=4096, k=8192, n=4096),
        "ln16": dict(rows=8192, cols=4096),
        "mlp": dict(batch=4096, width=2048, layers=4),
        "convnet": dict(batch=32, image=128, channels=16, width=64),
    },
}


def read_info(directory):
    """A folder's ZOO.json: {"sizes": set, "recorded_on": platform}; {} for
    folders from before it was written."""
    import json
    path = os.path.join(directory, "ZOO.json")
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        return json.load(f)


def read_sizes(directory):
    """The size set a folder was generated with ("cpu" when it does not say)."""
    return read_info(directory).get("sizes", "cpu")


def _models(sizes="cpu"):
    size = SIZES[sizes]
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

    def attention(q, k, v, mask=None):
        # q [b, h, s, d], k/v [b, h, t, d]
        logits = jnp.einsum("bhsd,bhtd->bhst", q, k) / np.sqrt(q.shape[-1]).astype(q.dtype)
        if mask is not None:
            logits = jnp.where(mask, logits, jnp.asarray(-1e9, logits.dtype))
        p = jax.nn.softmax(logits.astype(f32), axis=-1).astype(q.dtype)
        return jnp.einsum("bhst,bhtd->bhsd", p, v)

    def mha(x, wq, wk, wv, wo, heads, mask=None):
        b, s, d = x.shape
        hd = d // heads

        def split(t):
            return t.reshape(b, s, heads, hd).transpose(0, 2, 1, 3)

        o = attention(split(x @ wq), split(x @ wk), split(x @ wv), mask)
        return o.transpose(0, 2, 1, 3).reshape(b, s, d) @ wo

    def conv(x, w, stride=1, padding="SAME"):
        return lax.conv_general_dilated(x, w, (stride, stride), padding,
                                        dimension_numbers=("NHWC", "HWIO", "NHWC"))

    models = {}

    def model(summary, make_args):
        def register(fn):
            models[fn.__name__] = (make_args, fn, summary)
            return fn
        return register

    # ---------------------------------------------------------------- GPT

    gpt = size["gpt"]

    def gpt_params(r):
        c = gpt
        p = [normal(r, (c["vocab"], c["d"]), 0.02), normal(r, (c["seq"], c["d"]), 0.02)]
        for _ in range(c["layers"]):
            p += [np.ones(c["d"], f32), np.zeros(c["d"], f32),
                  *[normal(r, (c["d"], c["d"]), c["d"] ** -0.5) for _ in range(4)],
                  np.ones(c["d"], f32), np.zeros(c["d"], f32),
                  normal(r, (c["d"], c["mlp"]), c["d"] ** -0.5), np.zeros(c["mlp"], f32),
                  normal(r, (c["mlp"], c["d"]), c["mlp"] ** -0.5), np.zeros(c["d"], f32)]
        p += [np.ones(c["d"], f32), np.zeros(c["d"], f32)]
        return p

    def gpt_loss(params, tokens, targets):
        c = gpt
        emb, pos = params[0], params[1]
        x = emb[tokens] + pos[None]
        mask = jnp.tril(jnp.ones((c["seq"], c["seq"]), bool))
        for i in range(c["layers"]):
            g1, b1, wq, wk, wv, wo, g2, b2, w1, c1, w2, c2 = params[2 + 12 * i: 14 + 12 * i]
            x = x + mha(ln(x, g1, b1), wq, wk, wv, wo, c["heads"], mask)
            x = x + jax.nn.gelu(ln(x, g2, b2) @ w1 + c1) @ w2 + c2
        x = ln(x, params[-2], params[-1])
        logits = x @ emb.T
        logp = jax.nn.log_softmax(logits, axis=-1)
        return -jnp.mean(jnp.take_along_axis(logp, targets[..., None], axis=-1))

    def gpt_args(r):
        c = gpt
        params = gpt_params(r)
        tokens = r.integers(0, c["vocab"], (c["batch"], c["seq"])).astype(i32)
        targets = r.integers(0, c["vocab"], (c["batch"], c["seq"])).astype(i32)
        m = [np.zeros_like(p) for p in params]
        v = [np.zeros_like(p) for p in params]
        return [tokens, targets, np.array(3, i32), *params, *m, *v]

    @model("GPT decoder ({layers} layers, d{d}, {heads} heads, seq {seq}, batch {batch}, "
           "vocab {vocab}): loss, grad, Adam update".format(**gpt), gpt_args)
    def gpt_train_step(tokens, targets, step, *state):
        n = len(state) // 3
        params, m, v = list(state[:n]), list(state[n:2 * n]), list(state[2 * n:])
        loss, grads = jax.value_and_grad(gpt_loss)(params, tokens, targets)
        lr, b1, b2, eps = 1e-3, 0.9, 0.999, 1e-8
        t = (step + 1).astype(f32)
        new_p, new_m, new_v = [], [], []
        for p, g, mi, vi in zip(params, grads, m, v):
            mi = b1 * mi + (1 - b1) * g
            vi = b2 * vi + (1 - b2) * g * g
            mhat = mi / (1 - b1 ** t)
            vhat = vi / (1 - b2 ** t)
            new_p.append(p - lr * mhat / (jnp.sqrt(vhat) + eps))
            new_m.append(mi)
            new_v.append(vi)
        return (loss, *new_p, *new_m, *new_v)

    # ---------------------------------------------------------------- BERT

    bert = size["bert"]

    def bert_args(r):
        c = bert
        a = [normal(r, (c["batch"], c["seq"], c["d"])),
             (r.uniform(size=(c["batch"], 1, 1, c["seq"])) < 0.9)]
        for _ in range(c["layers"]):
            a += [*[normal(r, (c["d"], c["d"]), c["d"] ** -0.5) for _ in range(4)],
                  np.ones(c["d"], f32), np.zeros(c["d"], f32),
                  normal(r, (c["d"], c["mlp"]), c["d"] ** -0.5), np.zeros(c["mlp"], f32),
                  normal(r, (c["mlp"], c["d"]), c["mlp"] ** -0.5), np.zeros(c["d"], f32),
                  np.ones(c["d"], f32), np.zeros(c["d"], f32)]
        return a

    @model("BERT encoder ({layers} post-LN layers, d{d}, {heads} heads, seq {seq}, batch "
           "{batch}, mlp {mlp}, padding mask)".format(**bert), bert_args)
    def bert_encoder(x, mask, *w):
        for i in range(bert["layers"]):
            wq, wk, wv, wo, g1, b1, w1, c1, w2, c2, g2, b2 = w[12 * i: 12 * i + 12]
            x = ln(x + mha(x, wq, wk, wv, wo, bert["heads"], mask), g1, b1)
            x = ln(x + jax.nn.gelu(x @ w1 + c1, approximate=False) @ w2 + c2, g2, b2)
        return x

    # ---------------------------------------------------------------- Llama

    llama = size["llama"]

    def rope(x, positions):
        # x [b, s, h, d]: rotate pairs (x[..., :d/2], x[..., d/2:]).
        d = x.shape[-1]
        freq = 1.0 / (10000.0 ** (jnp.arange(0, d // 2, dtype=f32) / (d // 2)))
        angle = positions[:, None].astype(f32) * freq[None]
        cos, sin = jnp.cos(angle)[None, :, None], jnp.sin(angle)[None, :, None]
        x1, x2 = x[..., : d // 2].astype(f32), x[..., d // 2:].astype(f32)
        return jnp.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], -1).astype(x.dtype)

    def rms(x, g, eps=1e-6):
        xf = x.astype(f32)
        return (xf * lax.rsqrt(jnp.mean(xf * xf, -1, keepdims=True) + eps)).astype(x.dtype) * g

    def llama_args(r):
        c = llama
        hd = c["d"] // c["q_heads"]
        return [normal(r, (c["batch"], c["seq"], c["d"]), 1, bf16),
                np.ones(c["d"], bf16),
                normal(r, (c["d"], c["q_heads"] * hd), c["d"] ** -0.5, bf16),
                normal(r, (c["d"], c["kv_heads"] * hd), c["d"] ** -0.5, bf16),
                normal(r, (c["d"], c["kv_heads"] * hd), c["d"] ** -0.5, bf16),
                normal(r, (c["q_heads"] * hd, c["d"]), c["d"] ** -0.5, bf16),
                np.ones(c["d"], bf16),
                normal(r, (c["d"], c["mlp"]), c["d"] ** -0.5, bf16),
                normal(r, (c["d"], c["mlp"]), c["d"] ** -0.5, bf16),
                normal(r, (c["mlp"], c["d"]), c["mlp"] ** -0.5, bf16)]

    @model("Llama block bf16: RMSNorm, RoPE, GQA {q_heads} q / {kv_heads} kv heads, causal, "
           "SwiGLU; x[{batch},{seq},{d}]".format(**llama), llama_args)
    def llama_block(x, g1, wq, wk, wv, wo, g2, w_gate, w_up, w_down):
        c = llama
        b, s, d = x.shape
        hd = d // c["q_heads"]
        group = c["q_heads"] // c["kv_heads"]
        h = rms(x, g1)
        pos = jnp.arange(s)
        q = rope((h @ wq).reshape(b, s, c["q_heads"], hd), pos)
        k = rope((h @ wk).reshape(b, s, c["kv_heads"], hd), pos)
        v = (h @ wv).reshape(b, s, c["kv_heads"], hd)
        k = jnp.repeat(k, group, axis=2)
        v = jnp.repeat(v, group, axis=2)
        mask = jnp.tril(jnp.ones((s, s), bool))
        o = attention(q.transpose(0, 2, 1, 3), k.transpose(0, 2, 1, 3),
                      v.transpose(0, 2, 1, 3), mask)
        x = x + o.transpose(0, 2, 1, 3).reshape(b, s, d) @ wo
        h = rms(x, g2)
        return x + (jax.nn.silu(h @ w_gate) * (h @ w_up)) @ w_down

    # ---------------------------------------------------------------- GRU

    gru = size["gru"]

    def gru_loss(w, xs, h0):
        wz, uz, bz, wr, ur, br, wh, uh, bh, wout = w

        def step(h, x):
            z = jax.nn.sigmoid(x @ wz + h @ uz + bz)
            rr = jax.nn.sigmoid(x @ wr + h @ ur + br)
            hh = jnp.tanh(x @ wh + (rr * h) @ uh + bh)
            h = (1 - z) * h + z * hh
            return h, h @ wout

        _, ys = lax.scan(step, h0, xs)
        return jnp.mean(jnp.square(ys))

    def gru_args(r):
        c = gru
        w = []
        for _ in range(3):
            w += [normal(r, (c["inp"], c["hidden"]), c["inp"] ** -0.5),
                  normal(r, (c["hidden"], c["hidden"]), c["hidden"] ** -0.5),
                  np.zeros(c["hidden"], f32)]
        w.append(normal(r, (c["hidden"], 8), c["hidden"] ** -0.5))
        return [normal(r, (c["seq"], c["batch"], c["inp"])),
                np.zeros((c["batch"], c["hidden"]), f32), *w]

    @model("GRU over lax.scan (seq {seq}, batch {batch}, in {inp}, hidden {hidden}): loss and "
           "gradient".format(**gru), gru_args)
    def gru_scan_grad(xs, h0, *w):
        return jax.value_and_grad(gru_loss)(list(w), xs, h0)

    # ---------------------------------------------------------------- MoE

    moe = size["moe"]

    def moe_args(r):
        c = moe
        return [normal(r, (c["tokens"], c["d"])),
                normal(r, (c["d"], c["experts"]), c["d"] ** -0.5),
                normal(r, (c["experts"], c["d"], c["ffn"]), c["d"] ** -0.5),
                normal(r, (c["experts"], c["ffn"], c["d"]), c["ffn"] ** -0.5)]

    @model("top-{k} MoE layer, {experts} experts, capacity {capacity} rows each: route (softmax, "
           "top_k), sort by expert, per-expert slices through gelu FFN, scatter-add back; "
           "x[{tokens},{d}]".format(**moe), moe_args)
    def moe_top2(x, w_router, w_in, w_out):
        c = moe
        gates = jax.nn.softmax(x @ w_router, axis=-1)
        top_w, top_e = lax.top_k(gates, c["k"])          # [t, k]
        top_w = top_w / jnp.sum(top_w, -1, keepdims=True)
        flat_e = top_e.reshape(-1)                        # [t*k]
        order = jnp.argsort(flat_e)                       # rows grouped by expert
        token = order // c["k"]
        cap = c["capacity"]
        rows = jnp.concatenate([x[token], jnp.zeros((cap, c["d"]), x.dtype)])  # gather
        counts = jnp.bincount(flat_e, length=c["experts"])
        starts = jnp.cumsum(counts) - counts
        out = jnp.zeros_like(rows)
        for e in range(c["experts"]):
            xe = lax.dynamic_slice(rows, (starts[e], 0), (cap, c["d"]))
            h = jax.nn.gelu(xe @ w_in[e]) @ w_out[e]
            keep = (jnp.arange(cap) < counts[e])[:, None]  # rows past capacity are dropped
            cur = lax.dynamic_slice(out, (starts[e], 0), (cap, c["d"]))
            out = lax.dynamic_update_slice(out, cur + jnp.where(keep, h, 0), (starts[e], 0))
        weight = top_w.reshape(-1)[order][:, None]
        y = jnp.zeros_like(x).at[token].add(out[: token.shape[0]] * weight)  # scatter-add
        return y, counts

    # ---------------------------------------------------------------- U-Net

    unet = size["unet"]

    def unet_args(r):
        b, i, c = unet["batch"], unet["image"], unet["channels"]
        return [normal(r, (b, i, i, c)),
                normal(r, (3, 3, c, 2 * c), 0.06), normal(r, (3, 3, 2 * c, 2 * c), 0.04),
                normal(r, (3, 3, 2 * c, 4 * c), 0.04), normal(r, (2, 2, 4 * c, 2 * c), 0.06),
                normal(r, (3, 3, 4 * c, 2 * c), 0.03), normal(r, (3, 3, 2 * c, c), 0.04)]

    @model("U-Net level: conv-conv, max-pool, conv, transposed-conv up, skip concat, "
           "conv-conv; x[{batch},{image},{image},{channels}] NHWC".format(**unet), unet_args)
    def unet_block(x, w1, w2, w3, w_up, w4, w5):
        a = jax.nn.relu(conv(jax.nn.relu(conv(x, w1)), w2))
        d = lax.reduce_window(a, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        m = jax.nn.relu(conv(d, w3))
        u = lax.conv_transpose(m, w_up, (2, 2), "SAME",
                               dimension_numbers=("NHWC", "HWIO", "NHWC"))
        y = jnp.concatenate([a, u], axis=-1)
        return jax.nn.relu(conv(jax.nn.relu(conv(y, w4)), w5))

    # ---------------------------------------------------------------- ResNet

    def batch_norm_train(x, g, b, eps=1e-5):
        mu = jnp.mean(x, axis=(0, 1, 2))
        var = jnp.var(x, axis=(0, 1, 2))
        return (x - mu) * lax.rsqrt(var + eps) * g + b

    def resnet_loss(w, x, labels):
        w0, g0, b0, w1, g1, b1, w2, g2, b2, w3, wf = w
        h = jax.nn.relu(batch_norm_train(conv(x, w0, 2), g0, b0))
        h = lax.reduce_window(h, -jnp.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME")
        r = jax.nn.relu(batch_norm_train(conv(h, w1), g1, b1))
        r = batch_norm_train(conv(r, w2), g2, b2)
        h = jax.nn.relu(h + r)
        h = jax.nn.relu(conv(h, w3, 2))
        logits = jnp.mean(h, axis=(1, 2)) @ wf
        logp = jax.nn.log_softmax(logits)
        return -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=-1))

    resnet = size["resnet"]

    def resnet_args(r):
        b, i, c = resnet["batch"], resnet["image"], resnet["channels"]
        ones, zeros = np.ones(c, f32), np.zeros(c, f32)
        return [normal(r, (b, i, i, 3)), r.integers(0, 10, (b,)).astype(i32),
                normal(r, (7, 7, 3, c), 0.08), ones, zeros,
                normal(r, (3, 3, c, c), 0.06), ones, zeros,
                normal(r, (3, 3, c, c), 0.06), ones, zeros,
                normal(r, (3, 3, c, 2 * c), 0.06), normal(r, (2 * c, 10), 0.1)]

    @model("ResNet stem + basic block training step: conv7x7/2, batch norm (batch stats), "
           "max-pool 3x3/2, residual, SGD; x[{batch},{image},{image},3], {channels} "
           "channels".format(**resnet), resnet_args)
    def resnet_train_step(x, labels, *w):
        loss, grads = jax.value_and_grad(resnet_loss)(list(w), x, labels)
        return (loss, *[p - 0.1 * g for p, g in zip(w, grads)])

    # ---------------------------------------------------------------- ViT

    vit = size["vit"]

    def vit_args(r):
        c = vit
        n = (c["image"] // c["patch"]) ** 2
        a = [normal(r, (c["batch"], c["image"], c["image"], 3)),
             normal(r, (c["patch"], c["patch"], 3, c["d"]), 0.05),
             normal(r, (n + 1, c["d"]), 0.02), normal(r, (c["d"],), 0.02)]
        for _ in range(c["layers"]):
            a += [np.ones(c["d"], f32), np.zeros(c["d"], f32),
                  *[normal(r, (c["d"], c["d"]), c["d"] ** -0.5) for _ in range(4)],
                  np.ones(c["d"], f32), np.zeros(c["d"], f32),
                  normal(r, (c["d"], c["mlp"]), c["d"] ** -0.5), np.zeros(c["mlp"], f32),
                  normal(r, (c["mlp"], c["d"]), c["mlp"] ** -0.5), np.zeros(c["d"], f32)]
        return a

    @model("ViT: {patch}x{patch} patch embedding (strided conv), class token, {layers} pre-LN "
           "layers (d{d}, {heads} heads, mlp {mlp}); x[{batch},{image},{image},3]".format(**vit),
           vit_args)
    def vit_encoder(images, w_patch, pos, cls, *w):
        c = vit
        p = conv(images, w_patch, c["patch"], "VALID")         # [b, 8, 8, d]
        b = p.shape[0]
        x = p.reshape(b, -1, c["d"])
        x = jnp.concatenate([jnp.broadcast_to(cls, (b, 1, c["d"])), x], axis=1) + pos
        for i in range(c["layers"]):
            g1, b1, wq, wk, wv, wo, g2, b2, w1, c1, w2, c2 = w[12 * i: 12 * i + 12]
            x = x + mha(ln(x, g1, b1), wq, wk, wv, wo, c["heads"])
            x = x + jax.nn.gelu(ln(x, g2, b2) @ w1 + c1) @ w2 + c2
        return x[:, 0]

    # ---------------------------------------------------------------- int8

    int8 = size["int8"]

    def int8_args(r):
        m, k, n = int8["m"], int8["k"], int8["n"]
        return [r.integers(-127, 128, (m, k)).astype(np.int8),
                r.integers(-127, 128, (k, n)).astype(np.int8),
                r.uniform(0.001, 0.01, (m, 1)).astype(f32),
                r.uniform(0.001, 0.01, (1, n)).astype(f32),
                normal(r, (n,), 0.1)]

    @model("int8 x int8 -> int32 matmul, per-row/per-column dequantization, bias, relu; "
           "[{m},{k}] x [{k},{n}]".format(**int8), int8_args)
    def int8_matmul(a, b, a_scale, b_scale, bias):
        acc = lax.dot_general(a, b, (((1,), (0,)), ((), ())), preferred_element_type=jnp.int32)
        return jax.nn.relu(acc.astype(f32) * a_scale * b_scale + bias)

    # ---------------------------------------------------------------- f16 LN bwd

    ln16 = size["ln16"]

    def ln16_args(r):
        rows, cols = ln16["rows"], ln16["cols"]
        return [normal(r, (rows, cols), 1, np.float16), np.ones(cols, np.float16),
                np.zeros(cols, np.float16), normal(r, (rows, cols), 1, np.float16)]

    @model("layer norm backward in f16 (statistics in f32): dx, dgamma, dbeta; "
           "x[{rows},{cols}]".format(**ln16), ln16_args)
    def layer_norm_bwd_f16(x, g, b, dy):
        def f(x, g, b):
            xf = x.astype(f32)
            mu = jnp.mean(xf, -1, keepdims=True)
            var = jnp.mean(jnp.square(xf - mu), -1, keepdims=True)
            return ((xf - mu) * lax.rsqrt(var + 1e-5)).astype(np.float16) * g + b

        _, vjp = jax.vjp(f, x, g, b)
        return vjp(dy)

    # ---------------------------------------------------------------- MLP

    mlp = size["mlp"]

    def mlp_args(r):
        w = mlp["width"]
        a = [normal(r, (mlp["batch"], w))]
        for _ in range(mlp["layers"]):
            a += [normal(r, (w, w), w ** -0.5), np.zeros(w, f32)]
        return a

    @model("MLP {layers} x ({width} -> {width}, gelu); x[{batch},{width}]".format(**mlp),
           mlp_args)
    def large_mlp(x, *w):
        for i in range(len(w) // 2):
            x = jax.nn.gelu(x @ w[2 * i] + w[2 * i + 1])
        return x

    # ---------------------------------------------------------------- convnet

    convnet = size["convnet"]

    def convnet_args(r):
        c, w = convnet["channels"], convnet["width"]
        i = convnet["image"]
        return [normal(r, (convnet["batch"], i, i, c)),
                normal(r, (3, 3, c, w), 0.08), normal(r, (w,), 0.1),
                normal(r, (3, 3, w, w), 0.06), normal(r, (w,), 0.1),
                normal(r, (3, 3, w, 2 * w), 0.06), normal(r, (2 * w,), 0.1),
                normal(r, (3, 3, 2 * w, 2 * w), 0.04), normal(r, (2 * w,), 0.1),
                normal(r, (2 * w, 10), 0.1)]

    @model("convnet: 4 conv3x3+bias+relu (two stride 2), global mean, dense; "
           "x[{batch},{image},{image},{channels}], width {width}".format(**convnet),
           convnet_args)
    def large_convnet(x, w1, c1, w2, c2, w3, c3, w4, c4, wf):
        x = jax.nn.relu(conv(x, w1) + c1)
        x = jax.nn.relu(conv(x, w2, 2) + c2)
        x = jax.nn.relu(conv(x, w3) + c3)
        x = jax.nn.relu(conv(x, w4, 2) + c4)
        return jnp.mean(x, axis=(1, 2)) @ wf

    return models


def model_arguments(name, sizes="cpu"):
    """The model's function and its arguments, from the model's fixed seed."""
    import numpy as np
    make_args, fn, summary = _models(sizes)[name]
    seed = sum(name.encode())  # as make_zoo: fixed per model, independent of order
    return fn, [np.asarray(a) for a in make_args(np.random.default_rng(seed))], summary


def time_xla(names, repeats, sizes):
    import jax
    for name in names:
        fn, args, _ = model_arguments(name, sizes)
        compiled = jax.jit(fn, keep_unused=True).lower(*args).compile()
        dev = [jax.device_put(a) for a in args]
        jax.block_until_ready(compiled(*dev))
        times = []
        for _ in range(repeats):
            t = time.perf_counter()
            jax.block_until_ready(compiled(*dev))
            times.append(time.perf_counter() - t)
        print(f"{name}: {statistics.median(times) * 1e3:.2f} ms on {jax.default_backend()}",
              flush=True)


def run_child(name, pb2_dir, dump_dir, out_dir, sizes, platform):
    # make_zoo's child, pointed at these models and this folder.
    make_zoo._models = lambda: _models(sizes)
    make_zoo.ZOO = out_dir
    make_zoo.MAX_SNAPSHOT_BYTES = MAX_SNAPSHOT_BYTES
    make_zoo.run_child(name, pb2_dir, dump_dir, platform)


def generate(names, out_dir, sizes, platform, pb2_dir, jobs):
    """One child per model (at most `jobs` at once), then MANIFEST.tsv and
    ZOO.json (the size set and the platform whose results are recorded)."""
    import json
    os.makedirs(out_dir, exist_ok=True)
    rows = {}
    manifest = os.path.join(out_dir, "MANIFEST.tsv")
    if os.path.exists(manifest) and read_sizes(out_dir) == sizes:
        for line in make_zoo._read(manifest, "r").splitlines()[1:]:  # models not redone now
            rows[line.split("\t")[0]] = line
    # First, so that the snapshots of a run cut short are read with their sizes.
    make_zoo._write(os.path.join(out_dir, "ZOO.json"),
                    json.dumps({"sizes": sizes, "recorded_on": platform}) + "\n")
    failed = []
    with tempfile.TemporaryDirectory(prefix="make_large_zoo.") as tmp:
        if pb2_dir is None:
            pb2_dir = os.path.join(tmp, "pb2")
            os.makedirs(pb2_dir)
            make_zoo.generate_bindings(pb2_dir)
        running = []

        def finish(entry):
            name, proc, log, started = entry
            proc.wait()
            log.seek(0)
            text = log.read()
            log.close()
            if proc.returncode != 0:
                failed.append(name)
                print(f"{name}: FAILED (exit {proc.returncode}) after "
                      f"{time.perf_counter() - started:.1f} s:\n" + text[-3000:], flush=True)
                return
            rows[name] = text.strip().splitlines()[-1]
            print(f"{rows[name]}\t({time.perf_counter() - started:.1f} s)", flush=True)

        for name in names:
            dump_dir = os.path.join(tmp, "dump", name)
            os.makedirs(dump_dir)
            env = dict(os.environ, XLA_FLAGS=" ".join([
                f"--xla_dump_to={dump_dir}", "--xla_dump_hlo_as_proto",
                "--xla_dump_hlo_as_text", "--xla_dump_hlo_snapshots"]))
            if platform == "cpu":
                env["JAX_PLATFORMS"] = "cpu"
            env.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
            log = tempfile.TemporaryFile("w+")
            proc = subprocess.Popen(
                [sys.executable, os.path.abspath(__file__), "--child", name, pb2_dir, dump_dir,
                 out_dir, sizes, platform],
                env=env, stdout=log, stderr=subprocess.STDOUT, text=True)
            running.append((name, proc, log, time.perf_counter()))
            while len(running) >= jobs:
                finish(running.pop(0))
        while running:
            finish(running.pop(0))
    header = "model\tdtypes\tnum_args\tjax_expression\tmax_abs_result"
    ordered = [rows[n] for n in _models(sizes) if n in rows]
    make_zoo._write(manifest, "\n".join([header, *ordered]) + "\n")
    return failed


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("models", nargs="*", help="default: all")
    parser.add_argument("--time", action="store_true",
                        help="only print XLA's median run time per model")
    parser.add_argument("--gpu", action="store_true",
                        help="GPU sizes, compiled and recorded by XLA on the GPU JAX has "
                             "(the snapshot's result is XLA:GPU's); see SIZES")
    parser.add_argument("--sizes", choices=sorted(SIZES),
                        help="the size set without the platform change (--gpu sets gpu)")
    parser.add_argument("--out", default=ZOO, help="folder to write (default tests/jax_large/zoo)")
    parser.add_argument("--pb2-dir",
                        help="python bindings of hlo/*.proto already made (protoc output, or "
                             "a folder holding hlo_descriptors.binpb); default: made now, "
                             "from protoc or tests/jax/hlo_descriptors.binpb")
    parser.add_argument("--jobs", type=int, default=1, help="children at once (default 1)")
    parser.add_argument("--child", nargs=6, help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.child:
        run_child(*opts.child)
        return
    sizes = opts.sizes or ("gpu" if opts.gpu else "cpu")
    platform = "gpu" if opts.gpu else "cpu"
    if platform == "cpu":
        os.environ["JAX_PLATFORMS"] = "cpu"
    names = list(_models(sizes))
    chosen = opts.models or names
    unknown = sorted(set(chosen) - set(names))
    if unknown:
        parser.error("unknown models: " + ", ".join(unknown))
    if opts.time:
        time_xla(chosen, 20, sizes)
        return
    failed = generate(chosen, os.path.abspath(opts.out), sizes, platform, opts.pb2_dir,
                      max(1, opts.jobs))
    if failed:
        print("failed: " + ", ".join(failed), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
