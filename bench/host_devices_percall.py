"""Per-call cost of a program on N host devices (hloc.compile(..., devices=0)
of a replica_count=N module): an all-reduce of f32[8], so the figure is the
fixed cost of a multi-device run (device threads, the shared-memory world,
the collective's meeting), not work. Best of 5 rounds of 2000 calls.

  PYTHONPATH=$(bazel info -c opt bazel-bin)/python python3 bench/host_devices_percall.py N
"""
import time, numpy as np, hloc
M = """
HloModule ar, replica_count=4
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[8] parameter(0)
  ROOT r = f32[8] all-reduce(x), replica_groups={{0,1,2,3}}, to_apply=add
}"""
import sys
n = int(sys.argv[1]) if len(sys.argv) > 1 else 4
exe = hloc.compile(M.replace("replica_count=4", f"replica_count={n}").replace("{0,1,2,3}", "{" + ",".join(map(str, range(n))) + "}"), backend="host", devices=0)
x = np.ones((n, 8), np.float32)
print(exe(x)[0][0])
for _ in range(200): exe(x)
best = 1e9
for r in range(5):
    s = time.perf_counter()
    for _ in range(2000): exe(x)
    best = min(best, (time.perf_counter() - s) / 2000)
print(f"{n} devices: {best*1e6:.1f} us/call")
