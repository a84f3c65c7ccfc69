"""Shell completion in a real bash and through kubectl's plugin completion, against the real API
server: flags (the commands' own and kubectl's generic ones), enum values, resource types from
discovery, object names from a LIST, kubeconfig contexts."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import lab
import pytest

BIN = Path(sys.executable).parent
BASH = shutil.which("bash")
SHOW_OUTPUTS = ("tree", "blame", "table", "json", "yaml", "name", "jsonpath", "custom-columns")

pytestmark = pytest.mark.skipif(not (BIN / "kubectl_complete-fieldown").exists(),
                                reason="the console scripts are not installed (pip install -e .)")


def _env(cluster: lab.Cluster, **extra: str) -> dict[str, str]:
    env = cluster.env()
    env["PATH"] = f"{BIN}:{env.get('PATH', '')}"
    for var in ("FIELDOWN_DEBUG", "_KUBECTL_FIELDOWN_COMPLETE", "COMP_WORDS", "COMP_CWORD"):
        env.pop(var, None)
    env.update(extra)
    return env


def bash_complete(cluster: lab.Cluster, line: str, script: str | None = None, **env: str) -> tuple[list[str], str]:
    """What bash offers for ``line`` (TAB at its end) with the script of --show-completion bash
    (or ``script``)."""
    assert BASH is not None
    words = line.split(" ")
    # what --show-completion prints for bash, asked without typer's shell detection (it reads the
    # parent processes from /proc, which a test's process tree does not resemble)
    if script is None:
        script = subprocess.run([str(BIN / "kubectl-fieldown")], capture_output=True, text=True,
                                env=_env(cluster, _KUBECTL_FIELDOWN_COMPLETE="source_bash"), check=True).stdout
    assert "complete " in script and "kubectl-fieldown" in script, script
    driver = (f"{script}\nCOMP_WORDS=({' '.join(shlex.quote(w) for w in words)})\n"
              f"COMP_CWORD={len(words) - 1}\n_kubectl_fieldown_completion kubectl-fieldown\n"
              'printf "%s\\n" "${COMPREPLY[@]}"\n')
    proc = subprocess.run([BASH, "--norc", "--noprofile", "-c", driver], capture_output=True, text=True,
                          env=_env(cluster, **env), timeout=120, check=True)
    return [w for w in proc.stdout.splitlines() if w], proc.stderr


def kubectl_complete(cluster: lab.Cluster, *words: str) -> list[str]:
    """kubectl's own completion of ``kubectl fieldown WORDS...``: it runs kubectl_complete-fieldown."""
    # kubectl takes no flag before a plugin's name: the cluster comes from $KUBECONFIG
    proc = subprocess.run([str(cluster.kubectl_bin), "__complete", "fieldown", *words], capture_output=True,
                          text=True, env=_env(cluster), timeout=120, check=True)
    lines = proc.stdout.splitlines()
    assert lines and lines[-1].startswith(":"), proc.stdout
    return lines


def _widgets(cluster: lab.Cluster, namespace: str, *names: str) -> None:
    docs = [{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": n, "namespace": namespace},
             "spec": {"replicas": 1}} for n in names]
    cluster.kubectl("apply", "-f", "-", input="\n---\n".join(json.dumps(d) for d in docs))


def test_flags_and_enum_values(cluster: lab.Cluster) -> None:
    flags, err = bash_complete(cluster, "kubectl-fieldown show --")
    assert {"--output", "--namespace", "--all-namespaces", "--kubeconfig", "--context"} <= set(flags), flags
    # kubectl's generic flags, parsed before typer, are offered as well
    assert {"--as", "--request-timeout", "--server", "--token", "--insecure-skip-tls-verify"} <= set(flags)
    assert err == ""
    assert bash_complete(cluster, "kubectl-fieldown show -o ")[0] == [*SHOW_OUTPUTS]
    assert bash_complete(cluster, "kubectl-fieldown migrate --to ")[0] == ["server-side", "client-side"]
    assert bash_complete(cluster, "kubectl-fieldown reset --dry-run ")[0] == ["none", "client", "server"]
    commands = bash_complete(cluster, "kubectl-fieldown ")[0]
    assert commands[:4] == ["show", "conflicts", "audit", "migrate"] and "undo" in commands
    # generic flags anywhere in the line do not confuse the command's own completion
    assert bash_complete(cluster, "kubectl-fieldown --as jane show -o ")[0][0] == "tree"
    assert bash_complete(cluster, "kubectl-fieldown show --request-timeout 3s --o")[0] == ["--output"]
    # the value of a generic flag is the user's to type
    assert bash_complete(cluster, "kubectl-fieldown show --as ")[0] == []


def test_resource_types_and_names_come_from_the_cluster(cluster: lab.Cluster, namespace: str) -> None:
    _widgets(cluster, namespace, "alpha", "alpine", "beta")
    types, err = bash_complete(cluster, "kubectl-fieldown show wid")
    assert types == ["widgets.example.com"] and err == ""
    every_type = bash_complete(cluster, "kubectl-fieldown migrate ")[0]
    assert "widgets.example.com" in every_type and "customresourcedefinitions.apiextensions.k8s.io" in every_type
    names, _ = bash_complete(cluster, f"kubectl-fieldown show -n {namespace} widgets/al")
    assert names == ["widgets/alpha", "widgets/alpine"]
    names, _ = bash_complete(cluster, f"kubectl-fieldown show widgets.example.com alpha -n {namespace} ")
    assert names == ["alpine", "beta"]  # a name already given is not offered again
    names, _ = bash_complete(cluster, f"kubectl-fieldown migrate --to server-side -n {namespace} widget ")
    assert names == ["alpha", "alpine", "beta"]
    # another namespace has other objects; -A has them all
    assert bash_complete(cluster, f"kubectl-fieldown show -n {namespace}-other widgets/")[0] == []
    assert "widgets/beta" in bash_complete(cluster, "kubectl-fieldown show -A widgets/b")[0]
    # objects read from a file take no cluster arguments
    assert bash_complete(cluster, "kubectl-fieldown show -i saved.yaml widgets/")[0] == []


def test_contexts_come_from_the_kubeconfig(cluster: lab.Cluster, tmp_path: Path) -> None:
    config = json.loads(cluster.kubectl("config", "view", "--raw", "-o", "json").stdout)
    config["contexts"].append({"name": "staging", "context": dict(config["contexts"][0]["context"])})
    path = tmp_path / "kubeconfig"
    path.write_text(json.dumps(config))
    got = bash_complete(cluster, f"kubectl-fieldown audit --kubeconfig {path} --context st")[0]
    assert got == ["staging"]


def test_a_dead_cluster_completes_nothing_and_says_nothing(cluster: lab.Cluster, tmp_path: Path) -> None:
    port = lab.free_ports(1)[0]
    path = tmp_path / "kubeconfig"
    path.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "dead",
        "clusters": [{"name": "dead", "cluster": {"server": f"https://127.0.0.1:{port}"}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "dead", "context": {"cluster": "dead", "user": "u"}}]}))
    got, err = bash_complete(cluster, "kubectl-fieldown show wid", KUBECONFIG=str(path),
                             KUBECACHEDIR=str(tmp_path / "cache"))
    assert (got, err) == ([], "")
    # the lab serves no Namespace API: -n completes nothing, quietly
    assert bash_complete(cluster, "kubectl-fieldown show -n ")[0] == []


def test_kubectl_plugin_completion(cluster: lab.Cluster, namespace: str) -> None:
    _widgets(cluster, namespace, "gamma", "delta")
    lines = kubectl_complete(cluster, "")
    assert lines[-1] == ":4"
    assert "show\tShow who owns each field of Kubernetes objects (server-side apply managedFields)." in lines
    assert kubectl_complete(cluster, "show", "-o", "") == [*SHOW_OUTPUTS, ":4"]
    assert kubectl_complete(cluster, "show", "-n", namespace, "widgets/") == ["widgets/delta", "widgets/gamma", ":4"]
    assert kubectl_complete(cluster, "conflicts", "--field-m") [0].startswith("--field-manager")
    # nothing to offer (a file name): kubectl lets the shell complete files
    assert kubectl_complete(cluster, "show", "-i", "") == [":0"]


def test_undo_completes_the_backup_runs(cluster: lab.Cluster, tmp_path: Path) -> None:
    from kubectl_fieldown.kube import ResourceInfo
    from kubectl_fieldown.kube.writes import BackupRun

    res = ResourceInfo(group="example.com", version="v1", resource="widgets", kind="Widget", namespaced=True)
    root = tmp_path / "backups"
    runs = []
    for i, command in enumerate(("migrate --to server-side", "reset")):
        run = BackupRun(root, command, started=1_700_000_000 + i)
        run.save(res, {"apiVersion": "example.com/v1", "kind": "Widget",
                       "metadata": {"name": "w", "namespace": "ns", "uid": "u", "resourceVersion": "1"}})
        runs.append(str(run.directory))
    assert sorted(bash_complete(cluster, "kubectl-fieldown undo ", FIELDOWN_BACKUP_DIR=str(root))[0]) == runs
    assert bash_complete(cluster, f"kubectl-fieldown undo --backup-dir {root} {runs[1][:-3]}")[0] == [runs[1]]


def test_completion_command_prints_the_scripts(cluster: lab.Cluster) -> None:
    def script(shell: str) -> str:
        return subprocess.run([str(BIN / "kubectl-fieldown"), "completion", shell], capture_output=True, text=True,
                              env=_env(cluster), check=True).stdout

    bash = script("bash")
    # the script works: bash completes with it as with --show-completion's
    assert bash_complete(cluster, "kubectl-fieldown show -o ", script=bash)[0] == [*SHOW_OUTPUTS]
    assert bash_complete(cluster, "kubectl-fieldown mig", script=bash)[0] == ["migrate"]
    # and an empty answer for -n does not fall back to file names
    assert "compopt +o default" in bash and "-n|--namespace|" in bash
    assert script("zsh").startswith("#compdef kubectl-fieldown")
    assert "complete --command kubectl-fieldown" in script("fish")
    bad = subprocess.run([str(BIN / "kubectl-fieldown"), "completion", "tcsh"], capture_output=True, text=True,
                         env=_env(cluster), check=False)
    assert bad.returncode == 2 and bad.stdout == "" and "'tcsh' is not one of" in bad.stderr


def test_namespace_values_never_complete_local_files(cluster: lab.Cluster) -> None:
    # the lab serves no Namespace API: nothing to offer, and kubectl must not offer files instead
    assert kubectl_complete(cluster, "show", "-n", "") == [":4"]
    assert kubectl_complete(cluster, "audit", "--namespace", "") == [":4"]
    assert kubectl_complete(cluster, "conflicts", "--field-manager", "") == [":4"]
    assert kubectl_complete(cluster, "show", "-i", "") == [":0"]  # a file is wanted here


def test_managers_of_the_objects_in_scope(cluster: lab.Cluster, namespace: str, tmp_path: Path) -> None:
    _widgets(cluster, namespace, "m1", "m2")  # client-side apply: kubectl-client-side-apply
    cluster.kubectl("patch", "widget/m1", "-n", namespace, "--type=merge", "-p", '{"spec":{"color":"red"}}')
    cluster.kubectl("label", "widget/m2", "-n", namespace, "tier=web")
    manifest = tmp_path / "m1.yaml"
    manifest.write_text(json.dumps({"apiVersion": "example.com/v1", "kind": "Widget",
                                    "metadata": {"name": "m1", "namespace": namespace}, "spec": {"replicas": 2}}))
    got = bash_complete(cluster, f"kubectl-fieldown conflicts -f {manifest} --field-manager ")[0]
    assert got == ["kubectl-client-side-apply", "kubectl-patch"]
    got = bash_complete(cluster, f"kubectl-fieldown show widgets -n {namespace} --manager kubectl-")[0]
    assert got == ["kubectl-client-side-apply", "kubectl-label", "kubectl-patch"]
    got = bash_complete(cluster, f"kubectl-fieldown migrate widget/m2 -n {namespace} --to server-side --from-manager ")
    assert got[0] == ["kubectl-client-side-apply", "kubectl-label"]
    lines = kubectl_complete(cluster, "migrate", "widget/m1", "-n", namespace, "--field-manager", "kubectl-p")
    assert lines == ["kubectl-patch\tUpdate", ":4"]
    # offline: the objects of show's -i file, no cluster
    example = Path(__file__).resolve().parents[2] / "examples" / "deployment.yaml"
    assert "handover-to-hpa" in bash_complete(cluster, f"kubectl-fieldown show -i {example} --manager h")[0]


def _poisoned_kubernetes(tmp_path: Path) -> str:
    """A directory for PYTHONPATH whose ``kubernetes`` and ``urllib3`` packages fail to import: a
    completion that needs the cluster layer (a client, a request) then offers nothing. (A kubeconfig
    like the lab's is read without ``kubernetes`` since kube/_lightconfig.py; every request needs urllib3.)"""
    for name in ("kubernetes", "urllib3"):
        package = tmp_path / "poison" / name
        package.mkdir(parents=True)
        (package / "__init__.py").write_text('raise ImportError("the cluster layer was imported")\n')
    return str(tmp_path / "poison")


def test_resource_types_come_from_the_discovery_cache_without_the_cluster_layer(cluster: lab.Cluster,
                                                                                 tmp_path: Path) -> None:
    """Issue 21: each TAB took about a second — most of it importing the kubernetes package to build a
    client, even when discovery was cached on disk. Types are now answered from the cache (fresh for
    6 h, as kubectl's) by reading the kubeconfig's server only: proven here by a kubernetes package
    that cannot be imported. A cold cache still asks the server (and fills the cache)."""
    cache = str(tmp_path / "cache")
    poison = _poisoned_kubernetes(tmp_path)
    assert bash_complete(cluster, "kubectl-fieldown show wid", KUBECACHEDIR=cache, PYTHONPATH=poison) == ([], "")
    assert bash_complete(cluster, "kubectl-fieldown show wid", KUBECACHEDIR=cache) == (["widgets.example.com"], "")
    assert list((tmp_path / "cache" / "fieldown").glob("*/discovery.json"))
    # warm: no client, no kubernetes import — in both ways in, and with --context or -s naming the server
    assert bash_complete(cluster, "kubectl-fieldown show wid", KUBECACHEDIR=cache, PYTHONPATH=poison) == (
        ["widgets.example.com"], "")
    context = json.loads(cluster.kubectl("config", "view", "--raw", "-o", "json").stdout)["current-context"]
    got = bash_complete(cluster, f"kubectl-fieldown migrate --context {context} gad", KUBECACHEDIR=cache,
                        PYTHONPATH=poison)
    assert got == (["gadgets.example.com"], "")
    server = json.loads(cluster.kubectl("config", "view", "--raw", "-o", "json").stdout)["clusters"][0]["cluster"]
    got = bash_complete(cluster, f"kubectl-fieldown show -s {server['server']} wid", KUBECACHEDIR=cache,
                        PYTHONPATH=poison)
    assert got == (["widgets.example.com"], "")
    proc = subprocess.run([str(cluster.kubectl_bin), "__complete", "fieldown", "show", "wid"], capture_output=True,
                          text=True, env=_env(cluster, KUBECACHEDIR=cache, PYTHONPATH=poison), timeout=120, check=True)
    assert proc.stdout.splitlines() == ["widgets.example.com\tWidget", ":4"]
    # object names need the server: with the cluster layer broken they are not offered (no stale guess)
    assert bash_complete(cluster, "kubectl-fieldown show widgets/", KUBECACHEDIR=cache, PYTHONPATH=poison)[0] == []


def test_an_insecure_context_prints_no_warning_at_tab(cluster: lab.Cluster, namespace: str, tmp_path: Path) -> None:
    """Issue 21: a context with insecure-skip-tls-verify printed its warning (twice) into the terminal
    at each TAB. Completion writes nothing but candidates; the command itself still warns once."""
    _widgets(cluster, namespace, "quiet")
    config = json.loads(cluster.kubectl("config", "view", "--raw", "-o", "json").stdout)
    for entry in config["clusters"]:
        entry["cluster"].pop("certificate-authority-data", None)
        entry["cluster"].pop("certificate-authority", None)
        entry["cluster"]["insecure-skip-tls-verify"] = True
    path = tmp_path / "insecure.kubeconfig"
    path.write_text(json.dumps(config))
    env = {"KUBECONFIG": str(path), "KUBECACHEDIR": str(tmp_path / "cache")}
    assert bash_complete(cluster, "kubectl-fieldown show wid", **env) == (["widgets.example.com"], "")
    assert bash_complete(cluster, f"kubectl-fieldown show -n {namespace} widgets/q", **env) == (["widgets/quiet"], "")
    proc = subprocess.run([str(BIN / "kubectl_complete-fieldown"), "show", "-n", namespace, "widgets/q"],
                          capture_output=True, text=True, env=_env(cluster, **env), timeout=120, check=True)
    assert (proc.stdout, proc.stderr) == ("widgets/quiet\n:4\n", "")
    # the lookups did warn: FIELDOWN_DEBUG lets it through, and the command says it once
    debug = bash_complete(cluster, f"kubectl-fieldown show -n {namespace} widgets/q", FIELDOWN_DEBUG="1", **env)
    assert "insecure-skip-tls-verify" in debug[1]
    shown = subprocess.run([str(BIN / "kubectl-fieldown"), "show", "-n", namespace, "widgets/quiet", "-o", "name"],
                           capture_output=True, text=True, env=_env(cluster, **env), timeout=120, check=False)
    assert shown.returncode == 0 and shown.stdout == "widget.example.com/quiet\n"
    assert len([line for line in shown.stderr.splitlines() if "insecure-skip-tls-verify" in line]) == 1


def test_cluster_flags_before_the_command_complete_as_after_it(cluster: lab.Cluster, namespace: str) -> None:
    """``kubectl fieldown -n shop show <TAB>`` (issue 21: the flags run before the command, so they
    complete there too): the namespace given first scopes the names, the command is still completed."""
    _widgets(cluster, namespace, "first", "second")
    assert bash_complete(cluster, f"kubectl-fieldown -n {namespace} show widgets/")[0] == [
        "widgets/first", "widgets/second"]
    assert bash_complete(cluster, "kubectl-fieldown -A show widgets/fir")[0] == ["widgets/first"]
    assert kubectl_complete(cluster, "-n", namespace, "show", "widgets/s") == ["widgets/second", ":4"]
    assert kubectl_complete(cluster, f"--namespace={namespace}", "show", "-o", "") == [*SHOW_OUTPUTS, ":4"]
    assert bash_complete(cluster, f"kubectl-fieldown -n {namespace} sh")[0] == ["show"]
