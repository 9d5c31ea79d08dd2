"""The core's error values. Every error carries a stable ``code`` the fleet runner groups by."""

from __future__ import annotations


class CoreError(Exception):
    """A build that cannot proceed. ``str(err)`` is the message printed after ``Error: ``."""

    code = "render_error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def with_prefix(self, prefix: str) -> CoreError:
        """The same error, its message prefixed (``component "x": ``)."""
        return type(self)(prefix + self.message)


class DocumentError(CoreError):
    """An input document that is not valid YAML or does not decode strictly."""

    code = "invalid_document"


class ParameterError(CoreError):
    """kurel.yaml parameters, a values file or a --set that cannot be applied."""

    code = "invalid_parameters"


class CapabilityError(CoreError):
    """A ClusterProfile capability that is missing, or whose rendering is invalid."""

    code = "capability_error"


class TransformError(CoreError):
    """A component or trait whose properties cannot be built into objects."""

    code = "transform_error"


class PolicyRefusal(TransformError):
    """A refusal by the environment policy. ``refusal_class`` is stable; read it, not the text."""

    code = "policy_refusal"

    def __init__(self, message: str, refusal_class: str) -> None:
        super().__init__(message)
        self.refusal_class = refusal_class

    def with_prefix(self, prefix: str) -> PolicyRefusal:
        return PolicyRefusal(prefix + self.message, self.refusal_class)


class FieldError(TransformError):
    """A property of the wrong type or value; the message names the field's path."""

    code = "invalid_property"
