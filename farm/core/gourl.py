"""Go's ``net/url.Parse``, reduced to the question a build asks of a URL a Go program will parse at
startup: does it parse, and with which scheme and host.

It follows ``url.Parse`` (fragment split, ``getScheme``, the query split, the opaque form, the
colon-in-first-segment rule, ``parseAuthority``/``parseHost``/``validOptionalPort`` and the escape
rules of ``unescape`` for host, path and fragment) of Go 1.23 and later.
"""

from __future__ import annotations

from dataclasses import dataclass

_HEX = "0123456789abcdefABCDEF"
# the characters url.shouldEscape leaves unescaped in a host (encodeHost), besides letters and digits
_HOST_OK = set("-_.~!$&'()*+,;=:[]<>\"")


@dataclass(frozen=True)
class GoURL:
    scheme: str
    host: str
    opaque: str
    path: str


class GoURLError(ValueError):
    """The error url.Parse returns."""


def _has_ctl(value: str) -> bool:
    return any(ord(c) < 0x20 or ord(c) == 0x7F for c in value)


def _scheme(raw: str) -> tuple[str, str]:
    for index, char in enumerate(raw):
        if char.isascii() and char.isalpha():
            continue
        if char.isascii() and (char.isdigit() or char in "+-."):
            if index == 0:
                return "", raw
            continue
        if char == ":":
            if index == 0:
                raise GoURLError("missing protocol scheme")
            return raw[:index], raw[index + 1 :]
        return "", raw
    return "", raw


def _unescape(value: str, host: bool) -> None:
    index = 0
    while index < len(value):
        char = value[index]
        if char == "%":
            escape = value[index : index + 3]
            if len(escape) < 3 or escape[1] not in _HEX or escape[2] not in _HEX:
                raise GoURLError(f"invalid URL escape {escape!r}")
            if host and int(escape[1], 16) < 8 and escape != "%25":
                raise GoURLError(f"invalid URL escape {escape!r}")
            index += 3
            continue
        if host and char.isascii() and not char.isalnum() and char not in _HOST_OK:
            raise GoURLError(f"invalid character {char!r} in host name")
        index += 1


def _valid_optional_port(port: str) -> bool:
    return port == "" or (port.startswith(":") and all(c.isascii() and c.isdigit() for c in port[1:]))


def _host(host: str) -> str:
    if host.startswith("["):
        end = host.rfind("]")
        if end < 0:
            raise GoURLError("missing ']' in host")
        if not _valid_optional_port(host[end + 1 :]):
            raise GoURLError(f"invalid port {host[end + 1 :]!r} after host")
    elif ":" in host:
        colon_port = host[host.rfind(":") :]
        if not _valid_optional_port(colon_port):
            raise GoURLError(f"invalid port {colon_port!r} after host")
    _unescape(host, host=True)
    return host


_USERINFO_OK = set("-._:~!$&'()*+,;=%@")


def _authority(authority: str) -> str:
    at = authority.rfind("@")
    if at < 0:
        return _host(authority)
    userinfo = authority[:at]
    if any(not (c.isascii() and c.isalnum()) and c not in _USERINFO_OK for c in userinfo):
        raise GoURLError("net/url: invalid userinfo")
    _unescape(userinfo.replace("@", ""), host=False)
    return _host(authority[at + 1 :])


def parse(raw: str) -> GoURL:
    """``url.Parse(raw)``; raises :class:`GoURLError` where Go returns an error."""
    rest, _, fragment = raw.partition("#")
    if _has_ctl(rest):
        raise GoURLError("net/url: invalid control character in URL")
    scheme, rest = _scheme(rest)
    scheme = scheme.lower()
    if rest.endswith("?") and rest.count("?") == 1:
        rest = rest[:-1]
    else:
        rest = rest.partition("?")[0]
    if not rest.startswith("/"):
        if scheme:
            return GoURL(scheme, "", rest, "")
        if ":" in rest.partition("/")[0]:
            raise GoURLError("first path segment in URL cannot contain colon")
    host = ""
    if (scheme or not rest.startswith("///")) and rest.startswith("//"):
        authority, slash, path = rest[2:].partition("/")
        host = _authority(authority)
        rest = slash + path
    _unescape(rest, host=False)
    _unescape(fragment, host=False)
    return GoURL(scheme, host, "", rest)
