"""Per-call wall time from Python on a GPU machine: a small cuda executable
(python/cuda_device_test.py's DENSE_SOFTMAX) on torch CUDA tensors with device
results, on numpy arrays, against torch eager and jax.jit of the same
computation. Each side is warmed with 50 calls, then timed as the best of 3
rounds of 2000 calls ending in a sync.

  XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONPATH=<hloc package>:python python3 bench/python_gpu_percall.py
"""
import time, numpy as np, torch, hloc, jax, jax.numpy as jnp
import cuda_device_test as t
x, w = t._inputs()
exe = hloc.compile(t.DENSE_SOFTMAX, backend="cuda")
tx, tw = torch.from_numpy(x).cuda(), torch.from_numpy(w).cuda()
jx, jw = jax.device_put(x), jax.device_put(w)
jf = jax.jit(lambda a, b: jax.nn.softmax(a @ b, axis=1))
def bench(f, sync, n=2000):
    for _ in range(50): f()
    sync()
    best = 1e9
    for _ in range(3):
        s = time.perf_counter()
        for _ in range(n): r = f()
        sync(); best = min(best, (time.perf_counter() - s) / n)
    return best * 1e6
sync_t = torch.cuda.synchronize
print("hloc cuda exe(torch tensors) -> device: %.1f us/call" % bench(lambda: exe(tx, tw), sync_t))
print("hloc cuda exe(numpy) -> numpy:          %.1f us/call" % bench(lambda: exe(x, w), sync_t))
print("torch eager softmax(x @ w):             %.1f us/call" % bench(lambda: torch.softmax(tx @ tw, 1), sync_t))
r = [None]
def jcall(): r[0] = jf(jx, jw)
print("jax.jit softmax(x @ w):                 %.1f us/call" % bench(jcall, lambda: r[0].block_until_ready()))
