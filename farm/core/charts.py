"""Client-side chart renders (helm ``delivery: template``, helmtemplate): the seam to the shell.

The core never runs Helm: rendering a chart fetches it and executes its templates, which is I/O.
Instead a render is a value. The helmtemplate handler builds a :class:`ChartRequest` (everything
``helm template`` needs: source, chart, version, release name, namespace, values) and looks its
key up in the chart renders the caller handed in (``BuildContext.charts``). When it is missing the
build stops with :class:`ChartRenderNeeded`, which carries the requests; the shell fulfils them
(``farm/charts.py`` runs a ``helm`` binary) and renders again with the answers added. So ``render``
stays a function of its inputs: the same application, profile and chart renders give the same
bytes, and everything done with the rendered chart (hook order, namespaces, policy) is the core's.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from typing import Any

from farm.core.errors import CoreError


@dataclass(frozen=True)
class ChartRequest:
    """One ``helm template`` run: ``values`` is the values tree as canonical JSON."""

    component: str
    repository: str  # an http(s):// Helm repository URL, or the oci:// URL of the chart
    source_kind: str  # HelmRepository or OCIRepository
    chart: str  # the chart's name in a HelmRepository; "" for an OCI chart
    version: str
    release_name: str
    namespace: str
    values: str

    @property
    def key(self) -> str:
        """sha256 over every field, so two requests that differ in anything differ in key."""
        text = json.dumps(asdict(self), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    @property
    def chart_name(self) -> str:
        """The chart's own name: the chart of a HelmRepository, the last path segment of an OCI URL."""
        return self.chart or self.repository.rstrip("/").rsplit("/", 1)[-1]

    def values_tree(self) -> Any:
        return json.loads(self.values)


@dataclass(frozen=True)
class ChartRender:
    """The shell's answer to one request: the rendered manifests, or the renderer's error."""

    manifests: bytes = b""
    error: str | None = None


def canonical_values(tree: Any) -> str:
    return json.dumps(tree, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


class ChartRenderNeeded(CoreError):
    """The build needs chart renders it was not given; ``requests`` says which.

    Its message is the refusal a build that cannot render charts reports."""

    code = "chart.render_needed"

    def __init__(self, message: str, requests: tuple[ChartRequest, ...]) -> None:
        super().__init__(message)
        self.requests = requests

    def with_prefix(self, prefix: str) -> ChartRenderNeeded:
        return ChartRenderNeeded(prefix + self.message, self.requests)
