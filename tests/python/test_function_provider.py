"""A function made a provider: its registration (name, traits, spec parameter) and the device
and framework found by calling it (python/attnprof/function_provider.py, _inference.py)."""
from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import attnprof
from attnprof import _loader
from attnprof._inference import InferenceError
from attnprof.spec import Spec

HAS_TORCH = importlib.util.find_spec("torch") is not None


def test_the_decorator_registers_name_traits_and_the_spec_parameter():
    @attnprof.provider(name="py.mine", family="naive", masks=("none", "causal"))
    def with_spec(q, k, v, spec):
        return q

    assert isinstance(with_spec, attnprof.FunctionProvider)
    assert (with_spec.name, with_spec.family, with_spec.fused) == ("py.mine", "naive", False)
    assert with_spec.with_spec and with_spec.masks == ("none", "causal")
    causal = Spec(batch=1, q_heads=1, kv_heads=1, q_len=8, kv_len=8, head_dim=8, v_head_dim=0,
                  dtype="fp32", mask="window:4", mode="fwd", layout="bhsd", scale=0.0)
    assert with_spec.supports(causal) == "masks: none, causal only"

    def plain(q, k, v):
        return q

    bare = attnprof.FunctionProvider(plain)
    assert bare.name == "py.plain" and not bare.with_spec
    assert "takes no spec" in bare.supports(causal)


def test_an_unknown_trait_is_refused():
    with pytest.raises(TypeError, match="unknown provider trait 'colour'"):
        attnprof.provider(colour="blue")(lambda q, k, v: q)


def test_a_numpy_function_is_found_to_take_numpy_arrays_on_the_cpu(numpy_attention):
    p = attnprof.FunctionProvider(numpy_attention)
    p.settle()
    assert (p.device, p.framework, p.requires) == ("cpu", "numpy", ("numpy",))


def test_the_trial_call_gets_tiny_inputs_and_the_spec():
    seen = []

    def attention(q, k, v, spec):
        seen.append((type(q), q.shape, q.dtype, spec.head_dim, spec.mask))
        return np.zeros_like(q)

    attnprof.FunctionProvider(attention).settle()
    assert seen == [(np.ndarray, (1, 2, 16, 64), np.float32, 64, "none")]


def test_declared_device_and_framework_are_not_called():
    def never(q, k, v):
        raise AssertionError("called")

    p = attnprof.FunctionProvider(never, device="cuda", framework="torch")
    p.settle()
    assert (p.device, p.framework, p.requires) == ("cuda", "torch", ("torch",))
    declared = attnprof.FunctionProvider(never, device="cpu", framework="numpy",
                                         requires=("numpy", "scipy"))
    declared.settle()
    assert declared.requires == ("numpy", "scipy")


def test_a_declared_device_leaves_only_its_kinds():
    def numpy_only(q, k, v):
        return np.asarray(q) * 1.0

    p = attnprof.FunctionProvider(numpy_only, device="cpu")
    p.settle()
    assert (p.device, p.framework) == ("cpu", "numpy")
    with pytest.raises(InferenceError, match="no input kind is device='cuda', framework='numpy'"):
        attnprof.FunctionProvider(numpy_only, device="cuda", framework="numpy").settle()


def test_a_function_that_takes_nothing_says_what_to_declare():
    def broken(q, k, v):
        raise RuntimeError("no kernel for this\nsecond line")

    with pytest.raises(InferenceError) as e:
        attnprof.FunctionProvider(broken, name="py.broken").settle()
    message = str(e.value)
    assert "\n" not in message
    assert message.startswith("py.broken: cannot tell which tensors it takes (")
    assert "numpy arrays: RuntimeError: no kernel for this;" in message
    assert "declare them, e.g. @attnprof.provider(device='cuda', framework='torch')" in message
    if not HAS_TORCH:
        assert "torch CUDA tensors: torch is not importable" in message
        assert "torch CPU tensors: torch is not importable" in message


def test_a_wrong_shape_or_kind_is_not_an_answer():
    def wrong_shape(q, k, v):
        return q[..., :3]

    with pytest.raises(InferenceError, match=r"numpy arrays: returned a ndarray of shape "
                                             r"\(1, 2, 16, 3\), not numpy arrays of shape "
                                             r"\(1, 2, 16, 64\)"):
        attnprof.FunctionProvider(wrong_shape).settle()

    def a_list(q, k, v):
        return q.tolist()

    with pytest.raises(InferenceError, match="numpy arrays: returned a list, not numpy arrays"):
        attnprof.FunctionProvider(a_list).settle()


@pytest.mark.skipif(not HAS_TORCH, reason="torch is not importable")
def test_a_torch_function_is_found_to_take_torch_tensors():
    import torch

    def attention(q, k, v):
        return torch.softmax(q @ k.transpose(-2, -1), -1) @ v

    p = attnprof.FunctionProvider(attention)
    p.settle()
    assert p.framework == "torch"
    assert p.device == ("cuda" if torch.cuda.is_available() else "cpu")


def test_loading_a_file_settles_its_functions_or_names_the_file(module, tmp_path):
    good = module("loaded_numpy", """
        import numpy as np
        def attention(q, k, v):
            return np.array(q)
    """)
    loaded = [x for x in _loader.load([f"{good.__file__}:attention"]) if x.name == "py.attention"]
    assert [(x.device, x.framework) for x in loaded] == [("cpu", "numpy")]

    bad = tmp_path / "takes_nothing.py"
    bad.write_text("def attention(q, k, v):\n    raise KeyError('nope')\n")
    with pytest.raises(_loader.LoadError, match="py.attention: cannot tell which tensors"):
        _loader.load([f"{bad}:attention"])
