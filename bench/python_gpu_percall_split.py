"""Where the per-call cost of a cuda executable called from Python goes: numpy or
torch CUDA arguments, host or device results (each dropped before the next call).

  PYTHONPATH=<hloc package>:python python3 bench/python_gpu_percall_split.py
"""
import time, numpy as np, torch, hloc
import cuda_device_test as t
x, w = t._inputs()
exe = hloc.compile(t.DENSE_SOFTMAX, backend="cuda")
tx, tw = torch.from_numpy(x).cuda(), torch.from_numpy(w).cuda()
def bench(f, n=2000):
    for _ in range(50): f()
    torch.cuda.synchronize()
    best = 1e9
    for _ in range(3):
        s = time.perf_counter()
        for _ in range(n): f()
        torch.cuda.synchronize(); best = min(best, (time.perf_counter() - s) / n)
    return best * 1e6
print("numpy args, host results:   %.1f us" % bench(lambda: exe(x, w, results="host")))
print("numpy args, device results: %.1f us" % bench(lambda: exe(x, w, results="device")))
print("torch args, host results:   %.1f us" % bench(lambda: exe(tx, tw, results="host")))
print("torch args, device results: %.1f us" % bench(lambda: exe(tx, tw, results="device")))
d = exe(x, w, results="device")[0]
print("torch.from_dlpack(result):  %.1f us" % bench(lambda: torch.from_dlpack(d)))
print("torch.cuda.synchronize():   %.1f us" % bench(lambda: torch.cuda.synchronize()))
