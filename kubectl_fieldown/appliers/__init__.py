"""The appliers: what kubectl, Argo CD, Flux, Helm and plain server-side appliers send, and what that
does to an object (pure; the requests are played on the simulated API server).

>>> from kubectl_fieldown.appliers import Applier, ApplierKind, run_applier
"""

from .jsonmerge import MergePatchError, apply_merge_patch, create_merge_patch, three_way_merge_patch
from .model import (
    APPLIER_KINDS,
    Applier,
    ApplierError,
    ApplierKind,
    ApplierRun,
    Request,
    applier_for_manager,
    parse_applier_spec,
)
from .run import client_side_modified, flux_replaced_managers, run_applier

__all__ = [
    "APPLIER_KINDS",
    "Applier",
    "ApplierError",
    "ApplierKind",
    "ApplierRun",
    "MergePatchError",
    "Request",
    "applier_for_manager",
    "apply_merge_patch",
    "client_side_modified",
    "create_merge_patch",
    "flux_replaced_managers",
    "parse_applier_spec",
    "run_applier",
    "three_way_merge_patch",
]
