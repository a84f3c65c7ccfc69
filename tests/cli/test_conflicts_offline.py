"""``kubectl fieldown conflicts --live``: outputs, matching, namespaces, schemas, secrets, exit codes
and errors, offline (no server), plus the pure parts (server order, the dry-run comparison)."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from cli_helpers import run

CONFORMANCE = Path(__file__).resolve().parents[1] / "conformance"
ANSI = re.compile(r"\x1b\[[0-9;]*m")

ITEM_KEYS = {"apiVersion", "kind", "namespace", "name", "conflicts", "shared", "deleted", "retained", "result",
             "neverPruned", "defaulted", "followup", "rejected", "applier", "requests", "runs"}
CONFLICT_KEYS = {"manager", "operation", "apiVersion", "subresource", "path", "liveValue", "appliedValue"}


@pytest.fixture(autouse=True)
def _plain_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for var in ("NO_COLOR", "FORCE_COLOR", "FIELDOWN_DEBUG"):
        monkeypatch.delenv(var, raising=False)
    yield


def load_case(name: str) -> dict[str, Any]:
    case: dict[str, Any] = json.loads((CONFORMANCE / f"{name}.json").read_text())
    return case


class Files:
    """A conformance case written out the way a user would have it: live.yaml, crd.yaml, manifest.yaml."""

    def __init__(self, tmp: Path, case: dict[str, Any]) -> None:
        self.tmp = tmp
        self.case = case
        self.live = tmp / "live.yaml"
        self.live.write_text(yaml.safe_dump(case["live"]))
        self.crd = tmp / "crd.yaml"
        if case.get("schema"):
            self.crd.write_text(yaml.safe_dump(case["schema"]))
        self.manifest = self.write("manifest.yaml", self.with_namespace(case["apply"]["manifest"]))

    def with_namespace(self, manifest: dict[str, Any]) -> dict[str, Any]:
        m = copy.deepcopy(manifest)
        ns = self.case["live"]["metadata"].get("namespace")
        if ns:
            m["metadata"]["namespace"] = ns
        return m

    def write(self, name: str, *docs: dict[str, Any]) -> Path:
        p = self.tmp / name
        p.write_text(yaml.safe_dump_all(docs))
        return p

    def args(self, *extra: str, manifest: Path | None = None) -> list[str]:
        out = ["conflicts", "-f", str(manifest or self.manifest), "--live", str(self.live),
               "--field-manager", self.case["apply"]["manager"]]
        if self.case.get("schema"):
            out += ["--schema", str(self.crd)]
        return [*out, *extra]


@pytest.fixture
def csa(tmp_path: Path) -> Files:
    """Created by client-side apply; another manager applies replicas 3 over kubectl-client-side-apply's 1."""
    return Files(tmp_path, load_case("cur-csa-then-ssa-conflict-replicas"))


# --- the JSON/YAML contract --------------------------------------------------------------------------


def test_json_contract_keys(csa: Files) -> None:
    r = run(*csa.args("-o", "json"))
    assert r.code == 1, r.err
    doc = r.json()
    assert set(doc) == {"apiVersion", "kind", "version", "items"}
    assert (doc["apiVersion"], doc["kind"], doc["version"]) == ("fieldown.dev/v1", "FieldownConflicts", 2)
    (item,) = doc["items"]
    assert set(item) == ITEM_KEYS
    assert item["conflicts"] and all(set(c) == CONFLICT_KEYS for c in item["conflicts"])
    assert item["result"] is None

    forced = run(*csa.args("-o", "json", "--force-conflicts"))
    assert forced.code == 0, forced.err
    (item,) = forced.json()["items"]
    assert set(item) == ITEM_KEYS
    assert set(item["result"]) == {"object", "managedFields"}
    assert item["result"]["managedFields"] == item["result"]["object"]["metadata"]["managedFields"]
    assert [c["path"] for c in item["conflicts"]] == [".spec.replicas"], "forced conflicts are still listed"


def test_yaml_equals_json(csa: Files) -> None:
    j = run(*csa.args("-o", "json", "--force-conflicts"))
    y = run(*csa.args("-o", "yaml", "--force-conflicts"))
    assert "&id" not in y.out and "*id" not in y.out
    assert without_times(yaml.safe_load(y.out)) == without_times(j.json())


def without_times(doc: Any) -> Any:
    """The applier's entry is stamped with the current second, which two runs need not share."""
    if isinstance(doc, dict):
        return {k: without_times(v) for k, v in doc.items() if k not in ("time", "creationTimestamp")}
    if isinstance(doc, list):
        return [without_times(v) for v in doc]
    return doc


def test_json_always_prints_a_document(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: [\n")
    r = run("conflicts", "-f", str(bad), "--live", str(bad), "--field-manager", "x", "-o", "json")
    assert r.code == 2
    assert r.json() == {"apiVersion": "fieldown.dev/v1", "kind": "FieldownConflicts", "version": 2, "items": []}


def test_the_managed_fields_time_is_now(csa: Files) -> None:
    import datetime

    r = run(*csa.args("-o", "json", "--force-conflicts"))
    manager = csa.case["apply"]["manager"]
    (entry,) = [e for e in r.json()["items"][0]["result"]["managedFields"] if e["manager"] == manager]
    t = datetime.datetime.fromisoformat(entry["time"].replace("Z", "+00:00"))
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", entry["time"]), "whole seconds, UTC"
    assert abs((datetime.datetime.now(datetime.timezone.utc) - t).total_seconds()) < 60


# --- text ----------------------------------------------------------------------------------------------


def test_text_conflict(csa: Files) -> None:
    r = run(*csa.args())
    assert r.code == 1
    ns = csa.case["live"]["metadata"]["namespace"]
    name = csa.case["live"]["metadata"]["name"]
    t = r.text
    assert t.startswith(f"Widget {ns}/{name}  example.com/v1")
    assert ".spec.replicas  live: 1 → applied: 3" in t
    assert 'owned by "kubectl-client-side-apply" using example.com/v1' in t
    assert "ways out: remove .spec.replicas from your manifest" in t
    assert "--force-conflicts takes it from kubectl-client-side-apply" in t
    manager = csa.case["apply"]["manager"]
    # the manifest sets replicas only: folding the whole client-side manager into the applier would
    # make its next apply delete color and containers (the annotation is another configuration), so
    # the checked way out hands it the one field its manifest sets
    assert (f"hand it to {manager} (checked): kubectl fieldown handover "
            f"widget.example.com/{name} -n {ns} --field .spec.replicas --to {manager}") in t
    assert "schema: CRD widgets.example.com; status subresource: yes (from the CRD in --schema)" in t
    assert t.rstrip().endswith("→ 1 conflict: the apply fails as it is")
    assert "\x1b[" not in r.out


def test_text_forced(csa: Files) -> None:
    r = run(*csa.args("--force-conflicts"))
    assert r.code == 0
    assert "taken over  .spec.replicas  live: 1 → applied: 3" in r.text
    assert "ways out" not in r.text
    assert "→ 1 conflict, taken over by --force-conflicts" in r.text


def test_colour_only_when_asked_and_no_color_wins(csa: Files, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert "\x1b[" in run(*csa.args()).out
    monkeypatch.setenv("NO_COLOR", "1")
    assert "\x1b[" not in run(*csa.args()).out


def test_shared_and_retained_in_text(tmp_path: Path) -> None:
    # alice and bob applied the same color; alice drops it: bob keeps it
    f = Files(tmp_path, load_case("cur-shared-ownership-then-drop"))
    r = run(*f.args("-o", "json"))
    assert r.code == 0, r.err
    (item,) = r.json()["items"]
    assert item["retained"] == [".spec.color"]
    t = run(*f.args()).text
    assert 'stays (still owned by "bob"): .spec.color' in t


def test_deleted_in_text(tmp_path: Path) -> None:
    f = Files(tmp_path, load_case("cur-remove-listmap-item-with-update-owned-subfield"))
    r = run(*f.args("-o", "json"))
    assert r.code == 0, r.err
    (item,) = r.json()["items"]
    assert item["deleted"] == ['.spec.containers[name="side"]']
    assert 'deletes: .spec.containers[name="side"]' in run(*f.args()).text


def test_the_summary_names_deletions_and_fail_on_deletes_stops_ci(tmp_path: Path) -> None:
    """Issue 21: an apply that deletes fields says so in its summary line, and ``--fail-on deletes``
    exits 1 for it (the default still exits 0: no conflict)."""
    f = Files(tmp_path, load_case("cur-remove-listmap-item-with-update-owned-subfield"))
    r = run(*f.args())
    assert r.code == 0, r.err
    assert "deletes 1 field" in r.text
    r = run(*f.args("--fail-on", "deletes"))
    assert r.code == 1 and "deletes 1 field" in r.text
    # the same object applied with its own containers again: nothing deleted, --fail-on deletes passes
    m = f.with_namespace(f.case["apply"]["manifest"])
    m["spec"]["containers"] = f.case["live"]["spec"]["containers"]
    r = run(*f.args("--fail-on", "deletes", "-o", "json", manifest=f.write("same.yaml", m)))
    assert r.code == 0 and r.json()["items"][0]["deleted"] == [], r.out


def test_a_forced_apply_that_deletes_says_so_and_fail_on_deletes_stops_it() -> None:
    """Issue 21: ``--force-conflicts`` ended with "1 conflict, taken over by --force-conflicts" (exit 0)
    while the apply deleted fields. The bundled example, forced: the summary counts the deletions the
    lines above name (kubectl's follow-up apply included), and ``--fail-on deletes`` exits 1."""
    examples = Path(__file__).resolve().parents[2] / "examples"
    args = ("conflicts", "-f", str(examples / "apply" / "deployment.yaml"), "--live", str(examples / "deployment.yaml"),
            "--field-manager", "kubectl", "--force-conflicts", "--color", "never")
    r = run(*args)
    assert r.code == 0, r.err
    deleted = ['.spec.template.metadata.creationTimestamp',
               '.spec.template.spec.containers[name="web"].env[name="FEATURE_FLAGS"]']
    assert f"applies again, which deletes: {', '.join(deleted)}" in r.out
    assert r.out.rstrip().endswith("→ 3 conflicts on 2 fields, taken over by --force-conflicts; deletes 3 fields")
    j = run(*args, "-o", "json")
    (item,) = j.json()["items"]
    assert len({*item["deleted"], *item["followup"]["deleted"]}) == 3
    failed = run(*args, "--fail-on", "deletes")
    assert failed.code == 1 and failed.out == r.out


def test_server_rejection_is_exit_1_with_the_servers_message(tmp_path: Path) -> None:
    f = Files(tmp_path, load_case("cur-null-in-typed-field"))
    r = run(*f.args())
    assert r.code == 1, r.err
    assert "the server would reject this apply (422 Invalid): " in r.text
    assert 'spec.color: Invalid value: "null"' in r.text
    assert "→ the server would reject the apply (422 Invalid)" in r.text
    j = run(*f.args("-o", "json"))
    assert j.code == 1
    assert j.json()["items"][0]["result"] is None
    assert j.err.startswith("note: ") and "would reject this apply (422 Invalid)" in j.err
    assert len(j.err.splitlines()) == 1


def test_create_when_not_in_live(csa: Files) -> None:
    m = csa.with_namespace(csa.case["apply"]["manifest"])
    m["metadata"]["name"] = "brand-new"
    r = run(*csa.args("-o", "json", manifest=csa.write("new.yaml", m)))
    assert r.code == 2, "the --live object now matches nothing"
    (item,) = r.json()["items"]
    assert item["name"] == "brand-new" and item["conflicts"] == []
    assert item["result"]["object"]["spec"] == m["spec"]
    assert "matches no manifest document" in r.err

    # with only the new manifest document and no live object for it: a create
    empty = csa.write("empty.yaml")
    r = run("conflicts", "-f", str(csa.write("new.yaml", m)), "--live", str(empty), "--schema", str(csa.crd),
            "--field-manager", "bob")
    assert r.code == 0, r.err
    assert "→ create (not found live)" in r.text


def test_deduced_schema_is_said(csa: Files) -> None:
    args = [a for a in csa.args() if a not in ("--schema", str(csa.crd))]
    r = run(*args)
    assert "(schema: deduced — lists are atomic unless the live managedFields key them; pass --schema)" in r.text
    assert "status subresource: no (assumed: no CRD for this kind in --schema)" in r.text


def test_cluster_scoped_kind(tmp_path: Path) -> None:
    f = Files(tmp_path, load_case("cur-gizmo-cluster-scoped-int-key"))
    r = run(*f.args("-o", "json", "-n", "ignored-for-cluster-scoped"))
    assert r.code == 1, r.err
    (item,) = r.json()["items"]
    assert item["namespace"] is None
    assert [c["path"] for c in item["conflicts"]] == [".spec.rules[id=2].action"]


def test_builtin_kind_offline_status_rule(tmp_path: Path) -> None:
    f = Files(tmp_path, load_case("builtin/cur-deploy-csa-replicas-then-ssa-conflict"))
    r = run(*f.args("--kube-version", "1.36"))
    assert r.code == 1, r.err
    assert "status subresource: yes (assumed: a built-in kind with a status field)" in r.text
    assert "kubernetes-validate 1.36" in r.text


def test_manifest_namespace_defaults_to_n_then_default(csa: Files) -> None:
    m = copy.deepcopy(csa.case["apply"]["manifest"])
    m["metadata"].pop("namespace", None)
    p = csa.write("nons.yaml", m)
    ns = csa.case["live"]["metadata"]["namespace"]
    assert run(*csa.args("-n", ns, manifest=p)).code == 1
    r = run(*csa.args("-o", "json", manifest=p))
    assert r.json()["items"][0]["namespace"] == "default"
    assert r.code == 2 and "matches no manifest document" in r.err
    assert f"a manifest document names it in namespace 'default': pass -n {ns}" in r.err


def test_namespace_mismatch_with_n_is_kubectls_error(csa: Files) -> None:
    r = run(*csa.args("-n", "elsewhere"))
    assert r.code == 2
    ns = csa.case["live"]["metadata"]["namespace"]
    assert (f'the namespace from the provided object "{ns}" does not match the namespace "elsewhere". '
            f"You must pass '--namespace={ns}' to perform this operation.") in r.err


def test_several_documents_files_and_stdin(csa: Files, tmp_path: Path) -> None:
    m = csa.with_namespace(csa.case["apply"]["manifest"])
    other = copy.deepcopy(m)
    other["metadata"]["name"] = "another"
    d = tmp_path / "dir"
    d.mkdir()
    (d / "a.yaml").write_text(yaml.safe_dump(other))
    (d / "ignored.txt").write_text("not a manifest")
    r = run("conflicts", "-f", "-", "-f", str(d), "--live", str(csa.live), "--schema", str(csa.crd),
            "--field-manager", "bob", "-o", "json", stdin=yaml.safe_dump(m))
    assert r.code == 1, r.err
    assert [i["name"] for i in r.json()["items"]] == [m["metadata"]["name"], "another"]
    t = run("conflicts", "-f", "-", "-f", str(d), "--live", str(csa.live), "--schema", str(csa.crd),
            "--field-manager", "bob", stdin=yaml.safe_dump(m)).text
    assert "2 objects: 1 with conflicts, 1 to create" in t


def test_live_as_a_list_and_several_objects(tmp_path: Path) -> None:
    a = Files(tmp_path, load_case("cur-csa-then-ssa-conflict-replicas"))
    b_case = load_case("cur-shared-ownership-then-drop")
    live = tmp_path / "both.yaml"
    live.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [a.case["live"], b_case["live"]]}))
    (tmp_path / "b").mkdir()
    b = Files(tmp_path / "b", b_case)
    manifests = a.write("both-m.yaml", a.with_namespace(a.case["apply"]["manifest"]),
                        b.with_namespace(b_case["apply"]["manifest"]))
    r = run("conflicts", "-f", str(manifests), "--live", str(live), "--schema", str(a.crd), "--field-manager",
            "bob", "-o", "json")
    assert r.code == 1, r.err  # the first conflicts
    items = r.json()["items"]
    assert [bool(i["conflicts"]) for i in items] == [True, False]


# --- secrets -----------------------------------------------------------------------------------------


def _secret_files(tmp_path: Path) -> tuple[Path, Path]:
    live = {
        "apiVersion": "v1", "kind": "Secret", "type": "Opaque",
        "metadata": {"name": "creds", "namespace": "app", "managedFields": [{
            "manager": "kubectl-client-side-apply", "operation": "Update", "apiVersion": "v1",
            "time": "2026-01-01T00:00:00Z", "fieldsType": "FieldsV1",
            "fieldsV1": {"f:data": {".": {}, "f:password": {}}, "f:type": {}}}]},
        "data": {"password": "c2VjcmV0"},
    }
    manifest = {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
                "metadata": {"name": "creds", "namespace": "app"}, "data": {"password": "bmV3"}}
    (tmp_path / "live.yaml").write_text(yaml.safe_dump(live))
    (tmp_path / "m.yaml").write_text(yaml.safe_dump(manifest))
    return tmp_path / "live.yaml", tmp_path / "m.yaml"


def test_secret_values_are_redacted_unless_asked(tmp_path: Path) -> None:
    live, m = _secret_files(tmp_path)
    args = ["conflicts", "-f", str(m), "--live", str(live), "--field-manager", "bob"]
    r = run(*args)
    assert r.code == 1, r.err
    assert "live: <redacted> → applied: <redacted>" in r.text
    assert "c2VjcmV0" not in r.out and "bmV3" not in r.out
    j = run(*args, "-o", "json", "--force-conflicts")
    assert "c2VjcmV0" not in j.out and "bmV3" not in j.out
    (item,) = j.json()["items"]
    assert item["conflicts"][0]["liveValue"] == "<redacted>"
    assert item["result"]["object"]["data"] == {"password": "<redacted>"}
    shown = run(*args, "-o", "json", "--show-secret-values")
    assert shown.json()["items"][0]["conflicts"][0]["liveValue"] == "c2VjcmV0"


# --- errors ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("args", "needle"), [
    (["-f", "x.yaml"], "--field-manager NAME is required"),
    (["--field-manager", "x"], "you must pass the manifests with -f/--filename"),
    (["-f", "-", "--live", "-", "--field-manager", "x"], "only one of -f and --live can read stdin"),
    (["-f", "x.yaml", "--live", "y.yaml", "--field-manager", "x", "--server-dry-run"],
     "--server-dry-run asks the cluster; it cannot be used with --live"),
    (["-f", "x.yaml", "--live", "y.yaml", "--field-manager", "x", "--context", "c"],
     "--kubeconfig and --context select a cluster"),
    (["-f", "x.yaml", "--field-manager", "x", "--kube-version", "0.1"], "--kube-version: no offline schemas"),
    (["-f", "x.yaml", "--field-manager", "x", "-o", "table"], "'table' is not one of"),
])
def test_usage_errors_are_exit_2_and_one_line(args: list[str], needle: str) -> None:
    r = run("conflicts", *args)
    assert r.code == 2, r.err
    assert len(r.err.splitlines()) == 1 and r.err.startswith("error: "), r.err
    assert needle in r.err
    assert r.out == ""


def test_bad_schema_file(csa: Files, tmp_path: Path) -> None:
    bad = tmp_path / "notacrd.yaml"
    bad.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    r = run(*csa.args("--schema", str(bad)))
    assert r.code == 2
    assert r.err == f"error: --schema {bad}: no CustomResourceDefinition or OpenAPI document " \
                    "(components.schemas / $defs) found\n"
    r = run(*csa.args("--schema", str(tmp_path / "missing.yaml")))
    assert r.code == 2 and "No such file or directory" in r.err


def test_document_without_a_name_and_partial_results(csa: Files) -> None:
    m = csa.with_namespace(csa.case["apply"]["manifest"])
    nameless = copy.deepcopy(m)
    del nameless["metadata"]["name"]
    nameless["metadata"]["generateName"] = "w-"
    p = csa.write("two.yaml", nameless, m)
    r = run(*csa.args("-o", "json", manifest=p))
    assert r.code == 2
    assert r.err.splitlines() == [f"error: {p}: document 1: the document has no metadata.name "
                                  "(server-side apply needs a name; generateName is not enough)"]
    assert len(r.json()["items"]) == 1


def test_malformed_live_and_duplicates(csa: Files, tmp_path: Path) -> None:
    dup = tmp_path / "dup.yaml"
    dup.write_text(yaml.safe_dump_all([csa.case["live"], csa.case["live"]]))
    r = run("conflicts", "-f", str(csa.manifest), "--live", str(dup), "--schema", str(csa.crd),
            "--field-manager", "bob", "-o", "json")
    assert r.code == 2
    assert "pass each live object once" in r.err
    assert len(r.json()["items"]) == 1


def test_no_traceback_for_an_unexpected_error(csa: Files, monkeypatch: pytest.MonkeyPatch) -> None:
    import kubectl_fieldown.conflicts.applyplan as applyplan

    def boom(*a: Any, **k: Any) -> None:
        raise RuntimeError("kaput")

    monkeypatch.setattr(applyplan, "plan_apply", boom)
    r = run(*csa.args())
    assert r.code == 2
    assert r.err.startswith("error: internal error: RuntimeError: kaput (this is a bug;")
    assert "Traceback" not in r.err


# --- the client-side → server-side trap, offline ------------------------------------------------------


def test_csa_trap_retained_and_kubectls_followup(csa: Files) -> None:
    """Drop ``color`` from the manifest kubectl applied client-side and apply it server-side as
    ``kubectl``: the request keeps it (retained); kubectl's csaupgrade and second apply delete it."""
    live = csa.case["live"]
    la = json.loads(live["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"])
    del la["spec"]["color"]
    del la["metadata"]["annotations"]
    p = csa.write("no-color.yaml", la)
    args = ["conflicts", "-f", str(p), "--live", str(csa.live), "--schema", str(csa.crd), "--field-manager", "kubectl"]
    r = run(*args, "-o", "json")
    assert r.code == 0, r.err
    (item,) = r.json()["items"]
    assert item["conflicts"] == [] and item["retained"] == [".spec.color"] and item["deleted"] == []
    assert item["result"]["object"]["spec"]["color"] == "blue", "the contract describes the apply request"
    t = run(*args).text
    assert 'stays (still owned by "kubectl-client-side-apply" using example.com/v1): .spec.color' in t
    assert ('with kubectl apply --server-side: kubectl then moves what "kubectl-client-side-apply" owns to '
            '"kubectl" and applies again, which deletes: .spec.color') in t

    # another manager: kubectl migrates into it too, and drops the annotation only "kubectl" keeps
    other = run("conflicts", "-f", str(p), "--live", str(csa.live), "--schema", str(csa.crd),
                "--field-manager", "ci")
    assert "which deletes: .metadata.annotations, .spec.color" in other.text


def test_no_followup_without_client_side_history(tmp_path: Path) -> None:
    f = Files(tmp_path, load_case("cur-shared-ownership-then-drop"))
    assert "with kubectl apply --server-side" not in run(*f.args()).text


def test_an_unreadable_live_file_stops_before_any_prediction(csa: Files, tmp_path: Path) -> None:
    # predicting against what could be read would call every object "create (not found live)"
    r = run("conflicts", "-f", str(csa.manifest), "--live", str(tmp_path / "nope.yaml"), "--schema", str(csa.crd),
            "--field-manager", "ci")
    assert (r.code, r.out) == (2, "")
    assert r.err_lines == [f"error: {tmp_path / 'nope.yaml'}: No such file or directory"]
    bad = tmp_path / "bad.yaml"
    bad.write_text("a: [\n")
    r = run("conflicts", "-f", str(csa.manifest), "--live", str(bad), "--field-manager", "ci")
    assert (r.code, r.out) == (2, "")
    assert r.err_lines[0].startswith(f"error: {bad}: document 1: invalid YAML:")


def test_a_file_read_twice_fails_once_and_directories_name_their_files_plainly(tmp_path: Path) -> None:
    d = tmp_path / "d"
    d.mkdir()
    (d / "bad.yaml").write_text("a: [\n")
    r = run("conflicts", "-f", f"{d}//", "--live", f"{d}/", "--field-manager", "ci")
    assert r.code == 2
    assert r.err_lines == [f"error: {d}/bad.yaml: document 1: invalid YAML: while parsing a flow node, did not "
                             "find expected node content (line 2, column 1)"]


def test_a_bad_schema_file_is_one_line_like_every_input_file(csa: Files, tmp_path: Path) -> None:
    bad = tmp_path / "crd.yaml"
    bad.write_text("kind: CustomResourceDefinition\n---\na: [\n")
    r = run(*csa.args(), "--schema", str(bad))
    assert r.code == 2
    assert r.err_lines == [f"error: --schema {bad}: document 2: invalid YAML: while parsing a flow node, did not "
                             "find expected node content (line 4, column 1)"]
