"""The build-kind registry: kernels/cov_kinds.h's COV_BUILD_KINDS, autotune/buildkinds.py's BUILD_KINDS
and docs/BUILD_KINDS.md's table agree, and the callers' choices are the ones they made before the
registry (the cheapest kind per metric, the inline kinds, what a build serves)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from autotune import buildkinds
from autotune.buildkinds import BUILD_KINDS, KINDS, inline_kind_for, kind_for, serves
from autotune.vocabulary import CONTEXT_METRICS, METRICS

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "BUILD_KINDS.md"
# cov_kinds.h's SERVES / CENSUS / COUNTS constants in the registry's words
C_SERVES = {"COV_SERVES_ALL": buildkinds.SERVES_ALL, "COV_SERVES_NOSTACK": buildkinds.SERVES_NOSTACK,
            "COV_SERVES_NGRAM_N": buildkinds.SERVES_PARAM, "COV_SERVES_CTX_K": buildkinds.SERVES_PARAM,
            "COV_SERVES_NONE": buildkinds.CENSUS_NONE}
C_COUNTS = {"COV_COUNTS_HOOKS": buildkinds.COUNTS_HOOKS, "COV_COUNTS_COUNTERS": buildkinds.COUNTS_COUNTERS,
            "COV_COUNTS_AREA": buildkinds.COUNTS_AREA}


def c_build_kinds() -> list[tuple[str, str, str, str, str]]:
    """kernels/cov_kinds.h's COV_BUILD_KINDS lines, in id order: (ID, name, SERVES, CENSUS, COUNTS)."""
    src = (ROOT / "kernels" / "cov_kinds.h").read_text()
    block = src[src.index("#define COV_BUILD_KINDS(X)"):]
    block = block[:block.index("\n\n")]
    return re.findall(r"X\((\w+), (\w+), (\w+), (\w+), (\w+),", block)


def _c_serves(token: str) -> str:
    """A SERVES column in the registry's words: a COV_SERVES_* constant, or COV_M_<ID> (one metric)."""
    if token in C_SERVES:
        return C_SERVES[token]
    by_id = {m.upper().replace("-", ""): m for m in METRICS}  # COV_M_<ID>, as cov_keys.h names them
    return by_id[token.removeprefix("COV_M_")]


def test_c_and_python_build_kind_lists_agree():
    rows = c_build_kinds()
    assert [name for _, name, *_ in rows] == [k.name for k in BUILD_KINDS]
    for ident, name, c_serves, census, counts in rows:
        k = KINDS[name]
        assert ident == name.upper(), name  # COV_BUILD_<ID>
        assert _c_serves(c_serves) == k.serves, name
        assert C_SERVES[census] == k.census, name
        assert C_COUNTS[counts] == k.counts, name


def test_the_docs_table_is_the_registrys():
    """docs/BUILD_KINDS.md's table is buildkinds.markdown_table() (after a change to the registry,
    paste its output between the markers)."""
    text = DOC.read_text()
    table = text[text.index("<!-- build-kinds -->") + len("<!-- build-kinds -->"):text.index("<!-- /build-kinds -->")]
    assert table.strip() == buildkinds.markdown_table()


@pytest.mark.parametrize("metric", METRICS)
def test_the_cheapest_kind_per_metric(metric):
    """guard on the guard kind's inline counters, call-context metrics on full, the rest on blocks;
    counters the guard kind has not (not 8-bit NeverZero): blocks."""
    want = "guard" if metric == "guard" else "full" if metric in CONTEXT_METRICS else "blocks"
    assert kind_for(metric).name == want
    assert kind_for(metric, counter_bits=16, overflow="neverzero").name == ("blocks" if want == "guard" else want)
    assert kind_for(metric, counter_bits=8, overflow="saturate").name == ("blocks" if want == "guard" else want)


def test_the_inline_kinds():
    assert inline_kind_for("edge").build_vars("edge") == {"AUTOTUNE_CC_INSTRUMENT": "edge"}
    for n in range(2, 9):
        assert inline_kind_for(f"ngram-{n}").build_vars(f"ngram-{n}") == {"AUTOTUNE_CC_INSTRUMENT": "ngram",
                                                                          "AUTOTUNE_CC_NGRAM": str(n)}
    for m in CONTEXT_METRICS:
        assert inline_kind_for(m).build_vars(m) == {"AUTOTUNE_CC_INSTRUMENT": "ctx", "AUTOTUNE_CC_CTX": m}
    assert inline_kind_for("guard") is None
    assert [k.name for k in BUILD_KINDS if k.inline] == ["edge", "ngram", "ctx"]
    assert [k.name for k in BUILD_KINDS if not k.splits_selects] == ["edge", "ngram", "ctx"]


@pytest.mark.parametrize("metric", METRICS)
def test_what_a_build_serves(metric):
    """kernels/cov_ids.c cov_metric_check's rule, per kind."""
    assert serves({}, metric) and serves({"AUTOTUNE_CC_INSTRUMENT": "full"}, metric)
    assert serves({"AUTOTUNE_CC_INSTRUMENT": "blocks"}, metric) == (metric not in CONTEXT_METRICS)
    assert serves({"AUTOTUNE_CC_INSTRUMENT": "guard"}, metric) == (metric == "guard")
    assert serves({"AUTOTUNE_CC_INSTRUMENT": "edge"}, metric) == (metric == "edge")
    for n in range(2, 9):
        ngram_n = {"AUTOTUNE_CC_INSTRUMENT": "ngram", "AUTOTUNE_CC_NGRAM": str(n)}
        assert serves(ngram_n, metric) == (metric == f"ngram-{n}")
    assert not serves({"AUTOTUNE_CC_INSTRUMENT": "ngram"}, metric)
    for m in CONTEXT_METRICS:
        assert serves({"AUTOTUNE_CC_INSTRUMENT": "ctx", "AUTOTUNE_CC_CTX": m}, metric) == (metric == m)
    assert not serves({"AUTOTUNE_CC_INSTRUMENT": "ctx"}, metric)
    assert not serves({"AUTOTUNE_CC_INSTRUMENT": "ctx", "AUTOTUNE_CC_CTX": "ctx-3"}, metric)
    assert not serves({"AUTOTUNE_CC_INSTRUMENT": "pcguard"}, metric)
