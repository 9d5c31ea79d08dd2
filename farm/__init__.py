"""The farm: a distributed build farm for Kubernetes manifests."""

__version__ = "0.1.0"
