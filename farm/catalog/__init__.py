"""The fleet catalog: a folder with a ``fleet.yaml``, read into an immutable snapshot."""

from farm.catalog.loader import CatalogError, load_catalog
from farm.catalog.snapshot import (
    ApplicationEntry,
    CatalogSnapshot,
    ClusterEntry,
    Problem,
    Target,
    TargetRequest,
)

__all__ = [
    "ApplicationEntry",
    "CatalogError",
    "CatalogSnapshot",
    "ClusterEntry",
    "Problem",
    "Target",
    "TargetRequest",
    "load_catalog",
]
