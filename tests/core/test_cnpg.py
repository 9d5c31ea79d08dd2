"""postgresql and the CloudNativePG kinds: policy, naming and refusal rules no golden case holds."""

from __future__ import annotations

import pytest

from farm.core import yamlio
from farm.core.errors import CoreError, PolicyRefusal
from farm.core.policy import REFUSAL_REGISTRY, REFUSAL_REPLICA_MAXIMUM, REFUSAL_STORAGE_MAXIMUM, Policy
from farm.core.render import RenderRequest, render

PROFILE = b"""apiVersion: launcher.gokure.dev/v1alpha1
kind: ClusterProfile
metadata:
  name: test-cluster
spec:
  capabilities: {}
"""


def _app(component_type: str, properties: str, name: str = "db") -> bytes:
    body = "\n".join("      " + line for line in properties.strip().splitlines())
    return (
        "apiVersion: launcher.gokure.dev/v1alpha1\nkind: Application\nmetadata:\n  name: app\nspec:\n"
        f"  components:\n  - name: {name}\n    type: {component_type}\n    properties:\n{body}\n"
    ).encode()


def _objects(component_type: str, properties: str, policy: Policy | None = None) -> list[dict]:
    rendered = render(RenderRequest(_app(component_type, properties), PROFILE), policy=policy or Policy())
    return list(rendered.objects)


def _error(component_type: str, properties: str, policy: Policy | None = None) -> CoreError:
    with pytest.raises(CoreError) as caught:
        _objects(component_type, properties, policy)
    return caught.value


# --- postgresql: the post-policy step -------------------------------------------------------------


def test_storage_fallback_is_held_to_the_policy_maximum() -> None:
    error = _error("postgresql", "version: '16'", Policy(max_storage="512Mi"))
    assert isinstance(error, PolicyRefusal)
    assert error.refusal_class == REFUSAL_STORAGE_MAXIMUM
    assert error.message == 'component "db": storageSize "1Gi" exceeds enforced maximum "512Mi"'


def test_storage_fallback_under_the_maximum_builds() -> None:
    cluster = _objects("postgresql", "version: '16'", Policy(max_storage="2Gi"))[0]
    assert cluster["spec"]["storage"] == {"size": "1Gi"}


def test_authored_storage_over_the_maximum_is_refused_under_the_cluster_field() -> None:
    error = _error("postgresql", "storageSize: 4Gi", Policy(max_storage="2Gi"))
    assert error.message == 'component "db": storage.size "4Gi" exceeds enforced maximum "2Gi"'


def test_policy_default_storage_wins_over_the_fallback_and_loses_to_authored() -> None:
    policy = Policy(default_storage="3Gi")
    assert _objects("postgresql", "version: '16'", policy)[0]["spec"]["storage"] == {"size": "3Gi"}
    assert _objects("postgresql", "storageSize: 7Gi", policy)[0]["spec"]["storage"] == {"size": "7Gi"}


def test_invalid_policy_default_storage_is_refused() -> None:
    error = _error("postgresql", "version: '16'", Policy(default_storage="lots"))
    assert (
        error.message
        == 'component "db" (type "postgresql") in document "app": policy default for storage.size: invalid quantity "lots"'
    )


def test_non_positive_storage_is_refused() -> None:
    assert _error("postgresql", "storageSize: '0'").message == (
        'component "db" (type "postgresql") in document "app": storageSize: quantity must be positive, got "0"'
    )


def test_enable_pdb_follows_the_policy_default_instance_count() -> None:
    spec = _objects("postgresql", "version: '16'", Policy(default_replicas=3))[0]["spec"]
    assert (spec["instances"], spec["enablePDB"]) == (3, True)


def test_policy_default_of_zero_instances_is_refused() -> None:
    error = _error("postgresql", "version: '16'", Policy(default_replicas=0))
    assert (
        error.message
        == 'component "db" (type "postgresql") in document "app": instances: must be >= 1, got 0 from the policy default'
    )


def test_authored_zero_replicas_is_refused() -> None:
    assert (
        _error("postgresql", "replicas: 0").message
        == 'component "db" (type "postgresql") in document "app": replicas: must be >= 1, got 0'
    )


def test_instances_over_the_replica_maximum_is_refused() -> None:
    error = _error("postgresql", "replicas: 5", Policy(max_replicas=3))
    assert isinstance(error, PolicyRefusal) and error.refusal_class == REFUSAL_REPLICA_MAXIMUM


def test_resources_take_policy_defaults_and_are_checked() -> None:
    spec = _objects("postgresql", "version: '16'", Policy(default_cpu_request="250m"))[0]["spec"]
    assert spec["resources"] == {"requests": {"cpu": "250m"}}
    error = _error("postgresql", "resources: {requests: {cpu: '2'}, limits: {cpu: '1'}}")
    assert (
        error.message
        == 'component "db" (type "postgresql") in document "app": resources: cpu: request 2 must not exceed limit 1'
    )
    error = _error("postgresql", "resources: {limits: {hugepages-2Mi: 1Gi}}")
    assert (
        error.message
        == 'component "db" (type "postgresql") in document "app": resources: hugepages require cpu or memory in requests or limits'
    )


# --- postgresql: images and the registry allowlist ---------------------------------------------------


def test_image_outside_the_allowlist_is_refused() -> None:
    error = _error("postgresql", "version: '16'", Policy(allowed_registries=("registry.example",)))
    assert isinstance(error, PolicyRefusal) and error.refusal_class == REFUSAL_REGISTRY
    assert error.message == (
        'component "db": imageName: image "ghcr.io/cloudnative-pg/postgresql:16" is not from an allowed '
        "registry [registry.example]"
    )


def test_enabled_pooler_without_image_is_refused_under_an_allowlist() -> None:
    properties = "imageName: registry.example/pg:16\npooler: {enabled: true}"
    error = _error("postgresql", properties, Policy(allowed_registries=("registry.example",)))
    assert error.message == (
        'component "db": pgbouncer.image (pooler.image on a postgresql component): unset, so the CloudNativePG '
        "operator chooses the image the pods run, which the allowed registries [registry.example] cannot hold; "
        "name an image from one of them"
    )


def test_untagged_image_name_is_refused() -> None:
    assert _error("postgresql", "imageName: registry.example/pg").message == (
        'component "db" (type "postgresql") in document "app": imageName: image "registry.example/pg" rejected: no tag or digest specified; '
        "use an explicit version tag or digest"
    )


def test_pooler_image_tag_rule() -> None:
    error = _error("postgresql", "pooler: {enabled: true, image: 'pgbouncer:latest'}")
    assert error.message == (
        'component "db" (type "postgresql") in document "app": pooler.image: image "pgbouncer:latest" rejected: :latest tag not allowed; '
        "use an explicit version tag or digest"
    )


# --- postgresql: blocks, names and members -----------------------------------------------------------


def test_disabled_pooler_keeps_its_settings_and_builds_no_pooler() -> None:
    objects = _objects("postgresql", "pooler: {enabled: false, instances: 2}")
    assert [o["kind"] for o in objects] == ["Cluster"]


def test_pooler_instances_are_written_as_authored_including_zero() -> None:
    objects = _objects("postgresql", "pooler: {enabled: true, instances: 0}")
    assert objects[1]["spec"]["instances"] == 0


def test_empty_blocks_author_nothing() -> None:
    properties = "backup: {}\nbootstrap: {}\nreplication: {}\nmonitoring: {}\npooler: {}"
    spec = _objects("postgresql", properties)[0]["spec"]
    assert not {"backup", "bootstrap", "monitoring"} & set(spec)


def test_backup_settings_without_a_path_are_refused() -> None:
    error = _error("postgresql", "backup: {secretName: s3}")
    assert error.message == (
        'component "db" (type "postgresql") in document "app": backup.destinationPath: required (the CloudNativePG API requires this field)'
    )


def test_custom_queries_need_enabled() -> None:
    error = _error("postgresql", "monitoring: {customQueries: [{name: q, key: k}]}")
    assert error.message.startswith(
        'component "db" (type "postgresql") in document "app": monitoring.enabled: required where monitoring.customQueries'
    )


def test_wrong_types_are_refused_by_path() -> None:
    assert _error("postgresql", "managedRoles: [{name: a, login: 'yes'}]").message == (
        'component "db" (type "postgresql") in document "app": managedRoles[0].login: must be a boolean, got string'
    )
    assert _error("postgresql", "pooler: {enabled: 'true'}").message == (
        'component "db" (type "postgresql") in document "app": pooler.enabled: must be a boolean, got string'
    )
    assert _error("postgresql", "affinity: {topologyKey: 1.5}").message == (
        'component "db" (type "postgresql") in document "app": affinity.topologyKey: must be a string, got float64'
    )


def test_affinity_podantiaffinitytype_empty_is_an_error() -> None:
    error = _error("postgresql", "affinity: {podAntiAffinityType: ''}")
    assert error.message.startswith(
        'component "db" (type "postgresql") in document "app": affinity.podAntiAffinityType: invalid value ""'
    )


def test_affinity_block_takes_the_defaults() -> None:
    spec = _objects("postgresql", "affinity: {nodeSelector: {rack: a, zone: null}}")[0]["spec"]
    assert spec["affinity"] == {
        "topologyKey": "kubernetes.io/hostname",
        "podAntiAffinityType": "preferred",
        "nodeSelector": {"rack": "a"},
    }


def test_database_needing_an_object_name_is_refused() -> None:
    error = _error("postgresql", "databases: [{name: app_data, owner: app}]")
    assert error.message.startswith(
        'component "db" (type "postgresql") in document "app": databases[0].objectName: required'
    )


def test_reserved_database_name_is_refused() -> None:
    error = _error("postgresql", "databases: [{name: postgres, owner: app}]")
    assert error.message.startswith(
        'component "db" (type "postgresql") in document "app": databases[0].name: "postgres" is reserved'
    )


def test_duplicate_database_names_are_refused_naming_both() -> None:
    error = _error("postgresql", "databases: [{name: a, owner: o}, {name: a, owner: o}]")
    assert "databases[1].name" in error.message and "databases[0]" in error.message


def test_version_empty_is_refused() -> None:
    assert _error("postgresql", "version: ''").message == (
        'component "db" (type "postgresql") in document "app": version: must not be empty; omit it to default to "16"'
    )


def test_output_is_emitted_in_member_order() -> None:
    properties = (
        "objectStore: {destinationPath: s3://x}\npooler: {enabled: true}\n"
        "databases: [{name: a, owner: o}, {name: pooler, owner: o}]"
    )
    objects = _objects("postgresql", properties)
    assert [(o["kind"], o["metadata"]["name"]) for o in objects] == [
        ("Cluster", "db"),
        ("ObjectStore", "db"),
        ("Pooler", "db-pooler"),
        ("Database", "db-pooler"),
        ("Database", "db-a"),
    ]
    assert yamlio.dump_documents(objects)  # emits


def test_member_named_like_another_component_is_refused() -> None:
    app = (
        b"apiVersion: launcher.gokure.dev/v1alpha1\nkind: Application\nmetadata:\n  name: app\nspec:\n"
        b"  components:\n  - name: db\n    type: postgresql\n    properties:\n      pooler: {enabled: true}\n"
        b"  - name: db-pooler\n    type: cnpg-database\n    properties: {cluster: {name: x}, name: a, owner: o}\n"
    )
    with pytest.raises(CoreError) as caught:
        render(RenderRequest(app, PROFILE))
    assert caught.value.message == (
        'component "db" (type "postgresql") in document "app": pooler: generates component "db-pooler", which is already the name of component '
        '"db-pooler" (type "cnpg-database") in the document; rename one of them'
    )


# --- cnpg-database ----------------------------------------------------------------------------------


def test_database_ensure_defaults_to_present_and_empty_is_refused() -> None:
    spec = _objects("cnpg-database", "cluster: {name: pg}\nname: a\nowner: o\nschemas: [{name: s}]")[0][
        "spec"
    ]
    assert spec["schemas"] == [{"name": "s", "ensure": "present"}]
    error = _error(
        "cnpg-database", "cluster: {name: pg}\nname: a\nowner: o\nschemas: [{name: s, ensure: ''}]"
    )
    assert error.message.startswith('component "db": schemas[0].ensure: "" is refused by the Database CRD')


def test_database_requires_owner() -> None:
    error = _error("cnpg-database", "cluster: {name: pg}\nname: a")
    assert error.message == 'component "db": owner: required (the CloudNativePG API requires this field)'


# --- the further kinds ------------------------------------------------------------------------------


def test_scheduled_backup_empty_method_cannot_be_carried() -> None:
    error = _error("cnpg-scheduledbackup", "cluster: {name: pg}\nschedule: '0 0 0 * * *'\nmethod: ''")
    assert error.message == (
        'component "db": method: "" cannot be carried by the CloudNativePG API types (the field is omitted '
        'when zero, so the operator would apply its default "barmanObjectStore")'
    )


def test_scheduled_backup_requires_schedule_and_backup_requires_cluster_name() -> None:
    assert _error("cnpg-scheduledbackup", "cluster: {name: pg}").message == (
        'component "db": schedule: required (the CloudNativePG API requires this field)'
    )
    assert _error("cnpg-backup", "cluster: {}").message == (
        'component "db": cluster.name: required (the CloudNativePG API requires this field)'
    )


def test_role_connection_limit_zero_cannot_be_carried() -> None:
    error = _error("cnpg-databaserole", "cluster: {name: pg}\nname: r\nconnectionLimit: 0")
    assert error.message.startswith(
        'component "db": connectionLimit: 0 cannot be carried by the CloudNativePG'
    )


def test_cluster_reference_must_be_a_cluster_name() -> None:
    error = _error(
        "cnpg-publication", "cluster: {name: pg.main}\nname: p\ndbname: d\ntarget: {allTables: true}"
    )
    assert error.message.startswith('component "db": cluster.name "pg.main": must be a DNS-1035 label')


def test_catalog_duplicate_major_is_refused() -> None:
    properties = "images: [{major: 17, image: 'r.example/pg:17.1'}, {major: 17, image: 'r.example/pg:17.2'}]"
    assert _error("cnpg-imagecatalog", properties).message == (
        'component "db": images[1].major: 17 is also the major version of images[0]; '
        "the API takes each major version once"
    )


def test_catalog_images_follow_the_tag_rule_and_the_allowlist() -> None:
    error = _error(
        "cnpg-clusterimagecatalog", "images: [{major: 17, image: registry.example/team/postgresql}]"
    )
    assert error.message == (
        'component "db": images[0].image: image "registry.example/team/postgresql" rejected: no tag or digest '
        "specified; use an explicit version tag or digest"
    )
    policy = Policy(allowed_registries=("registry.example",))
    error = _error("cnpg-imagecatalog", "images: [{major: 17, image: 'ghcr.io/pg:17.2'}]", policy)
    assert isinstance(error, PolicyRefusal) and error.refusal_class == REFUSAL_REGISTRY


def test_cluster_image_catalog_is_cluster_scoped() -> None:
    obj = _objects("cnpg-clusterimagecatalog", "images: [{major: 17, image: 'r.example/pg:17.2'}]")[0]
    assert "namespace" not in obj["metadata"]


def test_valid_until_is_written_in_utc() -> None:
    spec = _objects(
        "cnpg-databaserole", "cluster: {name: pg}\nname: r\nvalidUntil: '2030-01-01T02:00:00+02:00'"
    )[0]["spec"]
    assert spec["validUntil"] == "2030-01-01T00:00:00Z"


# --- cnpg-cluster, cnpg-pooler, cnpg-objectstore ----------------------------------------------------


def test_cluster_unknown_field_and_two_spellings_are_refused() -> None:
    assert (
        _error("cnpg-cluster", "storage: {sise: 1Gi}").message
        == 'component "db": unknown field "storage.sise"'
    )
    error = _error("cnpg-cluster", "storage: {size: 1Gi, Size: 2Gi}")
    assert error.message.startswith('component "db": storage.size: sets the same field as storage.Size')


def test_cluster_uncarriable_zero_is_refused() -> None:
    error = _error("cnpg-cluster", "managed: {roles: [{name: a, connectionLimit: 0}]}")
    assert error.message == (
        'component "db": managed.roles[0].connectionLimit: 0 cannot be carried by the CloudNativePG API types '
        "(the field is omitted when zero, so the operator would apply its default -1)"
    )


def test_cluster_instances_below_one_and_policy_defaults() -> None:
    assert _error("cnpg-cluster", "instances: 0").message == 'component "db": instances: must be >= 1, got 0'
    spec = _objects(
        "cnpg-cluster", "imageName: r.example/pg:16", Policy(default_replicas=2, default_storage="2Gi")
    )[0]["spec"]
    assert (spec["instances"], spec["storage"]) == (2, {"size": "2Gi"})
    assert "enablePDB" not in spec


def test_cluster_without_image_is_refused_under_an_allowlist() -> None:
    error = _error("cnpg-cluster", "storage: {size: 1Gi}", Policy(allowed_registries=("r.example",)))
    assert error.message.startswith('component "db": imageName: unset, so the CloudNativePG operator chooses')


def test_cluster_name_rule() -> None:
    with pytest.raises(CoreError) as caught:
        render(RenderRequest(_app("cnpg-cluster", "storage: {size: 1Gi}", name="db.main"), PROFILE))
    assert caught.value.message.startswith(
        'component "db.main": cnpg-cluster name "db.main": must be a DNS-1035 label of at most 50 characters'
    )


def test_pooler_requires_pgbouncer_and_refuses_its_cluster_name() -> None:
    assert _error("cnpg-pooler", "cluster: {name: pg}").message == (
        'component "db": pgbouncer: required (an empty object selects PgBouncer\'s defaults)'
    )
    assert _error("cnpg-pooler", "cluster: {name: db}\npgbouncer: {}").message == (
        'component "db": cluster.name "db": a pooler cannot have the same name as its cluster'
    )


def test_pooler_template_without_containers_writes_an_empty_list() -> None:
    spec = _objects(
        "cnpg-pooler", "cluster: {name: pg}\npgbouncer: {}\ntemplate: {metadata: {labels: {a: b}}}"
    )[0]["spec"]
    assert spec["template"]["spec"] == {"containers": []}


def test_pooler_container_image_counts_as_the_pgbouncer_image() -> None:
    policy = Policy(allowed_registries=("r.example",))
    properties = "cluster: {name: pg}\npgbouncer: {}\ntemplate: {spec: {containers: [{name: pgbouncer, image: 'r.example/pgb:1'}]}}"
    assert _objects("cnpg-pooler", properties, policy)
    error = _error("cnpg-pooler", "cluster: {name: pg}\npgbouncer: {}", policy)
    assert isinstance(error, PolicyRefusal) and error.refusal_class == REFUSAL_REGISTRY


def test_objectstore_refuses_server_name_and_uncarriable_interval() -> None:
    error = _error("cnpg-objectstore", "configuration: {destinationPath: s3://x, serverName: a}")
    assert error.message.startswith('component "db": configuration.serverName:')
    error = _error(
        "cnpg-objectstore",
        "configuration: {destinationPath: s3://x}\ninstanceSidecarConfiguration: {retentionPolicyIntervalSeconds: 0}",
    )
    assert "default 1800" in error.message
    assert _error("cnpg-objectstore", "configuration: {}").message == (
        'component "db": configuration.destinationPath: required (the CloudNativePG API requires this field)'
    )


# --- the postgresql Cluster goes through the cnpg-cluster kind's decode ------------------------------


def test_postgresql_role_drops_the_false_flags_go_omits_and_keeps_inherit() -> None:
    roles = _objects(
        "postgresql",
        "managedRoles:\n- name: app\n  login: false\n  superuser: false\n  bypassrls: false\n  inherit: false",
    )[0]["spec"]["managed"]["roles"]
    assert roles == [{"name": "app", "inherit": False}]


def test_role_valid_until_is_written_in_utc_on_both_cluster_routes() -> None:
    valid_until = "validUntil: '2030-01-01T02:00:00+02:00'"
    via_rule = _objects("postgresql", f"managedRoles:\n- name: app\n  {valid_until}")[0]
    via_kind = _objects("cnpg-cluster", f"managed:\n  roles:\n  - name: app\n    {valid_until}")[0]
    for cluster in (via_rule, via_kind):
        assert cluster["spec"]["managed"]["roles"][0]["validUntil"] == "2030-01-01T00:00:00Z"


def test_role_valid_until_must_be_an_rfc3339_time() -> None:
    error = _error("cnpg-cluster", "managed:\n  roles:\n  - name: app\n    validUntil: tomorrow")
    assert error.message == 'component "db": managed.roles[0].validUntil: "tomorrow" is not an RFC 3339 time'


def test_external_cluster_store_is_decoded_to_its_field_names() -> None:
    cluster = _objects(
        "postgresql",
        "externalClusters:\n- name: origin\n  barmanObjectStore: {DestinationPath: 's3://b/o', serverName: o}",
    )[0]
    assert cluster["spec"]["externalClusters"] == [
        {"name": "origin", "barmanObjectStore": {"destinationPath": "s3://b/o", "serverName": "o"}}
    ]


def test_postgresql_unknown_property_is_refused() -> None:
    error = _error("postgresql", "sharedPreloadLibraries: [pg_stat_statements]\nversion: '16'")
    assert (
        error.message
        == 'component "db" (type "postgresql") in document "app": unknown property "sharedPreloadLibraries"'
    )


def test_postgresql_unknown_key_in_an_enumerated_block_is_refused() -> None:
    error = _error("postgresql", "backup: {destinationPath: 's3://b', schedule: '0 0 * * *'}")
    assert (
        error.message
        == 'component "db" (type "postgresql") in document "app": backup: unrecognized key "schedule"'
    )
    error = _error("postgresql", "pooler: {enabled: true, replicas: 2}")
    assert (
        error.message
        == 'component "db" (type "postgresql") in document "app": pooler: unrecognized key "replicas"'
    )


# --- cnpg-subscription ------------------------------------------------------------------------------

_SUBSCRIPTION = "cluster: {name: replica}\nname: s\ndbname: app\npublicationName: p"


def test_subscription_requires_its_external_cluster() -> None:
    assert _error("cnpg-subscription", _SUBSCRIPTION).message == (
        'component "db": externalClusterName: required (the CloudNativePG API requires this field)'
    )


def test_subscription_refuses_an_empty_reclaim_policy_and_non_string_parameters() -> None:
    base = _SUBSCRIPTION + "\nexternalClusterName: origin"
    assert _error("cnpg-subscription", base + '\nsubscriptionReclaimPolicy: ""').message == (
        'component "db": subscriptionReclaimPolicy: "" cannot be carried by the CloudNativePG API types '
        '(the field is omitted when zero, so the operator would apply its default "retain")'
    )
    assert _error("cnpg-subscription", base + "\nparameters: {copy_data: false}").message == (
        'component "db": parameters.copy_data: must be a string, got bool'
    )


def test_subscription_with_labels_and_no_optional_fields() -> None:
    (subscription,) = _objects(
        "cnpg-subscription", _SUBSCRIPTION + "\nexternalClusterName: origin\nlabels: {team: data}"
    )
    assert subscription["kind"] == "Subscription"
    assert subscription["metadata"]["labels"] == {"team": "data", "launcher.gokure.dev/component": "db"}
    assert subscription["spec"] == {
        "cluster": {"name": "replica"},
        "name": "s",
        "dbname": "app",
        "publicationName": "p",
        "externalClusterName": "origin",
    }
