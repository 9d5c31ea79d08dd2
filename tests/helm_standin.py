"""A test-only stand-in for ``helm template`` over a local chart folder (no helm binary can be
installed on the test machines). The tests copy it onto PATH as ``helm``.

It understands ``helm template RELEASE CHART_DIR --namespace NS --values FILE [--repo URL]
[--version V]``, reads CHART_DIR/Chart.yaml and values.yaml (the given values merged over them)
and renders CHART_DIR/templates/*.yaml in name order, as helm does, with a tiny subset of the
template language: ``{{ .Release.Name }}``, ``{{ .Release.Namespace }}``, ``{{ .Chart.Name }}``,
``{{ .Chart.Version }}``, ``{{ .Values.a.b }}`` (an absent value renders empty), ``| quote``,
``{{ required "msg" .Values.x }}`` and ``{{ fail "msg" }}``. It never fetches: a chart that is not
a local folder is an error, except that with HELM_STANDIN_REPOSITORY set to a folder, a chart
asked for by name with ``--repo URL`` is read from that folder's ``<chart>/`` (the test's stand-in
for the repository; ``--version`` must match its Chart.yaml). With HELM_STANDIN_LOG set it appends
its argv there, one JSON line.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import yaml

EXPRESSION = re.compile(r"\{\{-?\s*(.*?)\s*-?\}\}")


class TemplateFailure(Exception):
    pass


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in over.items():
        if isinstance(merged.get(key), dict) and isinstance(value, dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _lookup(path: str, scope: dict[str, Any]) -> Any:
    value: Any = scope
    for part in path.lstrip(".").split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _evaluate(expression: str, scope: dict[str, Any], where: str) -> str:
    expression, _, pipe = expression.partition("|")
    words = expression.split(maxsplit=2) if expression.startswith(("required", "fail")) else [expression]
    if words[0] == "fail":
        raise TemplateFailure(f"execution error at ({where}): {json.loads(expression[4:].strip())}")
    if words[0] == "required":
        message, path = re.fullmatch(r'required\s+("(?:[^"\\]|\\.)*")\s+(\S+)', expression.strip()).groups()
        value = _lookup(path, scope)
        if value in (None, ""):
            raise TemplateFailure(f"execution error at ({where}): {json.loads(message)}")
    else:
        value = _lookup(expression.strip(), scope)
    text = _text(value)
    return json.dumps(text) if pipe.strip() == "quote" else text


def _options(argv: list[str]) -> tuple[list[str], dict[str, str]]:
    positional, options = [], {}
    index = 0
    while index < len(argv):
        if argv[index].startswith("--"):
            options[argv[index]] = argv[index + 1]
            index += 2
        else:
            positional.append(argv[index])
            index += 1
    return positional, options


def main(argv: list[str]) -> int:
    if os.environ.get("HELM_STANDIN_LOG"):
        with open(os.environ["HELM_STANDIN_LOG"], "a", encoding="utf-8") as log:
            log.write(json.dumps(argv) + "\n")
    positional, options = _options(argv)
    if positional[:1] != ["template"] or len(positional) != 3:
        sys.stderr.write("Error: the stand-in runs only: helm template RELEASE CHART_DIR [flags]\n")
        return 1
    release, chart_dir = positional[1], Path(positional[2])
    repository = os.environ.get("HELM_STANDIN_REPOSITORY")
    if repository and "--repo" in options:
        chart_dir = Path(repository) / positional[2]
        version = (yaml.safe_load((chart_dir / "Chart.yaml").read_text()) or {}).get("version")
        if options.get("--version", version) != version:
            sys.stderr.write(
                f'Error: chart "{positional[2]}" version {options["--version"]} not found in {options["--repo"]}\n'
            )
            return 1
    if not (chart_dir / "Chart.yaml").is_file():
        sys.stderr.write(
            f'Error: chart "{chart_dir}" is not a local chart folder (the stand-in never fetches)\n'
        )
        return 1
    chart = yaml.safe_load((chart_dir / "Chart.yaml").read_text())
    defaults_file = chart_dir / "values.yaml"
    values = (yaml.safe_load(defaults_file.read_text()) or {}) if defaults_file.is_file() else {}
    if "--values" in options:
        values = _merge(values, yaml.safe_load(Path(options["--values"]).read_text()) or {})
    scope = {
        "Release": {"Name": release, "Namespace": options.get("--namespace", "default")},
        "Chart": {"Name": chart["name"], "Version": chart["version"]},
        "Values": values,
    }
    out = []
    try:
        for template in sorted((chart_dir / "templates").glob("*.yaml")):
            where = f"{chart['name']}/templates/{template.name}"
            text = EXPRESSION.sub(lambda m, w=where: _evaluate(m.group(1), scope, w), template.read_text())
            if text.strip():
                out.append(f"---\n# Source: {where}\n{text.rstrip()}\n")
    except TemplateFailure as failure:
        sys.stderr.write(f"Error: {failure}\n")
        return 1
    sys.stdout.write("".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
