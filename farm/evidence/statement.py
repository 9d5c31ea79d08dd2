"""in-toto Statement v1 (https://in-toto.io/Statement/v1): build and strictly parse.

A statement is ``{"_type", "subject": [{"name", "digest": {"sha256"}}], "predicateType",
"predicate"}``. The farm only writes sha256 subject digests, in lowercase hex; on parsing,
unknown fields, other digest algorithms and uppercase hex are refused rather than ignored.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from farm.evidence.errors import EvidenceError, require_exact_keys, strict_json_loads
from farm.identity.canonical import canonical_json, check_json_value, is_hex_digest, require_hex_digest

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
_CODE = "statement.malformed"


@dataclass(frozen=True)
class Subject:
    name: str
    sha256: str


@dataclass(frozen=True)
class Statement:
    subjects: tuple[Subject, ...]
    predicate_type: str
    predicate: dict[str, Any]
    # built from a predicate known to hold no float: its bytes need no walk (``canonical_json``)
    floatless: bool = field(default=False, compare=False)

    def to_json(self) -> dict[str, Any]:
        return {
            "_type": STATEMENT_TYPE,
            "subject": [{"name": s.name, "digest": {"sha256": s.sha256}} for s in self.subjects],
            "predicateType": self.predicate_type,
            "predicate": self.predicate,
        }

    def to_bytes(self) -> bytes:
        # Every Statement comes from build_statement (its predicate checked) or parse_statement
        # (decoded JSON), so its JSON form needs no second validation walk.
        return canonical_json(self.to_json(), checked=False, floatless=self.floatless)


def build_statement(
    subjects: list[Subject], predicate_type: str, predicate: dict[str, Any], *, check_predicate: bool = True
) -> Statement:
    """A statement about ``subjects``; raises ``ValueError`` naming a bad subject digest, or the
    path of a predicate value with no JSON form. ``check_predicate=False`` is for a caller whose
    predicate holds only strings it has checked (the render provenance, once per target)."""
    if not subjects:
        raise ValueError("statement: at least one subject is required")
    for subject in subjects:
        require_hex_digest(subject.sha256, f"statement subject {subject.name!r}")
    # fail now, naming the path, rather than when signing; an unchecked predicate holds strings
    floats = check_json_value(predicate) if check_predicate else False
    return Statement(tuple(subjects), predicate_type, predicate, floatless=not floats)


def parse_statement(payload: bytes) -> Statement:
    """Decode statement bytes strictly; raise ``EvidenceError('statement.malformed', …)``."""
    obj = require_exact_keys(
        strict_json_loads(payload, _CODE, "statement"),
        {"_type", "subject", "predicateType", "predicate"},
        _CODE,
        "statement",
    )
    if obj["_type"] != STATEMENT_TYPE:
        raise EvidenceError(_CODE, f"statement: _type must be {STATEMENT_TYPE!r}, got {obj['_type']!r}")
    if not isinstance(obj["predicateType"], str) or not obj["predicateType"]:
        raise EvidenceError(_CODE, "statement: predicateType must be a non-empty string")
    if not isinstance(obj["predicate"], dict):
        raise EvidenceError(_CODE, "statement: predicate must be a JSON object")
    raw_subjects = obj["subject"]
    if not isinstance(raw_subjects, list) or not raw_subjects:
        raise EvidenceError(_CODE, "statement: subject must be a non-empty list")
    subjects = tuple(_parse_subject(item, index) for index, item in enumerate(raw_subjects))
    return Statement(subjects, obj["predicateType"], obj["predicate"])


def _parse_subject(item: object, index: int) -> Subject:
    what = f"statement: subject[{index}]"
    obj = require_exact_keys(item, {"name", "digest"}, _CODE, what)
    if not isinstance(obj["name"], str):
        raise EvidenceError(_CODE, f"{what}.name must be a string")
    digest = require_exact_keys(obj["digest"], {"sha256"}, _CODE, f"{what}.digest")
    if not is_hex_digest(digest["sha256"]):
        raise EvidenceError(_CODE, f"{what}.digest.sha256 must be 64 lowercase hex characters")
    return Subject(obj["name"], digest["sha256"])
