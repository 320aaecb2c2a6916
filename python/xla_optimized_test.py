"""Modules as XLA:CPU optimizes them, fed to hloc: every function of
jax_ops_test compiled by jax.jit, its optimized module taken as HLO text
(`compiled.as_text()`) and as a serialized HloModuleProto, compiled by hloc
for the host and the interpreter and run on the same arguments. XLA's
optimized modules hold its fusions, scheduled computations, layouts on every
shape and bitcasts that are transposes (layout changes); results must match
jax.jit's within the case's tolerance, with no interpreter op on the host."""

import sys
import unittest

import jax
import numpy as np

import hloc
import jax_ops_test


def optimized_modules(fn, args):
    """(text, proto bytes) of fn's module after XLA:CPU's pipeline."""
    compiled = jax.jit(fn, keep_unused=True).lower(*args).compile()
    module = compiled.runtime_executable().hlo_modules()[0]
    return compiled.as_text(), module.as_serialized_hlo_module_proto()


class XlaOptimizedModulesTest(unittest.TestCase):
    def test_every_function_matches_jax(self):
        for name, (fn, args, tol) in jax_ops_test.CASES.items():
            with self.subTest(name):
                want = jax.tree_util.tree_leaves(jax.jit(fn)(*args))
                text, proto = optimized_modules(fn, args)
                # The text on the host, the proto on both: one parse of
                # each form, every backend.
                for form, module, backend in (("text", text, "host"),
                                              ("proto", proto, "host"),
                                              ("proto", proto, "interpreter")):
                    executable = hloc.compile(module, backend=backend)
                    inputs = [np.asarray(a, dtype=p.dtype) for a, p in
                              zip(jax.tree_util.tree_leaves(args), executable.parameters)]
                    got = executable(*inputs)
                    self.assertEqual(len(got), len(want), f"{form} on {backend}")
                    for g, w in zip(got, want):
                        g, w = np.asarray(g), np.asarray(w)
                        self.assertEqual((g.dtype, g.shape), (w.dtype, w.shape),
                                         f"{form} on {backend}")
                        if not np.iscomplexobj(w):
                            g, w = g.astype(np.float64), w.astype(np.float64)
                        np.testing.assert_allclose(g, w, rtol=tol, atol=tol, equal_nan=True,
                                                   err_msg=f"{form} on {backend}")
                    if backend == "host":
                        self.assertEqual(executable.stats["interpreter_ops"], 0, form)


if __name__ == "__main__":
    result = unittest.main(argv=sys.argv[:1], exit=False, verbosity=2).result
    failed = len(result.failures) + len(result.errors)
    print(f"{len(jax_ops_test.CASES)} functions; {result.testsRun - failed} passed, "
          f"{failed} failed")
    sys.exit(1 if failed else 0)
