#!/usr/bin/env python3
"""FFTs on hloc's host backend against XLA:CPU, timed the same way in one
process: jax.jit(f) and hloc.jax.jit(f, backend="host") on the same inputs,
each call waited for with block_until_ready, median of --runs after a warm-up.
With --interpreter, also the path fft took before FftExpander: the module
compiled with the expander disabled, so the fft runs on the interpreter.

    bazel build -c opt //python:hloc
    PYTHONPATH=$(bazel info -c opt bazel-bin)/python python3 bench/fft_vs_xla.py
"""
import argparse
import time

import jax
import jax.numpy as jnp
import numpy as np

import hloc
import hloc.jax


def median_ms(call, runs):
    call()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return float(np.median(times)) * 1e3


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--interpreter", action="store_true")
    args = parser.parse_args()
    rng = np.random.default_rng(0)

    def cplx(*shape):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)

    cases = [
        ("fft c64[256,1024]", jnp.fft.fft, cplx(256, 1024)),
        ("rfft f32[64,4096]", jnp.fft.rfft, rng.standard_normal((64, 4096)).astype(np.float32)),
        ("fft2 c64[256,256]", jnp.fft.fft2, cplx(256, 256)),
        ("irfft n=4096 c64[64,2049]", lambda x: jnp.fft.irfft(x, n=4096), cplx(64, 2049)),
        # One long line (four steps on the host), and a prime length (Bluestein).
        ("fft c64[1,65536]", jnp.fft.fft, cplx(1, 65536)),
        ("fft c64[4,10007]", jnp.fft.fft, cplx(4, 10007)),
    ]
    for name, fn, x in cases:
        xla = jax.jit(fn)
        ours = hloc.jax.jit(fn, backend="host")
        t_xla = median_ms(lambda: xla(x).block_until_ready(), args.runs)
        t_hloc = median_ms(lambda: ours(x).block_until_ready(), args.runs)
        line = f"{name}: jax.jit {t_xla:.3f} ms, hloc.jax.jit {t_hloc:.3f} ms, ratio {t_hloc / t_xla:.2f}"
        if args.interpreter:
            proto = xla.lower(x).compiler_ir("hlo").as_serialized_hlo_module_proto()
            old = hloc.compile(proto, backend="host", disabled_passes=["fft-expander"])
            line += f", interpreter {median_ms(lambda: old(x), 3):.1f} ms"
        print(line, flush=True)


if __name__ == "__main__":
    main()
