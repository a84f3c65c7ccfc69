"""Shared fixtures.

``cluster`` (session): a real API server. With FIELDOWN_TEST_KUBECONFIG set, that cluster is
used as is (kubectl from FIELDOWN_TEST_KUBECTL or PATH); otherwise the lab server of hack/lab
is built (idempotent) and started on free ports, and stopped by PID at the end of the session.
Failing to build or start it is an error, never a skip. The test CRDs (Widget, Gadget, Gizmo:
the ``schema`` of the conformance cases; Multi, served at v1 and v2:
tests/conformance/multiversion/crd-multi.yaml) are applied and served before the first test runs.

``namespace`` (function): a fresh namespace name per test.

Property tests and fuzzing (hypothesis) run the ``ci`` profile unless HYPOTHESIS_PROFILE says
otherwise: derandomized (the same examples every run, so nothing fails by chance), no deadline (a busy
machine is not a failure), no example database written into the tree. ``HYPOTHESIS_PROFILE=explore``
draws new random examples (1,000 where a test does not set its own number) to look for new
failures by hand.

Every test that uses ``cluster`` (directly or through another fixture) gets the ``cluster``
marker, so ``pytest -m 'not cluster'`` runs the rest without a server.

The tool's processes that the tests start stand for commands typed in a terminal: SIGINT reaches
them with its default action even when the test run itself was started with SIGINT ignored (in the
background, under nohup), which they would rightly keep ignoring (tests/cli/test_interrupts.py
starts its children with each disposition explicitly).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

# before anything imports the package: every result an identity memo remembers is checked against
# a fresh computation, in this process and in every command the tests start
# (kubectl_fieldown/base/identitymemo.py)
os.environ.setdefault("FIELDOWN_CHECK_MEMO", "1")

import lab
import pytest
from hypothesis import HealthCheck, settings

if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    # a handler (not an ignore) is reset to the default action in every child the tests exec
    signal.signal(signal.SIGINT, signal.default_int_handler)

# under CI a skip or an xfail must be listed with its reason (tests/allowed_skips.py)
pytest_plugins = ("allowed_skips",)

settings.register_profile("ci", derandomize=True, deadline=None, database=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("explore", deadline=None, database=None, print_blob=True, max_examples=1000,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def _without_local_constants() -> None:
    """Hypothesis mixes literals of every imported local module into its examples, so what a
    derandomized test draws depended on which tests ran before it (a failure seen in the full suite
    did not show in the file alone). The ci profile draws from Hypothesis' own constants only."""
    from hypothesis.internal.conjecture import providers

    if hasattr(providers, "_get_local_constants") and hasattr(providers, "Constants"):
        empty = providers.Constants()
        providers._get_local_constants = lambda: empty  # type: ignore[attr-defined]


if settings().derandomize:
    _without_local_constants()

KUBECONFIG_ENV = "FIELDOWN_TEST_KUBECONFIG"
KUBECTL_ENV = "FIELDOWN_TEST_KUBECTL"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if "cluster" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.cluster)


@contextlib.contextmanager
def _uncaptured(config: pytest.Config) -> Iterator[None]:
    """Let progress output reach the terminal while pytest captures output."""
    capman: Any = config.pluginmanager.getplugin("capturemanager")
    if capman is None:
        yield
        return
    with capman.global_and_fixture_disabled():
        yield


def _failure(msg: str) -> BaseException:
    """A pytest failure (an error of every test that needs the cluster; never a skip)."""
    return pytest.fail.Exception(msg, pytrace=False)


def _external_cluster() -> lab.Cluster:
    kubeconfig = Path(os.environ[KUBECONFIG_ENV]).expanduser()
    if not kubeconfig.is_file():
        pytest.fail(f"{KUBECONFIG_ENV}={kubeconfig}: no such file", pytrace=False)
    kubectl = os.environ.get(KUBECTL_ENV) or shutil.which("kubectl")
    if not kubectl:
        pytest.fail(f"{KUBECONFIG_ENV} is set but no kubectl: put it on PATH or set {KUBECTL_ENV}",
                    pytrace=False)
    proc = subprocess.run(
        [kubectl, "--kubeconfig", str(kubeconfig), "config", "view", "--minify",
         "-o", "jsonpath={.clusters[0].cluster.server}"],
        capture_output=True, text=True, check=False,
    )
    if proc.returncode != 0:
        pytest.fail(f"kubectl config view failed for {kubeconfig}:\n{proc.stderr}", pytrace=False)
    return lab.Cluster(kubeconfig=kubeconfig, kubectl_bin=Path(kubectl), server=proc.stdout.strip(),
                       external=True)


def _start_lab(config: pytest.Config, tmp_root: Path) -> lab.Cluster:
    with _uncaptured(config):
        try:
            prefix = lab.ensure_built(log_path=tmp_root / "build.log")
        except RuntimeError as e:
            raise _failure(f"cannot build the API server lab (hack/lab/build.sh):\n{e}") from None
        last: Exception | None = None
        for attempt in range(3):  # a free port can be taken between picking and binding
            state = tmp_root / f"k8slab-{os.getpid()}-{attempt}"
            api, etcd, peer = lab.free_ports(3)
            t0 = time.monotonic()
            try:
                c = lab.start(state, api, etcd, peer, prefix=prefix, no_fsync=True)
            except (RuntimeError, subprocess.TimeoutExpired) as e:
                last = e
                if "already in use" not in str(e):
                    break
                continue
            print(f"[lab] API server {c.server} ready in {time.monotonic() - t0:.1f}s (STATE={state})",
                  flush=True)
            return c
    pytest.fail(f"cannot start the API server lab (hack/lab/start.sh):\n{last}", pytrace=False)


@pytest.fixture(autouse=True)
def _output_flags_at_defaults() -> None:
    """--color and --no-headers as a fresh process has them: a command run in this process sets them
    (render/prefs.py), and main() puts them back only before its own next run, so an earlier test's
    --color never would otherwise reach a test that renders without main()."""
    from kubectl_fieldown.render import prefs

    prefs.reset()


@pytest.fixture(scope="session")
def cluster(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[lab.Cluster]:
    if os.environ.get(KUBECONFIG_ENV):
        c = _external_cluster()
    else:
        c = _start_lab(request.config, tmp_path_factory.mktemp("lab", numbered=True))
    try:
        crds = lab.installed_crds()
        try:
            for crd in crds:
                c.apply_crd(crd)
            c.wait_for_discovery([crd["metadata"]["name"] for crd in crds])
        except (AssertionError, subprocess.TimeoutExpired) as e:
            raise _failure(f"cannot install the test CRDs on {c.server}:\n{e}") from None
        yield c
    finally:
        if c.state_dir is not None:
            with _uncaptured(request.config):
                pids = lab.stop(c.state_dir)
                print(f"\n[lab] stopped API server and etcd (PIDs {', '.join(map(str, pids))})", flush=True)


_NS_BAD = re.compile(r"[^a-z0-9-]+")


@pytest.fixture
def namespace(request: pytest.FixtureRequest, cluster: lab.Cluster) -> Iterator[str]:
    """A unique namespace name (a DNS label). The lab server has no Namespace API (custom
    resources may use any namespace name); on an external cluster it is created and deleted."""
    slug = _NS_BAD.sub("-", request.node.name.lower()).strip("-")[:44].strip("-") or "t"
    name = f"{slug}-{uuid.uuid4().hex[:8]}"
    created = False
    if cluster.external:
        proc = cluster.kubectl("create", "namespace", name, check=False)
        created = proc.returncode == 0
        # a server without the core API (like the lab's, reused as "external") has no namespaces
        if not created and "could not find the requested resource" not in proc.stderr:
            raise AssertionError(f"kubectl create namespace {name} failed:\n{proc.stderr}")
    try:
        yield name
    finally:
        if created:
            cluster.kubectl("delete", "namespace", name, "--wait=false", "--ignore-not-found", check=False)
