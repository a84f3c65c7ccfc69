"""``kubectl fieldown show -i``: every output, every filter and the JSON contract, offline."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from cli_helpers import run

from kubectl_fieldown.fieldpath import decode_fields_v1, path_string

REPO = Path(__file__).resolve().parents[2]
DEPLOYMENT = REPO / "examples" / "deployment.yaml"
SECRET = REPO / "examples" / "secret.yaml"
ANSI = re.compile(r"\x1b\[[0-9;]*m")

TOP_KEYS = {"apiVersion", "kind", "version", "items"}
ITEM_KEYS = {"apiVersion", "kind", "namespace", "name", "managers", "fields"}
MANAGER_KEYS = {"manager", "operation", "apiVersion", "subresource", "time", "fieldCount"}
FIELD_KEYS = {"path", "owners", "value"}
OWNER_KEYS = {"manager", "operation", "subresource"}


@pytest.fixture(autouse=True)
def _plain_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for var in ("NO_COLOR", "FORCE_COLOR", "FIELDOWN_DEBUG"):
        monkeypatch.delenv(var, raising=False)
    yield


def deployment() -> dict[str, Any]:
    obj: dict[str, Any] = yaml.safe_load(DEPLOYMENT.read_text())
    return obj


def expected_owners(obj: dict[str, Any]) -> dict[str, list[tuple[str, str, str]]]:
    """path string -> owners in entry order, straight from the object's managedFields."""
    want: dict[str, list[tuple[str, str, str]]] = {}
    for e in obj["metadata"]["managedFields"]:
        for p in decode_fields_v1(e.get("fieldsV1")):
            want.setdefault(path_string(p), []).append((e["manager"], e["operation"], e.get("subresource", "")))
    return want


def owners_of(field: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(o["manager"], o["operation"], o["subresource"]) for o in field["owners"]]


# --- the JSON contract -----------------------------------------------------------------------------


def test_json_contract_key_sets_are_exact() -> None:
    r = run("show", "-i", str(DEPLOYMENT), "-o", "json")
    assert r.code == 0, r.err
    assert r.err == ""
    doc = r.json()
    assert set(doc) == TOP_KEYS
    (item,) = doc["items"]
    assert set(item) == ITEM_KEYS
    identity = (item["apiVersion"], item["kind"], item["namespace"], item["name"])
    assert identity == ("apps/v1", "Deployment", "shop", "web")
    for m in item["managers"]:
        assert set(m) == MANAGER_KEYS
        assert m["operation"] in ("Apply", "Update")
        assert isinstance(m["fieldCount"], int)
        assert m["time"] is None or isinstance(m["time"], str)
        assert isinstance(m["subresource"], str)
    for f in item["fields"]:
        assert set(f) <= FIELD_KEYS and {"path", "owners"} <= set(f)
        assert f["owners"], "without --show-unowned every field has an owner"
        for o in f["owners"]:
            assert set(o) == OWNER_KEYS


def test_json_managers_mirror_managed_fields() -> None:
    obj = deployment()
    item = run("show", "-i", str(DEPLOYMENT), "-o", "json").json()["items"][0]
    want = [
        {
            "manager": e["manager"],
            "operation": e["operation"],
            "apiVersion": e["apiVersion"],
            "subresource": e.get("subresource", ""),
            "time": e.get("time"),
            "fieldCount": len(decode_fields_v1(e["fieldsV1"])),
        }
        for e in obj["metadata"]["managedFields"]
    ]
    assert item["managers"] == want
    assert len(want) == 10
    scale = [m for m in item["managers"] if m["subresource"] == "scale"]
    assert scale == [{"manager": "kubectl", "operation": "Update", "apiVersion": "apps/v1", "subresource": "scale",
                      "time": None, "fieldCount": 1}]


def test_json_fields_are_the_union_in_canonical_order_with_all_owners() -> None:
    obj = deployment()
    fields = run("show", "-i", str(DEPLOYMENT), "-o", "json").json()["items"][0]["fields"]
    want = expected_owners(obj)
    got = {f["path"]: owners_of(f) for f in fields}
    assert got == want
    assert len(fields) == len(want), "a path owned by two entries appears once"
    # canonical order = sorted path elements; spot-check a few neighbours
    paths = [f["path"] for f in fields]
    assert paths.index(".metadata.annotations.argocd.argoproj.io/tracking-id") < paths.index(".metadata.labels.app")
    assert paths.index(".spec.replicas") < paths.index(".spec.selector") < paths.index(".status.availableReplicas")
    item = '.spec.template.spec.containers[name="web"]'
    assert paths.index(item) < paths.index(item + ".args") < paths.index(item + '.env[name="FEATURE_FLAGS"]')


def test_json_co_owned_fields_list_every_owner() -> None:
    fields = {f["path"]: f for f in run("show", "-i", str(DEPLOYMENT), "-o", "json").json()["items"][0]["fields"]}
    assert owners_of(fields[".spec.replicas"]) == [("handover-to-hpa", "Apply", ""), ("kubectl", "Update", "scale")]
    assert owners_of(fields[".metadata.labels.app"]) == [("argocd-controller", "Apply", ""), ("kubectl", "Apply", "")]
    assert owners_of(fields[".status.replicas"]) == [("kube-controller-manager", "Update", "status")]


def test_json_values_are_the_whole_sub_value() -> None:
    obj = deployment()
    container = obj["spec"]["template"]["spec"]["containers"][0]
    fields = {f["path"]: f for f in run("show", "-i", str(DEPLOYMENT), "-o", "json").json()["items"][0]["fields"]}
    assert fields[".spec.replicas"]["value"] == 4 and type(fields[".spec.replicas"]["value"]) is int
    assert fields['.spec.template.spec.containers[name="web"]']["value"] == container
    assert fields[".spec.selector"]["value"] == {"matchLabels": {"app": "web"}}
    assert fields[".spec.template.metadata.annotations"]["value"] == obj["spec"]["template"]["metadata"]["annotations"]
    assert fields['.spec.template.spec.containers[name="web"].args']["value"] == ["--listen=:8080", "--log-format=json"]


def test_json_value_key_absent_when_path_not_set() -> None:
    obj = {
        "apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": "w", "namespace": "ns", "managedFields": [
            {"manager": "alice", "operation": "Apply", "apiVersion": "example.com/v1", "fieldsType": "FieldsV1",
             "fieldsV1": {"f:spec": {"f:color": {}, "f:gone": {}, "f:nothing": {}}}},
        ]},
        "spec": {"color": None, "nothing": {}},
    }
    doc = run("show", "-i", "-", "-o", "json", stdin=json.dumps(obj)).json()
    fields = {f["path"]: f for f in doc["items"][0]["fields"]}
    assert "value" not in fields[".spec.gone"]
    assert fields[".spec.color"]["value"] is None  # null is a value, not "not set"
    assert fields[".spec.nothing"]["value"] == {}


def test_yaml_output_is_the_same_document() -> None:
    as_json = run("show", "-i", str(DEPLOYMENT), "-o", "json").json()
    r = run("show", "-i", str(DEPLOYMENT), "-o", "yaml")
    assert r.code == 0
    assert yaml.safe_load(r.out) == as_json
    # keys keep contract order, the envelope first
    assert r.out.startswith("apiVersion: fieldown.dev/v1\nkind: FieldownShow\nversion: 1\n"
                            "items:\n- apiVersion: apps/v1\n  kind: Deployment\n")
    # a parent's value contains its fields' values: no YAML anchors/aliases for the same object
    assert not re.search(r"[&*]id\d", r.out)


def test_json_for_several_objects_and_no_objects() -> None:
    doc = {"apiVersion": "v1", "kind": "List", "items": [deployment(), yaml.safe_load(SECRET.read_text())]}
    items = run("show", "-i", "-", "-o", "json", stdin=json.dumps(doc)).json()["items"]
    assert [(i["kind"], i["name"]) for i in items] == [("Deployment", "web"), ("Secret", "db-credentials")]
    bare = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
    (item,) = run("show", "-i", "-", "-o", "json", stdin=json.dumps(bare)).json()["items"]
    assert item == {"apiVersion": "v1", "kind": "ConfigMap", "namespace": None, "name": "c", "managers": [],
                    "fields": []}


def test_directory_input_reads_every_manifest() -> None:
    r = run("show", "-i", str(REPO / "examples"), "-o", "json")
    assert r.code == 0, r.err
    assert [i["name"] for i in r.json()["items"]] == ["web", "db-credentials"]


# --- filters -----------------------------------------------------------------------------------------


def test_manager_filter_keeps_co_owners_and_every_manager() -> None:
    item = run("show", "-i", str(DEPLOYMENT), "-o", "json", "--manager", "kubectl*").json()["items"][0]
    assert len(item["managers"]) == 10, "filters never hide entries from the manager list"
    assert item["fields"]
    for f in item["fields"]:
        assert any(o["manager"].startswith("kubectl") for o in f["owners"])
    paths = {f["path"]: f for f in item["fields"]}
    assert ".spec.selector" not in paths
    assert owners_of(paths[".spec.replicas"])[0] == ("handover-to-hpa", "Apply", "")  # co-owner kept


def test_manager_filter_is_repeatable_and_exact_without_glob() -> None:
    item = run("show", "-i", str(DEPLOYMENT), "-o", "json", "--manager", "helm", "--manager", "kubectl-edit").json()
    managers = {o["manager"] for f in item["items"][0]["fields"] for o in f["owners"]}
    assert managers == {"helm", "kubectl-edit"}
    assert run("show", "-i", str(DEPLOYMENT), "-o", "json", "--manager", "nobody").json()["items"][0]["fields"] == []


def test_path_filter_prefix_and_dotted_names() -> None:
    env = '.spec.template.spec.containers[name="web"].env'
    fields = run("show", "-i", str(DEPLOYMENT), "-o", "json", "--path", env).json()["items"][0]["fields"]
    assert fields and all(f["path"].startswith(env) for f in fields)
    assert {f["path"] for f in fields} >= {env + '[name="LOG_LEVEL"].value', env + '[name="FEATURE_FLAGS"]'}
    # a label key with dots is one field name: resolved against the object
    label = ".metadata.labels.app.kubernetes.io/instance"
    fields = run("show", "-i", str(DEPLOYMENT), "-o", "json", "--path", label, "--path", ".spec.replicas").json()
    assert [f["path"] for f in fields["items"][0]["fields"]] == [label, ".spec.replicas"]
    # a prefix is made of whole path elements: .metadata.labels.app does not match app.kubernetes.io/...
    fields = run("show", "-i", str(DEPLOYMENT), "-o", "json", "--path", ".metadata.labels.app").json()
    assert [f["path"] for f in fields["items"][0]["fields"]] == [".metadata.labels.app"]


def test_show_unowned_adds_set_leaves_nobody_owns() -> None:
    item = run("show", "-i", str(DEPLOYMENT), "-o", "json", "--show-unowned").json()["items"][0]
    unowned = {f["path"]: f for f in item["fields"] if not f["owners"]}
    c = '.spec.template.spec.containers[name="web"]'
    assert unowned[c + ".imagePullPolicy"]["value"] == "IfNotPresent"
    assert unowned[c + '.ports[containerPort=8080,protocol="TCP"].protocol']["value"] == "TCP"
    assert unowned[".spec.strategy.rollingUpdate.maxSurge"]["value"] == "25%"
    assert unowned[".spec.template.metadata.creationTimestamp"]["value"] is None
    assert unowned[".spec.template.spec.securityContext"]["value"] == {}
    # server-managed metadata is never tracked, so it is not reported
    assert not any(p.startswith((".metadata.uid", ".metadata.resourceVersion", ".metadata.managedFields", ".kind"))
                   for p in unowned)
    # nothing below a node owned whole (the atomic selector, the args list)
    assert not any(p.startswith((".spec.selector.", c + ".args[")) for p in unowned)
    # owned fields are unchanged, and everything stays in canonical order
    owned = [f for f in item["fields"] if f["owners"]]
    assert {f["path"] for f in owned} == set(expected_owners(deployment()))
    for f in item["fields"]:
        assert set(f) == FIELD_KEYS
    plain = [f["path"] for f in run("show", "-i", str(DEPLOYMENT), "-o", "json").json()["items"][0]["fields"]]
    assert [f["path"] for f in owned] == plain
    ordered = [f["path"] for f in item["fields"]]
    assert ordered.index(".spec.revisionHistoryLimit") < ordered.index(".spec.selector")
    assert ordered.index(".spec.replicas") < ordered.index(".spec.revisionHistoryLimit")


def test_show_unowned_respects_path_filter() -> None:
    fields = run("show", "-i", str(DEPLOYMENT), "-o", "json", "--show-unowned", "--path", ".spec.strategy").json()
    assert [(f["path"], f["owners"]) for f in fields["items"][0]["fields"]] == [
        (".spec.strategy.rollingUpdate.maxSurge", []),
        (".spec.strategy.rollingUpdate.maxUnavailable", []),
        (".spec.strategy.type", []),
    ]


# --- human outputs -----------------------------------------------------------------------------------


ALL_LABELS = [
    "argocd-controller", "kubectl (Apply)", "handover-to-hpa", "kubectl (Update, scale)", "helm",
    "kubectl-client-side-apply", "kubectl-label", "kubectl-edit", "kube-controller-manager",
    "kube-controller-manager (status)",
]


def test_tree_is_the_default_and_labels_owners() -> None:
    r = run("show", "-i", str(DEPLOYMENT))
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    assert lines[0] == "Deployment shop/web"
    assert "│   │   ├── deployment.kubernetes.io/revision: \"5\"  ← kube-controller-manager" in lines
    assert any(line.endswith("replicas: 4  ← handover-to-hpa, kubectl (Update, scale)") for line in lines)
    assert any('[name="web"]  (created by argocd-controller, kubectl (Apply))' in line for line in lines)
    assert not ANSI.search(r.out), "no colour off a terminal"
    legend = lines[lines.index("") + 1:]
    assert legend[0].split() == ["MANAGER", "OPERATION", "SUBRESOURCE", "API", "VERSION", "AGE", "FIELDS"]
    assert [re.split(r"\s{2,}", row)[0] for row in legend[1:]] == ALL_LABELS
    assert re.split(r"\s{2,}", legend[4]) == ["kubectl (Update, scale)", "Update", "scale", "apps/v1", "-", "1"]
    assert all(line == line.rstrip() for line in lines)


def test_tree_time_modes_and_unowned() -> None:
    full = run("show", "-i", str(DEPLOYMENT), "--time", "full").out
    assert "2024-03-11T08:00:00Z" in full and " TIME " in full
    none = run("show", "-i", str(DEPLOYMENT), "--time", "none").out
    assert " AGE " not in none and " TIME " not in none
    r = run("show", "-i", str(DEPLOYMENT), "--show-unowned")
    assert "imagePullPolicy: IfNotPresent  (unowned)" in r.out


def test_blame_attributes_each_line() -> None:
    r = run("show", "-i", str(DEPLOYMENT), "-o", "blame", "--time", "none")
    assert r.code == 0, r.err
    rows = {}
    for line in r.out.splitlines():
        owner, _, text = line.partition("│ ")
        rows.setdefault(text.strip(), owner.strip())
    assert rows["apiVersion: apps/v1"] == ""
    assert rows["replicas: 4"] == "handover-to-hpa, kubectl (Update, scale)"
    assert rows["app: web"] == "argocd-controller, kubectl (Apply)"  # the first app: web is the label
    assert rows["tier: frontend"] == "kubectl (Apply)"
    assert rows["- --listen=:8080"] == "argocd-controller ↑"  # an item of an atomic list
    assert rows["matchLabels:"] == "argocd-controller ↑"  # inside the atomic selector
    assert rows["- args:"] == "argocd-controller"  # the first field of the container item
    assert rows["- name: FEATURE_FLAGS"] == "kubectl-client-side-apply"
    assert rows["imagePullPolicy: IfNotPresent"] == ""
    assert rows["image: registry.example.com/shop/web:1.8.2"] == "kubectl-edit"
    assert rows['status: "True"'] == "kube-controller-manager (status)"
    assert "managedFields" not in r.out
    unowned = run("show", "-i", str(DEPLOYMENT), "-o", "blame", "--show-unowned", "--time", "none").out
    assert re.search(r"^\(unowned\)\s+│\s+imagePullPolicy: IfNotPresent$", unowned, re.M)


def test_blame_time_column() -> None:
    full = run("show", "-i", str(DEPLOYMENT), "-o", "blame", "--time", "full").out
    assert re.search(r"^kubectl-edit\s+2024-06-03T11:30:00Z  │\s+image: ", full, re.M)
    assert re.search(r"^handover-to-hpa, kubectl \(Update, scale\)\s+2024-06-10T09:05:00Z  │   replicas: 4$",
                     full, re.M)
    rel = run("show", "-i", str(DEPLOYMENT), "-o", "blame").out
    assert re.search(r"^kubectl-edit\s+\d+[ydhms]\w*  │\s+image: ", rel, re.M)


def test_table_rows() -> None:
    r = run("show", "-i", str(DEPLOYMENT), "-o", "table")
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    assert lines[0].split() == ["PATH", "OWNERS", "VALUE"]
    rows = {re.split(r"\s{3,}", line)[0]: re.split(r"\s{3,}", line)[1:] for line in lines[1:]}
    assert rows[".spec.replicas"] == ["handover-to-hpa, kubectl (Update, scale)", "4"]
    assert rows['.spec.template.spec.containers[name="web"].image'] == ["kubectl-edit",
                                                                         "registry.example.com/shop/web:1.8.2"]
    assert len(rows) == len(expected_owners(deployment()))
    assert all(line == line.rstrip() for line in lines)
    unowned = run("show", "-i", str(DEPLOYMENT), "-o", "table", "--show-unowned").out
    assert re.search(r"^\.spec\.revisionHistoryLimit\s+\(unowned\)\s+10$", unowned, re.M)


@pytest.mark.parametrize("output", ["tree", "blame", "table"])
def test_every_human_output_names_every_manager(output: str) -> None:
    out = run("show", "-i", str(DEPLOYMENT), "-o", output).out
    for label in ("argocd-controller", "handover-to-hpa", "helm", "kubectl-client-side-apply", "kubectl-label",
                  "kubectl-edit", "kube-controller-manager (status)", "kubectl (Update, scale)"):
        assert label in out, (output, label)


# --- colour ------------------------------------------------------------------------------------------


def test_force_color_and_no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")
    coloured = run("show", "-i", str(DEPLOYMENT)).out
    assert ANSI.search(coloured)
    assert ANSI.sub("", coloured).splitlines()[0] == "Deployment shop/web"
    assert not ANSI.search(run("show", "-i", str(DEPLOYMENT), "-o", "json").out), "json is never coloured"
    assert not ANSI.search(run("show", "-i", str(DEPLOYMENT), "-o", "yaml").out)
    monkeypatch.setenv("NO_COLOR", "1")
    assert not ANSI.search(run("show", "-i", str(DEPLOYMENT)).out)
    assert not ANSI.search(run("show", "-i", str(DEPLOYMENT), "-o", "blame").out)


def test_same_manager_same_colour_across_outputs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")
    tree = run("show", "-i", str(DEPLOYMENT)).out
    table = run("show", "-i", str(DEPLOYMENT), "-o", "table").out

    def colour_of(text: str, name: str) -> set[str]:
        return set(re.findall(r"\x1b\[([0-9;]*)m" + re.escape(name) + r"\x1b", text))

    assert {c.split(";")[-1] for c in colour_of(tree, "helm")} == {c.split(";")[-1] for c in colour_of(table, "helm")}


# --- secrets -----------------------------------------------------------------------------------------


SECRET_VALUES = ("c2stbGl2ZS1kZW1vLTRmOGE5YzJlN2IxZA==", "czNjcjN0LXBhc3N3b3Jk", "c2hvcA==")


@pytest.mark.parametrize("output", ["tree", "blame", "table", "json", "yaml"])
def test_secret_values_are_redacted(output: str) -> None:
    r = run("show", "-i", str(SECRET), "-o", output, "--show-unowned")
    assert r.code == 0, r.err
    for v in SECRET_VALUES:
        assert v not in r.out, (output, v)
    assert "<redacted>" in r.out
    assert "last-applied-configuration" in r.out  # the key stays visible, its value does not
    assert '"apiVersion":"v1","data"' not in r.out and '\\"data\\"' not in r.out


def test_secret_redaction_in_json_values() -> None:
    fields = {f["path"]: f for f in run("show", "-i", str(SECRET), "-o", "json").json()["items"][0]["fields"]}
    assert fields[".data.password"]["value"] == "<redacted>"
    assert fields[".data"]["value"] == {"api-token": "<redacted>", "password": "<redacted>", "username": "<redacted>"}
    la = ".metadata.annotations.kubectl.kubernetes.io/last-applied-configuration"
    assert fields[la]["value"] == "<redacted>"
    assert fields[".metadata.labels.app"]["value"] == "web"  # only secret material is hidden


@pytest.mark.parametrize("output", ["tree", "table", "json", "blame"])
def test_show_secret_values(output: str) -> None:
    r = run("show", "-i", str(SECRET), "-o", output, "--show-secret-values")
    assert "czNjcjN0LXBhc3N3b3Jk" in r.out
    assert "<redacted>" not in r.out


def test_string_data_and_non_secret_data_left_alone() -> None:
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "managedFields": [
        {"manager": "m", "operation": "Apply", "apiVersion": "v1", "fieldsType": "FieldsV1",
         "fieldsV1": {"f:stringData": {"f:token": {}}}}]}, "stringData": {"token": "plain-text-token"}}
    out = run("show", "-i", "-", "-o", "json", stdin=json.dumps(secret)).out
    assert "plain-text-token" not in out and "<redacted>" in out
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "managedFields": [
        {"manager": "m", "operation": "Apply", "apiVersion": "v1", "fieldsType": "FieldsV1",
         "fieldsV1": {"f:data": {"f:k": {}}}}]}, "data": {"k": "visible"}}
    assert "visible" in run("show", "-i", "-", "-o", "json", stdin=json.dumps(cm)).out


# --- the saved output of kubectl get -------------------------------------------------------------------


def test_kubectl_get_list_output_and_json_stdin() -> None:
    obj = deployment()
    listed = {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": [obj, obj]}
    r = run("show", "-i", "-", "-o", "json", stdin=yaml.safe_dump(listed))
    assert r.code == 0, r.err
    assert len(r.json()["items"]) == 2
    r = run("show", "-i", "-", "-o", "json", stdin=json.dumps(obj, indent=4))
    assert r.json()["items"][0]["name"] == "web"
    typed_list = {"apiVersion": "apps/v1", "kind": "DeploymentList", "items": [obj]}
    assert len(run("show", "-i", "-", "-o", "json", stdin=json.dumps(typed_list)).json()["items"]) == 1
