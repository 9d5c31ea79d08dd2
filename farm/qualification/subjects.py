"""How a qualification subject is written, everywhere (board, CLI, API, pages, docs):
``CLUSTER`` for an unprofiled ClusterProfile, ``CLUSTER:PROFILE=VALUE`` for one declared value."""

from __future__ import annotations


class SubjectSyntaxError(ValueError):
    """A subject that is not ``CLUSTER[:PROFILE=VALUE]``; the message quotes it."""


def format_subject(cluster: str, selection: str) -> str:
    """``CLUSTER`` or ``CLUSTER:PROFILE=VALUE`` (``selection`` is ``PROFILE=VALUE`` or "")."""
    return f"{cluster}:{selection}" if selection else cluster


def parse_subject(text: str) -> tuple[str, str]:
    """(cluster, selection) of ``CLUSTER[:PROFILE=VALUE]``; selection "" when unprofiled."""
    cluster, colon, selection = text.partition(":")
    name, equals, value = selection.partition("=")
    if not cluster or (colon and not (name and equals and value)) or "=" in value or ":" in selection:
        raise SubjectSyntaxError(f"subject {text!r}: expected CLUSTER or CLUSTER:PROFILE=VALUE")
    return cluster, selection
