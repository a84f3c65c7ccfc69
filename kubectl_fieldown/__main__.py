"""``python -m kubectl_fieldown``: the same as the ``kubectl-fieldown`` command."""

from .cli.main import run

if __name__ == "__main__":
    run()
