"""The core's error values. Every error carries a stable ``code`` the fleet runner groups by.

Messages are bounded (``bound_message``): they quote the values they refuse, and a value may be
50 MB, so a long quoted value is cut with an ellipsis and its length, and a message is one line.
"""

from __future__ import annotations

import re

MAX_QUOTED = 256  # characters of a quoted value kept whole (every Kubernetes name fits)
KEPT_OF_LONG_VALUE = 100  # characters kept of a longer one
MAX_MESSAGE = 4000
_LONG_RUN = re.compile(rf"\S{{{MAX_QUOTED + 1},}}")
# A quote opens after a non-word character and closes before one, so "job's" opens nothing.
_QUOTED = re.compile(r"""(?<!\w)(?:"[^"]*"|'[^']*')(?!\w)""")


def _shorten(text: str) -> str:
    return f"{text[:KEPT_OF_LONG_VALUE]}… ({len(text)} characters)"


def _shorten_quoted(match: re.Match[str]) -> str:
    quoted = match.group(0)
    body = quoted[1:-1]
    return quoted if len(body) <= MAX_QUOTED else f"{quoted[0]}{_shorten(body)}{quoted[0]}"


def bound_message(message: str) -> str:
    """``message`` on one line, its long quoted values and long words shortened, at most
    MAX_MESSAGE characters. Short messages come back unchanged."""
    if "\n" in message or "\r" in message:
        message = message.replace("\r", "\\r").replace("\n", "\\n")
    if len(message) <= MAX_QUOTED:
        return message
    message = _QUOTED.sub(_shorten_quoted, message)
    message = _LONG_RUN.sub(lambda match: _shorten(match.group(0)), message)
    if len(message) > MAX_MESSAGE:
        message = f"{message[:MAX_MESSAGE]}… ({len(message)} characters)"
    return message


class CoreError(Exception):
    """A build that cannot proceed. ``str(err)`` is the message printed after ``Error: ``."""

    code = "render.error"
    # raised by the check of a terminal a lowering rule lowers to (see :func:`from_terminal`)
    terminal = False

    def __init__(self, message: str) -> None:
        message = bound_message(message)
        super().__init__(message)
        self.message = message

    def with_prefix(self, prefix: str) -> CoreError:
        """The same error, its message prefixed (``component "x": ``)."""
        return type(self)(prefix + self.message)


def from_terminal(error: CoreError) -> CoreError:
    """Mark an error as the refusal of the terminal a lowering rule lowers to (an ocirepository's
    allowlist, a helmtemplate's render): the transform reports it with the terminal handler's
    prefix, not the lowering engine's (seed 002, oci "Messages")."""
    error.terminal = True
    return error


class DocumentError(CoreError):
    """An input document that is not valid YAML or does not decode strictly."""

    code = "document.invalid"


class ParameterError(CoreError):
    """kurel.yaml parameters, a values file or a --set that cannot be applied."""

    code = "parameters.invalid"


class CapabilityError(CoreError):
    """A ClusterProfile capability that is missing, or whose rendering is invalid."""

    code = "capability.unresolved"


class ObjectTooLarge(CoreError):
    """An emitted object larger than the Kubernetes API server accepts for one object."""

    code = "render.object_too_large"


class TransformError(CoreError):
    """A component or trait whose properties cannot be built into objects."""

    code = "transform.failed"


class PolicyRefusal(TransformError):
    """A refusal by the environment policy. ``refusal_class`` is stable; read it, not the text."""

    code = "policy.refused"
    # the environment policy is applied where objects are generated, by the terminal kinds a
    # lowering rule lowers to, so its refusals carry the handler's prefix
    terminal = True

    def __init__(self, message: str, refusal_class: str) -> None:
        super().__init__(message)
        self.refusal_class = refusal_class

    def with_prefix(self, prefix: str) -> PolicyRefusal:
        return PolicyRefusal(prefix + self.message, self.refusal_class)


class FieldError(TransformError):
    """A property of the wrong type or value; the message names the field's path."""

    code = "property.invalid"
