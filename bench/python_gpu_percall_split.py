"""Where the per-call cost of a cuda executable called from Python goes: numpy or
torch CUDA arguments, host or device results (each dropped before the next call,
or kept until the next call returns), with the client's device memory cache on
and off (HLOC_DEVICE_CACHE_BYTES=0), torch eager as the floor.

  PYTHONPATH=<hloc package>:python python3 bench/python_gpu_percall_split.py [--rounds N]

Each configuration runs in its own process (the cache is a client setting read
when hloc's client is made); cache off and on alternate, round by round, and the
best round of each is printed. Within a process: 50 warm-up calls, then the best
of 3 runs of 2000 calls, each ending in torch.cuda.synchronize().
"""
import argparse
import json
import os
import subprocess
import sys
import time

CASES = [
    ("numpy", "host", "drop"),
    ("numpy", "device", "drop"),
    ("torch", "host", "drop"),
    ("torch", "device", "drop"),
    ("torch", "device", "keep"),
]


def child():
    import numpy as np  # noqa: F401
    import torch
    import hloc
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
    import cuda_device_test as t
    x, w = t._inputs()
    exe = hloc.compile(t.DENSE_SOFTMAX, backend="cuda")
    tx, tw = torch.from_numpy(x).cuda(), torch.from_numpy(w).cuda()

    def bench(f, n=2000):
        for _ in range(50):
            f()
        torch.cuda.synchronize()
        best = 1e9
        for _ in range(3):
            s = time.perf_counter()
            for _ in range(n):
                f()
            torch.cuda.synchronize()
            best = min(best, (time.perf_counter() - s) / n)
        return best * 1e6

    out = {}
    for args, results, lifetime in CASES:
        a = (x, w) if args == "numpy" else (tx, tw)
        if lifetime == "drop":
            f = lambda a=a, r=results: exe(*a, results=r)
        else:
            kept = [None]

            def f(a=a, r=results, kept=kept):
                kept[0] = exe(*a, results=r)
        out["/".join((args, results, lifetime))] = bench(f)
    out["torch eager"] = bench(lambda: torch.softmax(tx @ tw, dim=-1))
    print(json.dumps(out))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--child", action="store_true")
    args = parser.parse_args()
    if args.child:
        child()
        return
    best = {}
    for _ in range(args.rounds):
        for cache in ("0", ""):
            env = dict(os.environ)
            if cache:
                env["HLOC_DEVICE_CACHE_BYTES"] = cache
            else:
                env.pop("HLOC_DEVICE_CACHE_BYTES", None)
            text = subprocess.run([sys.executable, __file__, "--child"], env=env, check=True,
                                  capture_output=True, text=True).stdout
            figures = json.loads(text.strip().splitlines()[-1])
            label = "cache off" if cache else "cache on"
            for case, us in figures.items():
                key = (case, label)
                best[key] = min(best.get(key, 1e9), us)
    cases = ["/".join(c) for c in CASES] + ["torch eager"]
    print("| arguments / results / result lifetime | cache off, us/call | cache on, us/call |")
    print("| --- | ---: | ---: |")
    for case in cases:
        print("| %s | %.1f | %.1f |" % (case, best[(case, "cache off")], best[(case, "cache on")]))


if __name__ == "__main__":
    main()
