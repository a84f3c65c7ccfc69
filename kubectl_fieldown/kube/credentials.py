"""Bearer tokens as kubectl sends them, and never in an error message.

* **A token read from a file is trimmed.** client-go reads a kubeconfig's ``tokenFile`` (and the
  in-cluster service account token) through its file token source, which applies
  ``strings.TrimSpace`` before every request (``transport/token_source.go``); so ``echo "$TOKEN" >
  file`` works, and a file with nothing but whitespace is ``read empty token from file``.
* **A token no HTTP header can carry is refused.** A token given inline (``--token``, a kubeconfig's
  ``token``) is sent as it is by client-go, and Go's HTTP client refuses a header value with a line
  break or another control character (``net/http: invalid header field value for
  "Authorization"``): so does the tool, with a message that names where the token came from, not
  the token.
* **Every credential in use is remembered** (:func:`kubectl_fieldown.base.redact.remember_credential`), so
  that the error printer takes it out of any message, whatever the message's cause.
"""

from __future__ import annotations

from ..base.redact import remember_credential
from .errors import ConfigError

__all__ = ["bearer_header", "valid_header_value"]


def valid_header_value(value: str) -> bool:
    """Go's ``httpguts.ValidHeaderFieldValue``: no control character but the tab."""
    return not any((ord(c) < 0x20 and c != "\t") or ord(c) == 0x7F for c in value)


def bearer_header(value: str, *, token_file: str | None, where: str) -> str:
    """The ``Authorization`` header value to send for ``value`` (``Bearer <token>``, as the loaders
    set it): the token trimmed when it was read from ``token_file``, remembered, and checked;
    ``where`` names an inline token's origin in the error."""
    scheme, sep, token = value.partition(" ")
    if not sep:
        scheme, token = "", value
    if token_file is not None:
        token = token.strip()
        if not token:
            raise ConfigError(f'read empty token from file "{token_file}"')
    remember_credential(token)
    remember_credential(value)
    if not valid_header_value(token) or not valid_header_value(scheme):
        raise ConfigError(f"the bearer token of {where} contains a line break or another control character, "
                          "which no HTTP header can carry (kubectl refuses it too)")
    return f"{scheme} {token}" if scheme else token
