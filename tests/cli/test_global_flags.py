"""kubectl's generic flags (cli/globalflags.py): parsed anywhere on the line, then used on the real
API server of the lab — impersonation (the server's own authorizer answers), ``--server`` and TLS
flags without any kubeconfig, ``--cluster``/``--user`` overriding the context, ``-v`` levels and
``--request-timeout``."""

from __future__ import annotations

import base64
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import lab
import pytest
import yaml
from cli_helpers import run
from silent_server import dead_end_kubeconfig, silent_port
from test_show_live import Run, fieldown, widget

from kubectl_fieldown.cli.globalflags import ConnectionFlags, GlobalFlagError, parse_duration, split_global_flags

# --- parsing (pure) ----------------------------------------------------------------------------


@pytest.mark.parametrize(("args", "flags", "rest"), [
    (["show", "x"], ConnectionFlags(), ["show", "x"]),
    (["show", "x", "--as", "jane"], ConnectionFlags(impersonate="jane"), ["show", "x"]),
    (["--as=jane", "show", "x"], ConnectionFlags(impersonate="jane"), ["show", "x"]),
    (["show", "--as", "j", "--as-group", "a", "--as-group=b", "--as-uid", "7"],
     ConnectionFlags(impersonate="j", impersonate_groups=("a", "b"), impersonate_uid="7"), ["show"]),
    (["show", "-s", "https://h:6443"], ConnectionFlags(server="https://h:6443"), ["show"]),
    (["show", "-shttps://h"], ConnectionFlags(server="https://h"), ["show"]),
    (["show", "--server=h:1", "--token", "t", "--user", "u", "--cluster", "c"],
     ConnectionFlags(server="h:1", token="t", user="u", cluster="c"), ["show"]),
    (["show", "--insecure-skip-tls-verify"], ConnectionFlags(insecure_skip_tls_verify=True), ["show"]),
    (["show", "--insecure-skip-tls-verify=false"], ConnectionFlags(insecure_skip_tls_verify=False), ["show"]),
    (["show", "--certificate-authority", "ca", "--client-certificate", "c", "--client-key", "k",
      "--tls-server-name", "n"],
     ConnectionFlags(certificate_authority="ca", client_certificate="c", client_key="k", tls_server_name="n"),
     ["show"]),
    (["show", "--request-timeout", "1m30s"], ConnectionFlags(request_timeout=90.0), ["show"]),
    (["show", "--request-timeout=0"], ConnectionFlags(request_timeout=0.0), ["show"]),
    (["show", "-v=6"], ConnectionFlags(verbosity=6), ["show"]),
    (["show", "--v=8"], ConnectionFlags(verbosity=8), ["show"]),
    (["show", "--v", "7"], ConnectionFlags(verbosity=7), ["show"]),
    (["show", "-v", "6", "x"], ConnectionFlags(verbosity=6), ["show", "x"]),
    (["show", "-v9"], ConnectionFlags(verbosity=9), ["show"]),
    # a bare -v is the command's own --verbose
    (["migrate", "-v", "x"], ConnectionFlags(), ["migrate", "-v", "x"]),
    (["migrate", "x", "-v"], ConnectionFlags(), ["migrate", "x", "-v"]),
    # after --, everything is an argument
    (["show", "--", "--as", "x"], ConnectionFlags(), ["show", "--", "--as", "x"]),
    # kubectl's deprecated spellings of --dry-run
    (["migrate", "x", "--dry-run"], ConnectionFlags(), ["migrate", "x", "--dry-run=client"]),
    (["migrate", "--dry-run", "--to", "server-side"], ConnectionFlags(),
     ["migrate", "--dry-run=client", "--to", "server-side"]),
    (["migrate", "--dry-run", "server"], ConnectionFlags(), ["migrate", "--dry-run", "server"]),
    (["migrate", "--dry-run=true"], ConnectionFlags(), ["migrate", "--dry-run=client"]),
    (["migrate", "--dry-run=false"], ConnectionFlags(), ["migrate", "--dry-run=none"]),
    (["migrate", "--dry-run=server"], ConnectionFlags(), ["migrate", "--dry-run=server"]),
])
def test_split_global_flags(args: list[str], flags: ConnectionFlags, rest: list[str]) -> None:
    got, got_rest = split_global_flags(args)
    assert got == flags
    assert got_rest == rest


def test_deprecated_dry_run_spellings_warn_like_kubectl() -> None:
    assert split_global_flags(["migrate", "--dry-run"])[0].warnings == (
        "--dry-run is deprecated and can be replaced with --dry-run=client.",)
    assert split_global_flags(["migrate", "--dry-run=client"])[0].warnings == ()


@pytest.mark.parametrize(("args", "message"), [
    (["show", "--as"], "flag needs an argument: --as"),
    (["show", "--v"], "flag needs an argument: --v"),
    (["show", "-v=x"], 'invalid argument "x" for "-v, --v"'),
    (["show", "--request-timeout", "soon"], 'invalid duration "soon"'),
    (["show", "--insecure-skip-tls-verify=maybe"], 'invalid argument "maybe"'),
    (["show", "--as-group", "g"], "--as-group and --as-uid need --as"),
    (["show", "--insecure-skip-tls-verify", "--certificate-authority", "ca"], "cannot be used together"),
])
def test_malformed_global_flags(args: list[str], message: str) -> None:
    with pytest.raises(GlobalFlagError, match=message.replace("(", r"\(")):
        split_global_flags(args)


@pytest.mark.parametrize(("text", "seconds"), [
    ("0", 0.0), ("30", 30.0), ("30s", 30.0), ("500ms", 0.5), ("2m", 120.0), ("1h", 3600.0), ("1m30s", 90.0),
    ("1.5s", 1.5), ("250us", 0.00025), ("1h2m3s", 3723.0),
])
def test_parse_duration(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "s", "1x", "-1s", "1s2", "abc"])
def test_parse_duration_refuses(text: str) -> None:
    with pytest.raises(GlobalFlagError):
        parse_duration(text)


def test_a_malformed_generic_flag_is_a_usage_error() -> None:
    r = run("show", "-i", "-", "--request-timeout", "soon")
    assert r.code == 2
    assert r.err_lines == ['error: invalid duration "soon": use a number with a unit, e.g. 30s, 2m, 1h '
                           "(see 'kubectl fieldown options')"]


def test_options_lists_every_generic_flag() -> None:
    r = run("options")
    assert r.code == 0
    for name in ("--as=USER", "--as-group=GROUP", "--request-timeout=DURATION", "-s, --server=URL", "--token=TOKEN",
                 "--user=NAME", "--cluster=NAME", "--insecure-skip-tls-verify", "--certificate-authority=PATH",
                 "-v, --v=LEVEL"):
        assert f"\n  {name}\n" in r.out, name


# --- on the real API server --------------------------------------------------------------------


@pytest.fixture
def obj(cluster: lab.Cluster, namespace: str, tmp_path: Path) -> dict[str, Any]:
    manifest = tmp_path / "w.yaml"
    manifest.write_text(yaml.safe_dump(widget("w", namespace, {"replicas": 2, "color": "red"})))
    cluster.kubectl("apply", "-f", str(manifest))
    return {"namespace": namespace, "ref": "widgets/w"}


def _kubeconfig(cluster: lab.Cluster) -> dict[str, Any]:
    config: dict[str, Any] = yaml.safe_load(cluster.kubeconfig.read_text())
    return config


def _current(config: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    ctx = next(c["context"] for c in config["contexts"] if c["name"] == config["current-context"])
    cluster = next(c["cluster"] for c in config["clusters"] if c["name"] == ctx["cluster"])
    user = next(u["user"] for u in config["users"] if u["name"] == ctx["user"])
    return cluster, user


@pytest.fixture
def tls_files(cluster: lab.Cluster, tmp_path: Path) -> dict[str, str]:
    """The lab's CA, client certificate and key as files, for the flags that take paths."""
    cluster_entry, user = _current(_kubeconfig(cluster))
    out: dict[str, str] = {"server": str(cluster_entry["server"])}
    for key, data in (("ca", cluster_entry.get("certificate-authority-data")),
                      ("cert", user.get("client-certificate-data")), ("key", user.get("client-key-data"))):
        if not data:
            pytest.skip("the cluster's kubeconfig does not use client certificates (an external cluster)")
        path = tmp_path / key
        path.write_bytes(base64.b64decode(data))
        out[key] = str(path)
    return out


def test_impersonation_is_decided_by_the_server(cluster: lab.Cluster, obj: dict[str, Any]) -> None:
    denied = fieldown(cluster, "show", obj["ref"], "-n", obj["namespace"], "--as", "alice")
    assert denied.code == 1
    assert 'forbidden' in denied.err and 'User "alice" cannot get' in denied.err, denied.err
    # each --as-group is its own header: one header "system:masters,other" would be a single group
    # that is not system:masters, and the lab's authorizer would refuse it
    allowed = fieldown(cluster, "--as", "admin", "--as-group", "system:masters", "--as-group", "other",
                       "show", obj["ref"], "-n", obj["namespace"], "-o", "json")
    assert allowed.code == 0, allowed.err
    assert allowed.json()["items"][0]["name"] == "w"


def test_server_and_tls_flags_need_no_kubeconfig(cluster: lab.Cluster, obj: dict[str, Any],
                                                 tls_files: dict[str, str], tmp_path: Path) -> None:
    env_free = ["--kubeconfig", str(tmp_path / "none")]  # a --kubeconfig that does not exist is an error...
    r = fieldown(cluster, "show", obj["ref"], "-n", obj["namespace"], *env_free, "-s", tls_files["server"])
    assert r.code == 1 and "no such file" in r.err
    # ... so run with an empty KUBECONFIG and no home kubeconfig
    home = tmp_path / "home"
    home.mkdir()
    args = ["show", obj["ref"], "-n", obj["namespace"], "-o", "json", "--server", tls_files["server"],
            "--client-certificate", tls_files["cert"], "--client-key", tls_files["key"]]
    ok = _without_kubeconfig(cluster, home, *args, "--certificate-authority", tls_files["ca"])
    assert ok.code == 0, ok.err
    assert ok.json()["items"][0]["name"] == "w"
    untrusted = _without_kubeconfig(cluster, home, *args)
    assert untrusted.code == 1
    assert "certificate verify failed" in untrusted.err
    insecure = _without_kubeconfig(cluster, home, *args, "--insecure-skip-tls-verify")
    assert insecure.code == 0, insecure.err
    assert [line for line in insecure.err.splitlines() if line.startswith("warning:")] == [
        f"warning: the TLS certificate of {tls_files['server']} is not verified (insecure-skip-tls-verify)"]


def test_an_empty_kubeconfig_with_server_flags_works_as_in_kubectl(cluster: lab.Cluster, obj: dict[str, Any],
                                                                    tls_files: dict[str, str]) -> None:
    """``--kubeconfig /dev/null -s URL`` (issue 21): kubectl reads the empty file as an empty
    kubeconfig and takes everything from the flags; without -s that is one error line."""
    args = ["show", obj["ref"], "-n", obj["namespace"], "-o", "json", "--kubeconfig", os.devnull,
            "--certificate-authority", tls_files["ca"], "--client-certificate", tls_files["cert"],
            "--client-key", tls_files["key"]]
    ok = fieldown(cluster, *args, "-s", tls_files["server"])
    assert ok.code == 0, ok.err
    assert ok.json()["items"][0]["name"] == "w"
    # every one of those flags before the command, as `kubectl fieldown --kubeconfig /dev/null -s URL show ...`
    before = fieldown(cluster, "--kubeconfig", os.devnull, "-s", tls_files["server"], *args[8:], "show", obj["ref"],
                      "-n", obj["namespace"], "-o", "json")
    assert before.code == 0, before.err
    assert before.json() == ok.json()
    no_server = fieldown(cluster, *args)
    assert no_server.code == 1  # a kubeconfig that cannot be used, as a missing one (README: exit codes)
    assert no_server.err == f"error: kubeconfig {os.devnull} is empty: give --server (and credentials) or another " \
                            "kubeconfig\n"


def test_cluster_flags_before_the_command_as_in_kubectl(cluster: lab.Cluster, obj: dict[str, Any]) -> None:
    """``kubectl fieldown -n shop show ...`` (issue 21): kubectl takes its flags before the command."""
    after = fieldown(cluster, "show", obj["ref"], "-n", obj["namespace"], "-o", "json")
    assert after.code == 0, after.err
    for before in (["-n", obj["namespace"]], [f"--namespace={obj['namespace']}"], [f"-n{obj['namespace']}"],
                   ["--kubeconfig", str(cluster.kubeconfig), "-n", obj["namespace"]]):
        r = fieldown(cluster, *before, "show", obj["ref"], "-o", "json")
        assert r.code == 0, (before, r.err)
        assert r.json() == after.json()


def _without_kubeconfig(cluster: lab.Cluster, home: Path, *args: str) -> Run:
    script = Path(sys.executable).parent / "kubectl-fieldown"
    env = {k: v for k, v in cluster.env().items() if k not in ("KUBECONFIG", "FIELDOWN_DEBUG")}
    env["HOME"] = str(home)
    proc = subprocess.run([str(script), *args], capture_output=True, text=True, env=env, timeout=180, check=False,
                          cwd=os.fspath(home))
    return Run(proc.returncode, proc.stdout, proc.stderr)


def test_cluster_and_user_override_the_context(cluster: lab.Cluster, obj: dict[str, Any], tmp_path: Path) -> None:
    config = _kubeconfig(cluster)
    config["users"].append({"name": "nobody", "user": {"token": "not-a-real-token"}})
    config["clusters"].append({"name": "dead", "cluster": {"server": "https://127.0.0.1:1"}})
    path = tmp_path / "two.kubeconfig"
    path.write_text(yaml.safe_dump(config))
    base = ["show", obj["ref"], "-n", obj["namespace"], "--kubeconfig", str(path)]
    assert fieldown(cluster, *base).code == 0
    nobody = fieldown(cluster, *base, "--user", "nobody")
    assert nobody.code == 1
    assert "forbidden" in nobody.err or "Unauthorized" in nobody.err or "unauthorized" in nobody.err, nobody.err
    dead = fieldown(cluster, *base, "--cluster", "dead")
    assert dead.code == 1
    assert "https://127.0.0.1:1" in dead.err
    missing = fieldown(cluster, *base, "--cluster", "nope")
    assert missing.code == 1
    assert f'error: cluster "nope" does not exist in kubeconfig {path}' in missing.err


def test_verbosity_logs_requests_with_credentials_masked(cluster: lab.Cluster, obj: dict[str, Any]) -> None:
    quiet = fieldown(cluster, "show", obj["ref"], "-n", obj["namespace"])
    assert quiet.code == 0
    assert "GET " not in quiet.err
    r6 = fieldown(cluster, "show", obj["ref"], "-n", obj["namespace"], "-v=6")
    assert r6.code == 0, r6.err
    path = f"/apis/example.com/v1/namespaces/{obj['namespace']}/widgets/w"
    assert any(line.startswith("GET https://") and line.split()[1].endswith(path) and " 200 OK in " in line
               for line in r6.err.splitlines()), r6.err
    assert "Request Body" not in r6.err and "Impersonate" not in r6.err
    r8 = fieldown(cluster, "show", obj["ref"], "-n", obj["namespace"], "-v", "8", "--as", "admin",
                  "--as-group", "system:masters", "--token", "secret-token-value")
    assert r8.code == 0, r8.err
    assert "    Impersonate-Group: system:masters" in r8.err.splitlines()
    assert "    Authorization: Bearer <masked>" in r8.err.splitlines()
    assert "secret-token-value" not in r8.err
    assert "Response Body: {" in r8.err


@pytest.fixture
def silent_server() -> Iterator[int]:
    with silent_port() as port:
        yield port


def test_request_timeout_bounds_a_request(silent_server: int, tmp_path: Path) -> None:
    r = run("show", "widgets/w", "--kubeconfig", str(dead_end_kubeconfig(tmp_path, silent_server)),
            "--request-timeout", "1s")
    assert r.code == 1
    assert r.err_lines[-1] == (f"error: cannot reach the API server at https://127.0.0.1:{silent_server}: "
                               "no complete answer within 1s (request timeout)")




TOKEN = "eyJhbGciOiJSUzI1NiJ9.c2VjcmV0LXRva2VuLXZhbHVl"


def test_a_token_file_ending_in_a_newline_is_trimmed_like_client_go(cluster: lab.Cluster, obj: dict[str, Any],
                                                                   tmp_path: Path) -> None:
    """``echo "$TOKEN" > file`` writes a newline: client-go's file token source trims it (issue 18,
    item 2); the tool crashed with an internal error that printed the token. The lab authenticates the
    client certificate, so the request succeeds once the header is sent at all."""
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    config = _kubeconfig(cluster)
    for u in config["users"]:
        u["user"]["tokenFile"] = str(token_file)
    path = tmp_path / "token.kubeconfig"
    path.write_text(yaml.safe_dump(config))
    r = fieldown(cluster, "show", obj["ref"], "-n", obj["namespace"], "--kubeconfig", str(path), "-o", "json")
    assert r.code == 0, r.err
    assert r.json()["items"][0]["name"] == "w"
    token_file.write_text(" \n")
    empty = fieldown(cluster, "show", obj["ref"], "-n", obj["namespace"], "--kubeconfig", str(path))
    assert empty.code == 1
    assert empty.err.splitlines() == [f'error: read empty token from file "{token_file}"'], empty.err


@pytest.mark.parametrize("token", [TOKEN + "\n", TOKEN + "\r\nX-Injected: 1", "\x1b]0;" + TOKEN])
def test_no_error_prints_a_token_that_no_header_can_carry(cluster: lab.Cluster, obj: dict[str, Any],
                                                          token: str) -> None:
    """An inline token goes as it is in client-go, and Go's HTTP client refuses a control character
    in a header: so does the tool, one line, without the token."""
    r = fieldown(cluster, "show", obj["ref"], "-n", obj["namespace"], "--token", token)
    assert r.code == 1
    assert r.err.splitlines() == ["error: the bearer token of --token contains a line break or another control "
                                  "character, which no HTTP header can carry (kubectl refuses it too)"], r.err
    assert TOKEN[:12] not in r.err + r.out
