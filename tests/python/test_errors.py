"""The CLI's refusals as Python exceptions, with its own one-line message, and the executable
the package calls (python/attnprof/_cli.py)."""
from __future__ import annotations

import os
import subprocess

import pytest

import attnprof
from attnprof import _cli
from conftest import POINT


def cli_error(*args) -> str:
    """What the CLI itself says when it refuses `args` (exit 2), without its prefix."""
    done = subprocess.run([_cli.binary(), *map(str, args)], capture_output=True, text=True)
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith("attnprof: error: ")
    return line[len("attnprof: error: "):]


def test_a_refusal_is_a_usage_error_with_the_clis_message(tmp_path):
    point = {**POINT, "heads": 0, "providers": "cpu.naive"}
    with pytest.raises(attnprof.UsageError) as e:
        attnprof.run(**point)
    assert e.value.returncode == 2
    assert isinstance(e.value, ValueError) and isinstance(e.value, attnprof.Error)
    assert "q_heads must be >= 1 (got 0)" in str(e.value)
    out = tmp_path / "x.jsonl"
    assert str(e.value) == cli_error("run", "--out", out, "--no-history", *_cli.options(point))
    assert not out.exists()


def test_every_verb_refuses_in_words(tmp_path):
    with pytest.raises(attnprof.UsageError, match="'no.such.provider' matches no provider"):
        attnprof.run(providers="no.such.provider", **POINT)
    with pytest.raises(attnprof.UsageError, match="tune needs a limit"):
        attnprof.tune("cpu.naive", **POINT)
    with pytest.raises(attnprof.UsageError, match="give --html FILE and/or --markdown FILE"):
        attnprof.report(tmp_path / "absent.jsonl")
    with pytest.raises(attnprof.UsageError, match="absent.jsonl"):
        attnprof.compare(tmp_path / "absent.jsonl", tmp_path / "absent.jsonl")
    with pytest.raises(attnprof.UsageError, match="no_such_file.py"):
        attnprof.providers(py_provider=str(tmp_path / "no_such_file.py"))


def test_an_existing_output_is_never_replaced_without_force(tmp_path):
    rows = attnprof.run(providers="cpu.naive", **POINT)
    page = tmp_path / "r.md"
    page.write_text("mine")
    with pytest.raises(attnprof.UsageError, match="--markdown"):
        attnprof.report(rows, markdown=page)
    assert page.read_text() == "mine"
    attnprof.report(rows, markdown=page, force=True)
    assert page.read_text() != "mine"


def test_a_function_whose_tensors_cannot_be_told_is_refused_before_any_work(module):
    odd = module("takes_nothing", """
        def attention(q, k, v):
            raise TypeError("what is this")
    """)
    with pytest.raises(attnprof.UsageError) as e:
        attnprof.profile(odd.attention, **POINT)
    message = str(e.value)
    assert message.startswith("--py-provider py.attention: cannot tell which tensors it takes")
    assert "numpy arrays: TypeError: what is this" in message
    # The CLI refuses the file with the same words.
    assert message == cli_error("list", "--py-provider", f"{odd.__file__}:attention")


def test_a_run_that_fails_is_a_run_error(module):
    wrong = module("wrong_numpy", """
        def attention(q, k, v):
            return q * 0.5
    """)
    with pytest.raises(attnprof.RunError) as e:
        attnprof.profile(wrong.attention, fail_on_error=True, **POINT)
    assert e.value.returncode == 1 and not isinstance(e.value, attnprof.UsageError)


def test_the_executable_is_attnprof_bin_when_set(monkeypatch, tmp_path):
    assert _cli.binary() == os.environ["ATTNPROF_BIN"]
    fake = tmp_path / "attnprof"
    fake.write_text("#!/bin/sh\necho 'attnprof: error: from the fake' >&2\nexit 2\n")
    fake.chmod(0o755)
    monkeypatch.setenv("ATTNPROF_BIN", str(fake))
    with pytest.raises(attnprof.UsageError, match="^from the fake$"):
        attnprof.providers()


def test_options_become_flags():
    assert _cli.options({"heads": 16, "seq": [1024, 2048], "in_process": True,
                         "no_trace": False, "mask": None, "kv_seq": (1, 2)}) == [
        "--heads", "16", "--seq", "1024,2048", "--in-process", "--kv-seq", "1,2"]
