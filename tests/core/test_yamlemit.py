"""The direct writer (farm/core/yamlemit.py) writes exactly what PyYAML writes, or declines."""

from __future__ import annotations

from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from farm.core import yamlemit, yamlio

ROOT = Path(__file__).resolve().parents[2]

# Characters that steer libyaml's analysis: indicators, quotes, spaces, breaks, non-ASCII.
TRICKY = st.sampled_from(
    list("abcXYZ019 -:#'\"\\,[]{}&*!|>%@`?.=~/\n\t") + ["é", "\u2028", "\x00", "---", "...", ": ", " #"]
)
TEXT = st.lists(TRICKY, max_size=12).map("".join)
WORDS = st.sampled_from(["true", "yes", "n", "null", "~", "10", "0x1F", "1e3", ".5", "1:20", "2001-12-14"])
SCALARS = (
    TEXT
    | WORDS
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.booleans()
    | st.none()
    | st.text(alphabet="ab -", min_size=60, max_size=120)
)
KEYS = TEXT | WORDS | st.text(alphabet="abc", min_size=90, max_size=140)
DOCUMENTS = st.recursive(
    SCALARS,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(KEYS, children, max_size=4),
    max_leaves=25,
)


def pyyaml_dump(document: object) -> str:
    return yaml.dump(document, **yamlio._DUMP_OPTIONS)


@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(DOCUMENTS)
def test_the_direct_writer_writes_what_pyyaml_writes_or_declines(document: object) -> None:
    written = yamlemit.dump_document(document)
    if written is not None:
        assert written == pyyaml_dump(document)


@settings(max_examples=300, deadline=None)
@given(st.lists(DOCUMENTS, min_size=1, max_size=4))
def test_documents_joined_directly_equal_pyyamls_dump_all(documents: list[object]) -> None:
    assert yamlio.dump_documents(documents) == yaml.dump_all(documents, **yamlio._DUMP_OPTIONS)


def _golden_documents() -> list[object]:
    documents = []
    for expected in sorted((ROOT / "tests" / "golden").glob("*/expected.yaml")):
        documents.extend(d for d in yaml.safe_load_all(expected.read_text()) if d is not None)
    return documents


def test_the_direct_writer_takes_nearly_every_golden_manifest_and_matches_it() -> None:
    documents = _golden_documents()
    assert len(documents) > 100
    written = [(document, yamlemit.dump_document(document)) for document in documents]
    taken = [(document, text) for document, text in written if text is not None]
    for document, text in taken:
        assert text == pyyaml_dump(document)
    assert len(taken) >= 0.9 * len(documents), f"declined {len(documents) - len(taken)} of {len(documents)}"


def test_a_non_finite_float_still_fails_with_its_path() -> None:
    document = {"kind": "ConfigMap", "metadata": {"name": "x"}, "data": {"ratio": float("nan")}}
    assert yamlemit.dump_document(document) is None
    try:
        yamlio.dump_manifests([document])
    except Exception as error:  # noqa: BLE001 - the message is what is checked
        assert "data.ratio" in str(error)
    else:
        raise AssertionError("a NaN was written")
