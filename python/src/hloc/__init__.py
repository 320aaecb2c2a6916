"""hloc: an XLA-style compiler for HLO modules, from Python.

    import hloc, numpy as np
    exe = hloc.compile(hlo_text_or_proto_bytes_or_path, backend="host")
    (out,) = exe(np.ones(8, np.float32), np.ones(8, np.float32))

Modules are HLO text, serialized HloModuleProto / HloProto / HloSnapshot
bytes, or a path to a file holding either. Every module is verified before
anything else happens; one that fails raises CompileError with the
verifier's located message. Arguments are numpy arrays or anything with
``__dlpack__`` (jax arrays, torch tensors) on the CPU; C-contiguous ones are
used in place, without a copy. Results are numpy arrays over hloc's memory
(no copy; they export ``__dlpack__`` and the buffer protocol).

``hloc.jax.jit`` runs JAX functions on hloc.
"""

import atexit
import json
import os
import threading

import numpy as np

from . import _hloc

__version__ = _hloc.__version__

Error = _hloc.Error
CompileError = _hloc.CompileError
BackendUnavailableError = _hloc.BackendUnavailableError

__all__ = [
    "BackendUnavailableError",
    "CompileError",
    "CustomCall",
    "Error",
    "Executable",
    "Profile",
    "unavailable_reason",
    "compile",
    "register_custom_call",
]


def _dtype_table():
    import ml_dtypes

    table = {
        "pred": np.dtype(np.bool_),
        "s8": np.dtype(np.int8),
        "s16": np.dtype(np.int16),
        "s32": np.dtype(np.int32),
        "s64": np.dtype(np.int64),
        "u8": np.dtype(np.uint8),
        "u16": np.dtype(np.uint16),
        "u32": np.dtype(np.uint32),
        "u64": np.dtype(np.uint64),
        "f16": np.dtype(np.float16),
        "f32": np.dtype(np.float32),
        "f64": np.dtype(np.float64),
        "c64": np.dtype(np.complex64),
        "c128": np.dtype(np.complex128),
        "bf16": np.dtype(ml_dtypes.bfloat16),
        "s4": np.dtype(ml_dtypes.int4),
        "u4": np.dtype(ml_dtypes.uint4),
    }
    for name, attr in [
        ("f8e4m3fn", "float8_e4m3fn"),
        ("f8e5m2", "float8_e5m2"),
        ("f8e4m3fnuz", "float8_e4m3fnuz"),
        ("f8e5m2fnuz", "float8_e5m2fnuz"),
        ("f8e4m3b11fnuz", "float8_e4m3b11fnuz"),
        ("f8e4m3", "float8_e4m3"),
        ("f8e3m4", "float8_e3m4"),
    ]:
        if hasattr(ml_dtypes, attr):
            table[name] = np.dtype(getattr(ml_dtypes, attr))
    return table


_DTYPES = _dtype_table()
# Types that cross into C++ as unsigned integers of their width.
_NATIVE = {"pred", "s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64",
           "f16", "f32", "f64", "c64", "c128"}

_client_lock = threading.Lock()
_clients = {}
_custom_calls = {}  # target -> the wrapped function, registered on every client


def _client(num_threads=0, collective_timeout=None):
    # One client per option set; collective_timeout None: the C++ default
    # ($HLOC_NCCL_TIMEOUT, else 300 s), read when the client is made.
    key = (num_threads, collective_timeout)
    with _client_lock:
        client = _clients.get(key)
        if client is None:
            client = _hloc._Client(num_threads, 64, os.environ.get("HLOC_CACHE_DIR", ""),
                                   -1.0 if collective_timeout is None else collective_timeout)
            for target, call in _custom_calls.items():
                client.register_custom_call(target, call)
            _clients[key] = client
        return client


# Functions held by native code are invisible to the collector: let them go
# at exit so cycles through them (a function whose globals hold an
# executable compiled with it) do not outlive the interpreter.
atexit.register(_hloc._release_custom_call_functions)


def _wrap_custom_call(target, fn, pass_backend_config):
    """What native code calls for `fn`: checks and converts its results."""
    if not isinstance(target, str) or not target:
        raise ValueError("target must be a non-empty str")
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")

    def call(operands, operand_types, backend_config, result_specs):
        specs = [_Spec(type_name, dims) for type_name, dims in result_specs]
        operands = [a if t in _NATIVE or t not in _DTYPES else a.view(_DTYPES[t])
                    for a, t in zip(operands, operand_types)]
        for a in operands:
            a.flags.writeable = False  # Views of hloc's memory, never written.
        if pass_backend_config:
            returned = fn(*operands, backend_config=backend_config)
        else:
            returned = fn(*operands)
        if len(specs) == 1 and not isinstance(returned, (tuple, list)):
            returned = (returned,)
        if not isinstance(returned, (tuple, list)):
            raise TypeError(f"{target}: fn returned {type(returned).__name__}, "
                            f"not a tuple of {len(specs)} arrays")
        if len(returned) != len(specs):
            raise ValueError(f"{target}: fn returned {len(returned)} arrays "
                             f"for {len(specs)} results")
        out = []
        for j, (spec, value) in enumerate(zip(specs, returned)):
            array = np.asarray(value)
            if spec.dtype is not None and array.dtype != spec.dtype:
                array = array.astype(spec.dtype, casting="same_kind")
            if array.shape != spec.shape:
                raise ValueError(f"{target}: result {j} has shape {array.shape}, "
                                 f"want {spec.shape} ({spec!r})")
            if not array.flags.c_contiguous:  # (ascontiguousarray makes 0-d arrays 1-d)
                array = array.copy(order="C")
            if spec.type not in _NATIVE:
                array = array.view(np.dtype(f"u{array.dtype.itemsize}"))
            out.append(array)
        return out

    return call


def register_custom_call(target, fn, *, pass_backend_config=False):
    """Makes `fn` the implementation of custom-call target `target`.

    A module's ``custom-call(...)`` with ``custom_call_target="<target>"``
    then calls ``fn(*operands)`` (``fn(*operands, backend_config=str)`` with
    pass_backend_config=True): one numpy array per array leaf of the
    operands, depth-first. The operands are read-only views of hloc's
    memory, not copies, valid during the call only (copy one to keep it).
    ``fn`` returns the result: one array (anything np.asarray takes) for an
    array-shaped custom call, a tuple or list of them, one per array leaf,
    for a tuple-shaped one. Each is converted to the result's dtype (same
    kind casting) and must have its shape.

    It runs on the host, interpreter and cuda backends (on cuda between
    the GPU's steps, on host copies of the operands and results), possibly
    from several threads (hloc takes the GIL for it). An exception in ``fn`` makes the run raise hloc.Error naming the
    instruction, the target and the exception. Executables compiled before
    a registration keep the function they were compiled with; compiling
    again after registering gives a new executable. A custom call whose
    target is neither registered nor built into hloc ("TopK") fails to
    compile (CompileError). For functions that belong to one executable,
    see compile(..., custom_calls=...).
    """
    call = _wrap_custom_call(target, fn, pass_backend_config)
    _client()  # The default client checks the name (ValueError) before it is kept.
    with _client_lock:
        for client in _clients.values():
            client.register_custom_call(target, call)
        _custom_calls[target] = call


class CustomCall:
    """A function for ``compile(..., custom_calls={target: CustomCall(fn, ...)})``,
    with how it is called: as register_custom_call's `pass_backend_config`
    says. A plain callable there is ``CustomCall(fn)``."""

    def __init__(self, fn, *, pass_backend_config=False):
        if not callable(fn):
            raise TypeError(f"fn must be callable, got {type(fn).__name__}")
        self.fn = fn
        self.pass_backend_config = bool(pass_backend_config)


def unavailable_reason(backend):
    """"" when `backend` ("host", "cuda", "interpreter", "auto") runs here, else why not."""
    return _hloc.backend_unavailable_reason(backend)


class _Spec:
    __slots__ = ("type", "shape", "dtype")

    def __init__(self, type_name, dims):
        self.type = type_name
        self.shape = tuple(dims)
        self.dtype = _DTYPES.get(type_name)

    def __repr__(self):
        return f"{self.type}[{','.join(map(str, self.shape))}]"


class Profile:
    """Where a compiled program's runs spend their time (Executable.profile).

    Attributes (times are seconds, means per run over `runs` runs):
      entries: one dict per thunk, largest own time first, with name (the
        HLO instruction), thunk, category (kernel, library, copy, loop,
        conditional, collective, interpreter), op, parent ("%while.2 body"
        for thunks a loop runs), calls, seconds, self_seconds, share, bytes,
        flops, gbps, gflops, of_peak, bound;
      categories: dicts of category, thunks, calls, seconds, share (with
        "runtime": time outside every thunk);
      runs, mean_seconds, median_seconds, min_seconds, peak (the machine's
        measured bandwidth_gbps and gflops).
    str(profile) is a table for a terminal."""

    def __init__(self, text, data):
        self._text = text
        self.data = data
        self.entries = data["entries"]
        self.categories = data["categories"]
        self.runs = data["runs"]
        self.mean_seconds = data["mean_seconds"]
        self.median_seconds = data["median_seconds"]
        self.min_seconds = data["min_seconds"]
        self.peak = data["peak"]

    def __str__(self):
        return self._text

    def __repr__(self):
        return (f"hloc.Profile({self.runs} runs, mean {self.mean_seconds * 1e3:.3f} ms, "
                f"{len(self.entries)} thunks)")


_DLPACK_CUDA = 2  # DLPack's kDLCUDA.


def _on_cuda(value):
    """True for a DLPack producer whose memory is on a CUDA device."""
    if isinstance(value, np.ndarray) or not hasattr(value, "__dlpack_device__"):
        return False
    try:
        return value.__dlpack_device__()[0] == _DLPACK_CUDA
    except Exception:  # A producer that cannot say is treated as a host array.
        return False


class Executable:
    """A compiled module. Call it with one array per parameter (the array
    leaves of the entry computation's parameters); it returns a list with one
    numpy array per result leaf. Thread-safe: many threads may call one
    Executable at once (the GIL is released while it runs)."""

    def __init__(self, native):
        self._native = native
        self.parameters = [_Spec(t, d) for t, d in native.parameters]
        self.results = [_Spec(t, d) for t, d in native.results]
        # Every parameter and result type crosses as itself (no views).
        self._native_types = all(s.type in _NATIVE for s in self.parameters + self.results)

    def __call__(self, *args, donate=(), results="auto"):
        """Runs once. `donate`: indices of arguments whose memory a result the
        module aliases with them (input_output_alias) may take over; their
        contents are undefined afterwards.

        Arguments on a CUDA device (any `__dlpack__` producer whose
        `__dlpack_device__` is CUDA, e.g. a torch or cupy array) are read on
        the GPU without a copy through the host; a cuda executable takes
        them, others raise ValueError. `results`: "auto" (on the device when
        any argument is a CUDA array, else numpy arrays), "host" (numpy
        arrays) or "device" (cuda executables only): device results are
        arrays exposing `__dlpack__`/`__dlpack_device__` on the GPU, for
        `torch.from_dlpack`, `cupy.from_dlpack` or `jax.dlpack.from_dlpack`."""
        if results not in ("auto", "host", "device"):
            raise ValueError(f"results={results!r} (have: 'auto', 'host', 'device')")
        if not donate and self._native_types:
            # Fast path: arrays already as the parameters want them go
            # straight through; anything else is converted (or its error
            # worded) below.
            try:
                out = self._native.run(args, [], results)
            except (TypeError, ValueError):
                pass
            else:
                return out
        if len(args) != len(self.parameters):
            raise TypeError(
                f"the executable takes {len(self.parameters)} argument"
                f"{'' if len(self.parameters) == 1 else 's'}, got {len(args)}")
        arrays = [self._argument(i, a) for i, a in enumerate(args)]
        donated = []
        for index in donate:
            if not isinstance(index, int) or not 0 <= index < len(args):
                raise ValueError(f"donate: {index!r} is not an argument index")
            if isinstance(arrays[index], np.ndarray) and not arrays[index].flags.writeable:
                raise ValueError(f"donate: argument {index} is read-only")
            donated.append(index)
        out = self._native.run(arrays, donated, results)
        return [self._result(spec, r) for spec, r in zip(self.results, out)]

    def _argument(self, index, value):
        spec = self.parameters[index]
        array = value
        if _on_cuda(array):
            # Checked and wrapped as it is by the native side (no copy).
            return array
        if not isinstance(array, np.ndarray):
            if hasattr(array, "__dlpack__") and not hasattr(array, "__array__"):
                array = np.from_dlpack(array)
            else:
                array = np.asarray(array)
        if spec.dtype is None:
            raise TypeError(f"argument {index}: parameter type {spec.type} has no numpy dtype")
        if array.dtype != spec.dtype:
            raise TypeError(
                f"argument {index}: expected {spec.dtype.name}{list(spec.shape)} "
                f"({spec}), got {array.dtype.name}{list(array.shape)}")
        if len(array.shape) != len(spec.shape):
            raise ValueError(
                f"argument {index}: expected shape {spec.shape} ({spec}), got {array.shape}")
        # Dimensions themselves are checked natively: a bounded dynamic
        # parameter's may be below the bound shown in spec.shape.
        if not array.flags.c_contiguous or array.ctypes.data % max(1, array.dtype.alignment):
            array = np.ascontiguousarray(array).copy()
        if spec.type not in _NATIVE:
            array = array.view(np.dtype(f"u{array.dtype.itemsize}"))
        return array

    @staticmethod
    def _result(spec, array):
        if not isinstance(array, np.ndarray):
            return array  # On the device: a DLPack array as the native side made it.
        if spec.type not in _NATIVE and spec.dtype is not None:
            return array.view(spec.dtype)
        return array

    def profile(self, *args, repeats=10, warmup=1, rows=30):
        """Runs `warmup` times untimed, then `repeats` times with every thunk
        timed (host backend only; others raise hloc.Error). Returns a
        Profile: `str(profile)` is the table `hloc run --profile` prints;
        `entries` and `categories` hold the numbers (per-run means)."""
        if len(args) != len(self.parameters):
            raise TypeError(
                f"the executable takes {len(self.parameters)} argument"
                f"{'' if len(self.parameters) == 1 else 's'}, got {len(args)}")
        arrays = [self._argument(i, a) for i, a in enumerate(args)]
        text, data = self._native.profile(arrays, int(repeats), int(warmup), int(rows))
        return Profile(text, json.loads(data))

    @property
    def optimized_hlo(self):
        """The module after hloc's passes, as HLO text."""
        return self._native.optimized_hlo

    @property
    def ledger(self):
        """Every outlining, inlining and fusion decision with its rule."""
        return self._native.ledger

    @property
    def report(self):
        """The compiled program: kernels, library calls, thunks, memory."""
        return self._native.report

    @property
    def stats(self):
        """Kernels, library calls, interpreter ops, peak memory, compile time."""
        return dict(self._native.stats)

    @property
    def mesh_shardings(self):
        """For an executable compiled from a JAX shard_map on several devices:
        {"axis_names", "axis_sizes", "parameters", "results"}, where each
        parameter and result lists, per dimension, the mesh axes (indices)
        that split it, major first (JAX's PartitionSpec); None otherwise."""
        mesh = self._native.mesh_shardings
        if mesh is None:
            return None
        names, sizes, parameters, results = mesh
        return {"axis_names": list(names), "axis_sizes": list(sizes),
                "parameters": parameters, "results": results}

    @property
    def fingerprint(self):
        return self._native.fingerprint

    def __repr__(self):
        return (f"hloc.Executable({', '.join(map(repr, self.parameters))}) -> "
                f"({', '.join(map(repr, self.results))}) on {self.stats['backend']}")


def compile(module, backend="auto", *, pipeline="default", disabled_passes=(),
            dump_dir=None, allow_interpreter_ops=True, num_threads=0, devices=1,
            collective_timeout=None, custom_calls=None):
    """Loads, verifies, optimizes and compiles `module`.

    module: HLO text (str), serialized HloModuleProto / HloProto / HloSnapshot
        (bytes), or a path (os.PathLike, or a str naming an existing file).
    backend: "auto" (cuda when a GPU is usable, else host), "host", "cuda" or
        "interpreter".
    pipeline: "default", "no-fusion", "fallback" (fallback fusion) or "none".
    disabled_passes: names of passes to skip.
    dump_dir: write the module after each pass into this folder.
    allow_interpreter_ops: ops with no kernel run on the reference
        interpreter (counted in stats); False makes them compile errors.
    num_threads: threads per kernel (0: every core).
    devices: run on this many devices ("host": one thread each, collectives
        through shared memory; "interpreter": the multi-device interpreter);
        0: as many as the module names. A module holding a JAX shard_map
        runs on its mesh's devices. With several devices the executable
        takes and returns *global* arrays, split and gathered per device:
        a shard_map by its shardings; an SPMD-partitioned module
        (num_partitions=N) by its parameters' ``sharding=`` (replicated when
        absent) and its root's (results without one come back stacked); a
        pmap-style module (replica_count=N, or a one-device module run with
        devices=N) stacked: one more leading dimension of size N, index d
        being device d's. ``Executable.stats["devices"]`` says how many.
    collective_timeout: seconds an NCCL collective ("cuda" on several
        devices) may wait for its peers before the call raises and the
        executable's communicators are aborted (it must then be compiled
        again); 0: no watchdog (NCCL may wait forever). None: the
        environment's HLOC_NCCL_TIMEOUT when set, else 300.
    custom_calls: {target: fn or CustomCall(fn, pass_backend_config=True)},
        functions of this executable only, called as register_custom_call
        describes; they take precedence over registered targets of the same
        name. Such a compile is not shared through the cache.

    Identical requests return the same Executable from an in-memory cache.
    Raises CompileError for modules that do not parse, verify or compile
    (shardings the API does not split included), BackendUnavailableError
    when the backend cannot run here, ValueError for bad options (a device
    count the module does not fit included).
    """
    if isinstance(module, os.PathLike):
        data, is_path = os.fspath(module).encode(), True
    elif isinstance(module, str):
        stripped = module.lstrip()
        looks_like_hlo = stripped.startswith("HloModule") or "\n" in module
        if not looks_like_hlo and os.path.isfile(module):
            data, is_path = module.encode(), True
        else:
            data, is_path = module.encode(), False
    elif isinstance(module, (bytes, bytearray, memoryview)):
        data, is_path = bytes(module), False
    else:
        raise TypeError(
            f"module: expected HLO text, proto bytes or a path, got {type(module).__name__}")
    if not isinstance(backend, str):
        raise TypeError(f"backend: expected a str, got {type(backend).__name__}")
    if not isinstance(num_threads, int) or num_threads < 0:
        raise ValueError(f"num_threads: expected an int >= 0, got {num_threads!r}")
    if isinstance(devices, bool) or not isinstance(devices, int):
        raise TypeError(f"devices: expected an int, got {type(devices).__name__}")
    if not 0 <= devices <= 1024:
        raise ValueError(f"devices: expected 0 (as the module says) to 1024, got {devices}")
    if collective_timeout is not None:
        if isinstance(collective_timeout, bool) or not isinstance(collective_timeout,
                                                                  (int, float)):
            raise TypeError("collective_timeout: expected seconds (int or float) or None, got "
                            f"{type(collective_timeout).__name__}")
        collective_timeout = float(collective_timeout)
        if not collective_timeout >= 0:  # NaN too.
            raise ValueError("collective_timeout: expected seconds >= 0 (0: no watchdog), got "
                             f"{collective_timeout!r}")
    calls = []
    if custom_calls is not None:
        if not hasattr(custom_calls, "items"):
            raise TypeError("custom_calls: expected a mapping of target to function, got "
                            f"{type(custom_calls).__name__}")
        for target, fn in custom_calls.items():
            if not isinstance(fn, CustomCall) and not callable(fn):
                raise TypeError(f"custom_calls[{target!r}]: expected a callable or "
                                f"hloc.CustomCall, got {type(fn).__name__}")
            spec = fn if isinstance(fn, CustomCall) else CustomCall(fn)
            calls.append((target, _wrap_custom_call(target, spec.fn, spec.pass_backend_config)))
    native = _client(num_threads, collective_timeout).compile(
        data, is_path, backend, pipeline, [str(p) for p in disabled_passes],
        "" if dump_dir is None else os.fspath(dump_dir), bool(allow_interpreter_ops),
        devices, calls)
    return Executable(native)
