"""Bearer tokens as kubectl sends them, and never in an error (kube/credentials.py; issue 18, item 2)."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubectl_fieldown.cli.errors import report
from kubectl_fieldown.kube import ConfigError
from kubectl_fieldown.kube._transport import Transport, load_config
from kubectl_fieldown.kube.client import ConnectionOverrides, RetryPolicy
from kubectl_fieldown.kube.credentials import bearer_header, valid_header_value

TOKEN = "eyJhbGciOiJSUzI1NiJ9.dG9rZW4tZm9yLXRlc3Rz"


def kubeconfig(tmp_path: Path, user: dict[str, Any]) -> str:
    path = tmp_path / "config"
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "k", "cluster": {"server": "https://127.0.0.1:6443"}}],
        "users": [{"name": "u", "user": user}],
        "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}]}))
    return str(path)


def test_a_token_file_is_trimmed_as_client_go_trims_it(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(f"  {TOKEN}\n\n")
    loaded = load_config(kubeconfig(tmp_path, {"tokenFile": str(token_file)}), None)
    transport = Transport(loaded, connect_timeout=1, read_timeout=1, user_agent="t", retry=RetryPolicy())
    # the header of every request, the library having set the file's content again
    assert transport._auth_headers() == {"authorization": f"Bearer {TOKEN}"}
    assert transport._auth_headers() == {"authorization": f"Bearer {TOKEN}"}


def test_an_empty_token_file_is_an_error(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("\n")
    with pytest.raises(ConfigError) as e:
        load_config(kubeconfig(tmp_path, {"tokenFile": str(token_file)}), None)
    assert str(e.value) == f'read empty token from file "{token_file}"'


@pytest.mark.parametrize("where", ["kubeconfig", "flag"])
def test_an_inline_token_with_a_line_break_is_refused_without_printing_it(tmp_path: Path, where: str) -> None:
    """client-go sends an inline token as it is and Go's HTTP client refuses the header."""
    user: dict[str, Any] = {"token": TOKEN + "\n"} if where == "kubeconfig" else {}
    flags = ConnectionOverrides(token=TOKEN + "\n") if where == "flag" else None
    with pytest.raises(ConfigError) as e:
        load_config(kubeconfig(tmp_path, user), None, flags)
    assert "line break" in str(e.value) and TOKEN[:10] not in str(e.value)


def test_header_values_as_go_checks_them() -> None:
    assert valid_header_value("Bearer a.b-c_d~e+f/g=\t")
    assert not any(valid_header_value(f"a{c}b") for c in ("\n", "\r", "\x00", "\x1b", "\x7f"))
    assert bearer_header("Bearer x\n", token_file="f", where="w") == "Bearer x"
    assert bearer_header("Bearer x", token_file=None, where="w") == "Bearer x"


def test_no_error_prints_a_credential_in_use(tmp_path: Path) -> None:
    """The last resort: whatever raised it, an error that quotes a credential this process loaded
    prints without it (here: the library's ValueError that quoted the header)."""
    load_config(kubeconfig(tmp_path, {"token": TOKEN}), None)
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = report(ValueError(f"Invalid header value b'Bearer {TOKEN}\\n'"))
    assert code == 1
    assert TOKEN not in err.getvalue() and "<redacted>" in err.getvalue()
