"""Every verb of the Python API on the CPU, through the build's attnprof: providers, run,
profile, tune, report, compare, rows_frame (python/attnprof/api.py)."""
from __future__ import annotations

import copy
import importlib.util
import json

import pytest

import attnprof
from attnprof import api
from conftest import POINT


def by_provider(rows: list) -> dict:
    return {r["provider"]: r for r in rows}


def test_providers_is_the_list_table():
    listed = {p["provider"]: p for p in attnprof.providers()}
    for name in ("cpu.naive", "cpu.flash", "py.numpy.naive"):
        assert listed[name]["available"], listed[name]["reason"]
        assert listed[name]["traits"]["device"] == "cpu"
    assert not listed["trt.fp16"]["available"] and listed["trt.fp16"]["reason"]


def test_providers_lists_a_function_file(numpy_attention):
    path = numpy_attention.__code__.co_filename
    listed = {p["provider"]: p for p in attnprof.providers(py_provider=f"{path}:attention")}
    assert listed["py.attention"]["available"]
    assert listed["py.attention"]["traits"]["library"] == "user"


def test_run_returns_the_rows_as_dicts():
    rows = attnprof.run(providers="py.numpy.naive,cpu.naive", mask=["none", "causal"], **POINT)
    assert sorted((r["provider"], r["spec"]["mask"]) for r in rows) == [
        ("cpu.naive", "causal"), ("cpu.naive", "none"),
        ("py.numpy.naive", "causal"), ("py.numpy.naive", "none")]
    for r in rows:
        assert r["status"] == "passed", r["reason"]
        assert r["timing"]["median_us"] > 0
        assert r["verify"]["rows_checked"] == r["verify"]["rows_total"]


def test_run_takes_a_preset():
    rows = attnprof.run(preset="cpu-small", providers="cpu.flash", seq=256, min_time="1ms",
                        min_samples=3, no_trace=True)
    # cpu-small's three series at N 256: none and causal, and causal with 2 KV heads.
    assert sorted((r["spec"]["mask"], r["spec"]["kv_heads"]) for r in rows) == [
        ("causal", 2), ("causal", 8), ("none", 8)]
    assert {r["status"] for r in rows} == {"passed"}


def test_profile_runs_a_function_beside_its_contenders(numpy_attention):
    # No device given: the function's own (the CPU, where its numpy arrays live).
    point = {k: v for k, v in POINT.items() if k != "device"}
    rows = by_provider(attnprof.profile(numpy_attention, compare=["cpu.naive", "cpu.flash"],
                                        **point))
    assert sorted(rows) == ["cpu.flash", "cpu.naive", "py.attention"]
    mine = rows["py.attention"]
    assert mine["status"] == "passed", mine["reason"]
    assert mine["traits"]["device"] == "cpu" and mine["traits"]["library"] == "user"
    assert mine["verify"]["rel_l2_err"] < 1e-5


def test_profile_names_the_function_it_was_given(module):
    decorated = module("decorated_numpy", """
        import numpy as np
        import attnprof

        @attnprof.provider(name="py.decorated", family="naive")
        def attention(q, k, v, spec):
            s = q @ k.transpose(0, 1, 3, 2) * spec.softmax_scale
            p = np.exp(s - s.max(-1, keepdims=True))
            return p / p.sum(-1, keepdims=True) @ v
    """)
    (row,) = attnprof.profile(decorated.attention, **POINT)
    assert (row["provider"], row["status"], row["traits"]["family"]) == (
        "py.decorated", "passed", "naive")


def test_tune_finds_the_largest_and_the_optimal_batch_and_why_no_larger(numpy_attention,
                                                                         tmp_path):
    kept = tmp_path / "tune.json"
    point = {k: v for k, v in POINT.items() if k not in ("min_samples", "device")}
    (result,) = attnprof.tune(numpy_attention, max_memory="4MiB", p95="1s", json_path=kept,
                              **point)
    assert result["provider"] == "py.attention" and result["fits"]
    assert 1 <= result["optimal"] <= result["largest"]
    tried = {p["value"]: p for p in result["curve"]}
    assert tried[result["largest"]]["fits"]
    larger = [p for v, p in tried.items() if v > result["largest"]]
    assert larger and not any(p["fits"] for p in larger)
    # The boundary is the next batch's own reason, and it is the memory limit.
    assert "> limit 4.00 MiB" in result["boundary"], result["boundary"]
    assert json.loads(kept.read_text())["results"] == [result]


def test_tune_takes_provider_names():
    results = attnprof.tune(["cpu.flash", "cpu.naive"], max_memory="64MiB", cap=4, **POINT)
    assert [(r["provider"], r["largest"]) for r in results] == [("cpu.flash", 4), ("cpu.naive", 4)]
    assert all(r["boundary"] == "reached the search cap (batch 4)" for r in results), results


def test_report_writes_html_and_markdown_of_rows_or_a_journal(tmp_path):
    rows = attnprof.run(providers="py.numpy.naive,cpu.naive", **POINT)
    html, markdown = tmp_path / "r.html", tmp_path / "r.md"
    assert attnprof.report(rows, html=html, markdown=markdown) == [str(html), str(markdown)]
    assert "py.numpy.naive" in html.read_text() and "cpu.naive" in markdown.read_text()
    journal = tmp_path / "rows.jsonl"
    journal.write_text("".join(json.dumps(r) + "\n" for r in rows))
    again = tmp_path / "again.md"
    assert attnprof.report(journal, markdown=again, title="again") == [str(again)]
    assert again.read_text().startswith("# again")


def test_compare_judges_each_point_against_the_noise():
    base = attnprof.run(providers="cpu.naive,cpu.flash", seq=[32, 64],
                        **{k: v for k, v in POINT.items() if k != "seq"})
    same = attnprof.compare(base, base)
    assert same["summary"]["compared"] == 4 and same["summary"]["regression"] is False
    # Identical medians: SAME, or AMBIGUOUS where the host's noise is wider than the threshold.
    assert {r["verdict"] for r in same["rows"]} <= {"SAME", "AMBIGUOUS"}
    assert all(r["ratio"] == 1 for r in same["rows"])
    # Twice as slow, with 1% noise on both sides: SLOWER, and a regression.
    quiet = copy.deepcopy(base)
    for r in quiet:
        r["timing"]["rel_noise"] = 0.01
    slower = copy.deepcopy(quiet)
    for r in slower:
        r["timing"]["median_us"] *= 2
    judged = attnprof.compare(quiet, slower)
    assert {r["verdict"] for r in judged["rows"]} == {"SLOWER"}
    assert [r["ratio"] for r in judged["rows"]] == pytest.approx([2] * 4)
    assert judged["summary"]["slower"] == 4 and judged["summary"]["regression"] is True
    fewer = attnprof.compare(base, [r for r in base if r["provider"] == "cpu.flash"])
    assert fewer["summary"]["compared"] == 2 and fewer["summary"]["regression"] is True
    assert fewer["missing"] == [f"cpu.naive B1 H2 N{n} D16 fp32 none fwd: absent"
                                for n in (32, 64)]


def test_rows_frame_flattens_the_rows_or_says_what_to_install():
    rows = attnprof.run(providers="cpu.naive", **POINT)
    if importlib.util.find_spec("pandas") is None:
        with pytest.raises(ImportError) as e:
            attnprof.rows_frame(rows)
        assert str(e.value) == "rows_frame needs pandas: pip install 'attnprof[pandas]'"
    else:
        frame = attnprof.rows_frame(rows)
        assert list(frame["provider"]) == ["cpu.naive"]
        assert frame["timing.median_us"][0] == rows[0]["timing"]["median_us"]


def test_a_numpy_function_runs_on_the_cpu_and_others_where_the_cli_chooses(numpy_attention,
                                                                           module):
    assert api._function(numpy_attention, None, None)["device"] == "cpu"
    assert api._function(numpy_attention, None, "cuda")["device"] == "cuda"
    # One that does not take numpy arrays: the CLI chooses (a GPU where one answers), and this
    # process tries no torch tensors.
    other = module("not_numpy", """
        def attention(q, k, v):
            return q.softmax(-1)
    """)
    assert api._function(other.attention, None, None) == {
        "py_provider": f"{other.__file__}:attention", "providers": "py.attention", "device": None}
