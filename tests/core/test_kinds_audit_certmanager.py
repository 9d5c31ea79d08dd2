"""Field-table audit of cert-manager's IssuerSpec against the published cert-manager.io/v1 schema:
the fields that were missing decode and are written as authored."""

from __future__ import annotations

from .kindbuild import build, message


def _azure_solver(azure: dict) -> dict:
    return {
        "acme": {
            "server": "https://acme.example/directory",
            "privateKeySecretRef": {"name": "acme-key"},
            "solvers": [{"dns01": {"azureDNS": azure}}],
        }
    }


def test_azure_dns_zone_type_decodes() -> None:
    azure = {
        "subscriptionID": "sub",
        "resourceGroupName": "dns",
        "hostedZoneName": "internal.example",
        "zoneType": "AzurePrivateZone",
        "managedIdentity": {"clientID": "id"},
    }
    spec = build("issuer", _azure_solver(azure))["spec"]
    assert spec["acme"]["solvers"][0]["dns01"]["azureDNS"] == azure


def test_azure_dns_zone_type_is_a_string() -> None:
    azure = {"subscriptionID": "sub", "resourceGroupName": "dns", "zoneType": 1}
    assert message("clusterissuer", _azure_solver(azure)) == (
        'component "c": acme.solvers[0].dns01.azureDNS.zoneType: must be a string, got int'
    )
