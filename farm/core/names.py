"""Kubernetes name rules (DNS-1123 labels and subdomains, qualified names)."""

from __future__ import annotations

import hashlib
import re

_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z")
_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z")
_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\Z")


DNS1123_LABEL_RULE = (
    "a DNS-1123 label: at most 63 characters, lowercase letters, digits and '-', "
    "starting and ending with a letter or digit"
)


def is_dns1123_label(name: str) -> bool:
    return len(name) <= 63 and bool(_LABEL.match(name))


def is_dns1123_subdomain(name: str) -> bool:
    return len(name) <= 253 and bool(_SUBDOMAIN.match(name))


def is_qualified_name(name: str) -> bool:
    """A label key or similar: optional DNS subdomain prefix, then a 63-character name."""
    prefix, _, local = name.rpartition("/")
    if "/" in name and not (prefix and is_dns1123_subdomain(prefix)):
        return False
    return 0 < len(local) <= 63 and bool(_QUALIFIED_NAME.match(local))


def component_label_value(name: str) -> str:
    """The value of the ``app`` and component labels for a component name."""
    return name


def shorten_name_with_suffix(base: str, suffix: str, limit: int = 253) -> str:
    """``oam.ShortenNameWithSuffix``, the one shortening rule: keep the suffix; cut ``base`` to a
    prefix plus the first 10 hex digits of the sha256 of the whole base when the name would exceed
    ``limit``."""
    name = base + suffix
    if len(name) <= limit:
        return name
    digest = hashlib.sha256(base.encode()).hexdigest()[:10]
    keep = limit - len(suffix) - len(digest) - 1
    return f"{base[:keep].rstrip('-.')}-{digest}{suffix}"
