#!/usr/bin/env python3
"""Regenerates tests/tf/zoo/: small TensorFlow/Keras models as TF emits HLO.

Each model is a tf.function(jit_compile=True); its module is
experimental_get_compiler_ir(*args)(stage='hlo_serialized') (an
xla.HloModuleProto, as tf2xla builds it before any XLA pass). For every model
this writes, into zoo/:
  NAME.snapshot.pb   xla.HloSnapshot: the module, the arguments in
                     entry-parameter order (explicit arguments, then the
                     captured tf.Variables TF appends as trailing parameters,
                     with their values before the call) and TF's result: the
                     function's outputs, then the updated variables (the
                     module's may-alias outputs), as one tuple literal
  NAME.hlo.txt       the same module as HLO text (stage='hlo'), for reading
and MANIFEST.tsv for all of them.

TensorFlow is not needed by the tests (it is not in CI): the generated files
are committed. Usage (tensorflow-cpu 2.21, protoc on PATH):
  ~/.cache/hloc-tf-venv/bin/python tests/tf/make_tf_zoo.py          # all
  ~/.cache/hloc-tf-venv/bin/python tests/tf/make_tf_zoo.py tf_mlp   # some
"""

import argparse
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
ZOO = os.path.join(HERE, "zoo")
MAX_SNAPSHOT_BYTES = 1 << 20

# The literal encoding and the proto bindings are the JAX zoo's.
sys.path.insert(0, os.path.join(REPO, "tests", "jax"))
import make_zoo  # noqa: E402


def _models():
    """name -> (build(rng) -> (tf.function, [args]), one-line summary)."""
    import numpy as np
    import tensorflow as tf
    import keras

    f32 = np.float32

    def normal(rng, shape, scale=1.0):
        return (rng.standard_normal(shape) * scale).astype(f32)

    def call_layer(layer, *extra_inputs, training=False):
        @tf.function(jit_compile=True)
        def fn(*xs):
            return layer(*xs, training=training)
        return fn

    models = {}

    def model(summary):
        def register(build):
            models[build.__name__] = (build, summary)
            return build
        return register

    @model("keras Sequential Dense(64,relu)->Dense(10,softmax); x[8,32]; weights captured")
    def tf_mlp(rng):
        net = keras.Sequential([keras.Input((32,)), keras.layers.Dense(64, activation="relu"),
                                keras.layers.Dense(10, activation="softmax")])
        return call_layer(net), [normal(rng, (8, 32))]

    @model("keras Conv2D(8,3,same)+BatchNorm(inference)+ReLU+MaxPool2D+Flatten+Dense(4); x[2,12,12,3]")
    def tf_cnn_bn_pool(rng):
        net = keras.Sequential([
            keras.Input((12, 12, 3)), keras.layers.Conv2D(8, 3, padding="same"),
            keras.layers.BatchNormalization(), keras.layers.ReLU(),
            keras.layers.MaxPool2D(2), keras.layers.Flatten(), keras.layers.Dense(4)])
        bn = net.layers[1]
        bn.moving_mean.assign(normal(rng, (8,), 0.1))
        bn.moving_variance.assign(rng.uniform(0.5, 1.5, (8,)).astype(f32))
        bn.gamma.assign(1 + normal(rng, (8,), 0.1))
        bn.beta.assign(normal(rng, (8,), 0.1))
        return call_layer(net), [normal(rng, (2, 12, 12, 3))]

    @model("keras DepthwiseConv2D(3) forward and its gradients (input, kernel) by GradientTape; x[2,8,8,4]")
    def tf_depthwise_grad(rng):
        layer = keras.layers.DepthwiseConv2D(3, padding="same", depth_multiplier=2)
        layer.build((None, 8, 8, 4))

        @tf.function(jit_compile=True)
        def fn(x):
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = layer(x)
                loss = tf.reduce_sum(y * y)
            gx, gk = tape.gradient(loss, [x, layer.kernel])
            return y, gx, gk
        return fn, [normal(rng, (2, 8, 8, 4))]

    @model("keras Conv2D(8,3,groups=2) forward and kernel gradient; x[2,8,8,4]")
    def tf_grouped_conv(rng):
        layer = keras.layers.Conv2D(8, 3, groups=2, padding="valid")
        layer.build((None, 8, 8, 4))

        @tf.function(jit_compile=True)
        def fn(x):
            with tf.GradientTape() as tape:
                y = layer(x)
                loss = tf.reduce_sum(tf.square(y))
            return y, tape.gradient(loss, layer.kernel)
        return fn, [normal(rng, (2, 8, 8, 4))]

    @model("keras LSTM(16) over x[2,6,8] (a tf.while loop), last state")
    def tf_lstm(rng):
        net = keras.Sequential([keras.Input((6, 8)), keras.layers.LSTM(16)])
        return call_layer(net), [normal(rng, (2, 6, 8))]

    @model("keras GRU(12, return_sequences) over x[2,5,6], unrolled")
    def tf_gru(rng):
        net = keras.Sequential([keras.Input((5, 6)),
                                keras.layers.GRU(12, return_sequences=True, unroll=True)])
        return call_layer(net), [normal(rng, (2, 5, 6))]

    @model("train step: Dense(16,tanh)->Dense(1), MSE, GradientTape, SGD(momentum) apply; x[8,4] y[8,1]")
    def tf_train_step(rng):
        net = keras.Sequential([keras.Input((4,)), keras.layers.Dense(16, activation="tanh"),
                                keras.layers.Dense(1)])
        opt = keras.optimizers.SGD(learning_rate=0.1, momentum=0.9)
        opt.build(net.trainable_variables)

        @tf.function(jit_compile=True)
        def fn(x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(net(x, training=True) - y))
            grads = tape.gradient(loss, net.trainable_variables)
            opt.apply_gradients(zip(grads, net.trainable_variables))
            return loss
        return fn, [normal(rng, (8, 4)), normal(rng, (8, 1))]

    @model("(softmax(x), argmax(x,-1), argmin(x,0)): argmax's input also feeds softmax; x[6,10]")
    def tf_argmax_softmax(rng):
        @tf.function(jit_compile=True)
        def fn(x):
            return tf.nn.softmax(x), tf.argmax(x, axis=-1), tf.argmin(x, axis=0, output_type=tf.int32)
        return fn, [normal(rng, (6, 10))]

    @model("x + stateless_uniform([4,8], seed) and stateless_normal (Philox); seed s32[2]")
    def tf_stateless_random(rng):
        @tf.function(jit_compile=True)
        def fn(x, seed):
            u = tf.random.stateless_uniform([4, 8], seed=seed)
            n = tf.random.stateless_normal([4, 8], seed=seed + 1)
            return x + u, n
        return fn, [normal(rng, (4, 8)), np.array([7, 42], np.int32)]

    @model("reduce_sum/size of boolean_mask(x, x>0) (dynamic shape: set-dimension-size); x[16]")
    def tf_boolean_mask(rng):
        @tf.function(jit_compile=True)
        def fn(x):
            kept = tf.boolean_mask(x, x > 0)
            return tf.reduce_sum(kept), tf.size(kept)
        return fn, [normal(rng, (16,))]

    @model("cholesky(a a^T + 4I), triangular_solve, matmul; a[6,6] b[6,3]")
    def tf_linalg(rng):
        @tf.function(jit_compile=True)
        def fn(a, b):
            spd = tf.matmul(a, a, transpose_b=True) + 4.0 * tf.eye(6)
            l = tf.linalg.cholesky(spd)
            return l, tf.linalg.triangular_solve(l, b, lower=True)
        return fn, [normal(rng, (6, 6)), normal(rng, (6, 3))]

    @model("keras Embedding(50,8) lookup (gather) + mean over sequence; ids s32[4,7]")
    def tf_embedding(rng):
        net = keras.Sequential([keras.Input((7,), dtype="int32"), keras.layers.Embedding(50, 8),
                                keras.layers.GlobalAveragePooling1D()])
        return call_layer(net), [rng.integers(0, 50, (4, 7)).astype(np.int32)]

    @model("keras LayerNormalization over last axis; x[4,5,32]")
    def tf_layer_norm(rng):
        layer = keras.layers.LayerNormalization()
        layer.build((None, 5, 32))
        layer.gamma.assign(1 + normal(rng, (32,), 0.1))
        layer.beta.assign(normal(rng, (32,), 0.1))
        return call_layer(layer), [normal(rng, (4, 5, 32), 2.0) + 1]

    @model("keras MultiHeadAttention(2 heads, key_dim 8) self-attention with causal mask; x[2,5,16]")
    def tf_attention(rng):
        layer = keras.layers.MultiHeadAttention(num_heads=2, key_dim=8)

        @tf.function(jit_compile=True)
        def fn(x):
            return layer(x, x, use_causal_mask=True)
        x = normal(rng, (2, 5, 16))
        layer(x, x)  # builds the weights outside the traced function
        return fn, [x]

    @model("tf.cond on sum(x)>0 (conditional), cumsum, top_k(3), sort; x[4,10]")
    def tf_cond_topk(rng):
        @tf.function(jit_compile=True)
        def fn(x):
            y = tf.cond(tf.reduce_sum(x) > 0, lambda: tf.math.cumsum(x, axis=1),
                        lambda: tf.math.cumsum(x, axis=0, reverse=True))
            vals, idx = tf.math.top_k(y, 3)
            return vals, idx, tf.sort(x, axis=-1, direction="DESCENDING")
        return fn, [normal(rng, (4, 10))]

    @model("keras mixed_bfloat16 Dense(32,gelu)->Dense(8); x[4,16] (bf16 compute, f32 variables)")
    def tf_mixed_bf16(rng):
        policy = keras.mixed_precision.Policy("mixed_bfloat16")
        net = keras.Sequential([
            keras.Input((16,)), keras.layers.Dense(32, activation="gelu", dtype=policy),
            keras.layers.Dense(8, dtype=policy), keras.layers.Activation("linear", dtype="float32")])
        return call_layer(net), [normal(rng, (4, 16))]

    @model("tf.image.resize bilinear 5x5->8x8, tensor_scatter_nd_add, reduce_max; x[1,5,5,2]")
    def tf_resize_scatter(rng):
        @tf.function(jit_compile=True)
        def fn(x, idx, upd):
            r = tf.image.resize(x, [8, 8], method="bilinear")
            s = tf.tensor_scatter_nd_add(tf.reshape(r, [64, 2]), idx, upd)
            return r, s, tf.reduce_max(s, axis=0)
        return fn, [normal(rng, (1, 5, 5, 2)),
                    np.array([[3], [7], [3], [63]], np.int32), normal(rng, (4, 2))]

    @model("train step: Conv1D(4,3)+GlobalMaxPool1D+Dense(2), softmax cross-entropy, Adam apply; x[4,6,3]")
    def tf_adam_step(rng):
        net = keras.Sequential([keras.Input((6, 3)), keras.layers.Conv1D(4, 3, activation="relu"),
                                keras.layers.GlobalMaxPooling1D(), keras.layers.Dense(2)])
        opt = keras.optimizers.Adam(learning_rate=0.01)
        opt.build(net.trainable_variables)

        @tf.function(jit_compile=True)
        def fn(x, labels):
            with tf.GradientTape() as tape:
                logits = net(x, training=True)
                loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits))
            grads = tape.gradient(loss, net.trainable_variables)
            opt.apply_gradients(zip(grads, net.trainable_variables))
            return loss, logits
        return fn, [normal(rng, (4, 6, 3)), np.array([0, 1, 1, 0], np.int32)]

    @model("unsorted_segment_sum/max (scatter), einsum 'bij,bjk->bik', cumprod; x[6,4] seg s32[6]")
    def tf_segments_einsum(rng):
        @tf.function(jit_compile=True)
        def fn(x, seg, a, b):
            return (tf.math.unsorted_segment_sum(x, seg, 3), tf.math.unsorted_segment_max(x, seg, 3),
                    tf.einsum("bij,bjk->bik", a, b), tf.math.cumprod(x, axis=0, exclusive=True))
        return fn, [normal(rng, (6, 4)), np.array([0, 2, 0, 1, 2, 2], np.int32),
                    normal(rng, (2, 3, 4)), normal(rng, (2, 4, 5))]

    return models


def run_model(name, xla, hlo_pb2):
    import numpy as np
    import tensorflow as tf
    import keras

    build, summary = _models()[name]
    seed = sum(name.encode())
    keras.utils.set_random_seed(seed)
    fn, args = build(np.random.default_rng(seed))
    targs = [tf.constant(a) for a in args]
    module_bytes = fn.experimental_get_compiler_ir(*targs)(stage="hlo_serialized")
    text = fn.experimental_get_compiler_ir(*targs)(stage="hlo")
    module = hlo_pb2.HloModuleProto.FromString(module_bytes)

    # Captured variables: TF passes them after the explicit arguments, in the
    # concrete function's capture order. Their values before the call.
    concrete = fn.get_concrete_function(*targs)
    by_handle = {}
    for v in concrete.variables:
        by_handle[id(v.handle)] = v
    captured = []
    for handle in concrete.captured_inputs:
        v = by_handle.get(id(handle))
        assert v is not None, f"{name}: a capture that is not a variable: {handle}"
        captured.append(v)
    all_args = list(args) + [np.array(v.numpy()) for v in captured]

    entry = [c for c in module.computations if c.id == module.entry_computation_id]
    assert len(entry) == 1, name
    params = sorted((i for i in entry[0].instructions if i.opcode == "parameter"),
                    key=lambda i: i.parameter_number)
    assert [p.parameter_number for p in params] == list(range(len(all_args))), (
        name, len(params), len(all_args))
    snapshot = hlo_pb2.HloSnapshot()
    for i, (param, arg) in enumerate(zip(params, all_args)):
        lit = snapshot.arguments.add()
        make_zoo._fill_literal(xla, lit, arg)
        make_zoo._check_shape(xla, param.shape, lit.shape, f"{name} param {i}")
        make_zoo._check_shape(xla, module.host_program_shape.parameters[i], lit.shape,
                              f"{name} program param {i}")

    outputs = fn(*targs)  # runs and updates the variables
    flat = [np.asarray(o) for o in tf.nest.flatten(outputs)]
    # Updated variables are the module's may-alias outputs {k} -> parameter p.
    result_shape = module.host_program_shape.result
    tuple_result = result_shape.element_type == xla.TUPLE
    n_out = len(result_shape.tuple_shapes) if tuple_result else 1
    values = flat + [None] * (n_out - len(flat))
    for alias in module.input_output_alias.entries:
        k = alias.output_shape_index[0]
        p = alias.parameter_number
        assert k >= len(flat) and values[k] is None, (name, k)
        assert p >= len(args), (name, p)
        values[k] = np.array(captured[p - len(args)].numpy())
    assert all(v is not None for v in values), (name, n_out, len(flat))
    snapshot.result.CopyFrom(make_zoo._literal_for(xla, result_shape, values))
    # Metadata source paths: base names only, so the files do not depend on
    # where TensorFlow is installed.
    for comp in module.computations:
        for inst in comp.instructions:
            if inst.metadata.source_file:
                inst.metadata.source_file = os.path.basename(inst.metadata.source_file)
    snapshot.hlo.hlo_module.CopyFrom(module)
    snapshot.execution_platform = "cpu"
    data = snapshot.SerializeToString(deterministic=True)
    assert len(data) < MAX_SNAPSHOT_BYTES, (name, len(data))
    make_zoo._write(os.path.join(ZOO, name + ".snapshot.pb"), data)
    import re
    text = re.sub(r'source_file="[^"]*/', 'source_file="', text)
    make_zoo._write(os.path.join(ZOO, name + ".hlo.txt"), text)
    max_abs = max(float(np.max(np.abs(v.astype(np.float64)))) if v.size else 0.0
                  for v in values)
    dtypes = sorted({np.asarray(a).dtype.name for a in all_args})
    return "\t".join([name, ",".join(dtypes), str(len(args)), str(len(captured)),
                      str(len(module.input_output_alias.entries)), summary,
                      f"{max_abs:.6g}"])


def check_known_fields(paths):
    """Every field of each snapshot must be known to hloc's hlo/hlo.proto."""
    with tempfile.TemporaryDirectory(prefix="make_tf_zoo.") as tmp:
        make_zoo.generate_bindings(tmp)
        sys.path.insert(0, tmp)
        from hlo import hlo_pb2
        for path in paths:
            snap = hlo_pb2.HloSnapshot.FromString(make_zoo._read(path))
            unknown = make_zoo._unknown_fields(snap, "HloSnapshot")
            assert not unknown, f"{path}: fields unknown to hlo.proto at " + ", ".join(unknown[:8])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("models", nargs="*", help="default: all")
    parser.add_argument("--check", action="store_true", help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.check:
        check_known_fields(opts.models)
        return
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
    names = list(_models())
    chosen = opts.models or names
    unknown = sorted(set(chosen) - set(names))
    if unknown:
        parser.error("unknown models: " + ", ".join(unknown))
    os.makedirs(ZOO, exist_ok=True)
    rows = {}
    manifest = os.path.join(ZOO, "MANIFEST.tsv")
    if os.path.exists(manifest):
        for line in make_zoo._read(manifest, "r").splitlines()[1:]:
            rows[line.split("\t")[0]] = line
    # TensorFlow registers its own xla.* protos, so the snapshots are built
    # with those, and a child without TensorFlow checks them against hloc's.
    from tensorflow.compiler.xla import xla_data_pb2 as xla
    from tensorflow.compiler.xla.service import hlo_pb2
    for name in chosen:
        rows[name] = run_model(name, xla, hlo_pb2)
        print(rows[name], flush=True)
    subprocess.run([sys.executable, os.path.abspath(__file__), "--check",
                    *[os.path.join(ZOO, n + ".snapshot.pb") for n in chosen]], check=True)
    header = ("model\tdtypes\tnum_args\tnum_captured\tnum_may_alias\ttf_expression"
              "\tmax_abs_result")
    make_zoo._write(manifest, "\n".join([header, *[rows[n] for n in names if n in rows]]) + "\n")


if __name__ == "__main__":
    main()
