"""The checks the helm rule and the helmtemplate terminal share (seed 002, helmtemplate: "The
source checks are shared with the helm rule's inline source rather than copied"): strict keys, the
inline source's URL and kind, and the two refusals of secretValues. Each message opens with
``helm: ``; helmtemplate re-prefixes it as its own.

Both :mod:`helm` and :mod:`helmtemplate` import this module, and it imports neither, so the two
can each be imported first.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from farm.core.errors import FieldError


def _fail(message: str) -> FieldError:
    return FieldError(f"helm: {message}")


def check_keys(props: dict[str, Any], allowed: tuple[str, ...], prefix: str) -> None:
    folded: dict[str, str] = {}
    for key in props:
        other = folded.get(key.lower())
        if other is not None:
            raise _fail(
                f"{prefix}{other!s} and {prefix}{key}: two keys equal ignoring case name one field; write it once"
            )
        folded[key.lower()] = key
    for key in props:
        if key not in allowed:
            raise _fail(f'unknown field "{prefix}{key}"')


def check_no_userinfo(url: str) -> None:
    try:
        netloc = urlsplit(url).netloc
    except ValueError:
        raise _fail("source.url: not a valid URL (the URL is not repeated)") from None
    if "@" in netloc:
        raise _fail(
            "source.url: a URL carrying a user or password is refused, since it is copied into the "
            "output in plain text; put the credential in the secretRef of an authored helmrepository "
            "or ocirepository component and reference it with source.name"
        )


def inline_kind(url: str, kind: str) -> str:
    scheme = url.split("://", 1)[0].lower() if "://" in url else ""
    if kind == "":
        if scheme == "oci":
            return "OCIRepository"
        if scheme in ("http", "https"):
            return "HelmRepository"
        raise _fail("source.url: must be an http://, https:// or oci:// URL")
    if kind == "HelmRepository" and scheme not in ("http", "https", "oci"):
        raise _fail("source.url: a HelmRepository source takes an http:// or https:// URL")
    if kind == "HelmRepository" and scheme == "oci":
        return "OCIRepository"
    if kind == "OCIRepository" and scheme != "oci":
        raise _fail("source.url: an OCIRepository source takes an oci:// URL")
    if kind == "HelmChart":
        raise _fail("source.kind: HelmChart: a HelmChart source can only be referenced (source.name)")
    return kind


def _shared_paths(values: dict[str, Any], secret: dict[str, Any], prefix: str = "") -> None:
    for key, secret_value in secret.items():
        if key not in values:
            continue
        path = prefix + (key or '""')
        if isinstance(values[key], dict) and isinstance(secret_value, dict):
            _shared_paths(values[key], secret_value, path + ".")
        else:
            raise _fail(
                f"{path} is set in both values and secretValues; a path may be set in only one of them."
            )


def _nested_global(tree: dict[str, Any], prefix: str = "") -> None:
    for key, value in tree.items():
        if prefix and key == "global":
            raise _fail(
                f"secretValues: {prefix}{key}: a key named global is allowed only at the top level, since Helm "
                "reads <dependency>.global as that dependency's globals; put a sensitive global under the "
                "top-level global"
            )
        if isinstance(value, dict):
            _nested_global(value, f"{prefix}{key}.")


def check_secret_values(values: dict[str, Any], secret_values: dict[str, Any]) -> None:
    """The two refusals of secretValues under either delivery: a nested global, a shared path."""
    _nested_global(secret_values)
    _shared_paths(values, secret_values)
