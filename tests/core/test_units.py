"""Quantities and durations print the way apimachinery and Go do."""

from __future__ import annotations

import pytest

from farm.core.durations import DurationError, format_duration, normalize_duration, parse_duration
from farm.core.quantity import QuantityError, canonical_quantity


@pytest.mark.parametrize(
    ("value", "canonical"),
    [
        ("0.5", "500m"),
        ("1000m", "1"),
        ("1024Mi", "1Gi"),
        ("1.5Gi", "1536Mi"),
        ("128Mi", "128Mi"),
        ("100m", "100m"),
        ("2000", "2k"),
        ("1500", "1500"),
        ("1e3", "1e3"),
        ("0.5Ki", "512"),
        (1, "1"),
        (0.25, "250m"),
        ("1G", "1G"),
        ("0", "0"),
    ],
)
def test_quantities_are_canonical(value: object, canonical: str) -> None:
    assert canonical_quantity(value) == canonical


@pytest.mark.parametrize("value", ["abc", "1.2.3", "10XB", ""])
def test_malformed_quantities_are_refused(value: str) -> None:
    with pytest.raises(QuantityError):
        canonical_quantity(value)


@pytest.mark.parametrize(
    ("text", "printed"),
    [
        ("1h", "1h0m0s"),
        ("30s", "30s"),
        ("1m", "1m0s"),
        ("2160h", "2160h0m0s"),
        ("1.5s", "1.5s"),
        ("500ms", "500ms"),
        ("90m", "1h30m0s"),
        ("0", "0s"),
    ],
)
def test_durations_print_like_go(text: str, printed: str) -> None:
    assert normalize_duration(text) == printed


def test_duration_errors_use_go_wording() -> None:
    with pytest.raises(DurationError, match='time: missing unit in duration "10"'):
        parse_duration("10")
    with pytest.raises(DurationError, match='time: unknown unit "d" in duration "1d"'):
        parse_duration("1d")
    with pytest.raises(DurationError, match='time: invalid duration "soon"'):
        parse_duration("soon")  # Go checks for a leading digit before looking for a unit
    with pytest.raises(DurationError, match='time: invalid duration ".s"'):
        parse_duration(".s")
    assert format_duration(-1_500_000_000) == "-1.5s"


@pytest.mark.parametrize(
    ("value", "canonical"),
    [("1Ei", "1Ei"), ("8Ei", "8Ei"), ("1024Ei", "1024Ei"), ("1E", "1E"), ("2e3", "2e3"), ("1.5Ei", "1536Pi")],
)
def test_exbi_and_exa_quantities_are_legal_and_print_as_kubernetes_prints_them(
    value: str, canonical: str
) -> None:
    assert canonical_quantity(value) == canonical
