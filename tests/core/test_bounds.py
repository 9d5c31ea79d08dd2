"""Bounded work in the core: hostile YAML, numbers and names are refused quickly with a clear error."""

from __future__ import annotations

import pytest

from farm.core import yamlio
from farm.core.durations import DurationError, parse_duration
from farm.core.errors import MAX_MESSAGE, CoreError, FieldError, ParameterError, bound_message
from farm.core.fields import go_value_repr
from farm.core.names import is_dns1123_label, is_dns1123_subdomain, is_qualified_name
from farm.core.quantity import QuantityError, canonical_quantity, parse_quantity
from farm.core.render import MAX_OBJECT_BYTES, RenderRequest, render

PROFILE = b"""apiVersion: launcher.gokure.dev/v1alpha1
kind: ClusterProfile
metadata:
  name: edge
spec:
  capabilities: {}
"""


def application(properties: str, component_type: str = "webservice") -> bytes:
    indented = "\n".join("        " + line for line in properties.strip("\n").splitlines())
    return f"""apiVersion: launcher.gokure.dev/v1alpha1
kind: Application
metadata:
  name: web
spec:
  components:
    - name: web
      type: {component_type}
      properties:
{indented}
""".encode()


def passthrough(extra: str) -> bytes:
    return application(
        f"object:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: cm\n  extra: {extra}",
        "passthrough",
    )


def render_error(app: bytes, profile: bytes = PROFILE, **request: object) -> CoreError:
    with pytest.raises(CoreError) as caught:
        render(RenderRequest(app, profile, app_source="app.yaml", **request))  # type: ignore[arg-type]
    return caught.value


def alias_bomb(levels: int = 9, width: int = 9) -> str:
    lines = [f"a0: &a0 [{', '.join(['lol'] * width)}]"]
    for level in range(1, levels + 1):
        lines.append(f"a{level}: &a{level} [{', '.join([f'*a{level - 1}'] * width)}]")
    return "\n".join(lines) + "\n"


def nested(depth: int) -> str:
    return "[" * depth + "1" + "]" * depth


# --- YAML reading bounds -----------------------------------------------------------------------


def test_a_one_kilobyte_alias_bomb_is_refused_as_excessive_aliasing() -> None:
    bomb = alias_bomb()
    assert len(bomb) < 1024
    with pytest.raises(yamlio.YAMLError, match=r"^values.yaml: yaml: document contains excessive aliasing$"):
        yamlio.load(bomb, source="values.yaml")


def test_moderate_reuse_of_an_anchor_still_loads() -> None:
    loaded = yamlio.load("base: &b {cpu: 1}\none: *b\ntwo: *b\n")
    assert loaded["one"] == loaded["two"] == {"cpu": 1}


def test_an_alias_bomb_in_a_passthrough_object_fails_the_render_naming_the_file() -> None:
    bomb = "\n".join("  " + line for line in alias_bomb().splitlines())
    error = render_error(passthrough("\n" + bomb))
    assert error.code == "document.invalid"
    assert error.message == "app.yaml: yaml: document contains excessive aliasing"


def test_an_alias_bomb_in_a_cluster_profile_rendering_names_the_profile() -> None:
    bomb = "\n".join("        " + line for line in alias_bomb().splitlines())
    profile = PROFILE.replace(
        b"capabilities: {}", b"capabilities:\n    expose:\n      rendering:\n" + bomb.encode()
    )
    app = application("image: nginx:1.27.0\nport: 8080")
    error = render_error(app, profile, cluster_profile_source="clusters/edge.yaml")
    assert "clusters/edge.yaml: yaml: document contains excessive aliasing" in error.message


def test_a_self_referencing_alias_is_refused_without_hanging() -> None:
    with pytest.raises(yamlio.YAMLError, match=r"^x.yaml: yaml: "):
        yamlio.load("a: &a [*a, *a]\n", source="x.yaml")


@pytest.mark.parametrize("depth", [yamlio.MAX_DEPTH + 1, 500, 999])
def test_nesting_past_the_depth_bound_is_refused_naming_the_line(depth: int) -> None:
    with pytest.raises(
        yamlio.YAMLError, match=rf"^app.yaml: yaml: line 1: nesting deeper than {yamlio.MAX_DEPTH} levels$"
    ):
        yamlio.load(nested(depth), source="app.yaml")


def test_nesting_of_a_thousand_levels_is_refused_by_the_parser_with_an_error() -> None:
    with pytest.raises(yamlio.YAMLError, match=r"^app.yaml: yaml: line 1: .*nesting depth"):
        yamlio.load(nested(5000), source="app.yaml")


def test_deep_nesting_in_a_passthrough_object_fails_the_render_with_a_document_error() -> None:
    error = render_error(passthrough(nested(700)))
    assert error.code == "document.invalid"
    assert error.message.startswith("app.yaml: yaml: line 15: nesting deeper than")


def test_nesting_just_inside_the_bound_renders() -> None:
    rendered = render(RenderRequest(passthrough(nested(yamlio.MAX_DEPTH - 12)), PROFILE))
    assert rendered.manifests.count(b"- ") >= yamlio.MAX_DEPTH - 12


def test_a_stream_larger_than_the_node_bound_is_refused() -> None:
    items = ",".join(["0"] * yamlio.MAX_NODES)
    with pytest.raises(
        yamlio.YAMLError, match=rf"^inline: yaml: document is larger than {yamlio.MAX_NODES} nodes$"
    ):
        yamlio.load_all(f"[{items}]\n", source="inline")


# --- Numbers -----------------------------------------------------------------------------------


def test_a_five_thousand_digit_integer_reads_as_a_string_as_yaml_v3_reads_it() -> None:
    digits = "1" * 5000
    assert yamlio.load(f"n: {digits}\n") == {"n": digits}


def test_leading_zeros_of_an_octal_integer_are_not_digits() -> None:
    assert yamlio.load("n: " + "0" * 5000 + "17\n") == {"n": 15}


def test_a_five_thousand_digit_integer_where_a_port_goes_is_a_field_error() -> None:
    error = render_error(application(f"image: nginx:1.27.0\nport: {'9' * 5000}"))
    assert isinstance(error, FieldError)
    assert (
        error.message
        == 'component "web" (type "webservice") in document "web": port: must be an integer, got string'
    )


@pytest.mark.parametrize(("text", "shown"), [(".nan", "NaN"), (".inf", "+Inf"), ("-.inf", "-Inf")])
def test_nan_and_infinity_where_a_number_goes_are_field_errors(text: str, shown: str) -> None:
    error = render_error(application(f"image: nginx:1.27.0\nport: 8080\nreplicas: {text}"))
    assert (
        error.message
        == f'component "web" (type "webservice") in document "web": replicas: must be a whole number, got {shown}'
    )


def test_nan_and_infinity_print_as_go_prints_them() -> None:
    assert [go_value_repr(float(x)) for x in ("nan", "inf", "-inf")] == ["NaN", "+Inf", "-Inf"]


def test_nan_in_a_passthrough_object_is_refused_at_marshalling_naming_the_path() -> None:
    error = render_error(passthrough("{a: [1, .nan]}"))
    assert error.code == "property.invalid"
    assert error.message == 'ConfigMap "cm": extra.a[1]: json: unsupported value: NaN'


def test_an_exponent_of_a_billion_is_a_quantity_error_not_a_hang() -> None:
    with pytest.raises(QuantityError, match="exponents must be within"):
        parse_quantity("1e999999999")
    with pytest.raises(QuantityError, match="at most 64 digits"):
        canonical_quantity("1" * 5000)


def test_quantities_inside_the_bounds_are_unchanged() -> None:
    assert canonical_quantity("1e3") == "1e3"
    assert canonical_quantity("0.5") == "500m"
    assert canonical_quantity("1" * 64) == "1" * 64


def test_a_huge_cpu_request_fails_the_render_naming_the_field() -> None:
    app = application('image: nginx:1.27.0\nport: 8080\nresources:\n  requests:\n    cpu: "1e999999999"')
    error = render_error(app)
    assert (
        error.message
        == 'component "web" (type "webservice") in document "web": resources.requests.cpu: invalid quantity \'1e999999999\''
    )


def test_a_five_thousand_digit_duration_is_an_invalid_duration() -> None:
    with pytest.raises(DurationError, match="invalid duration"):
        parse_duration("9" * 5000 + "s")
    assert parse_duration("1." + "5" * 5000 + "s") == 1_555_555_555


@pytest.mark.parametrize("text", ["٣s", "1.٥s"])
def test_durations_take_only_ascii_digits(text: str) -> None:
    with pytest.raises(DurationError):
        parse_duration(text)


# --- Tags yaml.v3 decodes as plain values --------------------------------------------------------


def test_binary_set_and_omap_tags_decode_as_plain_values() -> None:
    loaded = yamlio.load("b: !!binary aGVsbG8=\ns: !!set {a: null}\no: !!omap [{a: 1}]\n")
    assert loaded == {"b": "hello", "s": {"a": None}, "o": [{"a": 1}]}


def test_binary_that_is_not_base64_text_is_a_yaml_error() -> None:
    with pytest.raises(yamlio.YAMLError, match=r"^f.yaml: yaml: line 1: !!binary value is not base64"):
        yamlio.load("b: !!binary '%%%'\n", source="f.yaml")


# --- Messages ------------------------------------------------------------------------------------


def test_a_fifty_megabyte_image_is_not_echoed_whole() -> None:
    image = "nginx:" + "a" * 50_000_000 + ":latest"
    error = render_error(application(f'image: "{image}"\nport: 8080'))
    assert len(error.message) < 500
    assert f"… ({len(image)} characters)" in error.message
    assert error.message.startswith(
        'component "web" (type "webservice") in document "web": image: image "nginx:aaa'
    )


def test_bounded_messages_are_one_line_and_short_ones_are_unchanged() -> None:
    assert bound_message('component "web": image "nginx:1.27.0" rejected') == (
        'component "web": image "nginx:1.27.0" rejected'
    )
    assert bound_message("name 'web\n' is invalid") == "name 'web\\n' is invalid"
    assert len(bound_message("x " * 100_000)) <= MAX_MESSAGE + 40


def test_an_apostrophe_does_not_open_a_quoted_value() -> None:
    text = "the job's pod takes the hostname " + "x" * 300 + " made of '-'"
    assert "characters)" in bound_message(text)  # the 300-character word, not a false quote
    assert bound_message(text).endswith("made of '-'")


# --- Names ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("check", [is_dns1123_label, is_dns1123_subdomain, is_qualified_name])
def test_names_with_a_trailing_newline_are_refused(check: object) -> None:
    assert check("web")  # type: ignore[operator]
    assert not check("web\n")  # type: ignore[operator]


def test_an_application_name_with_a_trailing_newline_is_refused() -> None:
    app = application("image: nginx:1.27.0\nport: 8080").replace(b"name: web\nspec", b'name: "web\\n"\nspec')
    error = render_error(app)
    assert error.message == "app.yaml: metadata.name 'web\\n' is not a valid DNS-1123 subdomain"


@pytest.mark.parametrize("namespace", ["../../etc", "apps\n", "Apps", "a" * 64, "a.b"])
def test_a_namespace_that_is_not_a_dns_label_is_refused(namespace: str) -> None:
    error = render_error(application("image: nginx:1.27.0\nport: 8080"), namespace=namespace)
    assert isinstance(error, ParameterError)
    assert error.message.startswith(f'namespace "{bound_message(namespace)}": must be a DNS-1123 label')


def test_a_valid_namespace_is_used() -> None:
    rendered = render(
        RenderRequest(application("image: nginx:1.27.0\nport: 8080"), PROFILE, namespace="apps")
    )
    assert b"namespace: apps" in rendered.manifests


def configmap(value_bytes: int) -> bytes:
    return application(
        "object:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: cm\n    namespace: apps\n"
        f"  data:\n    big: {'a' * value_bytes}",
        "passthrough",
    )


def test_an_object_over_the_api_servers_one_object_limit_fails_with_a_stable_code_naming_it() -> None:
    error = render_error(configmap(MAX_OBJECT_BYTES))
    assert error.code == "render.object_too_large"
    assert error.message.startswith('ConfigMap "apps/cm": its YAML is ')
    assert error.message.endswith(
        f"over the {MAX_OBJECT_BYTES} bytes the Kubernetes API server accepts for one object"
    )


def test_an_object_just_under_the_limit_renders() -> None:
    rendered = render(RenderRequest(configmap(MAX_OBJECT_BYTES - 200), PROFILE))
    assert MAX_OBJECT_BYTES - 200 < len(rendered.manifests) <= MAX_OBJECT_BYTES
