"""The worker's side of the callback: turns the library's operations into provider calls.

Everything a provider does runs on the instrument's stream (torch.cuda.ExternalStream over the
cudaStream_t the engine times); outputs a launch returns instead of writing are copied into the
harness's tensors at publish time, untimed."""
from __future__ import annotations

import json
import sys
import tracemalloc
import traceback
from contextlib import nullcontext

from . import _abi, _tensors
from .provider import NotSupported
from .spec import Spec


class _Prepared:
    def __init__(self, provider, run, device, memory_base):
        self.provider, self.run, self.device = provider, run, device
        self.memory_base = memory_base
        self.views = []
        self.outputs = None  # what the last launch returned
        self.host_peak = 0  # numpy: the traced peak, once measured
        self.output_bytes = 0  # bytes of the outputs a launch returned (kept by the framework)

    def framework(self):
        return self.provider.framework


class Host:
    def __init__(self, providers):
        self.providers = providers
        self.runs = {}
        self.next_run = 1
        self.streams = {}

    # --- helpers --------------------------------------------------------------------------
    def _stream(self, provider, pointer):
        """The context that puts a torch provider's work on the instrument's stream."""
        if provider.framework != "torch" or provider.device != "cuda" or not pointer:
            return nullcontext()
        import torch

        if pointer not in self.streams:
            self.streams[pointer] = torch.cuda.ExternalStream(pointer)
        return torch.cuda.stream(self.streams[pointer])

    def _views(self, provider, sets, count):
        if provider.framework == "numpy":
            return [_tensors.numpy_views(sets[i]) for i in range(count)]
        return [_tensors.torch_views(sets[i], provider.device) for i in range(count)]

    @staticmethod
    def _torch_memory(provider):
        if provider.framework != "torch" or provider.device != "cuda":
            return None
        import torch

        return torch.cuda

    # --- operations -----------------------------------------------------------------------
    def supports(self, index, request):
        p = self.providers[index]
        spec = Spec.from_json(request["spec"])
        if spec.mode != "fwd" and not p.backward:
            return {"reason": f"{p.name} runs the forward only"}
        if p.framework == "numpy" and p.device != "cpu":
            return {"reason": "a numpy provider runs on the CPU only"}
        return {"reason": p.supports(spec)}

    def estimate(self, index, request):
        return {"bytes": int(self.providers[index].workspace_estimate(Spec.from_json(request["spec"])))}

    def prepare(self, index, request, sets, stream):
        p = self.providers[index]
        spec = Spec.from_json(request["spec"])
        p.threads = int(request.get("threads", 0))  # the CPU engine's threads (0: all)
        p.setting_values = dict(request.get("settings", {}))  # the point's (provider_settings.hpp)
        memory = self._torch_memory(p)
        base = 0
        if memory is not None:
            memory.synchronize()
            memory.reset_peak_memory_stats()
            base = memory.memory_allocated()
        with self._stream(p, stream):
            io = self._views(p, sets, 1)[0]
            run = p.prepare(spec, io)
        if memory is not None and not p.count_prepare_memory:
            memory.synchronize()
            memory.reset_peak_memory_stats()
            base = memory.memory_allocated()
        if memory is None and p.framework == "numpy":
            # numpy reports its buffers to tracemalloc: traced over the verified launch and the
            # warm-up, stopped when the instrument first asks (before the timed launches).
            tracemalloc.start()
            base = tracemalloc.get_traced_memory()[0]
        handle = self.next_run
        self.next_run += 1
        self.runs[handle] = _Prepared(p, run, p.device, base)
        return {"run": handle}

    def bind(self, handle, sets, count):
        prepared = self.runs[handle]
        prepared.views = self._views(prepared.provider, sets, count)
        return {}

    def launch(self, handle, index, stream):
        prepared = self.runs[handle]
        prepared.outputs = None  # the last launch's outputs go before the next ones come
        with self._stream(prepared.provider, stream):
            prepared.outputs = prepared.run.launch(prepared.views[index])
        return None

    def publish(self, handle, index, stream):
        prepared = self.runs[handle]
        if not prepared.outputs:
            return {}
        io = prepared.views[index]
        prepared.output_bytes = sum(int(v.nbytes) for v in prepared.outputs.values())
        with self._stream(prepared.provider, stream):
            for role, value in prepared.outputs.items():
                target = io[role]
                if target is None:
                    raise RuntimeError(f"the launch returned '{role}', which this point does not have")
                if prepared.provider.framework == "numpy":
                    target[...] = value
                else:
                    target.copy_(value.reshape(target.shape))
        return {}

    def info(self, handle):
        prepared = self.runs[handle]
        memory = self._torch_memory(prepared.provider)
        untracked = prepared.host_peak
        if memory is not None:
            # The outputs a launch returns stand for the harness's, which are counted already.
            peak = memory.max_memory_allocated() - prepared.memory_base
            untracked = max(0, peak - prepared.output_bytes)
        elif prepared.provider.framework == "numpy" and tracemalloc.is_tracing():
            peak = tracemalloc.get_traced_memory()[1] - prepared.memory_base
            untracked = max(0, peak - prepared.output_bytes)
            tracemalloc.stop()
            prepared.host_peak = untracked
        # What the framework's allocator does not see (ONNX Runtime's arena) counts too.
        workspace = int(prepared.run.workspace_bytes())
        return {
            "workspace_bytes": workspace,
            "untracked_peak_bytes": int(untracked) + workspace,
            "note": str(prepared.run.note() or ""),
        }

    def release(self, handle):
        prepared = self.runs.pop(handle, None)
        if tracemalloc.is_tracing():
            tracemalloc.stop()
        if prepared is not None and self._torch_memory(prepared.provider) is not None:
            import torch

            del prepared
            torch.cuda.synchronize()
            torch.cuda.empty_cache()
        return {}

    # --- the callback -----------------------------------------------------------------------
    def dispatch(self, handle, op, text, sets, count, stream, out, capacity):
        try:
            if op == _abi.OP_LAUNCH:  # the hot path: no JSON either way
                self.launch(handle, count, stream)
                return _abi.OK
            request = json.loads(text) if text else {}
            if op == _abi.OP_SUPPORTS:
                answer = self.supports(handle, request)
            elif op == _abi.OP_ESTIMATE:
                answer = self.estimate(handle, request)
            elif op == _abi.OP_PREPARE:
                answer = self.prepare(handle, request, sets, stream)
            elif op == _abi.OP_BIND:
                answer = self.bind(handle, sets, count)
            elif op == _abi.OP_PUBLISH:
                answer = self.publish(handle, count, stream)
            elif op == _abi.OP_INFO:
                answer = self.info(handle)
            elif op == _abi.OP_RELEASE:
                answer = self.release(handle)
            else:
                raise RuntimeError(f"unknown operation {op}")
            _abi.reply(out, capacity, json.dumps(answer))
            return _abi.OK
        except BaseException as e:  # noqa: BLE001 - every failure becomes the point's fault
            _abi.reply(out, capacity, json.dumps(_fault(e)))
            return _abi.FAILED


def _fault(e: BaseException) -> dict:
    kind = "provider"
    if isinstance(e, (NotSupported, NotImplementedError)):
        kind = "not_supported"
    elif type(e).__name__ == "OutOfMemoryError" or isinstance(e, MemoryError):
        kind = "oom"
    else:
        traceback.print_exception(type(e), e, e.__traceback__, file=sys.stderr)
    message = str(e).strip().splitlines()[0] if str(e).strip() else ""
    return {"kind": kind, "message": f"{type(e).__name__}: {message}" if message else type(e).__name__}
