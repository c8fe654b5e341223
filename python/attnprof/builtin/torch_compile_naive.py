"""py.torch.compile.naive: torch.compile of the naive recipe (matmul, scale, softmax, matmul),
the fusion question of the seeds. Inductor may recognize the pattern and call a fused SDPA
kernel instead: the row's kernels (attnprof trace) say which ran. Compilation happens in
prepare and lands in prepare_s."""
from __future__ import annotations

import math

from ..masks import has_empty_rows, torch_mask
from ..provider import Provider, Run


def naive(q, k, v, mask, scale: float, group: int):
    import torch

    if group > 1:
        k = k.repeat_interleave(group, dim=1)
        v = v.repeat_interleave(group, dim=1)
    scores = torch.matmul(q, k.transpose(-2, -1)) * scale
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.matmul(torch.softmax(scores, dim=-1), v)


class _Run(Run):
    def __init__(self, fn, spec, mask):
        self.fn, self.spec, self.mask = fn, spec, mask

    def launch(self, io):
        return {"o": self.fn(io.q, io.k, io.v, self.mask, self.spec.softmax_scale,
                             self.spec.group_size)}

    def note(self):
        return "torch.compile(mode='default', dynamic=False) of the naive recipe"


class TorchCompileNaive(Provider):
    name = "py.torch.compile.naive"
    description = "torch.compile of the naive recipe (Inductor: fused kernels or a pattern-matched SDPA)"
    device = "cuda"
    family = "naive"
    fused = False  # what Inductor makes of it is seen in the kernels, not declared
    library = "PyTorch"
    requires = ("torch",)

    def supports(self, spec):
        if has_empty_rows(spec):
            return "queries that see no key (the softmax of an empty row is NaN)"
        return None

    def workspace_estimate(self, spec):
        # The scores and probabilities in the input dtype, if Inductor keeps them unfused.
        size = 4 if spec.dtype == "fp32" else 2
        return 2 * size * spec.batch * spec.q_heads * spec.q_len * spec.kv_len

    def prepare(self, spec, io):
        import torch

        # A fresh compilation per point: Dynamo keys its cache on the function's code and falls
        # back to eager after a few shapes (cache_size_limit); prepare_s then is one compile.
        torch._dynamo.reset()
        fn = torch.compile(naive, dynamic=False)
        mask = torch_mask(spec, io.q.device)
        run = _Run(fn, spec, mask)
        run.launch(io)  # compile (and autotune) here, untimed
        return run


PROVIDERS = [TorchCompileNaive()]
