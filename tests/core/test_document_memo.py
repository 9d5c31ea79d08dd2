"""The document memo: a process rendering many requests parses each document once, and what it
renders is byte for byte what fresh parses render."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from farm.core import yamlio
from farm.core.errors import CoreError
from farm.core.render import RenderRequest, render
from farm.core.yamlio import DocumentMemo

from .test_golden import case_request

ROOT = Path(__file__).resolve().parents[2]
SHARED_CASES = ROOT.parent / "shared" / "conformance" / "cases"
CASE_FOLDERS = sorted(
    p.parent
    for folder in (ROOT / "tests" / "golden", SHARED_CASES)
    for p in folder.glob("*/app.yaml")
    if not (p.parent / "charts").exists() and not (p.parent / "policy.yaml").exists()
)


def test_a_loaded_copy_can_be_changed_without_changing_the_next_load() -> None:
    memo = DocumentMemo()
    first = memo.load(b"a: {b: [1, 2]}\n", "doc.yaml")
    first["a"]["b"].append(3)
    first["c"] = "added"
    assert memo.load(b"a: {b: [1, 2]}\n", "doc.yaml") == {"a": {"b": [1, 2]}}


def test_an_alias_stays_shared_in_each_copy_as_a_parse_shares_it() -> None:
    memo = DocumentMemo()
    data = b"base: &b {x: 1}\nother: *b\n"
    fresh = yamlio.load(data)
    memo.load(data, "doc.yaml")  # parsed and kept
    copy = memo.load(data, "doc.yaml")  # a copy of what was kept
    assert (copy["base"] is copy["other"]) == (fresh["base"] is fresh["other"]) is True


def test_a_failed_parse_raises_every_time_naming_its_source() -> None:
    memo = DocumentMemo()
    for _ in range(2):
        with pytest.raises(yamlio.YAMLError, match="^broken.yaml: "):
            memo.load(b"a: 1\na: 2\n", "broken.yaml")


def test_the_memo_keeps_at_most_its_byte_bound_and_never_a_document_over_its_size_bound() -> None:
    memo = DocumentMemo(max_bytes=64, max_document_bytes=40)
    documents = [f"key{i}: {'v' * 20}\n".encode() for i in range(6)]  # 30 bytes each
    for document in documents:
        memo.load(document, "doc.yaml")
    memo.load(b"big: " + b"x" * 50 + b"\n", "doc.yaml")
    kept = [data for _, data in memo._parsed]
    assert kept == documents[-2:]  # the least recently used went first
    assert sum(map(len, kept)) <= 64


def _outcome(request: RenderRequest, memo: DocumentMemo | None) -> bytes | str:
    try:
        return render(request, memo=memo).manifests
    except CoreError as error:
        return f"{type(error).__name__}: {error}"


def test_every_case_renders_through_one_memo_in_any_order_exactly_as_fresh_parses_render_it() -> None:
    """A handler that changed the documents it was given would change what a later render through
    the same memo sees; each case is rendered twice, in two shuffled orders, among all the others."""
    assert len(CASE_FOLDERS) > 100
    requests = {case.name + str(case.parent): case_request(case) for case in CASE_FOLDERS}
    fresh = {name: _outcome(request, None) for name, request in requests.items()}
    memo = DocumentMemo()
    for seed in (1, 2):
        order = list(requests)
        random.Random(seed).shuffle(order)
        assert {name: _outcome(requests[name], memo) for name in order} == fresh
