"""A publish that cannot be done, and the one rule for what a message may show of a URL."""

from __future__ import annotations

import re

# scheme://user:password@host → scheme://user:***@host; scheme://token@host → scheme://***@host
_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<userinfo>[^/@\s]+)@")


def scrub(text: str) -> str:
    """``text`` with the credentials of every URL in it replaced by ``***``: what a message or a
    record may show."""

    def redact(match: re.Match[str]) -> str:
        user, colon, _secret = match["userinfo"].partition(":")
        return f"{match['scheme']}{user}:***@" if colon else f"{match['scheme']}***@"

    return _USERINFO.sub(redact, text)


def has_credentials(url: str) -> bool:
    """True when ``url`` could carry a secret: a password (``user:secret@``) in any URL, or any
    userinfo in an http(s) URL (where a token is written as the user name). An ssh URL's user name
    (``ssh://git@host/…``, ``git@host:…``) is not one."""
    for match in _USERINFO.finditer(url):
        if ":" in match["userinfo"] or match["scheme"].lower().startswith("http"):
            return True
    return False


class PublishError(Exception):
    """A publish refused or failed: ``code`` (``publish.*``) and a message for a person.
    ``retryable`` failures (a push refused, a remote unreachable) are recorded failed and retried."""

    def __init__(self, code: str, message: str, *, retryable: bool = False) -> None:
        super().__init__(scrub(message))
        self.code = code
        self.message = scrub(message)
        self.retryable = retryable

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"
