"""Field tables of the core/v1 pod types (PodSpec, Container, Volume and what they hold), as
``k8s.io/api/core/v1`` declares them, for the kind components that decode a pod spec strictly
(pod, replicaset, replicationcontroller, podtemplate), expressed for the kind engine.

The table is written compactly and turned into engine :class:`Struct` values at import: a struct is
a mapping of JSON field name to ``(type, omitempty)``. Types: ``string``, ``int32``, ``int64``,
``bool``, ``quantity``, ``intstr``, ``time`` (``metav1.Time``), ``any`` (kept as written), ``map``
(string to string), ``qmap`` (string to quantity), ``[]T`` (a list of T), ``*T`` (a pointer: written
when set, even to its zero) and a struct name (a value: always written).

Fields are those of k8s.io/api v0.37.1 (the version the seed pins), a superset of v0.36.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from farm.core.errors import FieldError
from farm.core.fields import go_type_name
from farm.core.kinds.engine import (
    BOOL,
    INT32,
    INT64,
    INT_OR_STRING,
    QUANTITY,
    RAW,
    STRING,
    Api,
    Custom,
    F,
    Struct,
    list_of,
    map_of,
)

OMIT = True  # omitempty
KEEP = False  # written even when zero

# metav1.ObjectMeta, every field: a template's metadata decodes into the whole type, so the fields
# the API server sets (uid, creationTimestamp ...) are accepted as Go accepts them. creationTimestamp
# is omitzero: the zero time (and null) is left out.
_OBJECT_META = {
    "name": ("string", OMIT),
    "generateName": ("string", OMIT),
    "namespace": ("string", OMIT),
    "selfLink": ("string", OMIT),
    "uid": ("string", OMIT),
    "resourceVersion": ("string", OMIT),
    "generation": ("int64", OMIT),
    "creationTimestamp": ("time", OMIT),
    "deletionTimestamp": ("*time", OMIT),
    "deletionGracePeriodSeconds": ("*int64", OMIT),
    "labels": ("map", OMIT),
    "annotations": ("map", OMIT),
    "ownerReferences": ("[]OwnerReference", OMIT),
    "finalizers": ("[]string", OMIT),
    "managedFields": ("[]ManagedFieldsEntry", OMIT),
}

_OWNER_REFERENCE = {
    "apiVersion": ("string", KEEP),
    "kind": ("string", KEEP),
    "name": ("string", KEEP),
    "uid": ("string", KEEP),
    "controller": ("*bool", OMIT),
    "blockOwnerDeletion": ("*bool", OMIT),
}

_MANAGED_FIELDS_ENTRY = {
    "manager": ("string", OMIT),
    "operation": ("string", OMIT),
    "apiVersion": ("string", OMIT),
    "time": ("*time", OMIT),
    "fieldsType": ("string", OMIT),
    "fieldsV1": ("*any", OMIT),
    "subresource": ("string", OMIT),
}

_LABEL_SELECTOR = {
    "matchLabels": ("map", OMIT),
    "matchExpressions": ("[]LabelSelectorRequirement", OMIT),
}

_SELECTOR_REQUIREMENT = {
    "key": ("string", KEEP),
    "operator": ("string", KEEP),
    "values": ("[]string", OMIT),
}

_NODE_SELECTOR_REQUIREMENT = {
    "key": ("string", KEEP),
    "operator": ("string", KEEP),
    "values": ("[]string", OMIT),
}

_KEY_TO_PATH = {
    "key": ("string", KEEP),
    "path": ("string", KEEP),
    "mode": ("*int32", OMIT),
    "user": ("*int64", OMIT),
}

_OBJECT_FIELD_SELECTOR = {"apiVersion": ("string", OMIT), "fieldPath": ("string", KEEP)}

_RESOURCE_FIELD_SELECTOR = {
    "containerName": ("string", OMIT),
    "resource": ("string", KEEP),
    "divisor": ("quantity", OMIT),
}

_LOCAL_OBJECT_REFERENCE = {"name": ("string", OMIT)}

_PROBE_HANDLER = {
    "exec": ("*ExecAction", OMIT),
    "httpGet": ("*HTTPGetAction", OMIT),
    "tcpSocket": ("*TCPSocketAction", OMIT),
    "grpc": ("*GRPCAction", OMIT),
}

TYPES: dict[str, dict[str, tuple[str, bool]]] = {
    "ObjectMeta": _OBJECT_META,
    "OwnerReference": _OWNER_REFERENCE,
    "ManagedFieldsEntry": _MANAGED_FIELDS_ENTRY,
    "PodTemplateSpec": {"metadata": ("ObjectMeta", OMIT), "spec": ("PodSpec", OMIT)},
    "LabelSelector": _LABEL_SELECTOR,
    "LabelSelectorRequirement": _SELECTOR_REQUIREMENT,
    "PodSpec": {
        "volumes": ("[]Volume", OMIT),
        "initContainers": ("[]Container", OMIT),
        "containers": ("[]Container", KEEP),
        "ephemeralContainers": ("[]any", OMIT),
        "restartPolicy": ("string", OMIT),
        "terminationGracePeriodSeconds": ("*int64", OMIT),
        "activeDeadlineSeconds": ("*int64", OMIT),
        "dnsPolicy": ("string", OMIT),
        "nodeSelector": ("map", OMIT),
        "serviceAccountName": ("string", OMIT),
        "serviceAccount": ("string", OMIT),
        "automountServiceAccountToken": ("*bool", OMIT),
        "nodeName": ("string", OMIT),
        "hostNetwork": ("bool", OMIT),
        "hostPID": ("bool", OMIT),
        "hostIPC": ("bool", OMIT),
        "shareProcessNamespace": ("*bool", OMIT),
        "securityContext": ("*PodSecurityContext", OMIT),
        "imagePullSecrets": ("[]LocalObjectReference", OMIT),
        "hostname": ("string", OMIT),
        "subdomain": ("string", OMIT),
        "affinity": ("*Affinity", OMIT),
        "schedulerName": ("string", OMIT),
        "tolerations": ("[]Toleration", OMIT),
        "hostAliases": ("[]HostAlias", OMIT),
        "priorityClassName": ("string", OMIT),
        "priority": ("*int32", OMIT),
        "dnsConfig": ("*PodDNSConfig", OMIT),
        "readinessGates": ("[]PodReadinessGate", OMIT),
        "runtimeClassName": ("*string", OMIT),
        "enableServiceLinks": ("*bool", OMIT),
        "preemptionPolicy": ("*string", OMIT),
        "overhead": ("qmap", OMIT),
        "topologySpreadConstraints": ("[]TopologySpreadConstraint", OMIT),
        "setHostnameAsFQDN": ("*bool", OMIT),
        "os": ("*PodOS", OMIT),
        "hostUsers": ("*bool", OMIT),
        "schedulingGates": ("[]PodSchedulingGate", OMIT),
        "resourceClaims": ("[]PodResourceClaim", OMIT),
        "resources": ("*ResourceRequirements", OMIT),
        "hostnameOverride": ("*string", OMIT),
        "schedulingGroup": ("*PodSchedulingGroup", OMIT),
        "evictionResponders": ("[]EvictionResponder", OMIT),
    },
    "PodSchedulingGroup": {"podGroupName": ("*string", OMIT)},
    "EvictionResponder": {"name": ("string", KEEP), "priority": ("int32", KEEP)},
    "LocalObjectReference": _LOCAL_OBJECT_REFERENCE,
    "PodOS": {"name": ("string", KEEP)},
    "PodSchedulingGate": {"name": ("string", KEEP)},
    "PodReadinessGate": {"conditionType": ("string", KEEP)},
    "PodResourceClaim": {
        "name": ("string", KEEP),
        "resourceClaimName": ("*string", OMIT),
        "resourceClaimTemplateName": ("*string", OMIT),
    },
    "HostAlias": {"ip": ("string", KEEP), "hostnames": ("[]string", OMIT)},
    "PodDNSConfig": {
        "nameservers": ("[]string", OMIT),
        "searches": ("[]string", OMIT),
        "options": ("[]PodDNSConfigOption", OMIT),
    },
    "PodDNSConfigOption": {"name": ("string", OMIT), "value": ("*string", OMIT)},
    "Toleration": {
        "key": ("string", OMIT),
        "operator": ("string", OMIT),
        "value": ("string", OMIT),
        "effect": ("string", OMIT),
        "tolerationSeconds": ("*int64", OMIT),
    },
    "TopologySpreadConstraint": {
        "maxSkew": ("int32", KEEP),
        "topologyKey": ("string", KEEP),
        "whenUnsatisfiable": ("string", KEEP),
        "labelSelector": ("*LabelSelector", OMIT),
        "minDomains": ("*int32", OMIT),
        "nodeAffinityPolicy": ("*string", OMIT),
        "nodeTaintsPolicy": ("*string", OMIT),
        "matchLabelKeys": ("[]string", OMIT),
    },
    "Affinity": {
        "nodeAffinity": ("*NodeAffinity", OMIT),
        "podAffinity": ("*PodAffinity", OMIT),
        "podAntiAffinity": ("*PodAffinity", OMIT),
    },
    "NodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": ("*NodeSelector", OMIT),
        "preferredDuringSchedulingIgnoredDuringExecution": ("[]PreferredSchedulingTerm", OMIT),
    },
    "NodeSelector": {"nodeSelectorTerms": ("[]NodeSelectorTerm", KEEP)},
    "NodeSelectorTerm": {
        "matchExpressions": ("[]NodeSelectorRequirement", OMIT),
        "matchFields": ("[]NodeSelectorRequirement", OMIT),
    },
    "NodeSelectorRequirement": _NODE_SELECTOR_REQUIREMENT,
    "PreferredSchedulingTerm": {"weight": ("int32", KEEP), "preference": ("NodeSelectorTerm", KEEP)},
    "PodAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": ("[]PodAffinityTerm", OMIT),
        "preferredDuringSchedulingIgnoredDuringExecution": ("[]WeightedPodAffinityTerm", OMIT),
    },
    "PodAffinityTerm": {
        "labelSelector": ("*LabelSelector", OMIT),
        "namespaces": ("[]string", OMIT),
        "topologyKey": ("string", KEEP),
        "namespaceSelector": ("*LabelSelector", OMIT),
        "matchLabelKeys": ("[]string", OMIT),
        "mismatchLabelKeys": ("[]string", OMIT),
    },
    "WeightedPodAffinityTerm": {"weight": ("int32", KEEP), "podAffinityTerm": ("PodAffinityTerm", KEEP)},
    "PodSecurityContext": {
        "seLinuxOptions": ("*SELinuxOptions", OMIT),
        "windowsOptions": ("*WindowsSecurityContextOptions", OMIT),
        "runAsUser": ("*int64", OMIT),
        "runAsGroup": ("*int64", OMIT),
        "runAsNonRoot": ("*bool", OMIT),
        "supplementalGroups": ("[]int64", OMIT),
        "supplementalGroupsPolicy": ("*string", OMIT),
        "fsGroup": ("*int64", OMIT),
        "sysctls": ("[]Sysctl", OMIT),
        "fsGroupChangePolicy": ("*string", OMIT),
        "seccompProfile": ("*SeccompProfile", OMIT),
        "appArmorProfile": ("*AppArmorProfile", OMIT),
        "seLinuxChangePolicy": ("*string", OMIT),
    },
    "Sysctl": {"name": ("string", KEEP), "value": ("string", KEEP)},
    "SELinuxOptions": {
        "user": ("string", OMIT),
        "role": ("string", OMIT),
        "type": ("string", OMIT),
        "level": ("string", OMIT),
    },
    "WindowsSecurityContextOptions": {
        "gmsaCredentialSpecName": ("*string", OMIT),
        "gmsaCredentialSpec": ("*string", OMIT),
        "runAsUserName": ("*string", OMIT),
        "hostProcess": ("*bool", OMIT),
    },
    "SeccompProfile": {"type": ("string", KEEP), "localhostProfile": ("*string", OMIT)},
    "AppArmorProfile": {"type": ("string", KEEP), "localhostProfile": ("*string", OMIT)},
    "Container": {
        "name": ("string", KEEP),
        "image": ("string", OMIT),
        "command": ("[]string", OMIT),
        "args": ("[]string", OMIT),
        "workingDir": ("string", OMIT),
        "ports": ("[]ContainerPort", OMIT),
        "envFrom": ("[]EnvFromSource", OMIT),
        "env": ("[]EnvVar", OMIT),
        "resources": ("ResourceRequirements", OMIT),
        "resizePolicy": ("[]ContainerResizePolicy", OMIT),
        "restartPolicy": ("*string", OMIT),
        "restartPolicyRules": ("[]ContainerRestartRule", OMIT),
        "volumeMounts": ("[]VolumeMount", OMIT),
        "volumeDevices": ("[]VolumeDevice", OMIT),
        "livenessProbe": ("*Probe", OMIT),
        "readinessProbe": ("*Probe", OMIT),
        "startupProbe": ("*Probe", OMIT),
        "lifecycle": ("*Lifecycle", OMIT),
        "terminationMessagePath": ("string", OMIT),
        "terminationMessagePolicy": ("string", OMIT),
        "imagePullPolicy": ("string", OMIT),
        "securityContext": ("*SecurityContext", OMIT),
        "stdin": ("bool", OMIT),
        "stdinOnce": ("bool", OMIT),
        "tty": ("bool", OMIT),
    },
    "ContainerPort": {
        "name": ("string", OMIT),
        "hostPort": ("int32", OMIT),
        "containerPort": ("int32", KEEP),
        "protocol": ("string", OMIT),
        "hostIP": ("string", OMIT),
    },
    "EnvFromSource": {
        "prefix": ("string", OMIT),
        "configMapRef": ("*ConfigMapEnvSource", OMIT),
        "secretRef": ("*SecretEnvSource", OMIT),
    },
    "ConfigMapEnvSource": {"name": ("string", OMIT), "optional": ("*bool", OMIT)},
    "SecretEnvSource": {"name": ("string", OMIT), "optional": ("*bool", OMIT)},
    "EnvVar": {"name": ("string", KEEP), "value": ("string", OMIT), "valueFrom": ("*EnvVarSource", OMIT)},
    "EnvVarSource": {
        "fieldRef": ("*ObjectFieldSelector", OMIT),
        "resourceFieldRef": ("*ResourceFieldSelector", OMIT),
        "configMapKeyRef": ("*ConfigMapKeySelector", OMIT),
        "secretKeyRef": ("*SecretKeySelector", OMIT),
        "fileKeyRef": ("*FileKeySelector", OMIT),
    },
    "ObjectFieldSelector": _OBJECT_FIELD_SELECTOR,
    "ResourceFieldSelector": _RESOURCE_FIELD_SELECTOR,
    "ConfigMapKeySelector": {"name": ("string", OMIT), "key": ("string", KEEP), "optional": ("*bool", OMIT)},
    "SecretKeySelector": {"name": ("string", OMIT), "key": ("string", KEEP), "optional": ("*bool", OMIT)},
    "FileKeySelector": {
        "volumeName": ("string", KEEP),
        "path": ("string", KEEP),
        "key": ("string", KEEP),
        "optional": ("*bool", OMIT),
    },
    "ResourceRequirements": {
        "limits": ("qmap", OMIT),
        "requests": ("qmap", OMIT),
        "claims": ("[]ResourceClaim", OMIT),
    },
    "ResourceClaim": {"name": ("string", KEEP), "request": ("string", OMIT)},
    "ContainerResizePolicy": {"resourceName": ("string", KEEP), "restartPolicy": ("string", KEEP)},
    "ContainerRestartRule": {
        "action": ("string", OMIT),
        "exitCodes": ("*ContainerRestartRuleOnExitCodes", OMIT),
    },
    "ContainerRestartRuleOnExitCodes": {"operator": ("string", OMIT), "values": ("[]int32", OMIT)},
    "VolumeMount": {
        "name": ("string", KEEP),
        "readOnly": ("bool", OMIT),
        "recursiveReadOnly": ("*string", OMIT),
        "mountPath": ("string", KEEP),
        "subPath": ("string", OMIT),
        "mountPropagation": ("*string", OMIT),
        "subPathExpr": ("string", OMIT),
        "bindMountOptions": ("[]string", OMIT),
    },
    "VolumeDevice": {"name": ("string", KEEP), "devicePath": ("string", KEEP)},
    "Probe": {
        **_PROBE_HANDLER,
        "initialDelaySeconds": ("int32", OMIT),
        "timeoutSeconds": ("int32", OMIT),
        "periodSeconds": ("int32", OMIT),
        "successThreshold": ("int32", OMIT),
        "failureThreshold": ("int32", OMIT),
        "terminationGracePeriodSeconds": ("*int64", OMIT),
    },
    "ExecAction": {"command": ("[]string", OMIT)},
    "HTTPGetAction": {
        "path": ("string", OMIT),
        "port": ("intstr", KEEP),
        "host": ("string", OMIT),
        "scheme": ("string", OMIT),
        "httpHeaders": ("[]HTTPHeader", OMIT),
        "protocol": ("*string", OMIT),
    },
    "HTTPHeader": {"name": ("string", KEEP), "value": ("string", KEEP)},
    "TCPSocketAction": {"port": ("intstr", KEEP), "host": ("string", OMIT)},
    "GRPCAction": {"port": ("int32", KEEP), "service": ("*string", KEEP), "mode": ("*string", OMIT)},
    "Lifecycle": {
        "postStart": ("*LifecycleHandler", OMIT),
        "preStop": ("*LifecycleHandler", OMIT),
        "stopSignal": ("*string", OMIT),
    },
    "LifecycleHandler": {
        "exec": ("*ExecAction", OMIT),
        "httpGet": ("*HTTPGetAction", OMIT),
        "tcpSocket": ("*TCPSocketAction", OMIT),
        "sleep": ("*SleepAction", OMIT),
    },
    "SleepAction": {"seconds": ("int64", KEEP)},
    "SecurityContext": {
        "capabilities": ("*Capabilities", OMIT),
        "privileged": ("*bool", OMIT),
        "seLinuxOptions": ("*SELinuxOptions", OMIT),
        "windowsOptions": ("*WindowsSecurityContextOptions", OMIT),
        "runAsUser": ("*int64", OMIT),
        "runAsGroup": ("*int64", OMIT),
        "runAsNonRoot": ("*bool", OMIT),
        "readOnlyRootFilesystem": ("*bool", OMIT),
        "allowPrivilegeEscalation": ("*bool", OMIT),
        "procMount": ("*string", OMIT),
        "seccompProfile": ("*SeccompProfile", OMIT),
        "appArmorProfile": ("*AppArmorProfile", OMIT),
    },
    "Capabilities": {"add": ("[]string", OMIT), "drop": ("[]string", OMIT)},
    "Volume": {
        "name": ("string", KEEP),
        "hostPath": ("*HostPathVolumeSource", OMIT),
        "emptyDir": ("*EmptyDirVolumeSource", OMIT),
        "gcePersistentDisk": ("*GCEPersistentDiskVolumeSource", OMIT),
        "awsElasticBlockStore": ("*AWSElasticBlockStoreVolumeSource", OMIT),
        "gitRepo": ("*GitRepoVolumeSource", OMIT),
        "secret": ("*SecretVolumeSource", OMIT),
        "nfs": ("*NFSVolumeSource", OMIT),
        "iscsi": ("*ISCSIVolumeSource", OMIT),
        "glusterfs": ("*GlusterfsVolumeSource", OMIT),
        "persistentVolumeClaim": ("*PersistentVolumeClaimVolumeSource", OMIT),
        "rbd": ("*RBDVolumeSource", OMIT),
        "flexVolume": ("*FlexVolumeSource", OMIT),
        "cinder": ("*CinderVolumeSource", OMIT),
        "cephfs": ("*CephFSVolumeSource", OMIT),
        "flocker": ("*FlockerVolumeSource", OMIT),
        "downwardAPI": ("*DownwardAPIVolumeSource", OMIT),
        "fc": ("*FCVolumeSource", OMIT),
        "azureFile": ("*AzureFileVolumeSource", OMIT),
        "configMap": ("*ConfigMapVolumeSource", OMIT),
        "vsphereVolume": ("*VsphereVirtualDiskVolumeSource", OMIT),
        "quobyte": ("*QuobyteVolumeSource", OMIT),
        "azureDisk": ("*AzureDiskVolumeSource", OMIT),
        "photonPersistentDisk": ("*PhotonPersistentDiskVolumeSource", OMIT),
        "projected": ("*ProjectedVolumeSource", OMIT),
        "portworxVolume": ("*PortworxVolumeSource", OMIT),
        "scaleIO": ("*ScaleIOVolumeSource", OMIT),
        "storageos": ("*StorageOSVolumeSource", OMIT),
        "csi": ("*CSIVolumeSource", OMIT),
        "ephemeral": ("*EphemeralVolumeSource", OMIT),
        "image": ("*ImageVolumeSource", OMIT),
    },
    "HostPathVolumeSource": {"path": ("string", KEEP), "type": ("*string", OMIT)},
    "EmptyDirVolumeSource": {
        "medium": ("string", OMIT),
        "sizeLimit": ("*quantity", OMIT),
        "mode": ("*int32", OMIT),
    },
    "SecretVolumeSource": {
        "secretName": ("string", OMIT),
        "items": ("[]KeyToPath", OMIT),
        "defaultMode": ("*int32", OMIT),
        "defaultUser": ("*int64", OMIT),
        "optional": ("*bool", OMIT),
    },
    "ConfigMapVolumeSource": {
        "name": ("string", OMIT),
        "items": ("[]KeyToPath", OMIT),
        "defaultMode": ("*int32", OMIT),
        "defaultUser": ("*int64", OMIT),
        "optional": ("*bool", OMIT),
    },
    "KeyToPath": _KEY_TO_PATH,
    "NFSVolumeSource": {"server": ("string", KEEP), "path": ("string", KEEP), "readOnly": ("bool", OMIT)},
    "ISCSIVolumeSource": {
        "targetPortal": ("string", KEEP),
        "iqn": ("string", KEEP),
        "lun": ("int32", KEEP),
        "iscsiInterface": ("string", OMIT),
        "fsType": ("string", OMIT),
        "readOnly": ("bool", OMIT),
        "portals": ("[]string", OMIT),
        "chapAuthDiscovery": ("bool", OMIT),
        "chapAuthSession": ("bool", OMIT),
        "secretRef": ("*LocalObjectReference", OMIT),
        "initiatorName": ("*string", OMIT),
    },
    "RBDVolumeSource": {
        "monitors": ("[]string", KEEP),
        "image": ("string", KEEP),
        "fsType": ("string", OMIT),
        "pool": ("string", OMIT),
        "user": ("string", OMIT),
        "keyring": ("string", OMIT),
        "secretRef": ("*LocalObjectReference", OMIT),
        "readOnly": ("bool", OMIT),
    },
    "ScaleIOVolumeSource": {
        "gateway": ("string", KEEP),
        "system": ("string", KEEP),
        "secretRef": ("*LocalObjectReference", KEEP),
        "sslEnabled": ("bool", OMIT),
        "protectionDomain": ("string", OMIT),
        "storagePool": ("string", OMIT),
        "storageMode": ("string", OMIT),
        "volumeName": ("string", OMIT),
        "fsType": ("string", OMIT),
        "readOnly": ("bool", OMIT),
    },
    "PersistentVolumeClaimVolumeSource": {"claimName": ("string", KEEP), "readOnly": ("bool", OMIT)},
    "DownwardAPIVolumeSource": {
        "items": ("[]DownwardAPIVolumeFile", OMIT),
        "defaultMode": ("*int32", OMIT),
        "defaultUser": ("*int64", OMIT),
    },
    "DownwardAPIVolumeFile": {
        "path": ("string", KEEP),
        "fieldRef": ("*ObjectFieldSelector", OMIT),
        "resourceFieldRef": ("*ResourceFieldSelector", OMIT),
        "mode": ("*int32", OMIT),
        "user": ("*int64", OMIT),
    },
    "ProjectedVolumeSource": {
        "sources": ("[]VolumeProjection", KEEP),
        "defaultMode": ("*int32", OMIT),
        "defaultUser": ("*int64", OMIT),
    },
    "VolumeProjection": {
        "secret": ("*SecretProjection", OMIT),
        "downwardAPI": ("*DownwardAPIProjection", OMIT),
        "configMap": ("*ConfigMapProjection", OMIT),
        "serviceAccountToken": ("*ServiceAccountTokenProjection", OMIT),
        "clusterTrustBundle": ("*ClusterTrustBundleProjection", OMIT),
        "podCertificate": ("*PodCertificateProjection", OMIT),
    },
    "SecretProjection": {
        "name": ("string", OMIT),
        "items": ("[]KeyToPath", OMIT),
        "optional": ("*bool", OMIT),
    },
    "ConfigMapProjection": {
        "name": ("string", OMIT),
        "items": ("[]KeyToPath", OMIT),
        "optional": ("*bool", OMIT),
    },
    "DownwardAPIProjection": {"items": ("[]DownwardAPIVolumeFile", OMIT)},
    "ServiceAccountTokenProjection": {
        "audience": ("string", OMIT),
        "expirationSeconds": ("*int64", OMIT),
        "path": ("string", KEEP),
        "user": ("*int64", OMIT),
    },
    "ClusterTrustBundleProjection": {
        "name": ("*string", OMIT),
        "signerName": ("*string", OMIT),
        "labelSelector": ("*LabelSelector", OMIT),
        "optional": ("*bool", OMIT),
        "path": ("string", KEEP),
        "user": ("*int64", OMIT),
    },
    "PodCertificateProjection": {
        # signerName and keyType are +required upstream but omitempty, and the pod kinds do not
        # refuse their omission (seed: replicaset / replicationcontroller).
        "signerName": ("string", OMIT),
        "keyType": ("string", OMIT),
        "maxExpirationSeconds": ("*int32", OMIT),
        "credentialBundlePath": ("string", OMIT),
        "keyPath": ("string", OMIT),
        "certificateChainPath": ("string", OMIT),
        "userAnnotations": ("map", OMIT),
        "user": ("*int64", OMIT),
    },
    "CSIVolumeSource": {
        "driver": ("string", KEEP),
        "readOnly": ("*bool", OMIT),
        "fsType": ("*string", OMIT),
        "volumeAttributes": ("map", OMIT),
        "nodePublishSecretRef": ("*LocalObjectReference", OMIT),
    },
    "EphemeralVolumeSource": {"volumeClaimTemplate": ("*PersistentVolumeClaimTemplate", OMIT)},
    "PersistentVolumeClaimTemplate": {
        "metadata": ("ObjectMeta", OMIT),
        "spec": ("PersistentVolumeClaimSpec", KEEP),
    },
    "PersistentVolumeClaimSpec": {
        "accessModes": ("[]string", OMIT),
        "selector": ("*LabelSelector", OMIT),
        "resources": ("VolumeResourceRequirements", OMIT),
        "volumeName": ("string", OMIT),
        "storageClassName": ("*string", OMIT),
        "volumeMode": ("*string", OMIT),
        "dataSource": ("*TypedLocalObjectReference", OMIT),
        "dataSourceRef": ("*TypedObjectReference", OMIT),
        "volumeAttributesClassName": ("*string", OMIT),
    },
    "VolumeResourceRequirements": {"limits": ("qmap", OMIT), "requests": ("qmap", OMIT)},
    "TypedLocalObjectReference": {
        "apiGroup": ("*string", KEEP),
        "kind": ("string", KEEP),
        "name": ("string", KEEP),
    },
    "TypedObjectReference": {
        "apiGroup": ("*string", KEEP),
        "kind": ("string", KEEP),
        "name": ("string", KEEP),
        "namespace": ("*string", OMIT),
    },
    # The in-tree volume sources (deprecated upstream, still fields of corev1.VolumeSource).
    "GCEPersistentDiskVolumeSource": {
        "pdName": ("string", KEEP),
        "fsType": ("string", OMIT),
        "partition": ("int32", OMIT),
        "readOnly": ("bool", OMIT),
    },
    "AWSElasticBlockStoreVolumeSource": {
        "volumeID": ("string", KEEP),
        "fsType": ("string", OMIT),
        "partition": ("int32", OMIT),
        "readOnly": ("bool", OMIT),
    },
    "GitRepoVolumeSource": {
        "repository": ("string", KEEP),
        "revision": ("string", OMIT),
        "directory": ("string", OMIT),
    },
    "GlusterfsVolumeSource": {
        "endpoints": ("string", KEEP),
        "path": ("string", KEEP),
        "readOnly": ("bool", OMIT),
    },
    "FlexVolumeSource": {
        "driver": ("string", KEEP),
        "fsType": ("string", OMIT),
        "secretRef": ("*LocalObjectReference", OMIT),
        "readOnly": ("bool", OMIT),
        "options": ("map", OMIT),
    },
    "CinderVolumeSource": {
        "volumeID": ("string", KEEP),
        "fsType": ("string", OMIT),
        "readOnly": ("bool", OMIT),
        "secretRef": ("*LocalObjectReference", OMIT),
    },
    "CephFSVolumeSource": {
        "monitors": ("[]string", KEEP),
        "path": ("string", OMIT),
        "user": ("string", OMIT),
        "secretFile": ("string", OMIT),
        "secretRef": ("*LocalObjectReference", OMIT),
        "readOnly": ("bool", OMIT),
    },
    "FlockerVolumeSource": {"datasetName": ("string", OMIT), "datasetUUID": ("string", OMIT)},
    "FCVolumeSource": {
        "targetWWNs": ("[]string", OMIT),
        "lun": ("*int32", OMIT),
        "fsType": ("string", OMIT),
        "readOnly": ("bool", OMIT),
        "wwids": ("[]string", OMIT),
    },
    "AzureFileVolumeSource": {
        "secretName": ("string", KEEP),
        "shareName": ("string", KEEP),
        "readOnly": ("bool", OMIT),
    },
    "VsphereVirtualDiskVolumeSource": {
        "volumePath": ("string", KEEP),
        "fsType": ("string", OMIT),
        "storagePolicyName": ("string", OMIT),
        "storagePolicyID": ("string", OMIT),
    },
    "QuobyteVolumeSource": {
        "registry": ("string", KEEP),
        "volume": ("string", KEEP),
        "readOnly": ("bool", OMIT),
        "user": ("string", OMIT),
        "group": ("string", OMIT),
        "tenant": ("string", OMIT),
    },
    "AzureDiskVolumeSource": {
        "diskName": ("string", KEEP),
        "diskURI": ("string", KEEP),
        "cachingMode": ("*string", OMIT),
        "fsType": ("*string", OMIT),
        "readOnly": ("*bool", OMIT),
        "kind": ("*string", OMIT),
    },
    "PhotonPersistentDiskVolumeSource": {"pdID": ("string", KEEP), "fsType": ("string", OMIT)},
    "PortworxVolumeSource": {
        "volumeID": ("string", KEEP),
        "fsType": ("string", OMIT),
        "readOnly": ("bool", OMIT),
    },
    "StorageOSVolumeSource": {
        "volumeName": ("string", OMIT),
        "volumeNamespace": ("string", OMIT),
        "fsType": ("string", OMIT),
        "readOnly": ("bool", OMIT),
        "secretRef": ("*LocalObjectReference", OMIT),
    },
    "ImageVolumeSource": {"reference": ("string", OMIT), "pullPolicy": ("string", OMIT)},
}

# Values the API server would replace with its default: the type omits the zero, so an authored
# zero cannot be carried. (struct, field) -> the default the API server applies.
DEFAULTED_STRINGS: dict[tuple[str, str], str] = {
    ("PodSpec", "dnsPolicy"): "ClusterFirst",
    ("PodSpec", "restartPolicy"): "Always",
    ("PodSpec", "schedulerName"): "default-scheduler",
    ("Container", "imagePullPolicy"): "IfNotPresent",
    ("Container", "terminationMessagePath"): "/dev/termination-log",
    ("Container", "terminationMessagePolicy"): "File",
    ("ContainerPort", "protocol"): "TCP",
    ("ObjectFieldSelector", "apiVersion"): "v1",
    ("HTTPGetAction", "path"): "/",
    ("HTTPGetAction", "scheme"): "HTTP",
    ("ImageVolumeSource", "pullPolicy"): "IfNotPresent",
    ("ISCSIVolumeSource", "iscsiInterface"): "default",
    ("RBDVolumeSource", "pool"): "rbd",
    ("RBDVolumeSource", "user"): "admin",
    ("RBDVolumeSource", "keyring"): "/etc/ceph/keyring",
    ("ScaleIOVolumeSource", "storageMode"): "ThinProvisioned",
    ("ScaleIOVolumeSource", "fsType"): "xfs",
}

DEFAULTED_NUMBERS: dict[tuple[str, str], int] = {
    ("Probe", "timeoutSeconds"): 1,
    ("Probe", "periodSeconds"): 10,
    ("Probe", "successThreshold"): 1,
    ("Probe", "failureThreshold"): 3,
}

# Fields the pod kinds refuse when unauthored under an authored parent: containers (the type would
# write null) and a label-selector match expression's key and operator.
REQUIRED: frozenset[tuple[str, str]] = frozenset(
    {
        ("PodSpec", "containers"),
        ("LabelSelectorRequirement", "key"),
        ("LabelSelectorRequirement", "operator"),
    }
)

_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})", re.ASCII)
_ZERO_TIME = "0001-01-01T00:00:00Z"


def decode_time(value: Any, path: str, api: Api) -> str | None:
    """metav1.Time: an RFC 3339 string in, UTC with second precision out (its MarshalJSON). The zero
    time comes back as None: omitted where the field is omitzero, null where it is a pointer."""
    if not isinstance(value, str):
        raise FieldError(f"{path}: must be a string, got {go_type_name(value)}")
    if not _RFC3339.fullmatch(value):
        raise FieldError(f'{path}: "{value}" is not an RFC 3339 time')
    fraction = re.search(r"\.\d+", value)
    text = value.replace(fraction.group(0), "") if fraction else value
    try:
        instant = datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)
    except (ValueError, OverflowError):
        raise FieldError(f'{path}: "{value}" is not an RFC 3339 time') from None
    written = instant.strftime("%Y-%m-%dT%H:%M:%SZ")
    return None if written == _ZERO_TIME else written


TIME = Custom("Time", decode_time)

_SCALAR_KINDS: dict[str, Any] = {
    "string": STRING,
    "int32": INT32,
    "int64": INT64,
    "bool": BOOL,
    "quantity": QUANTITY,
    "intstr": INT_OR_STRING,
    "time": TIME,
    "any": RAW,
    "map": map_of(STRING),
    "qmap": map_of(QUANTITY),
}

STRUCTS: dict[str, Struct] = {}


def _kind(type_name: str) -> Any:
    if type_name.startswith("[]"):
        return list_of(_kind(type_name[2:]))
    if type_name in _SCALAR_KINDS:
        return _SCALAR_KINDS[type_name]
    return STRUCTS[type_name]


def _field(struct: str, name: str, type_name: str, omitempty: bool) -> F:
    pointer = type_name.startswith("*")
    flags = [flag for flag, on in (("omit", omitempty), ("ptr", pointer)) if on]
    if (struct, name) in REQUIRED:
        flags.append("req")
    default = None
    if (struct, name) in DEFAULTED_STRINGS:
        default = f'"{DEFAULTED_STRINGS[(struct, name)]}"'
    elif (struct, name) in DEFAULTED_NUMBERS:
        default = str(DEFAULTED_NUMBERS[(struct, name)])
    return F(name, _kind(type_name.lstrip("*")), " ".join(flags), default=default)


def _fields(struct: str) -> list[F]:
    return [_field(struct, name, t, omit) for name, (t, omit) in TYPES[struct].items()]


for _name in TYPES:
    STRUCTS[_name] = Struct(_name, lambda _n=_name: _fields(_n))

POD_SPEC = STRUCTS["PodSpec"]
POD_TEMPLATE_SPEC = STRUCTS["PodTemplateSpec"]
LABEL_SELECTOR_STRUCT = STRUCTS["LabelSelector"]
