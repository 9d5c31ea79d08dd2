"""``docs/configuration.md``, generated from the settings model: one row per ``FARM_*`` setting with
its type or allowed values, its default and its meaning, all read from :class:`FarmSettings`.

Regenerate the page with ``python -m farm.settings_doc > docs/configuration.md``;
``tests/test_configuration_doc.py`` fails while the page and the model differ.
"""

from __future__ import annotations

import sys
import types
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

from annotated_types import Ge, Gt, Le, Lt
from pydantic import SecretStr
from pydantic.fields import FieldInfo

from farm.settings import ENV_PREFIX, FarmSettings, home_defaults

REGENERATE = "python -m farm.settings_doc > docs/configuration.md"
HOME_PLACEHOLDER = "<home>"


def variable_name(name: str) -> str:
    """The environment variable of the setting ``name``."""
    return ENV_PREFIX + name.upper()


def _number(value: object) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _bounds(field: FieldInfo) -> str:
    parts = []
    for constraint in field.metadata:
        if isinstance(constraint, Ge):
            parts.append(f"≥ {_number(constraint.ge)}")
        elif isinstance(constraint, Gt):
            parts.append(f"> {_number(constraint.gt)}")
        elif isinstance(constraint, Le):
            parts.append(f"≤ {_number(constraint.le)}")
        elif isinstance(constraint, Lt):
            parts.append(f"< {_number(constraint.lt)}")
    return ", ".join(parts)


def _without_none(annotation: Any) -> Any:
    if get_origin(annotation) in (Union, types.UnionType):
        members = [arg for arg in get_args(annotation) if arg is not type(None)]
        if len(members) == 1:
            return members[0]
    return annotation


def type_text(field: FieldInfo) -> str:
    """The setting's type, or the values it allows, as the page shows it."""
    annotation = _without_none(field.annotation)
    if get_origin(annotation) is Literal:
        values = [f"`{value}`" for value in get_args(annotation)]
        return ", ".join(values[:-1]) + " or " + values[-1] if len(values) > 1 else values[0]
    if annotation is bool:
        return "`true` or `false`"
    if annotation is Path:
        return "path"
    if annotation is SecretStr:
        return "text (secret)"
    if annotation is str:
        return "text"
    names = {int: "integer", float: "number"}
    if annotation in names:
        bounds = _bounds(field)
        return f"{names[annotation]} {bounds}" if bounds else names[annotation]
    raise TypeError(f"settings_doc: no description of the type {annotation!r}; teach type_text")


def default_text(name: str, field: FieldInfo) -> str:
    """The default as the page shows it: under ``<home>`` for the defaults ``FARM_HOME`` decides,
    never a path of the machine that generated the page."""
    under_home = home_defaults(Path(HOME_PLACEHOLDER))
    if name in under_home:
        return f"`{under_home[name]}`"
    default = field.get_default(call_default_factory=True)
    if default is None:
        return "unset"
    if isinstance(default, bool):
        return f"`{str(default).lower()}`"
    if isinstance(default, int | float):
        return f"`{_number(default)}`"
    return f"`{default}`"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def configuration_markdown() -> str:
    """The whole of ``docs/configuration.md``."""
    lines = [
        "# Configuration",
        "",
        "Every farm process reads its configuration from these `FARM_*` environment variables (and",
        "boto3's own `AWS_*` chain while the S3 credentials are unset); an exported but empty",
        "variable counts as unset. With none set, everything is embedded under `./.farm/` (`<home>`",
        "below is `FARM_HOME`): a SQLite database, an object folder, a signing key generated on first",
        "use and the local process pool. Every process of one farm (CLI, workers, beat, `farm serve`)",
        "must share the same values.",
        "",
        f"Generated from the settings model (`FarmSettings`) by `{REGENERATE}`;",
        "`tests/test_configuration_doc.py` fails while this page and the model differ.",
        "",
        "| variable | type | default | meaning |",
        "| --- | --- | --- | --- |",
    ]
    for name, field in FarmSettings.model_fields.items():
        if not field.description:
            raise ValueError(f"settings_doc: {variable_name(name)} has no description in FarmSettings")
        lines.append(
            f"| `{variable_name(name)}` | {type_text(field)} | {default_text(name, field)} "
            f"| {_cell(field.description)} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    sys.stdout.write(configuration_markdown())


if __name__ == "__main__":
    main()
