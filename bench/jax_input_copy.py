"""What py.jax.xla.cpu's timed launch spends copying the harness's inputs into JAX arrays, against
the attention itself: B 1, H 8, N, D 64 float32, timeit in this process (each the best of 5 runs
of 20 calls, per call). `np.array` then `jnp.asarray` is the launch's copy; `jnp.array(copy=True)`
is one copy for comparison; the attention is the provider's jitted call on arrays already in JAX.
Usage: jax_input_copy.py [N ...]   (default 256 1024 4096)"""
import sys
import timeit

import jax
import jax.numpy as jnp
import numpy as np


def per_call_ms(fn):
    return 1e3 * min(timeit.repeat(fn, number=20, repeat=5)) / 20


@jax.jit
def attention(q, k, v):  # bhsd storage, swapped inside as the provider does
    t = lambda x: jnp.swapaxes(x, 1, 2)  # noqa: E731
    return jax.nn.dot_product_attention(t(q), t(k), t(v), implementation="xla")


print(f"jax {jax.__version__}, numpy {np.__version__}")
rng = np.random.default_rng(0)
for n in [int(a) for a in sys.argv[1:]] or [256, 1024, 4096]:
    x = [rng.uniform(-1, 1, (1, 8, n, 64)).astype(np.float32) for _ in range(3)]
    ins = [jnp.asarray(a) for a in x]
    attention(*ins).block_until_ready()
    launch = per_call_ms(lambda: [jnp.asarray(np.array(a)).block_until_ready() for a in x])
    one = per_call_ms(lambda: [jnp.array(a, copy=True).block_until_ready() for a in x])
    att = per_call_ms(lambda: attention(*ins).block_until_ready())
    print(f"N {n}: launch's copy {launch:.3f} ms, one copy {one:.3f} ms, attention {att:.3f} ms "
          f"(the copy {100 * launch / (launch + att):.1f}% of copy + attention)")
