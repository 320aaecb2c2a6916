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
"""

import functools
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


def _signature(leaf):
    if isinstance(leaf, (jax.Array, np.ndarray, np.generic, jax.ShapeDtypeStruct)):
        return (tuple(leaf.shape), str(leaf.dtype), getattr(leaf, "weak_type", False))
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
            executable = hloc.compile(proto, backend=self._backend, **self._compile_options)
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
            return self._dispatch(*args, **kwargs)
        return self._call_from_python(args, kwargs)

    def _call_from_python(self, args, kwargs):
        (executable, out_tree, _), leaves = self._compiled(args, kwargs)
        inputs = []
        for spec, leaf in zip(executable.parameters, leaves):
            if isinstance(leaf, jax.Array):
                inputs.append(leaf)
            else:
                # Python scalars and numpy values take the parameter's dtype,
                # as JAX's weak typing would give them.
                inputs.append(np.asarray(leaf, dtype=spec.dtype))
        outputs = executable(*inputs)
        # One batched transfer for every result; on the CPU JAX takes hloc's
        # (aligned) memory without a copy.
        return jax.tree_util.tree_unflatten(out_tree, jax.device_put(outputs))

    def executable(self, *args, **kwargs):
        """The hloc.Executable these arguments run on (compiling it if needed)."""
        (executable, _, _), _ = self._compiled(args, kwargs)
        return executable


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
    if jitted._dispatch is None:
        return jitted
    # On the FFI path the caller gets JAX's own jitted function, so a call
    # never enters Python code; hloc's parts ride along as attributes.
    # `f.lower(...)` is then JAX's lowering of the call (one custom call);
    # `f.hloc.lower(...)` is the function's own lowering, what hloc compiles.
    dispatch = jitted._dispatch
    dispatch.executable = jitted.executable
    dispatch.hloc = jitted
    return dispatch
