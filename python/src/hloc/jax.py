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
"""

import functools
import threading

import jax
import numpy as np

import hloc

__all__ = ["jit"]


def _signature(leaf):
    if isinstance(leaf, (jax.Array, np.ndarray, np.generic)):
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
            entry = (executable, lowered.out_tree)
            with self._lock:
                self._cache[key] = entry
        return entry, leaves

    def __call__(self, *args, **kwargs):
        (executable, out_tree), leaves = self._compiled(args, kwargs)
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
        (executable, _), _ = self._compiled(args, kwargs)
        return executable


def jit(fn=None, *, backend="auto", static_argnums=(), static_argnames=(), donate_argnums=(),
        **compile_options):
    """Like ``jax.jit``, but compiled and run by hloc.

    backend: "auto", "host", "cuda" or "interpreter". Other keyword arguments
    (pipeline, disabled_passes, dump_dir, allow_interpreter_ops, num_threads)
    go to ``hloc.compile``. Donated arguments are declared to JAX's lowering,
    so the module carries the aliasing; their memory is not reused yet.
    """
    if fn is None:
        return functools.partial(jit, backend=backend, static_argnums=static_argnums,
                                 static_argnames=static_argnames,
                                 donate_argnums=donate_argnums, **compile_options)
    return _Jitted(fn, backend, static_argnums, static_argnames, donate_argnums,
                   compile_options)
