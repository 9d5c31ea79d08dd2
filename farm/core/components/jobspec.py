"""The twelve JobSpec-level properties job and cronjob share (seed 002, "Common config" and the job
entry), parsed into the ``batch/v1 JobSpec`` fields they write, with ``ValidateJobSpec``'s
cross-field rules. Every field is presence-gated: an unauthored one writes no key. ``suspend`` is not
here: job reads JobSpec.suspend itself and cronjob's suspend is the CronJobSpec field.
"""

from __future__ import annotations

import re
from typing import Any

from farm.core.errors import FieldError
from farm.core.fields import (
    go_type_name,
    parse_int32_field,
    parse_int64_field,
    parse_list_field,
    parse_object_field,
)
from farm.core.names import is_dns1123_label, is_qualified_name

JOB_SPEC_KEYS = (
    "backoffLimit",
    "completions",
    "parallelism",
    "activeDeadlineSeconds",
    "ttlSecondsAfterFinished",
    "completionMode",
    "backoffLimitPerIndex",
    "maxFailedIndexes",
    "podReplacementPolicy",
    "managedBy",
    "successPolicy",
    "podFailurePolicy",
)

COMPLETION_MODES = ("NonIndexed", "Indexed")
POD_REPLACEMENT_POLICIES = ("Failed", "TerminatingOrFailed")
POD_FAILURE_ACTIONS = ("FailJob", "FailIndex", "Ignore", "Count")
EXIT_CODE_OPERATORS = ("In", "NotIn")
CONDITION_STATUSES = ("True", "False", "Unknown")

MAX_COMPLETIONS_FOR_INDEXED_PARALLELISM = 100_000
MAX_PARALLELISM_FOR_INDEXED = 100_000
MAX_FAILED_INDEXES = 100_000
MAX_PARALLELISM_FOR_LARGE_PER_INDEX = 10_000
MAX_FAILED_INDEXES_FOR_LARGE_PER_INDEX = 10_000
MAX_RULES = 20
MAX_POD_CONDITIONS = 20
MAX_EXIT_CODES = 255

_MANAGED_BY_PATH = re.compile(
    r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?(/[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)+\Z"
)


def _non_negative(props: dict[str, Any], key: str, bits: int = 32) -> int | None:
    reader = parse_int32_field if bits == 32 else parse_int64_field
    value, present = reader(props, key)
    if not present:
        return None
    if value < 0:
        raise FieldError(f"{key}: must be >= 0, got {value}")
    return value


def _enum(props: dict[str, Any], key: str, allowed: tuple[str, ...], path: str | None = None) -> str | None:
    """An enum read raw: null is absent, ``""`` and anything outside the set are refused."""
    value = props.get(key)
    name = path or key
    if value is None:
        return None
    if not isinstance(value, str):
        raise FieldError(f"{name}: must be a string, got {go_type_name(value)}")
    if value not in allowed:
        raise FieldError(f'{name}: must be one of {", ".join(allowed)}, got "{value}"')
    return value


def _closed(obj: dict[str, Any], allowed: tuple[str, ...], path: str) -> None:
    for key in obj:
        if key not in allowed:
            raise FieldError(f'{path}: unknown field "{key}" (allowed: {", ".join(allowed)})')


def parse_job_spec(props: dict[str, Any]) -> dict[str, Any]:
    """The JobSpec fields the properties author, checked; keys in the batch/v1 JSON spelling."""
    spec: dict[str, Any] = {}
    for key in (
        "backoffLimit",
        "completions",
        "parallelism",
        "ttlSecondsAfterFinished",
        "backoffLimitPerIndex",
    ):
        value = _non_negative(props, key)
        if value is not None:
            spec[key] = value
    max_failed = _non_negative(props, "maxFailedIndexes")
    if max_failed is not None:
        spec["maxFailedIndexes"] = max_failed
    deadline, present = parse_int64_field(props, "activeDeadlineSeconds")
    if present:
        if deadline <= 0:
            raise FieldError(f"activeDeadlineSeconds: must be > 0, got {deadline}")
        spec["activeDeadlineSeconds"] = deadline
    mode = _enum(props, "completionMode", COMPLETION_MODES)
    if mode is not None:
        spec["completionMode"] = mode
    replacement = _enum(props, "podReplacementPolicy", POD_REPLACEMENT_POLICIES)
    if replacement is not None:
        spec["podReplacementPolicy"] = replacement
    managed_by = _parse_managed_by(props)
    if managed_by is not None:
        spec["managedBy"] = managed_by
    _check_counts(spec)
    success, present = parse_object_field(props, "successPolicy")
    if present:
        spec["successPolicy"] = _parse_success_policy(success, spec)
    failure, present = parse_object_field(props, "podFailurePolicy")
    if present:
        spec["podFailurePolicy"] = _parse_pod_failure_policy(failure, spec)
    return spec


def _parse_managed_by(props: dict[str, Any]) -> str | None:
    value = props.get("managedBy")
    if value is None:
        return None
    if not isinstance(value, str):
        raise FieldError(f"managedBy: must be a string, got {go_type_name(value)}")
    if value == "":
        raise FieldError(
            "managedBy: must not be empty (omit it to let the built-in job controller manage the Job)"
        )
    if len(value) > 63:
        raise FieldError(f'managedBy: "{value}" must be at most 63 characters, it has {len(value)}')
    domain = value.split("/", 1)[0]
    if "/" not in value or not _MANAGED_BY_PATH.match(value) or "." not in domain:
        raise FieldError(
            f'managedBy: "{value}" must be a domain-prefixed path (such as "example.com/controller")'
        )
    return value


def _check_counts(spec: dict[str, Any]) -> None:
    """ValidateJobSpec's rules between completions, parallelism and the per-index fields."""
    indexed = spec.get("completionMode") == "Indexed"
    completions = spec.get("completions")
    parallelism = spec.get("parallelism")
    per_index = spec.get("backoffLimitPerIndex")
    max_failed = spec.get("maxFailedIndexes")
    if indexed and completions is None:
        raise FieldError("completions: required when completionMode is Indexed")
    if indexed and parallelism is not None and parallelism > MAX_PARALLELISM_FOR_INDEXED:
        raise FieldError(
            f"parallelism: must be less than or equal to {MAX_PARALLELISM_FOR_INDEXED} when "
            f"completionMode is Indexed, got {parallelism}"
        )
    if per_index is not None and not indexed:
        raise FieldError("backoffLimitPerIndex: requires completionMode Indexed")
    if max_failed is not None and per_index is None:
        raise FieldError("maxFailedIndexes: requires backoffLimitPerIndex")
    if per_index is None or completions is None:
        return
    if completions > MAX_COMPLETIONS_FOR_INDEXED_PARALLELISM:
        if max_failed is None:
            raise FieldError(
                f"maxFailedIndexes: required when backoffLimitPerIndex is set and completions is more "
                f"than {MAX_COMPLETIONS_FOR_INDEXED_PARALLELISM}"
            )
        if max_failed > MAX_FAILED_INDEXES_FOR_LARGE_PER_INDEX:
            raise FieldError(
                f"maxFailedIndexes: must be less than or equal to {MAX_FAILED_INDEXES_FOR_LARGE_PER_INDEX} "
                f"when completions is more than {MAX_COMPLETIONS_FOR_INDEXED_PARALLELISM}, got {max_failed}"
            )
        if parallelism is not None and parallelism > MAX_PARALLELISM_FOR_LARGE_PER_INDEX:
            raise FieldError(
                f"parallelism: must be less than or equal to {MAX_PARALLELISM_FOR_LARGE_PER_INDEX} when "
                f"completions is more than {MAX_COMPLETIONS_FOR_INDEXED_PARALLELISM} and "
                f"backoffLimitPerIndex is set, got {parallelism}"
            )
    if max_failed is not None:
        if max_failed > MAX_FAILED_INDEXES:
            raise FieldError(
                f"maxFailedIndexes: must be less than or equal to {MAX_FAILED_INDEXES}, got {max_failed}"
            )
        if max_failed > completions:
            raise FieldError(
                f"maxFailedIndexes: must be less than or equal to completions ({completions}), got {max_failed}"
            )


# --- successPolicy -------------------------------------------------------------------------------


def _parse_success_policy(policy: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    _closed(policy, ("rules",), "successPolicy")
    if spec.get("completionMode") != "Indexed":
        raise FieldError("successPolicy: requires completionMode Indexed")
    rules, _ = parse_list_field(policy, "rules", "successPolicy.rules")
    if not rules:
        raise FieldError("successPolicy.rules: at least one rule is required")
    if len(rules) > MAX_RULES:
        raise FieldError(f"successPolicy.rules: must have at most {MAX_RULES} rules, got {len(rules)}")
    completions = spec["completions"]
    return {"rules": [_parse_success_rule(rule, i, completions) for i, rule in enumerate(rules)]}


def _parse_success_rule(rule: Any, index: int, completions: int) -> dict[str, Any]:
    path = f"successPolicy.rules[{index}]"
    if not isinstance(rule, dict):
        raise FieldError(f"{path}: must be an object, got {go_type_name(rule)}")
    _closed(rule, ("succeededIndexes", "succeededCount"), path)
    out: dict[str, Any] = {}
    named = None
    indexes = rule.get("succeededIndexes")
    if indexes is not None:
        if not isinstance(indexes, str):
            raise FieldError(f"{path}.succeededIndexes: must be a string, got {go_type_name(indexes)}")
        named = _count_indexes(indexes, completions, f"{path}.succeededIndexes")
        out["succeededIndexes"] = indexes
    count, present = parse_int32_field(rule, "succeededCount", f"{path}.succeededCount")
    if present:
        if count < 0:
            raise FieldError(f"{path}.succeededCount: must be >= 0, got {count}")
        if count > completions:
            raise FieldError(
                f"{path}.succeededCount: must be less than or equal to completions ({completions}), got {count}"
            )
        if named is not None and count > named:
            raise FieldError(
                f"{path}.succeededCount: must be less than or equal to the number of indexes in "
                f"succeededIndexes ({named}), got {count}"
            )
        out["succeededCount"] = count
    if not out:
        raise FieldError(f"{path}: at least one of succeededIndexes and succeededCount is required")
    return out


def _count_indexes(text: str, completions: int, path: str) -> int:
    """How many indexes an interval list such as ``0,2-4`` names; intervals increase, each < completions."""
    if text == "":
        raise FieldError(f"{path}: must not be empty")
    total = 0
    last = -1
    for part in text.split(","):
        low_text, dash, high_text = part.partition("-")
        try:
            low = _index(low_text)
            high = _index(high_text) if dash else low
        except ValueError:
            raise FieldError(f'{path}: "{text}" is not a list of indexes or index intervals') from None
        if high < low:
            raise FieldError(f'{path}: interval "{part}" has its end before its start')
        if low <= last:
            raise FieldError(f'{path}: "{text}" must list its intervals in increasing order without overlap')
        if high >= completions:
            raise FieldError(f"{path}: index {high} must be less than completions ({completions})")
        total += high - low + 1
        last = high
    return total


def _index(text: str) -> int:
    if not text.isdigit():
        raise ValueError(text)
    return int(text)


# --- podFailurePolicy ----------------------------------------------------------------------------


def _parse_pod_failure_policy(policy: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    _closed(policy, ("rules",), "podFailurePolicy")
    rules, _ = parse_list_field(policy, "rules", "podFailurePolicy.rules")
    if len(rules) > MAX_RULES:
        raise FieldError(f"podFailurePolicy.rules: must have at most {MAX_RULES} rules, got {len(rules)}")
    replacement = spec.get("podReplacementPolicy")
    if replacement is not None and replacement != "Failed":
        raise FieldError(
            f'podReplacementPolicy: must be Failed when podFailurePolicy is set, got "{replacement}"'
        )
    parsed = [_parse_failure_rule(rule, i, spec) for i, rule in enumerate(rules)]
    return {"rules": parsed}


def _parse_failure_rule(rule: Any, index: int, spec: dict[str, Any]) -> dict[str, Any]:
    path = f"podFailurePolicy.rules[{index}]"
    if not isinstance(rule, dict):
        raise FieldError(f"{path}: must be an object, got {go_type_name(rule)}")
    _closed(rule, ("action", "onExitCodes", "onPodConditions"), path)
    if rule.get("action") is None:
        raise FieldError(f"{path}: action is required")
    action = _enum(rule, "action", POD_FAILURE_ACTIONS, f"{path}.action")
    if action == "FailIndex" and spec.get("backoffLimitPerIndex") is None:
        raise FieldError(f"{path}.action: FailIndex requires backoffLimitPerIndex")
    out: dict[str, Any] = {"action": action}
    exit_codes, has_codes = parse_object_field(rule, "onExitCodes", f"{path}.onExitCodes")
    conditions, has_conditions = parse_list_field(rule, "onPodConditions", f"{path}.onPodConditions")
    # An empty onPodConditions alone is neither; beside onExitCodes it is both (the published
    # exclusive group counts a present key).
    both = has_codes and has_conditions
    neither = not has_codes and not conditions
    if both or neither:
        raise FieldError(f"{path}: exactly one of onExitCodes and onPodConditions is required")
    if has_codes:
        out["onExitCodes"] = _parse_exit_codes(exit_codes, f"{path}.onExitCodes")
    else:
        out["onPodConditions"] = _parse_conditions(conditions, f"{path}.onPodConditions")
    return out


def _parse_exit_codes(codes: dict[str, Any], path: str) -> dict[str, Any]:
    _closed(codes, ("containerName", "operator", "values"), path)
    if codes.get("operator") is None:
        raise FieldError(f"{path}: operator is required")
    operator = _enum(codes, "operator", EXIT_CODE_OPERATORS, f"{path}.operator")
    out: dict[str, Any] = {"operator": operator}
    container = codes.get("containerName")
    if container is not None:
        if not isinstance(container, str):
            raise FieldError(f"{path}.containerName: must be a string, got {go_type_name(container)}")
        if not is_dns1123_label(container):
            raise FieldError(f'{path}.containerName: "{container}" is not a valid container name')
        out["containerName"] = container
    values, _ = parse_list_field(codes, "values", f"{path}.values")
    if not values:
        raise FieldError(f"{path}.values: at least one exit code is required")
    if len(values) > MAX_EXIT_CODES:
        raise FieldError(f"{path}.values: must have at most {MAX_EXIT_CODES} exit codes, got {len(values)}")
    out["values"] = _exit_code_values(values, operator, f"{path}.values")
    return out


def _exit_code_values(values: list[Any], operator: str | None, path: str) -> list[int]:
    result: list[int] = []
    for i, value in enumerate(values):
        code, _ = parse_int32_field({"v": value}, "v", f"{path}[{i}]")
        if operator == "In" and code == 0:
            raise FieldError(f"{path}[{i}]: must not be 0 for the In operator")
        if result and code <= result[-1]:
            raise FieldError(
                f"{path}[{i}]: must be ordered in increasing order without duplicates, got {code}"
            )
        result.append(code)
    return result


def _parse_conditions(conditions: list[Any], path: str) -> list[dict[str, Any]]:
    if len(conditions) > MAX_POD_CONDITIONS:
        raise FieldError(f"{path}: must have at most {MAX_POD_CONDITIONS} patterns, got {len(conditions)}")
    parsed = []
    for i, pattern in enumerate(conditions):
        where = f"{path}[{i}]"
        if not isinstance(pattern, dict):
            raise FieldError(f"{where}: must be an object, got {go_type_name(pattern)}")
        _closed(pattern, ("type", "status"), where)
        kind = pattern.get("type")
        if kind is None or kind == "":
            raise FieldError(f"{where}: type is required")
        if not isinstance(kind, str):
            raise FieldError(f"{where}.type: must be a string, got {go_type_name(kind)}")
        if not is_qualified_name(kind):
            raise FieldError(f'{where}.type: "{kind}" is not a valid condition type')
        # An omitted or null status is the True upstream's defaulter fills in; the field has no
        # omitempty, so it is written out. An authored "" is refused.
        status = _enum(pattern, "status", CONDITION_STATUSES, f"{where}.status") or "True"
        parsed.append({"type": kind, "status": status})
    return parsed


def check_pod_failure_policy_against_template(spec: dict[str, Any], pod_spec: dict[str, Any]) -> None:
    """The emission-time checks: restartPolicy Never, and containerName naming a built container."""
    policy = spec.get("podFailurePolicy")
    if policy is None:
        return
    restart = pod_spec.get("restartPolicy")
    if restart != "Never":
        raise FieldError(f'podFailurePolicy: requires restartPolicy Never, got restart policy "{restart}"')
    names = {
        c.get("name") for c in (pod_spec.get("containers") or []) + (pod_spec.get("initContainers") or [])
    }
    for i, rule in enumerate(policy["rules"]):
        container = (rule.get("onExitCodes") or {}).get("containerName")
        if container is not None and container not in names:
            raise FieldError(
                f'podFailurePolicy.rules[{i}].onExitCodes.containerName: "{container}" names no container '
                "of the pod template (the main container or an initContainers entry)"
            )


# --- what job and cronjob share besides the JobSpec fields ----------------------------------------

RESTART_POLICIES = ("OnFailure", "Never")
BATCH_REFUSED = {
    "selector": (
        "the Job selector is generated by the job controller from a unique per-job label; a hand-written "
        "one adopts other jobs' pods"
    ),
    "manualSelector": "it only has meaning alongside a hand-written selector, which is refused",
    "template": (
        "the pod template is projected from the component's own container and pod-level properties; an "
        "authored one would be discarded rather than merged"
    ),
    "scheduling": "alpha upstream, behind the WorkloadWithJob feature gate, and not read",
}


def parse_restart_policy(props: dict[str, Any]) -> str:
    """The pod restart policy, default OnFailure; read raw so ``""`` is refused, not defaulted."""
    if "restartPolicy" not in props or props["restartPolicy"] is None:
        return "OnFailure"
    value = props["restartPolicy"]
    if not isinstance(value, str):
        raise FieldError(f"restartPolicy: must be a string, got {go_type_name(value)}")
    if value == "Always":
        raise FieldError("restartPolicy: Always is not allowed: the Job API requires OnFailure or Never")
    if value not in RESTART_POLICIES:
        raise FieldError(f'restartPolicy: invalid value "{value}", must be one of OnFailure, Never')
    return value


def object_name(props: dict[str, Any], component: str, kind: str, limit: int) -> str:
    """The object's name (objectName, else the component's), held to the kind's length limit."""
    authored = props.get("objectName")
    if authored is None:
        if len(component) > limit:
            raise FieldError(
                f'{kind.lower()} "{component}": the component name is the {kind}\'s name, which must be at '
                f"most {limit} characters: it has {len(component)}"
            )
        return component
    if not isinstance(authored, str):
        raise FieldError(f"objectName: must be a string, got {go_type_name(authored)}")
    if len(authored) > limit or not is_dns1123_label(authored):
        detail = f"it has {len(authored)}" if len(authored) > limit else "it is not a DNS-1123 label"
        raise FieldError(
            f'objectName (or the Naming hook\'s answer for role "object"): "{authored}" is not a valid '
            f"{kind} name, which must be at most {limit} characters: {detail}"
        )
    return authored


def check_indexed_hostname(name: str, spec: dict[str, Any], is_component_name: bool) -> None:
    """validateNameAllowsCompletions: the last index's pod hostname ``<name>-<completions-1>``."""
    completions = spec.get("completions")
    if spec.get("completionMode") != "Indexed" or not completions:
        return
    hostname = f"{name}-{completions - 1}"
    if is_dns1123_label(hostname):
        return
    owner = (
        f'job "{name}": the component name is the Job\'s name'
        if is_component_name
        else f'objectName "{name}"'
    )
    raise FieldError(
        f"{owner}, and with completionMode Indexed and completions {completions} the pod of the last "
        f'index takes the hostname "{hostname}", which must be a DNS-1123 label: at most 63 characters, '
        "lowercase letters, digits and '-', no dots"
    )
