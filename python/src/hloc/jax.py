"""Run JAX functions on hloc.

    import hloc.jax

    @hloc.jax.jit
    def f(x, y):
        return jnp.tanh(x @ y)

    f(x, y)   # lowered by JAX to HLO, compiled and run by hloc

``hloc.jax.jit(fn, backend=..., static_argnums=..., static_argnames=...,
donate_argnums=...)`` behaves like ``jax.jit(fn)`` for the caller: the same
pytrees in and out, ``jax.Array`` results. Each new input signature (pytree
structure, shapes, dtypes, static argument values) is lowered once with JAX
(``jax.jit(fn).lower(...)`` to an HloModuleProto) and compiled once by hloc.

How a call reaches hloc. When JAX runs on the CPU, the compiled hloc
executable is wrapped in a one-op JAX program: a custom call
(``jax.ffi.ffi_call``) to hloc's XLA FFI handler, which runs the executable on
the buffers XLA hands it (python/xla_ffi_handler.h). JAX's own C++ dispatch
then does the per-call work (argument checks, the signature cache, result
arrays) and no array is copied; every op of the module runs on hloc. Where
that is not possible (JAX on a GPU, or a build without jaxlib's FFI headers)
a call goes through ``hloc.Executable`` from Python and the results are
handed to JAX with ``jax.device_put``, which costs more per call.

Several devices. A function whose lowering spans several devices (it uses
``shard_map``, or ``pmap``, which JAX 0.10 lowers through shard_map; its
arguments may be ``jax.Array``s with a ``NamedSharding`` on a mesh of
``--xla_force_host_platform_device_count=N`` CPU devices) is compiled with
``hloc.compile(..., devices=N)``, N read from JAX's lowering. A call gathers
each argument to one global numpy array, runs the N devices on hloc (host
backend: one thread each), and returns ``jax.Array``s placed with the
output shardings JAX's lowering gives (``jax.device_put``). This path goes
through Python on every call, and in a process with more than one JAX device
every call of an ``hloc.jax.jit`` function first looks up, in Python, whether
its signature spans several devices. A plain ``jax.jit`` function over
sharded inputs (no shard_map: the lowering carries sharding annotations on
global shapes) goes through hloc's SPMD partitioner
(passes/sharding/spmd_partitioner.h); its results are placed on JAX's mesh
as the partitioner sharded them, and ``executable.report`` lists the
collectives it made and any op it ran replicated for want of a rule.
"""

import functools
import re
import threading
import weakref

import jax
import numpy as np

import hloc
from hloc import _hloc

__all__ = ["jit"]

_FFI_TARGET = "hloc_run_executable"
_ffi_lock = threading.Lock()
_ffi_state = {}


def _ffi_available():
    """Registers hloc's FFI handler with JAX once; False where it can't serve."""
    with _ffi_lock:
        if "ok" not in _ffi_state:
            handler = _hloc.xla_ffi_handler()
            ok = handler is not None and jax.default_backend() == "cpu"
            if ok:
                jax.ffi.register_ffi_target(_FFI_TARGET, handler, platform="cpu")
            _ffi_state["ok"] = ok
        return _ffi_state["ok"]


def _abstract(leaf):
    if isinstance(leaf, jax.core.Tracer):
        return jax.ShapeDtypeStruct(leaf.shape, leaf.dtype, weak_type=leaf.aval.weak_type)
    return leaf


def _unregister_all(handles):
    for handle in handles:
        _hloc.xla_ffi_unregister(handle)


def _devices_of(leaf):
    """How many devices a jax.Array lies on (1 for everything else)."""
    if isinstance(leaf, jax.Array) and not isinstance(leaf, jax.core.Tracer):
        return len(leaf.sharding.device_set)
    return 1


def _signature(leaf):
    if isinstance(leaf, jax.Array) and not isinstance(leaf, jax.core.Tracer):
        return (tuple(leaf.shape), str(leaf.dtype), getattr(leaf, "weak_type", False),
                _devices_of(leaf))
    if isinstance(leaf, (jax.Array, np.ndarray, np.generic, jax.ShapeDtypeStruct)):
        return (tuple(leaf.shape), str(leaf.dtype), getattr(leaf, "weak_type", False), 1)
    # Python scalars: JAX gives them weak types; the value is not part of the
    # signature.
    return (type(leaf).__name__,)


class _Jitted:
    def __init__(self, fn, backend, static_argnums, static_argnames, donate_argnums,
                 compile_options):
        if isinstance(static_argnums, int):
            static_argnums = (static_argnums,)
        if isinstance(static_argnames, str):
            static_argnames = (static_argnames,)
        if isinstance(donate_argnums, int):
            donate_argnums = (donate_argnums,)
        self._fn = fn
        self._backend = backend
        self._static_argnums = tuple(static_argnums)
        self._static_argnames = tuple(static_argnames)
        self._donate_argnums = tuple(donate_argnums)
        self._compile_options = compile_options
        self._jax_jit = jax.jit(fn, static_argnums=self._static_argnums,
                                static_argnames=self._static_argnames,
                                donate_argnums=self._donate_argnums, keep_unused=True)
        self._cache = {}
        self._lock = threading.Lock()
        # Handles of executables the FFI handler may run, dropped with self.
        self._ffi_handles = []
        self._ffi_finalizer = weakref.finalize(self, _unregister_all, self._ffi_handles)
        self._dispatch = None
        if _ffi_available():
            self._dispatch = jax.jit(self._trace_to_ffi_call,
                                     static_argnums=self._static_argnums,
                                     static_argnames=self._static_argnames,
                                     donate_argnums=self._donate_argnums)
        functools.update_wrapper(self, fn)

    def _split(self, args, kwargs):
        nargs = len(args)
        static_nums = {i % nargs if nargs else i for i in self._static_argnums}
        dynamic_args = tuple(a for i, a in enumerate(args) if i not in static_nums)
        static_args = tuple((i, args[i]) for i in sorted(static_nums) if i < nargs)
        dynamic_kwargs = {k: v for k, v in kwargs.items() if k not in self._static_argnames}
        static_kwargs = tuple(sorted((k, v) for k, v in kwargs.items()
                                     if k in self._static_argnames))
        return dynamic_args, dynamic_kwargs, static_args, static_kwargs

    def lower(self, *args, **kwargs):
        """JAX's Lowered for these arguments (what hloc compiles)."""
        return self._jax_jit.lower(*args, **kwargs)

    def _compiled(self, args, kwargs):
        dynamic_args, dynamic_kwargs, static_args, static_kwargs = self._split(args, kwargs)
        leaves, treedef = jax.tree_util.tree_flatten((dynamic_args, dynamic_kwargs))
        try:
            key = (treedef, tuple(_signature(leaf) for leaf in leaves), static_args,
                   static_kwargs)
            hash(key)
        except TypeError as e:
            raise ValueError(f"static arguments must be hashable: {e}") from None
        with self._lock:
            entry = self._cache.get(key)
        if entry is None:
            lowered = self._jax_jit.lower(*args, **kwargs)
            if lowered.in_tree != treedef:
                raise hloc.Error(
                    f"hloc.jax.jit: JAX lowered arguments as {lowered.in_tree}, "
                    f"expected {treedef}")
            proto = lowered.compiler_ir("hlo").as_serialized_hlo_module_proto()
            devices = _lowered_devices(lowered)
            options = dict(self._compile_options)
            if devices > 1:
                options["devices"] = devices
                if self._backend == "auto":
                    options["backend"] = "host"
            options.setdefault("backend", self._backend)
            callbacks = _host_callbacks(lowered)
            if callbacks:
                options["custom_calls"] = {
                    _CALLBACK_TARGET: hloc.CustomCall(_CallbackDispatch(callbacks),
                                                      pass_backend_config=True)}
            executable = hloc.compile(proto, **options)
            out_avals = jax.tree_util.tree_leaves(lowered.out_info)
            if len(out_avals) != len(executable.results):
                raise hloc.Error(
                    f"hloc.jax.jit: JAX's lowering has {len(out_avals)} results, the hloc "
                    f"executable {len(executable.results)}")
            entry = (executable, lowered.out_tree, out_avals)
            with self._lock:
                self._cache[key] = entry
        return entry, leaves

    def _trace_to_ffi_call(self, *args, **kwargs):
        """What JAX traces for one input signature: fn lowered and compiled by
        hloc, then one custom call that runs the hloc executable."""
        dynamic_args, dynamic_kwargs, _, _ = self._split(args, kwargs)
        operands = jax.tree_util.tree_leaves((dynamic_args, dynamic_kwargs))
        abstract_args, abstract_kwargs = jax.tree_util.tree_map(_abstract, (args, kwargs))
        (executable, out_tree, out_avals), _ = self._compiled(abstract_args, abstract_kwargs)
        if not out_avals:
            return jax.tree_util.tree_unflatten(out_tree, [])
        handle = executable._native.xla_ffi_register()
        self._ffi_handles.append(handle)
        # Results hloc computes in a donated argument's memory: declared to
        # XLA, which then hands the handler that memory for the result.
        aliases = {k: j for j, k in enumerate(executable._native.aliased_arguments) if k >= 0}
        call = jax.ffi.ffi_call(
            _FFI_TARGET, [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in out_avals],
            input_output_aliases=aliases or None)
        results = call(*operands, executable=np.int64(handle))
        return jax.tree_util.tree_unflatten(out_tree, results)

    def __call__(self, *args, **kwargs):
        if self._dispatch is not None:
            (executable, _, _), _ = self._compiled(args, kwargs)
            if executable.stats["devices"] == 1:
                return self._dispatch(*args, **kwargs)
        return self._call_from_python(args, kwargs)

    def _call_from_python(self, args, kwargs):
        (executable, out_tree, out_avals), leaves = self._compiled(args, kwargs)
        inputs = []
        for spec, leaf in zip(executable.parameters, leaves):
            if isinstance(leaf, jax.Array):
                inputs.append(leaf)
            else:
                # Python scalars and numpy values take the parameter's dtype,
                # as JAX's weak typing would give them.
                inputs.append(np.asarray(leaf, dtype=spec.dtype))
        if executable.stats["devices"] > 1:
            return self._call_on_devices(executable, out_tree, out_avals, inputs)
        outputs = executable(*inputs)
        # Results a cuda executable left on the GPU (its arguments were JAX's
        # GPU arrays) become jax.Arrays through DLPack, without a copy; the
        # run has finished when the call returns. The rest go in one batched
        # transfer; on the CPU JAX takes hloc's (aligned) memory without a copy.
        outputs = [o if isinstance(o, np.ndarray) else jax.dlpack.from_dlpack(o) for o in outputs]
        return jax.tree_util.tree_unflatten(out_tree, jax.device_put(outputs))

    @staticmethod
    def _call_on_devices(executable, out_tree, out_avals, inputs):
        """Global arrays in (a sharded jax.Array is gathered), global arrays
        out, placed as JAX's lowering says its outputs are sharded."""
        arrays = [np.asarray(x) if isinstance(x, jax.Array) else x for x in inputs]
        outputs = executable(*arrays)
        shardings = getattr(executable, "_jax_out_shardings", None)
        if shardings is None:
            shardings = _output_shardings(executable, out_avals)
            executable._jax_out_shardings = shardings
        placed = [jax.device_put(o, s) if s is not None else jax.device_put(o)
                  for o, s in zip(outputs, shardings)]
        return jax.tree_util.tree_unflatten(out_tree, placed)

    def executable(self, *args, **kwargs):
        """The hloc.Executable these arguments run on (compiling it if needed)."""
        (executable, _, _), _ = self._compiled(args, kwargs)
        return executable


def _output_shardings(executable, out_avals):
    """The shardings JAX gives a program's outputs: those its lowering names,
    else (JAX leaves them to XLA's propagation) the shard_map's out_specs on
    its mesh over the first devices, in order; None where neither says."""
    named = [getattr(aval, "sharding", None) for aval in out_avals]
    named = [s if isinstance(s, jax.sharding.Sharding) else None for s in named]
    mesh = executable.mesh_shardings
    if all(s is not None for s in named) or mesh is None:
        return named
    names, sizes = mesh["axis_names"], mesh["axis_sizes"]
    devices = np.array(jax.devices()[:int(np.prod(sizes))]).reshape(sizes)
    jax_mesh = jax.sharding.Mesh(devices, tuple(names))

    def spec(dims):
        entries = []
        for axes in dims:
            if not axes:
                entries.append(None)
            elif len(axes) == 1:
                entries.append(names[axes[0]])
            else:
                entries.append(tuple(names[a] for a in axes))
        while entries and entries[-1] is None:
            entries.pop()
        return jax.sharding.PartitionSpec(*entries)

    return [s if s is not None else jax.sharding.NamedSharding(jax_mesh, spec(dims))
            for s, dims in zip(named, mesh["results"])]


# The custom call through which JAX's CPU lowering calls back into Python
# (jax.debug.print, jax.pure_callback, io_callback); its backend_config
# names the callback by its index in the lowering's host callbacks.
_CALLBACK_TARGET = "xla_ffi_python_cpu_callback"
_CALLBACK_INDEX = re.compile(r"\bindex\s*=\s*(\d+)")


def _host_callbacks(lowered):
    """The Python functions JAX's lowering calls back, by index."""
    try:
        return list(lowered._lowering.compile_args.get("host_callbacks", ()))
    except (AttributeError, TypeError):
        return []


def _without_token(fn):
    """The callback itself where JAX wrapped it to pass an ordered effect's
    token through (``fn(token, *args) -> (token, *results)``): hloc hands a
    callback its arrays only, tokens being ordering, not data."""
    code = getattr(fn, "__code__", None)
    if code is not None and "callback_without_token" in code.co_freevars and fn.__closure__:
        return fn.__closure__[code.co_freevars.index("callback_without_token")].cell_contents
    return fn


class _CallbackDispatch:
    """Runs callback `index` (from the custom call's backend_config) of one
    lowering; its operands are the custom call's arrays (tokens skipped),
    its results the custom call's arrays, in order."""

    def __init__(self, callbacks):
        self._callbacks = [_without_token(fn) for fn in callbacks]

    def __call__(self, *operands, backend_config):
        match = _CALLBACK_INDEX.search(backend_config)
        if match is None or int(match.group(1)) >= len(self._callbacks):
            raise hloc.Error(f"hloc.jax.jit: no host callback for backend_config "
                             f"{backend_config!r} ({len(self._callbacks)} in the lowering)")
        return tuple(self._callbacks[int(match.group(1))](*operands))


def _lowered_devices(lowered):
    """The number of devices JAX lowered for (its mesh's, for shard_map)."""
    try:
        return int(lowered._lowering.compile_args.get("num_devices", 1))
    except (AttributeError, TypeError):
        return 1


def jit(fn=None, *, backend="auto", static_argnums=(), static_argnames=(), donate_argnums=(),
        **compile_options):
    """Like ``jax.jit``, but compiled and run by hloc.

    backend: "auto", "host", "cuda" or "interpreter". Other keyword arguments
    (pipeline, disabled_passes, dump_dir, allow_interpreter_ops, num_threads)
    go to ``hloc.compile``. Donated arguments are declared to JAX's lowering,
    so the module carries the aliasing, and hloc computes a result in a
    donated argument's memory where its program allows.

    The result is called like ``jax.jit(fn)``; ``.executable(*args)`` gives
    the ``hloc.Executable`` those arguments run on.
    """
    if fn is None:
        return functools.partial(jit, backend=backend, static_argnums=static_argnums,
                                 static_argnames=static_argnames,
                                 donate_argnums=donate_argnums, **compile_options)
    jitted = _Jitted(fn, backend, static_argnums, static_argnames, donate_argnums,
                     compile_options)
    if jitted._dispatch is None or jax.device_count() > 1:
        # With several JAX devices a call may span them (shard_map, sharded
        # inputs): each call then first finds, in Python, how its signature
        # was compiled.
        return jitted
    # On the FFI path the caller gets JAX's own jitted function, so a call
    # never enters Python code; hloc's parts ride along as attributes.
    # `f.lower(...)` is then JAX's lowering of the call (one custom call);
    # `f.hloc.lower(...)` is the function's own lowering, what hloc compiles.
    dispatch = jitted._dispatch
    dispatch.executable = jitted.executable
    dispatch.hloc = jitted
    return dispatch
