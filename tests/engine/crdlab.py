"""A CRD served by the lab for the validation differentials (formats, composites, ObjectMeta,
constraints): installed, waited for until its schema is enforced, and the server's 422 set against
the engine's."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import lab

from engine.scenarios import Api, Response
from kubectl_fieldown.fieldmanager import FieldManagerError


@dataclass
class CrdLab:
    """One namespace of the CRD's resource on the lab."""

    api: Api
    path: str
    namespace: str
    api_version: str
    kind: str

    def body(self, name: str, spec: dict[str, Any]) -> dict[str, Any]:
        return {"apiVersion": self.api_version, "kind": self.kind,
                "metadata": {"name": name, "namespace": self.namespace}, "spec": spec}


def crd_lab(cluster: lab.Cluster, crd: dict[str, Any], refused_spec: dict[str, Any]) -> CrdLab:
    """``crd`` installed, once a dry-run create of ``refused_spec`` is refused (the CRD's handler
    starts asynchronously), in a namespace of its own."""
    cluster.apply_crd(crd)
    spec = crd["spec"]
    version = spec["versions"][0]["name"]
    plural = spec["names"]["plural"]
    namespace = f"{plural}-{random.Random().randrange(16**8):08x}"
    lab_ = CrdLab(Api(str(cluster.kubeconfig)), f"/apis/{spec['group']}/{version}/namespaces/{namespace}/{plural}",
                  namespace, f"{spec['group']}/{version}", spec["names"]["kind"])
    wait_refused(lab_.api, lab_.path, lab_.body("probe", refused_spec))
    return lab_


def wait_refused(api: Api, path: str, body: dict[str, Any]) -> None:
    """Until a dry-run create of ``body`` is refused with a 422: a schema change is picked up
    asynchronously."""
    deadline = time.monotonic() + 60
    while True:
        r = api.request("POST", path, body, query=[("dryRun", "All")])
        if r.status == 422:
            return
        assert time.monotonic() < deadline, f"{path}: the schema is not enforced after 60 s: {r.status} {r.body}"
        time.sleep(0.2)


def causes(body: Any) -> set[tuple[str, str]]:
    """A 422's causes, as (field, message)."""
    details = (body.get("details") or {}) if isinstance(body, dict) else {}
    return {(c.get("field", ""), c.get("message", "")) for c in details.get("causes") or []}


def predicted(write: Callable[[], Any]) -> tuple[int, set[tuple[str, str]]]:
    """The engine's status for ``write`` (a simulated create or update: 201) and its 422's causes."""
    try:
        write()
    except FieldManagerError as e:
        return e.status, {(c["field"], c["message"]) for c in e.causes}
    return 201, set()


def assert_same_answer(where: str, resp: Response, write: Callable[[], Any]) -> None:
    """The server's answer ``resp`` (a dry run) is the engine's for ``write``: the status, and a 422's causes."""
    status, have = predicted(write)
    assert (201 if resp.status == 200 else resp.status) == status, \
        f"{where}: server {resp.status} {resp.body}, predicted {status} {sorted(have)}"
    if status == 422:
        want = causes(resp.body)
        assert have == want, f"{where}:\n server    {sorted(want)}\n predicted {sorted(have)}"
