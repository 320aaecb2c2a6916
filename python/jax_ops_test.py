"""hloc.jax.jit against jax.jit, one JAX function at a time, over a wide
range of what JAX lowers on the CPU: FFTs and complex numbers, sorts and
top-k, cumulative ops and scans, scatter/gather forms, convolutions
(dilated, transposed, 3-d, gradients), pooling and its gradient, control
flow, PRNG keys, linear algebra (LAPACK custom calls), special functions,
integer, unsigned, f16/bf16/f64/fp8/int4 types, NaN handling, pytrees and
empty arrays. Each function's results must match XLA:CPU's (dtype, shape,
values within the case's tolerance) and run with no interpreter op."""

import sys
import unittest

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

import hloc
import hloc.jax

rng = np.random.default_rng(0)


def N(*shape, dt=np.float32):
    return rng.standard_normal(shape).astype(dt)


def I(high, *shape, dt=np.int32):
    return rng.integers(0, high, shape).astype(dt)


CASES = {}


def case(name, *args, tol=1e-4):
    def register(fn):
        CASES[name] = (fn, args, tol)
        return fn
    return register


case("fft", N(8,16))(lambda x: jnp.fft.fft(x).real)
case("rfft_irfft", N(4,32))(lambda x: jnp.fft.irfft(jnp.fft.rfft(x), n=32))
case("fft2", N(8,8))(lambda x: jnp.abs(jnp.fft.fft2(x)))
case("complex_mul", N(5), N(5))(lambda a,b: jnp.abs((a+1j*b)*(b-2j*a)+jnp.exp(1j*a)))
case("argsort", N(4,33))(lambda x: jnp.argsort(x, axis=-1))
case("sort_multi", N(40), I(5,40))(lambda x,k: lax.sort((k,x), num_keys=1)[1])
case("top_k", N(3,50))(lambda x: lax.top_k(x, 5)[0])
case("cumprod", N(6,7))(lambda x: jnp.cumprod(x*0.5+1, axis=1))
case("cummax", N(6,7))(lambda x: lax.cummax(x, axis=0))
case("logcumsumexp", N(20))(lambda x: jax.lax.cumlogsumexp(x))
case("segment_sum", N(20,3), I(5,20))(lambda x,s: jax.ops.segment_sum(x, s, num_segments=5))
case("segment_max", N(20,3), I(5,20))(lambda x,s: jax.ops.segment_max(x, s, num_segments=5))
case("scatter_mul", N(10), I(10,6))(lambda x,i: x.at[i].multiply(2.0))
case("gather_take", N(10,4), I(10,7))(lambda x,i: jnp.take(x, i, axis=0, mode="clip"))
case("take_along", N(6,9), I(9,6,3))(lambda x,i: jnp.take_along_axis(x, i, axis=1))
case("einsum3", N(2,3,4), N(4,5), N(2,5))(lambda a,b,c: jnp.einsum("ijk,kl,il->ij", a, b, c))
case("conv1d_dil", N(2,3,20), N(4,3,3))(lambda x,w: lax.conv_general_dilated(x,w,(2,),[(1,2)],lhs_dilation=(1,),rhs_dilation=(2,)))
case("conv_transpose", N(1,8,8,3), N(3,3,3,4))(lambda x,w: lax.conv_transpose(x,w,(2,2),"SAME",dimension_numbers=("NHWC","HWIO","NHWC")))
case("conv3d", N(1,2,6,6,6), N(3,2,2,2,2))(lambda x,w: lax.conv(x,w,(1,1,1),"VALID"))
case("avg_pool", N(2,8,8,3))(lambda x: lax.reduce_window(x, 0., lax.add, (1,3,3,1),(1,2,2,1),"SAME")/9)
case("max_pool_grad", N(2,8,8,3))(lambda x: jax.grad(lambda y: jnp.sum(lax.reduce_window(y,-jnp.inf,lax.max,(1,2,2,1),(1,2,2,1),"VALID")**2))(x))
case("grad_conv", N(1,6,6,2), N(3,3,2,4))(lambda x,w: jax.grad(lambda a,b: jnp.sum(jnp.tanh(lax.conv_general_dilated(a,b,(1,1),"SAME",dimension_numbers=("NHWC","HWIO","NHWC")))),argnums=(0,1))(x,w))
case("while_fori", N(5))(lambda x: lax.fori_loop(0, 10, lambda i,c: c*0.9+jnp.sin(c)*i, x))
case("scan_carry_stack", N(7,3))(lambda xs: lax.scan(lambda c,x: (c+x, c*x), jnp.zeros(3), xs))
case("switch", np.int32(2), N(4))(lambda i,x: lax.switch(i, [jnp.sin, jnp.cos, jnp.tanh, jnp.exp], x))
case("cond_tuple", N(4))(lambda x: lax.cond(x[0]>0, lambda y:(y, y*2), lambda y:(-y, y), x))
case("vmap_matmul", N(5,3,4), N(5,4,2))(jax.vmap(jnp.matmul))
case("random_normal", np.array([0,42],np.uint32))(lambda k: jax.random.normal(jax.random.wrap_key_data(k), (100,)).sum())
case("random_bits", np.array([0,42],np.uint32))(lambda k: jax.random.bits(jax.random.wrap_key_data(k), (16,)))
case("random_perm", np.array([0,7],np.uint32))(lambda k: jax.random.permutation(jax.random.wrap_key_data(k), 20))
case("linalg_inv", N(5,5)+5*np.eye(5,dtype=np.float32))(jnp.linalg.inv)
case("linalg_det", N(4,4))(jnp.linalg.det)
case("slogdet", N(4,4))(lambda a: jnp.linalg.slogdet(a)[1])
case("lstsq_pinv", N(6,4), tol=1e-3)(jnp.linalg.pinv)
case("eig_vals", N(4,4), tol=1e-3)(lambda a: jnp.sort(jnp.abs(jnp.linalg.eigvals(a))))
case("triangular_solve", np.triu(N(4,4))+4*np.eye(4,dtype=np.float32), N(4,2))(lambda a,b: jax.scipy.linalg.solve_triangular(a,b))
case("expm", N(3,3)*0.3, tol=1e-3)(jax.scipy.linalg.expm)
case("special", N(10), tol=1e-3)(lambda x: jax.scipy.special.erf(x)+jax.scipy.special.gammaln(jnp.abs(x)+1)+jax.scipy.special.erfinv(jnp.tanh(x)*0.9)+jax.scipy.special.digamma(jnp.abs(x)+1))
case("lgamma_betainc", N(6), tol=1e-3)(lambda x: jax.scipy.special.betainc(2.0, 3.0, jax.nn.sigmoid(x)))
case("int_ops", I(100,10), I(7,10))(lambda a,b: (a//(b+1), a%(b+1), a<<2, a>>1, a^b, jnp.clip(a,3,50), lax.population_count(a), lax.clz(a)))
case("uint8", I(255,10,dt=np.uint8), I(255,10,dt=np.uint8))(lambda a,b: (a+b, a*b, jnp.maximum(a,b), (a.astype(jnp.float32)/3).astype(jnp.uint8)))
case("int8_dot", I(20,4,8,dt=np.int8), I(20,8,3,dt=np.int8))(lambda a,b: lax.dot(a,b,preferred_element_type=jnp.int32))
case("f16", N(8,8,dt=np.float16), tol=2e-3)(lambda x: jax.nn.softmax(x@x.T))
case("bf16_conv", N(1,5,5,2).astype(jnp.bfloat16), N(3,3,2,2).astype(jnp.bfloat16), tol=3e-2)(lambda x,w: lax.conv_general_dilated(x,w,(1,1),"SAME",dimension_numbers=("NHWC","HWIO","NHWC")))
case("f64", N(5,dt=np.float64))(lambda x: jnp.sin(x)**2+jnp.log1p(jnp.abs(x)))
case("fp8", N(16))(lambda x: x.astype(jnp.float8_e4m3fn).astype(jnp.float32)*2)
case("int4", I(7,16))(lambda x: (x.astype(jnp.int4)+1).astype(jnp.int32))
case("nan_ops", np.array([np.nan,1,-np.inf,np.inf,0,-0.0],np.float32))(lambda x: (jnp.nanmax(x), jnp.isnan(x), jnp.nan_to_num(x), jnp.sign(x), jnp.max(x)))
case("bitcast_convert", N(6))(lambda x: lax.bitcast_convert_type(x, jnp.int32) >> 3)
case("bitcast_widths", N(6), I(255,2,4,dt=np.uint8))(lambda x,b: (lax.bitcast_convert_type(b, jnp.uint32)*3, lax.bitcast_convert_type(x*2, jnp.uint16), lax.bitcast_convert_type(lax.bitcast_convert_type(x, jnp.bfloat16)[::-1], jnp.float32)))
case("rng_bit_generator", np.array([1,2,3,4],np.uint32))(lambda k: (lax.rng_bit_generator(k, (4,5), dtype=jnp.uint32)[1], lax.rng_bit_generator(k, (3,7), dtype=jnp.uint8, algorithm=lax.RandomAlgorithm.RNG_PHILOX)[1], lax.rng_bit_generator(k, (2,3), dtype=jnp.uint32, algorithm=lax.RandomAlgorithm.RNG_THREE_FRY)))
case("pad_neg", N(6,6))(lambda x: lax.pad(x, 0., [(-1,2,1),(2,-2,0)]))
case("rev_transpose", N(3,4,5))(lambda x: jnp.flip(x.transpose(2,0,1), axis=(0,2)))
case("dyn_update", N(10,4), np.int32(3))(lambda x,i: lax.dynamic_update_slice(x, jnp.ones((2,4)), (i,0)))
case("where_argmax", N(5,7))(lambda x: (jnp.argmax(x,axis=1), jnp.argmin(x,axis=0), jnp.where(x>0,x,0).sum()))
case("iota_tri", N(6,6))(lambda x: jnp.tril(x) @ jnp.triu(x, 1))
case("remat_grad", N(8,8))(lambda x: jax.grad(jax.checkpoint(lambda y: jnp.sum(jnp.tanh(y@y)**2)))(x))
case("hessian", N(4))(lambda x: jax.hessian(lambda y: jnp.sum(jnp.sin(y)*y**3))(x))
case("jvp_vmap", N(3,4))(lambda x: jax.vmap(lambda r: jax.jvp(jnp.tanh, (r,), (jnp.ones_like(r),))[1])(x))
case("map_ctl", N(5,3))(lambda x: lax.map(lambda r: jnp.linalg.norm(r), x))
case("associative_scan", N(16))(lambda x: lax.associative_scan(jnp.add, x))
case("reduce_precision", N(16))(lambda x: lax.reduce_precision(x, 5, 10))
case("rng_uniform_ints", np.array([1,2],np.uint32))(lambda k: jax.random.randint(jax.random.wrap_key_data(k), (20,), 0, 10))
case("clamp_round", N(10)*3)(lambda x: (jnp.round(x), jnp.floor(x), lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN), jnp.clip(x,-1,1)))
case("complex_fft_grad", N(8), tol=1e-3)(lambda x: jax.grad(lambda y: jnp.sum(jnp.abs(jnp.fft.fft(y))**2))(x))
case("mixed_outputs", N(3), I(5,3))(lambda x,i: {"a": x, "b": [i, (x*2, jnp.zeros(()))]})
case("empty", np.zeros((0,3),np.float32))(lambda x: (x.sum(0), x*2))
case("scalar_bool", np.bool_(True), N(3))(lambda p,x: jnp.where(p, x, -x))
case("qr", N(5,3), tol=1e-3)(lambda a: jnp.abs(jnp.linalg.qr(a)[1]))
case("svd_vals", N(5,3), tol=1e-3)(lambda a: jnp.linalg.svd(a, compute_uv=False))
case("eigh", (lambda m: m+m.T)(N(4,4)), tol=1e-3)(lambda a: jnp.linalg.eigh(a)[0])
case("lu", N(4,4), tol=1e-3)(lambda a: jax.scipy.linalg.lu(a)[2])
case("schur_cplx", N(3,3), tol=1e-3)(lambda a: jnp.sort(jnp.abs(jnp.linalg.eigvals(a))))
case("approx_max_k", N(2,64))(lambda x: lax.approx_max_k(x, 4)[0])
case("searchsorted", np.sort(N(20)), N(7))(lambda a,v: jnp.searchsorted(a, v))
case("interp", N(9))(lambda x: jnp.interp(x, jnp.linspace(-2,2,5), jnp.arange(5.)))
case("histogram", N(50))(lambda x: jnp.histogram(x, bins=5, range=(-2,2))[0])
case("convolve", N(20), N(5))(lambda a,b: jnp.convolve(a,b,mode="same"))
case("image_resize", N(1,5,5,2))(lambda x: jax.image.resize(x, (1,9,7,2), "linear"))
case("matrix_power", N(3,3)*0.5)(lambda a: jnp.linalg.matrix_power(a, 5))
case("one_hot_cat", np.array([3,9],np.uint32), N(4,6))(lambda k,l: (jax.nn.one_hot(jnp.argmax(l,1), 6), jax.random.categorical(jax.random.wrap_key_data(k), l)))
case("gamma", np.array([3,9],np.uint32), tol=1e-3)(lambda k: jax.random.gamma(jax.random.wrap_key_data(k), jnp.array([0.5,1.,3.])))
case("special2", N(6), tol=1e-3)(lambda x: (lax.bessel_i0e(x), lax.bessel_i1e(x), lax.igamma(2., jnp.abs(x)), lax.igammac(2., jnp.abs(x)), lax.zeta(3., jnp.abs(x)+1), lax.nextafter(x, x+1), lax.polygamma(1., jnp.abs(x)+1)))
case("random_gamma_grad", N(5), tol=1e-3)(lambda x: lax.random_gamma_grad(jnp.abs(x)+1, jnp.abs(x)+0.5))
case("unique_size", I(5,20))(lambda x: jnp.unique(x, size=6, fill_value=-1))
case("nonzero_size", N(10))(lambda x: jnp.nonzero(x>0, size=10)[0])
case("bincount", I(6,30))(lambda x: jnp.bincount(x, length=6))
case("opt_barrier", N(4))(lambda x: lax.optimization_barrier((x*2, x+1)))
case("custom_vjp", N(5))(lambda x: jax.grad(lambda y: jnp.sum(jax.nn.relu(y)*jax.nn.gelu(y)+jax.nn.softplus(y)))(x))
case("dot_attention", N(1,6,2,8), N(1,6,2,8), N(1,6,2,8), tol=1e-3)(lambda q,k,v: jax.nn.dot_product_attention(q,k,v,is_causal=True))
case("lax_reduce_multi", N(4,5), I(9,4,5))(lambda x,i: lax.reduce((x,i),(jnp.float32(-jnp.inf),jnp.int32(0)), lambda a,b: (jnp.maximum(a[0],b[0]), a[1]+b[1]), (1,)))
case("sort_stable_bf16", N(30).astype(jnp.bfloat16))(lambda x: (jnp.sort(x, stable=True), lax.top_k(x, 3)[1]))
case("checkify", N(4))(lambda x: jnp.log(jnp.abs(x)+1))
case("expand_dims_squeeze", N(1,3,1))(lambda x: jnp.squeeze(x)[None, :, None] * jnp.ones((2,1,4)))
case("pow_int", N(6), I(4,6))(lambda x,n: (x**n, lax.integer_pow(x, 3), jnp.power(jnp.abs(x), 0.3)))
case("rem_atan2", N(6), N(6))(lambda a,b: (jnp.remainder(a,b), jnp.fmod(a,b), jnp.arctan2(a,b), jnp.hypot(a,b)))
case("complex128", N(4,dt=np.float64))(lambda x: jnp.abs(jnp.exp((x+1j*x).astype(jnp.complex128))**2))
case("complex_div_log", N(4), N(4))(lambda a,b: jnp.log((a+1j*b)/(b+0.5j)))
case("complex_matmul", N(3,3), N(3,3))(lambda a,b: jnp.abs((a+1j*b)@(b-1j*a)))
case("cplx_sqrt_pow", N(4), N(4), tol=1e-3)(lambda a,b: (jnp.sqrt(a+1j*b), (a+1j*b)**2.5, jnp.tanh(a+1j*b)))
case("while_dynamic_trip", N(3), np.int32(7))(lambda x,n: lax.while_loop(lambda c: c[0]<n, lambda c: (c[0]+1, c[1]*1.1), (0, x))[1])
case("scan_unroll", N(9,2))(lambda xs: lax.scan(lambda c,x: (c*0.5+x, c), jnp.zeros(2), xs, unroll=3))
case("big_reduce_f16", N(3000,dt=np.float16), tol=2e-2)(lambda x: (x.sum(), x.mean(), jnp.var(x)))
case("int64_u64", I(1000,5,dt=np.int32))(lambda x: x*3)
case("clamp_cast", N(8)*300)(lambda x: (x.astype(jnp.int8), x.astype(jnp.uint8), x.astype(jnp.int16), jnp.float32(1e30)*x))


def assert_same(test, got, want, tol):
    got_leaves, got_tree = jax.tree_util.tree_flatten(got)
    want_leaves, want_tree = jax.tree_util.tree_flatten(want)
    test.assertEqual(got_tree, want_tree)
    for g, w in zip(got_leaves, want_leaves):
        test.assertIsInstance(g, jax.Array)
        test.assertEqual((g.dtype, g.shape), (w.dtype, w.shape))
        g, w = np.asarray(g), np.asarray(w)
        if not np.iscomplexobj(w):
            g, w = g.astype(np.float64), w.astype(np.float64)
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol, equal_nan=True)


class JaxOpsTest(unittest.TestCase):
    def test_every_function_matches_jax(self):
        for name, (fn, args, tol) in CASES.items():
            with self.subTest(name):
                hf = hloc.jax.jit(fn, backend="host")
                assert_same(self, hf(*args), jax.jit(fn)(*args), tol)
                self.assertEqual(hf.executable(*args).stats["interpreter_ops"], 0)


if __name__ == "__main__":
    result = unittest.main(argv=sys.argv[:1], exit=False, verbosity=2).result
    failed = len(result.failures) + len(result.errors)
    print(f"{len(CASES)} functions; {result.testsRun - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)
