"""helm ``delivery: template`` and the helmtemplate component, in the core: the chart render is a
request the caller answers (here: the test, with the bytes a chart would render), and the core
orders hooks, stamps namespaces, applies the policy and withholds secret-bearing errors."""

from __future__ import annotations

import textwrap
from collections.abc import Callable

import pytest

from farm.core.charts import ChartRender, ChartRenderNeeded, ChartRequest
from farm.core.errors import CoreError, PolicyRefusal
from farm.core.policy import DEFAULT_POLICY, REFUSAL_EXPLICIT_SECRET, REFUSAL_UNREADABLE_OBJECT, Policy
from farm.core.render import Rendered, RenderRequest, render

PROFILE = b"""\
apiVersion: launcher.gokure.dev/v1alpha1
kind: ClusterProfile
metadata:
  name: edge
spec:
  capabilities: {}
"""


def _app(properties: str, type_name: str = "helm", name: str = "web") -> bytes:
    return (
        textwrap.dedent("""\
        apiVersion: launcher.gokure.dev/v1alpha1
        kind: Application
        metadata:
          name: shop
          namespace: demo
        spec:
          components:
            - name: {name}
              type: {type_name}
              properties:
        """).format(name=name, type_name=type_name)
        + textwrap.indent(textwrap.dedent(properties), " " * 8)
    ).encode()


TEMPLATE = """\
delivery: template
chart: web
version: 1.2.0
source:
  url: https://charts.example.com
"""


def _render(
    app: bytes, answer: Callable[[ChartRequest], ChartRender], policy: Policy = DEFAULT_POLICY
) -> tuple[Rendered, list[ChartRequest]]:
    charts: dict[str, ChartRender] = {}
    asked: list[ChartRequest] = []
    for _ in range(5):
        try:
            return render(RenderRequest(app, PROFILE), policy=policy, charts=charts), asked
        except ChartRenderNeeded as needed:
            for request in needed.requests:
                asked.append(request)
                charts[request.key] = answer(request)
    raise AssertionError("the core kept asking for chart renders")


def _manifests(text: str) -> Callable[[ChartRequest], ChartRender]:
    return lambda request: ChartRender(manifests=textwrap.dedent(text).encode())


def _names(rendered: Rendered) -> list[str]:
    return [f"{obj['kind']}/{obj['metadata']['name']}" for obj in rendered.objects]


def test_without_chart_renders_the_build_stops_with_the_request_and_says_a_helm_binary_is_needed() -> None:
    app = _app(TEMPLATE + "values:\n  replicas: 2\nsecretValues:\n  auth:\n    password: s3cret\n")
    with pytest.raises(ChartRenderNeeded) as caught:
        render(RenderRequest(app, PROFILE))
    assert "needs a helm binary" in caught.value.message
    assert caught.value.message.startswith('component "web": helmtemplate: rendering chart web 1.2.0')
    (request,) = caught.value.requests
    assert (request.repository, request.source_kind, request.chart, request.version) == (
        "https://charts.example.com",
        "HelmRepository",
        "web",
        "1.2.0",
    )
    assert (request.release_name, request.namespace) == ("web", "demo")
    assert request.values_tree() == {"replicas": 2, "auth": {"password": "s3cret"}}


def test_an_oci_chart_is_requested_by_its_url_and_named_by_its_last_segment() -> None:
    app = _app(
        "delivery: template\nversion: 0.9.1\nsource:\n  url: oci://registry.example.com/charts/cache\n"
    )
    with pytest.raises(ChartRenderNeeded) as caught:
        render(RenderRequest(app, PROFILE))
    (request,) = caught.value.requests
    assert (request.source_kind, request.chart, request.chart_name) == ("OCIRepository", "", "cache")


HOOKS = """\
---
apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  annotations:
    helm.sh/hook: post-install
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: migrate
          image: registry.example.com/migrate:1.0.0
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: late-setup
  annotations:
    helm.sh/hook: pre-install
    helm.sh/hook-weight: "5"
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  ports:
    - port: 80
---
apiVersion: v1
kind: Pod
metadata:
  name: web-test
  annotations:
    helm.sh/hook: test
spec:
  containers:
    - name: t
      image: registry.example.com/t:1.0.0
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: early-setup
  annotations:
    helm.sh/hook: pre-install
    helm.sh/hook-weight: "-1"
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: both
  annotations:
    helm.sh/hook: post-upgrade,pre-upgrade
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: cleanup
  annotations:
    helm.sh/hook: pre-delete
---
# a comment-only document is skipped
"""


def test_rendered_objects_come_in_hook_order_and_delete_and_test_hooks_are_dropped() -> None:
    rendered, _ = _render(_app(TEMPLATE), _manifests(HOOKS))
    assert _names(rendered) == [
        "ConfigMap/early-setup",
        "ConfigMap/late-setup",
        "ConfigMap/both",
        "Service/web",
        "Job/migrate",
    ]


SCOPES = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      containers:
        - name: app
          image: registry.example.com/web:1.2.0
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: elsewhere
  namespace: other
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: reader
---
apiVersion: example.com/v1
kind: Gadget
metadata:
  name: unknown-scope
---
apiVersion: example.com/v1
kind: Gizmo
metadata:
  name: overridden
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.fixtures.example.com
spec:
  group: fixtures.example.com
  scope: Namespaced
  names:
    kind: Widget
    plural: widgets
---
apiVersion: fixtures.example.com/v1
kind: Widget
metadata:
  name: w
"""


def test_namespaced_objects_without_a_namespace_get_the_application_namespace() -> None:
    app = _app(
        TEMPLATE + "scopeOverrides:\n  - {apiVersion: example.com/v1, kind: Gizmo, scope: Namespaced}\n"
    )
    rendered, _ = _render(app, _manifests(SCOPES))
    namespaces = {
        f"{obj['kind']}/{obj['metadata']['name']}": obj["metadata"].get("namespace")
        for obj in rendered.objects
    }
    assert namespaces == {
        "Deployment/web": "demo",
        "ConfigMap/elsewhere": "other",
        "ClusterRole/reader": None,
        "Gadget/unknown-scope": None,
        "Gizmo/overridden": "demo",
        "CustomResourceDefinition/widgets.fixtures.example.com": None,
        "Widget/w": "demo",
    }


def test_rendered_objects_carry_the_component_label() -> None:
    rendered, _ = _render(_app(TEMPLATE), _manifests(SCOPES))
    assert {obj["metadata"]["labels"]["launcher.gokure.dev/component"] for obj in rendered.objects} == {"web"}


def test_a_scope_override_that_contradicts_a_rendered_crd_is_refused() -> None:
    app = _app(
        TEMPLATE
        + "scopeOverrides:\n  - {apiVersion: fixtures.example.com/v1, kind: Widget, scope: Cluster}\n"
    )
    with pytest.raises(CoreError) as caught:
        _render(app, _manifests(SCOPES))
    assert caught.value.message == (
        'component "web": helmtemplate "web": object Widget "w": scopeOverrides says Cluster but the '
        "CustomResourceDefinition for Widget.fixtures.example.com the chart renders declares Namespaced; no "
        "cluster can serve the kind as the entry says, so correct or remove the entry"
    )


def test_a_render_failure_is_reported_with_helms_error() -> None:
    def fails(request: ChartRequest) -> ChartRender:
        return ChartRender(error="execution error at (web/templates/a.yaml): replicas must be set")

    with pytest.raises(CoreError) as caught:
        _render(_app(TEMPLATE), fails)
    assert caught.value.message == (
        'component "web": helmtemplate: rendering chart: execution error at (web/templates/a.yaml): '
        "replicas must be set"
    )


SECRET = TEMPLATE + "values:\n  user: admin\nsecretValues:\n  auth:\n    password: hunter2\n"


def test_a_failure_with_secret_values_is_withheld_and_the_values_alone_render_is_reported() -> None:
    def fails_always(request: ChartRequest) -> ChartRender:
        return ChartRender(error=f"cannot parse {request.values}")

    with pytest.raises(CoreError) as caught:
        _render(_app(SECRET), fails_always)
    message = caught.value.message
    assert "hunter2" not in message
    assert message == (
        'component "web": helmtemplate: rendering chart with secretValues failed; the cause is withheld '
        "because it can repeat a sensitive value. Without them it fails with: rendering chart: cannot parse "
        '{"user":"admin"}'
    )


def test_a_failure_only_with_secret_values_says_that_without_them_it_renders() -> None:
    def fails_with_secret(request: ChartRequest) -> ChartRender:
        if "hunter2" in request.values:
            return ChartRender(
                manifests=b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\npassword: [hunter2"
            )
        return ChartRender(manifests=b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")

    with pytest.raises(CoreError) as caught:
        _render(_app(SECRET), fails_with_secret)
    assert caught.value.message == (
        'component "web": helmtemplate: rendering chart with secretValues failed, and without them it '
        "renders; the cause is withheld because it can repeat a sensitive value"
    )


def test_secret_values_are_refused_under_a_policy_that_forbids_explicit_secrets_before_any_render() -> None:
    with pytest.raises(PolicyRefusal) as caught:
        render(RenderRequest(_app(SECRET), PROFILE), policy=Policy(explicit_secrets_allowed=False))
    assert caught.value.refusal_class == REFUSAL_EXPLICIT_SECRET
    assert caught.value.message.startswith(
        'component "web": helmtemplate: secretValues is set and the environment policy forbids explicit secrets'
    )


def test_a_secret_the_chart_renders_is_emitted_under_a_policy_that_forbids_explicit_secrets() -> None:
    chart = "apiVersion: v1\nkind: Secret\nmetadata: {name: creds}\nstringData: {token: abc}\n"
    rendered, _ = _render(_app(TEMPLATE), _manifests(chart), policy=Policy(explicit_secrets_allowed=False))
    assert _names(rendered) == ["Secret/creds"]


def test_a_privileged_container_the_chart_renders_is_refused_naming_the_rendered_object() -> None:
    chart = """\
    apiVersion: apps/v1
    kind: Deployment
    metadata: {name: web}
    spec:
      template:
        spec:
          containers:
            - name: app
              image: registry.example.com/web:1.2.0
              securityContext: {privileged: true}
    """
    with pytest.raises(PolicyRefusal) as caught:
        _render(_app(TEMPLATE), _manifests(chart))
    assert caught.value.message.startswith(
        'component "web": helmtemplate: rendered Deployment "demo/web": spec.template.spec'
    )


def test_a_workload_the_chart_renders_in_a_version_the_policy_cannot_read_is_unreadable() -> None:
    chart = """\
    apiVersion: apps/v1beta2
    kind: Deployment
    metadata: {name: web}
    spec:
      template:
        spec:
          containers:
            - name: app
              image: registry.example.com/web:1.2.0
    """
    with pytest.raises(PolicyRefusal) as caught:
        _render(_app(TEMPLATE), _manifests(chart))
    assert caught.value.refusal_class == REFUSAL_UNREADABLE_OBJECT
    assert caught.value.message.startswith('component "web": helmtemplate: rendered Deployment "demo/web"')


def test_the_source_host_is_held_to_the_allowlist_before_any_render() -> None:
    with pytest.raises(PolicyRefusal) as caught:
        render(
            RenderRequest(_app(TEMPLATE), PROFILE),
            policy=Policy(allowed_registries=("registry.example.com",)),
        )
    assert "helmtemplate: source.url" in caught.value.message


def test_rendered_yaml_is_read_as_yaml_1_1_with_timestamps_kept_as_written() -> None:
    chart = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  annotations: {when: 2024-01-02}\nflag: yes\n"
    rendered, _ = _render(_app(TEMPLATE), _manifests(chart))
    (obj,) = rendered.objects
    assert obj["flag"] is True
    assert obj["metadata"]["annotations"]["when"] == "2024-01-02"


def test_a_list_document_is_replaced_by_its_items_which_inherit_the_lists_kind() -> None:
    chart = """\
    apiVersion: v1
    kind: List
    items:
      - {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}
      - apiVersion: example.com/v1
        kind: WidgetList
        items:
          - metadata: {name: b}
    """
    rendered, _ = _render(_app(TEMPLATE), _manifests(chart))
    assert [(obj["apiVersion"], obj["kind"], obj["metadata"]["name"]) for obj in rendered.objects] == [
        ("v1", "ConfigMap", "a"),
        ("example.com/v1", "Widget", "b"),
    ]


@pytest.mark.parametrize(
    ("chart", "expected"),
    [
        ("just a string\n", "decoding rendered manifests: document 1: not an object: string"),
        ("{}\n", "decoding rendered manifests: document 1: an object needs apiVersion and kind"),
        (
            "apiVersion: v1\nkind: List\nitems:\n  - null\n",
            "decoding rendered manifests: item 0 of List: the item is null, not an object",
        ),
        (
            "apiVersion: v1\nkind: List\nmetadata:\n  annotations: {helm.sh/hook: pre-install}\nitems: []\n",
            'decoding rendered manifests: List "": a list where a helm.sh/hook annotation is involved',
        ),
        (
            "apiVersion: v1\nkind: List\nmetadata:\n  labels: {team: a}\nitems: []\n",
            "decoding rendered manifests: List has metadata of its own that its items cannot keep: labels team",
        ),
        (
            "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nitems: [1]\n",
            'decoding rendered manifests: Widget "w": an items array on an object of a kind that is no list',
        ),
        (
            "apiVersion: v1\nKind: ConfigMap\nkind: ConfigMap\nmetadata: {name: x}\n",
            'decoding rendered manifests: the key "Kind" equals "kind" only after case folding',
        ),
    ],
)
def test_rendered_documents_that_cannot_be_read_are_refused(chart: str, expected: str) -> None:
    with pytest.raises(CoreError) as caught:
        _render(_app(TEMPLATE), _manifests(chart))
    assert caught.value.message.startswith(f'component "web": helmtemplate: {expected}')


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (
            "valuesMode: configMap\n",
            "helm: valuesMode: configMap: delivery: template generates no values ConfigMap",
        ),
        ("helmReleaseName: rel\n", "helm: helmReleaseName: delivery: template generates no HelmRelease"),
        ("valuesSecretName: s\n", "helm: valuesSecretName: delivery: template generates no values Secret"),
        ("interval: 5m\n", "helm: interval: only a Flux-reconciled release reads it"),
        ("valuesFrom: []\n", "helm: valuesFrom: only a Flux-reconciled release reads it"),
        (
            "scopeOverrides:\n  - {apiVersion: example.com/v1, kind: W, scope: cluster}\n",
            'helm: scopeOverrides[0]: scope "cluster" is invalid; must be "Cluster" or "Namespaced"',
        ),
    ],
)
def test_the_helm_rule_refuses_what_a_client_side_render_cannot_honour(extra: str, expected: str) -> None:
    with pytest.raises(CoreError) as caught:
        render(RenderRequest(_app(TEMPLATE + extra), PROFILE))
    assert caught.value.message.startswith(f'component "web" (type "helm") in document "shop": {expected}')


@pytest.mark.parametrize(
    ("properties", "expected"),
    [
        (
            "delivery: template\nchart: web\nsource:\n  name: shared\n",
            "helm: source: delivery: template renders",
        ),
        (
            "delivery: template\nchart: web\nsource:\n  url: https://charts.example.com\n  name: mine\n",
            "helm: source.name: delivery: template generates no source",
        ),
        (
            "delivery: template\nchart: web\nsource:\n  kind: GitRepository\n  url: https://git.example.com/c\n",
            "helm: source.kind: GitRepository: delivery: template renders only from a Helm repository",
        ),
        (
            "delivery: template\nsource:\n  url: oci://registry.example.com/charts/web\n",
            "helm: version: required for an OCI chart under delivery: template",
        ),
    ],
)
def test_the_helm_rule_refuses_sources_a_client_side_render_cannot_read(
    properties: str, expected: str
) -> None:
    with pytest.raises(CoreError) as caught:
        render(RenderRequest(_app(properties), PROFILE))
    assert caught.value.message.startswith(f'component "web" (type "helm") in document "shop": {expected}')


def test_a_long_component_name_defaults_to_the_shortened_release_name() -> None:
    name = "a" * 60
    with pytest.raises(ChartRenderNeeded) as caught:
        render(RenderRequest(_app(TEMPLATE, name=name), PROFILE))
    release = caught.value.requests[0].release_name
    assert len(release) == 53 and release.startswith("a" * 40 + "-")


def test_an_authored_release_name_over_53_characters_is_refused() -> None:
    with pytest.raises(CoreError) as caught:
        render(RenderRequest(_app(TEMPLATE + f"releaseName: {'r' * 54}\n"), PROFILE))
    assert "releaseName" in caught.value.message and "at most 53 characters" in caught.value.message


def test_helm_with_delivery_template_renders_what_the_helmtemplate_it_lowers_to_renders() -> None:
    lowered = _app(TEMPLATE + "values: {replicas: 2}\n")
    direct = _app(
        "chart: web\nversion: 1.2.0\nsource:\n  url: https://charts.example.com\nvalues: {replicas: 2}\n",
        type_name="helmtemplate",
    )
    via_helm, asked_helm = _render(lowered, _manifests(SCOPES))
    via_terminal, asked_terminal = _render(direct, _manifests(SCOPES))
    assert via_helm.manifests == via_terminal.manifests
    assert asked_helm == asked_terminal


def test_a_helmtemplate_refuses_keys_only_a_flux_release_reads() -> None:
    app = _app(
        "chart: web\nversion: 1.2.0\nsource:\n  url: https://charts.example.com\ntargetNamespace: x\n",
        type_name="helmtemplate",
    )
    with pytest.raises(CoreError) as caught:
        render(RenderRequest(app, PROFILE))
    assert caught.value.message == 'component "web": helmtemplate: unknown field "targetNamespace"'


def test_two_components_resolving_to_one_hook_group_prefix_are_refused() -> None:
    app = _app(TEMPLATE + "hookGroupNamePrefix: shop-api\n").decode() + textwrap.indent(
        "- name: api\n  type: helmtemplate\n  properties:\n    chart: api\n    version: 1.0.0\n"
        "    source:\n      url: https://charts.example.com\n",
        " " * 4,
    )
    with pytest.raises(CoreError) as caught:
        render(RenderRequest(app.encode(), PROFILE))
    assert caught.value.message == (
        'component "web": helmtemplate: hook-group prefix "shop-api" is also the one of component "api", so '
        "their hook-group layouts would take the same names; give one of them another hookGroupNamePrefix"
    )
