"""The parts of the GPU benchmark that run without a GPU: how gpu_vs_xla.py
reads XLA's device time from a profiler trace (the definition gpu_bench's
CUPTI trace uses for hloc), the protoc-free bindings and fast literals that
make_large_zoo.py --gpu uses on the GPU machine, and its size sets."""

import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "tests", "jax"))
sys.path.insert(0, os.path.join(REPO, "tests", "jax_large"))

import gpu_vs_xla  # noqa: E402
import make_zoo  # noqa: E402


def meta(pid, tid, kind, name):
    event = {"ph": "M", "pid": pid, "name": kind, "args": {"name": name}}
    if tid is not None:
        event["tid"] = tid
    return event


def x(pid, tid, name, ts, dur):
    return {"ph": "X", "pid": pid, "tid": tid, "name": name, "ts": ts, "dur": dur}


# A host process (pid 1) with two calls, the second showing a nested
# dispatch event; a GPU process (pid 2) with one stream line and a derived
# "XLA Ops" line repeating the stream's kernels.
TRACE = [
    meta(1, None, "process_name", "/host:CPU"),
    meta(2, None, "process_name", "/device:GPU:0"),
    meta(2, 7, "thread_name", "Stream #7(compute)"),
    meta(2, 9, "thread_name", "XLA Ops"),
    x(2, 7, "stale_kernel", 50, 10),              # before the first call: ignored
    x(1, 1, "PjitFunction(f)", 100, 30),
    x(2, 7, "fusion", 140, 20),
    x(2, 7, "MemcpyD2D", 170, 5),
    x(2, 7, "gemm", 180, 40),                     # call 0: 140..220, span 80
    x(2, 9, "fusion", 140, 500),                  # derived line: not an activity
    x(1, 1, "PjitFunction(f)", 1000, 30),
    x(1, 1, "PjitFunction(f)", 1005, 10),         # nested in the previous one
    x(2, 7, "fusion", 1040, 10),
    x(2, 7, "gemm", 1060, 40),                    # call 1: 1040..1100, span 60
]


class DeviceSpans(unittest.TestCase):
    def test_calls_are_outermost_dispatch_events(self):
        self.assertEqual(gpu_vs_xla.host_call_starts(TRACE), [100, 1000])

    def test_span_is_first_start_to_last_end_per_call(self):
        d = gpu_vs_xla.device_spans(TRACE, gpu_vs_xla.host_call_starts(TRACE))
        self.assertEqual(d["calls"], 2)
        # Medians of two take the mean (statistics.median): (80 + 60) / 2.
        self.assertEqual(d["device_us"], 70)
        self.assertEqual(d["busy_us"], (65 + 50) / 2)
        self.assertEqual(d["activities"], (3 + 2) / 2)
        self.assertEqual(d["kernels"], 2)
        self.assertEqual(d["lines"], ["Stream #7(compute)"])

    def test_without_stream_names_derived_lines_are_left_out(self):
        trace = [e for e in TRACE if e.get("args", {}).get("name") != "Stream #7(compute)"]
        d = gpu_vs_xla.device_spans(trace, gpu_vs_xla.host_call_starts(trace))
        self.assertEqual(d["device_us"], 70)

    def test_no_device_events_is_an_error(self):
        trace = [e for e in TRACE if e.get("pid") != 2 or e["ph"] == "M"]
        self.assertIn("error", gpu_vs_xla.device_spans(trace, [100, 1000]))


class BenchEnvironment(unittest.TestCase):
    def test_libcupti_of_the_pip_packages_is_found_newest_first(self):
        import site
        from unittest import mock
        with tempfile.TemporaryDirectory() as root:
            for lib in ("nvidia/cuda_cupti/lib/libcupti.so.12", "nvidia/cu13/lib/libcupti.so.13",
                        "nvidia/cu13/lib/libcupti.so"):
                os.makedirs(os.path.join(root, os.path.dirname(lib)), exist_ok=True)
                open(os.path.join(root, lib), "w").close()
            with mock.patch.object(site, "getsitepackages", return_value=[root]), \
                    mock.patch.object(site, "getusersitepackages", return_value=root), \
                    mock.patch.dict(os.environ, {}, clear=False):
                os.environ.pop("HLOC_CUPTI_LIBRARY", None)
                env = gpu_vs_xla.bench_env()
            self.assertEqual(env["HLOC_CUPTI_LIBRARY"],
                             os.path.join(root, "nvidia/cu13/lib/libcupti.so.13"))
            self.assertIn(os.path.join(root, "nvidia/cu13/lib"), env["LD_LIBRARY_PATH"])


class ProtocFreeBindings(unittest.TestCase):
    def test_descriptor_bindings_read_and_write_snapshots(self):
        import numpy as np
        with tempfile.TemporaryDirectory() as tmp:
            import shutil
            shutil.copy(make_zoo.DESCRIPTORS, tmp)
            hlo_pb2, xla = make_zoo.load_bindings(tmp)
        self.assertEqual(xla.PrimitiveType.Name(xla.F32), "F32")
        snapshot = hlo_pb2.HloSnapshot.FromString(
            make_zoo._read(os.path.join(make_zoo.ZOO, "softmax.snapshot.pb")))
        self.assertEqual(snapshot.hlo.hlo_module.name, "jit_softmax")
        arg = snapshot.arguments[0]
        values = np.array(arg.f32s, np.float32).reshape(list(arg.shape.dimensions))
        rebuilt = xla.LiteralProto()
        make_zoo._fill_literal(xla, rebuilt, values)  # the packed-bytes path
        self.assertEqual(rebuilt.SerializeToString(), arg.SerializeToString())

    def test_fast_literal_equals_list_literal(self):
        import numpy as np
        with tempfile.TemporaryDirectory() as tmp:
            import shutil
            shutil.copy(make_zoo.DESCRIPTORS, tmp)
            _, xla = make_zoo.load_bindings(tmp)
        for dtype, field in ((np.float32, "f32s"), (np.float64, "f64s")):
            a = (np.arange(-7, 301, dtype=dtype) / 3).astype(dtype).reshape(7, -1)
            fast = xla.LiteralProto()
            make_zoo._fill_literal(xla, fast, a)
            slow = xla.LiteralProto()
            make_zoo._array_shape(xla, slow.shape, a)
            getattr(slow, field).extend(a.reshape(-1).tolist())
            self.assertEqual(fast.SerializeToString(), slow.SerializeToString(), dtype)


    @unittest.skipIf(__import__("shutil").which("protoc") is None, "no protoc here")
    def test_committed_descriptors_match_the_protos(self):
        with tempfile.TemporaryDirectory() as tmp:
            fresh = os.path.join(tmp, "d.binpb")
            make_zoo.write_descriptors(fresh)
            self.assertEqual(make_zoo._read(fresh), make_zoo._read(make_zoo.DESCRIPTORS),
                             "tests/jax/hlo_descriptors.binpb is stale: "
                             "python3 tests/jax/make_zoo.py --write-descriptors")


class LargeZooSizes(unittest.TestCase):
    def test_both_size_sets_define_the_same_models(self):
        import make_large_zoo
        sets = make_large_zoo.SIZES
        self.assertEqual(set(sets["cpu"]), set(sets["gpu"]))
        for name in sets["cpu"]:
            self.assertEqual(set(sets["cpu"][name]), set(sets["gpu"][name]), name)
        self.assertEqual(list(make_large_zoo._models("cpu")), list(make_large_zoo._models("gpu")))
        self.assertEqual(len(make_large_zoo._models("gpu")), 12)

    def test_folder_without_zoo_json_has_cpu_sizes(self):
        import make_large_zoo
        with tempfile.TemporaryDirectory() as tmp:
            self.assertEqual(make_large_zoo.read_sizes(tmp), "cpu")
            make_zoo._write(os.path.join(tmp, "ZOO.json"),
                            '{"sizes": "gpu", "recorded_on": "gpu"}\n')
            self.assertEqual(make_large_zoo.read_sizes(tmp), "gpu")


if __name__ == "__main__":
    unittest.main()
