"""Issue 17, class 3: the appliers as ``--applier`` names them, each checked on the lab server.

* ``helm:previous=server-side`` — Helm 4 upgrading a release it already applied server-side (the
  release's stored apply method is ``ssa``): no csaupgrade of its own Update entry, so an object it
  created by POST (a ``helm`` Update entry) conflicts with its apply where the values differ.
  Plain ``helm`` stays the upgrade from a client-side (Helm 3) release.
* ``flux:helm-controller`` — Flux helm-controller runs Helm 4's upgrade as ``helm-controller`` with
  forced conflicts: it neither removes the last-applied annotation nor folds ``kubectl*`` managers
  (that is kustomize-controller).

Each test writes the object's history with real kubectl or raw requests, asks ``conflicts`` for
the prediction, plays the applier's real requests (tests/appliers/replay.py, which decides the
requests from the upstream code, not from kubectl_fieldown's model) and compares.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
from pathlib import Path
from typing import Any

import lab
import pytest
import yaml

from kubectl_fieldown.appliers import Applier, ApplierKind, parse_applier_spec, run_applier
from kubectl_fieldown.cli.main import main
from kubectl_fieldown.ownership.managedfields import format_time

from .replay import Appliers, Target, Wire, disagreements, rules_for

pytestmark = pytest.mark.cluster

NOW_TIME = "2026-11-26T00:00:00Z"


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for var in ("NO_COLOR", "FORCE_COLOR", "FIELDOWN_DEBUG"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("FIELDOWN_CACHE_DIR", str(tmp_path / "fieldown-cache"))


def _fieldown(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


class _Lab:
    def __init__(self, cluster: lab.Cluster, namespace: str, tmp: Path) -> None:
        self.cluster = cluster
        self.ns = namespace
        self.tmp = tmp
        self.wire = Wire(str(cluster.kubeconfig))
        self.appliers = Appliers(self.wire, cluster.kubectl)
        crd = self.wire.get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com")
        assert crd is not None
        self.rules = rules_for(crd, "Widget")
        self.target = Target("Widget", "w", namespace)

    def doc(self, spec: dict[str, Any], **metadata: Any) -> dict[str, Any]:
        return {"apiVersion": "example.com/v1", "kind": "Widget",
                "metadata": {"name": "w", "namespace": self.ns, **metadata}, "spec": spec}

    def file(self, doc: dict[str, Any], name: str) -> Path:
        path = self.tmp / name
        path.write_text(yaml.safe_dump(doc))
        return path

    def live(self) -> dict[str, Any]:
        obj = self.wire.get(self.target.path)
        assert obj is not None
        return obj

    def conflicts(self, manifest: Path, applier: str) -> tuple[int, dict[str, Any]]:
        code, out, err = _fieldown("conflicts", "-f", str(manifest), "--applier", applier,
                                   "--kubeconfig", str(self.cluster.kubeconfig), "-o", "json")
        assert code in (0, 1), f"exit {code}: {err}"
        (item,) = json.loads(out)["items"]
        return code, item

    def play(self, applier: Applier, manifest: dict[str, Any]) -> list[str]:
        """The applier's real requests, next to ``run_applier``'s prediction from the object as
        read just before: their disagreements (empty: they agree)."""
        live = self.live()
        now = format_time(self.wire.server_time())
        run = run_applier(applier, live, manifest, self.rules, now=now)
        rep = self.appliers.play(applier, self.target, manifest)
        return disagreements(run, rep)


@pytest.fixture
def lb(cluster: lab.Cluster, namespace: str, tmp_path: Path) -> _Lab:
    return _Lab(cluster, namespace, tmp_path)


def test_helm_4_release_already_server_side_conflicts_with_its_own_update_entry(lb: _Lab) -> None:
    # Helm 4 installed the release server-side; this object of it was created by POST (a "helm" Update
    # entry), so the release's next upgrade (apply method ssa: no csaupgrade) applies against it
    created = lb.wire.send("POST", f"/apis/example.com/v1/namespaces/{lb.ns}/widgets",
                           lb.doc({"replicas": 1, "color": "blue"}), query=[("fieldManager", "helm")])
    assert created.status == 201, created.body
    nxt = lb.doc({"replicas": 1, "color": "green"})
    path = lb.file(nxt, "next.yaml")

    code, item = lb.conflicts(path, "helm:previous=server-side")
    assert code == 1
    (run,) = item["runs"]
    assert run["applier"] == "Helm 4 (--server-side), release already server-side"
    assert [(q["verb"], q["manager"], q["status"]) for q in run["requests"]] == [("apply", "helm", 409)]
    message = run["requests"][0]["message"]
    assert message == 'Apply failed with 1 conflict: conflict with "helm" using example.com/v1: .spec.color'

    # Helm 4's real requests: the apply only, and the server answers that very 409
    helm = Applier(ApplierKind.helm, "helm", csa_migration=False)
    assert lb.play(helm, nxt) == []
    before = lb.live()
    rep = lb.appliers.play(helm, lb.target, nxt)
    assert [(s.verb, s.manager, s.status, s.message) for s in rep.sent] == [("apply", "helm", 409, message)]
    assert rep.final == before

    # plain "helm" is the first server-side upgrade of a client-side (Helm 3) release: csaupgrade first,
    # and no conflict
    code, item = lb.conflicts(path, "helm")
    assert code == 0
    (run,) = item["runs"]
    assert run["applier"] == "Helm 4 (--server-side), upgrading a client-side release"
    assert [(q["verb"], q["status"]) for q in run["requests"]] == [("json-patch", 200), ("apply", 200)]
    assert lb.play(parse_applier_spec("helm"), nxt) == []
    assert lb.live()["spec"]["color"] == "green"


def test_flux_helm_controller_keeps_the_annotation_and_kubectl_managers(lb: _Lab) -> None:
    # client-side kubectl apply, then kubectl label; the object moves to a HelmRelease
    lb.cluster.kubectl("apply", "-f", str(lb.file(lb.doc({"replicas": 1, "color": "blue"}), "first.yaml")))
    lb.cluster.kubectl("label", "widgets.example.com/w", "-n", lb.ns, "team=payments")
    nxt = lb.doc({"replicas": 1})
    code, item = lb.conflicts(lb.file(nxt, "next.yaml"), "flux:helm-controller")
    assert code == 0
    (run,) = item["runs"]
    assert run["applier"] == "Flux helm-controller (Helm 4, server-side, forced), upgrading a client-side release"
    # the forced apply only: no cleanup patch (kustomize-controller's), nothing deleted
    assert [(q["verb"], q["manager"], q["status"]) for q in run["requests"]] == [("apply", "helm-controller", 200)]
    assert run["deleted"] == []

    before = lb.live()
    assert lb.play(parse_applier_spec("flux:helm-controller"), nxt) == []
    after = lb.live()
    md = after["metadata"]
    assert md["labels"] == {"team": "payments"}
    assert md["annotations"] == before["metadata"]["annotations"]  # the last-applied annotation stays
    assert after["spec"] == {"replicas": 1, "color": "blue"}  # kubectl-client-side-apply still owns color
    managers = {(e["manager"], e["operation"]) for e in md["managedFields"]}
    assert ("kubectl-label", "Update") in managers and ("kubectl-client-side-apply", "Update") in managers


def test_applier_names_keep_working_and_refuse_nonsense() -> None:
    assert parse_applier_spec("flux").kind is ApplierKind.flux
    assert parse_applier_spec("flux", manager="helm-controller") == parse_applier_spec("flux:helm-controller")
    hc = parse_applier_spec("flux:helm-controller:previous=server-side")
    assert (hc.kind, hc.manager, hc.forces, hc.csa_migration) == (ApplierKind.helm, "helm-controller", True, False)
    assert hc.spec() == "flux:helm-controller:previous=server-side"
    assert parse_applier_spec(hc.spec()) == hc
    assert parse_applier_spec("ssa:ci:x").manager == "ci:x"
    for bad, words in [("helm:previous=maybe", "previous= takes client-side or server-side"),
                       ("kubectl:previous=ssa", "only for helm"), ("helm:color=red", "unknown option"),
                       ("ssa", "needs --field-manager"), ("bogus", "must be one of")]:
        code, _, err = _fieldown("conflicts", "-f", "-", "--applier", bad)
        assert code == 2 and words in err, (bad, err)


def test_client_side_apply_predictions_check_the_crd_like_the_server(lb: _Lab) -> None:
    """Issue 17, class 7, through the command line: the schema, the scale path and the plural come
    from the cluster's CRD (the 422 messages are compared with real kubectl's)."""
    first = lb.doc({"replicas": 1, "color": "blue", "finalizers": ["f1"]})
    lb.cluster.kubectl("apply", "-f", str(lb.file(first, "first.yaml")))
    for name, spec in [("wrong-type.yaml", {"replicas": "two", "color": "blue"}),
                       ("wrong-set-item.yaml", {"replicas": 1, "finalizers": ["f1", 2]})]:
        path = lb.file(lb.doc(spec), name)
        code, item = lb.conflicts(path, "kubectl-client-side")
        (run,) = item["runs"]
        ((verb, status, message),) = [(q["verb"], q["status"], q["message"]) for q in run["requests"]]
        assert code == 1 and (verb, status) == ("merge-patch", 422), (name, run)
        real = lb.cluster.kubectl("apply", "-f", str(path), check=False)
        assert real.returncode == 1 and message.startswith('Widget.example.com "w" is invalid: ')
        body = message.split(" is invalid: ", 1)[1].strip("[]")
        for part in body.split(", ."):
            assert part.removeprefix(".") in real.stderr, (name, part, real.stderr)
    # kubectl get -o json > saved.json; kubectl replace -f saved.json; then the manifest again
    saved = lb.cluster.kubectl("get", "widgets.example.com/w", "-n", lb.ns, "-o", "json")
    lb.cluster.kubectl("replace", "-f", "-", input=saved.stdout)
    code, item = lb.conflicts(lb.file(first, "again.yaml"), "kubectl-client-side")
    (run,) = item["runs"]
    assert code == 1 and [(q["verb"], q["status"], q["message"]) for q in run["requests"]] == [
        ("merge-patch", 422, 'widgets.example.com "w" is invalid: metadata.resourceVersion: Invalid value: 0: '
                             "must be specified for an update")]
    # kubectl words the Status its own way ('The widgets "w" is invalid: ...'); the replay cases
    # widget/csa-replaced/kubectl-client-side/* compare the server's message itself
    real = lb.cluster.kubectl("apply", "-f", str(lb.file(first, "again.yaml")), check=False)
    assert real.returncode == 1 and run["requests"][0]["message"].split(" is invalid: ")[1] in real.stderr


def _ratchet_crd(group: str, scalar: str) -> dict[str, Any]:
    """A CRD whose spec's types are all ``scalar`` (integer, then string once objects are stored)."""
    spec = {"type": "object", "properties": {
        "note": {"type": "string"},
        "size": {"type": scalar},
        "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": scalar}},
        "items": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                  "items": {"type": "object", "required": ["name"],
                            "properties": {"name": {"type": "string"}, "n": {"type": scalar}}}},
    }}
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"ratchets.{group}"},
            "spec": {"group": group, "scope": "Namespaced",
                     "names": {"plural": "ratchets", "singular": "ratchet", "kind": "Ratchet",
                               "listKind": "RatchetList"},
                     "versions": [{"name": "v1", "served": True, "storage": True,
                                   "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": spec}}}}]}}


def test_type_errors_are_ratcheted_like_the_server(lb: _Lab) -> None:
    """Objects stored while the schema said integer, then the schema says string: an update is
    checked only where it changes a value (list-map items by key; a set only as a whole list)."""
    import uuid

    from kubectl_fieldown.fieldmanager import FieldManagerError, ResourceRules, simulate_update
    from kubectl_fieldown.schema.crd import kinds_from_crd
    from kubectl_fieldown.schema.types import GroupVersionKind

    group = f"r{uuid.uuid4().hex[:8]}.example.com"
    lb.cluster.apply_crd(_ratchet_crd(group, "integer"))
    base = f"/apis/{group}/v1/namespaces/{lb.ns}/ratchets"
    stored = {"size": 5, "tags": [1], "items": [{"name": "a", "n": 1}]}
    created = lb.wire.send("POST", base, {"apiVersion": f"{group}/v1", "kind": "Ratchet",
                                          "metadata": {"name": "r", "namespace": lb.ns}, "spec": stored})
    assert created.status == 201, created.body
    served = lb.cluster.apply_crd(_ratchet_crd(group, "string"))
    rules = ResourceRules.for_kind(kinds_from_crd(served)[GroupVersionKind(group, "v1", "Ratchet")], False)
    cases = [
        {"note": "x"},  # nothing stored is touched: ratcheted, 200
        {"size": 6},  # a changed value of the old type: 422
        {"items": [{"name": "a", "n": 1}, {"name": "b", "n": 2}]},  # a new list-map item: only it
        {"tags": [1, 2]},  # a changed set: every item is checked
    ]
    checked = 0
    for change in cases:
        live = lb.wire.get(f"{base}/r")
        assert live is not None
        new = copy.deepcopy(live)
        new["spec"] = {**new["spec"], **change}
        try:
            predicted = (200, "", simulate_update(live, new, "editor", rules, now=NOW_TIME).object["spec"])
        except FieldManagerError as e:
            predicted = (e.status, e.message, live["spec"])
        got = lb.wire.send("PUT", f"{base}/r", new, query=[("fieldManager", "editor")])
        message = got.body.get("message", "") if got.status >= 300 and isinstance(got.body, dict) else ""
        after = lb.wire.get(f"{base}/r")
        assert after is not None
        assert predicted == (got.status, message, after["spec"]), change
        checked += got.status == 422
    assert checked == 3
