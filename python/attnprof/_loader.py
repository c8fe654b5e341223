"""Finds the providers: the built-in ones (attnprof/builtin/*.py, each module's PROVIDERS list)
and the user's (--py-provider FILE.py:NAME, FILE.py, or a folder of .py files)."""
from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import pkgutil
import platform
import sys

from ._inference import InferenceError
from .function_provider import FunctionProvider
from .provider import TRAITS, Provider


class LoadError(Exception):
    pass


def builtin() -> list:
    from . import builtin as package

    out = []
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        try:
            module = importlib.import_module(f"{package.__name__}.{info.name}")
        except Exception as e:  # one broken module must not hide the others
            print(f"attnprof: provider module {info.name} not loaded: {type(e).__name__}: {e}",
                  file=sys.stderr)
            continue
        out.extend(getattr(module, "PROVIDERS", []))
    return out


def _as_provider(obj, where: str) -> Provider:
    if isinstance(obj, Provider):
        return obj
    if inspect.isclass(obj) and issubclass(obj, Provider):
        return obj()
    if callable(obj):
        return FunctionProvider(obj, origin=where)
    raise LoadError(f"{where}: not a provider, a Provider class or a function")


def _module(path: str):
    name = "attnprof_user_" + "".join(c if c.isalnum() else "_" for c in os.path.abspath(path))
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise LoadError(f"{path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as e:  # the user's file: say what broke it, in one line
        del sys.modules[name]
        raise LoadError(f"{path}: cannot load: {type(e).__name__}: {e}") from e
    return module


def _from_file(path: str, attribute: str | None) -> list:
    module = _module(path)
    if attribute:
        if not hasattr(module, attribute):
            raise LoadError(f"{path}: has no '{attribute}'")
        return [_as_provider(getattr(module, attribute), f"{path}:{attribute}")]
    if hasattr(module, "PROVIDERS"):
        return [_as_provider(p, path) for p in module.PROVIDERS]
    found = [
        obj()
        for obj in vars(module).values()
        if inspect.isclass(obj) and issubclass(obj, Provider) and obj is not Provider
        and obj.__module__ == module.__name__ and obj.name
    ]
    if not found:
        raise LoadError(f"{path}: defines no PROVIDERS list and no named Provider class")
    return found


def user(spec: str) -> list:
    """One --py-provider argument: FILE.py:NAME, FILE.py or a folder."""
    path, attribute = spec, None
    if ":" in spec and not os.path.exists(spec):
        path, attribute = spec.rsplit(":", 1)
    if os.path.isdir(path):
        if attribute:
            raise LoadError(f"{spec}: a folder takes no :NAME")
        out = []
        for entry in sorted(os.listdir(path)):
            if entry.endswith(".py") and not entry.startswith("_"):
                out.extend(_from_file(os.path.join(path, entry), None))
        return out
    if not os.path.isfile(path):
        raise LoadError(f"{path}: no such file")
    return _from_file(path, attribute)


def load(user_specs: list) -> list:
    """Every provider, built-in first, a function's tensors settled (_inference.py); raises
    LoadError naming a bad file, a function whose tensors cannot be told, or a name used twice."""
    out = builtin()
    for spec in user_specs:
        out.extend(user(spec))
    for p in out:
        if isinstance(p, FunctionProvider):
            try:
                p.settle()
            except InferenceError as e:
                raise LoadError(str(e)) from e
    seen = set()
    for p in out:
        if not p.name:
            raise LoadError(f"a provider of {type(p).__module__} has no name")
        if p.name in seen:
            raise LoadError(f"two providers are named '{p.name}'")
        seen.add(p.name)
    return out


def traits_json(p: Provider, library_version: str) -> dict:
    """The provider's traits as the C++ side reads them (result_json.cpp read_traits): one entry
    per row of provider.TRAITS, each cast to its kind."""
    out = {}
    for name, kind in TRAITS:
        value = library_version if name == "library_version" else getattr(p, name, kind())
        out[name] = kind(value)
    return out


def describe(p: Provider) -> dict:
    """What the C++ side reads: the traits, whether it can run here, fingerprint entries."""
    try:
        reason = p.availability()
    except Exception as e:
        reason = f"availability check failed: {type(e).__name__}: {e}"
    try:
        version = p.library_version() if reason is None else ""
        fingerprint = p.fingerprint() if reason is None else {}
    except Exception:
        version, fingerprint = "", {}
    return {
        "traits": traits_json(p, version),
        "settings": [{"name": str(s["name"]), "values": [str(v) for v in s.get("values", ())],
                      "help": str(s.get("help", ""))} for s in p.settings],
        "available": reason is None,
        "reason": reason or "",
        "fingerprint": {"python": platform.python_version(),
                        **{str(k): str(v) for k, v in fingerprint.items()}},
    }
