"""``kubectl fieldown handover TYPE/NAME --field PATH --to MANAGER``: give fields to another writer.

The server-side variant from the server-side apply documentation ("transferring ownership"),
made safe to run against a live object:

1. MANAGER server-side applies the fields alone, with their current values (force=false, guarded
   by the resourceVersion): it becomes an owner, and no value changes.
2. Every other owner lets go, in one resourceVersion-tested managedFields patch (the executor of
   ``kube.writes``, re-planned on concurrent changes): the fields leave the last-applied annotation
   and the client-side manager (as ``strip-last-applied`` does, so the next plain ``kubectl apply``
   without them leaves them alone), and every other entry. A managedFields-only patch changes no
   value by construction; re-applying each owner's manifest without the fields, as the docs do by
   hand, would also rewrite the annotation of a ``kubectl`` applier and could remove fields whose
   manifest cannot be rebuilt exactly.
3. The object is read again: every value is the one read before step 1, and MANAGER owns every field.

MANAGER must not already apply other fields of the object: applying only the handed-over fields
would drop them (and the server would delete those nobody else owns).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Annotated, Any

import typer

from . import options
from .errors import UsageError, handle_errors
from .migrate import (
    BackupDir,
    DryRunOption,
    MaxRetries,
    Output,
    Resources,
    RunConfig,
    Selection,
    Verbose,
    WriteOutput,
    make_backups,
    open_client,
    parse_paths,
    parse_retries,
    run_all,
    select,
    write_options,
)

if TYPE_CHECKING:
    from ..fieldpath import FieldSet
    from ..fieldpath import Path as FieldPath
    from ..kube.client import ClusterClient
    from ..kube.writes import BackupRun, ObjectTarget, WriteOptions, WriteOutcome
    from ..managedfields import ManagedFieldsEntry
    from ..migration import Migration

__all__ = ["build_manifest", "handover", "handover_plan", "register"]


class HandoverError(ValueError):
    """This object cannot be handed over as asked (one line)."""


def _owns(fields: FieldSet, path: FieldPath) -> bool:
    return fields.has(path) or not fields.descend(path).is_empty()


def build_manifest(obj: Mapping[str, Any], paths: Sequence[FieldPath]) -> dict[str, Any]:
    """The smallest apply body that sets ``paths`` to their live values: apiVersion, kind, name,
    namespace and, along each path, list items reduced to their keys."""
    from ..fieldpath import FIELD, KEY, VALUE, key_fields, path_string
    from ..fieldpath.lookup import MISSING, child_value

    md = obj.get("metadata") or {}
    meta: dict[str, Any] = {"name": md.get("name")}
    if md.get("namespace"):
        meta["namespace"] = md["namespace"]
    body: dict[str, Any] = {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind"), "metadata": meta}
    for path in paths:
        node: Any = body
        live: Any = obj
        for i, pe in enumerate(path):
            last = i == len(path) - 1
            child = child_value(live, pe)
            if child is MISSING:
                raise HandoverError(f"{path_string(path)} is not set on the object")
            if pe[0] == FIELD:
                if not isinstance(node, dict):
                    raise HandoverError(f"{path_string(path)}: cannot be written as a manifest")
                if last:
                    node[pe[1]] = copy.deepcopy(child)
                else:
                    node = node.setdefault(pe[1], {} if isinstance(child, dict) else [])
            elif pe[0] == KEY:
                if not isinstance(node, list):
                    raise HandoverError(f"{path_string(path)}: cannot be written as a manifest")
                keys = key_fields(pe)
                item = next((x for x in node if isinstance(x, dict)
                             and all(x.get(k) == v for k, v in keys.items())), None)
                if last:
                    if item is not None:
                        node.remove(item)
                    node.append(copy.deepcopy(child))
                else:
                    if item is None:
                        item = dict(keys)
                        node.append(item)
                    node = item
            elif pe[0] == VALUE and last:
                if not isinstance(node, list):
                    raise HandoverError(f"{path_string(path)}: cannot be written as a manifest")
                if child not in node:
                    node.append(copy.deepcopy(child))
            else:
                raise HandoverError(f"{path_string(path)}: a list index cannot be handed over (the whole list is "
                                    "one field: hand over the list)")
            live = child
    return body


def handover_plan(paths: Sequence[FieldPath], to: str) -> Callable[[dict[str, Any]], Migration]:
    """Step 2 as a pure plan: every owner but ``to`` lets go of ``paths``."""
    from ..fieldpath import path_string
    from ..managedfields import LAST_APPLIED_ANNOTATION, decode_entries
    from ..migration import Migration, ObjectRef, plan_drop_ownership, plan_strip_last_applied
    from .migrate import _escaped

    shown = ", ".join(path_string(p) for p in paths)

    def plan(obj: dict[str, Any]) -> Migration:
        md = obj.get("metadata") or {}
        entries = decode_entries(md.get("managedFields"))
        la = (md.get("annotations") or {}).get(LAST_APPLIED_ANNOTATION)
        la = la if isinstance(la, str) else None
        after: list[ManagedFieldsEntry] = list(entries)
        la_after = la
        notes: list[str] = []
        if la is not None:
            stripped = plan_strip_last_applied(obj, paths)
            if stripped.changed:
                after, la_after = stripped.after, stripped.last_applied_after
                notes.extend(n for n in stripped.notes if not n.endswith("was not in the last-applied annotation"))
        others = sorted({e.manager for e in after if e.manager != to and any(_owns(e.fields, p) for p in paths)})
        if others:
            staged = dict(obj)
            staged["metadata"] = {**md, "managedFields": [e.to_dict() for e in after]}
            after = plan_drop_ownership(staged, paths, [_escaped(n) for n in others]).after
            notes.append(f"{', '.join(others)} no longer own{'s' if len(others) == 1 else ''} {shown}")
        return Migration(ObjectRef.of(obj), str(md.get("resourceVersion") or ""), entries, after, la, la_after,
                         notes=notes)

    return plan


def _value_text(v: Any) -> str:
    import json

    text = json.dumps(v, sort_keys=True)
    return text if len(text) <= 60 else text[:57] + "..."


def handover_one(
    client: ClusterClient,
    target: ObjectTarget,
    path_texts: Sequence[str],
    to: str,
    wopts: WriteOptions,
    backups: BackupRun | None,
) -> WriteOutcome:
    from ..fieldpath import path_string
    from ..fieldpath.lookup import MISSING, value_at
    from ..kube.errors import Conflict, KubeError, is_fatal
    from ..kube.writes import ObjectTarget, Result, WriteOutcome, execute
    from ..managedfields import APPLY, KUBECTL, LAST_APPLIED_ANNOTATION, ManagedFieldsError, decode_entries
    from ..value import values_equal

    steps: list[dict[str, Any]] = []
    retries = 0
    sent = 0
    backup = None

    def fail(error: str, notes: Sequence[str] = ()) -> WriteOutcome:
        return WriteOutcome.for_target(target, Result.failed, retries=retries, patches_sent=sent, backup=backup,
                                       notes=list(notes), error=error, steps=steps, dry_run=wopts.dry_run)

    try:
        obj = dict(target.initial) if target.initial is not None else client.get(target.res, target.name,
                                                                                  target.namespace)
        paths = parse_paths(path_texts, obj)
        shown = ", ".join(path_string(p) for p in paths)

        def read_values(o: Mapping[str, Any]) -> list[Any]:
            vals = [value_at(o, p) for p in paths]
            for p, v in zip(paths, vals, strict=True):
                if v is MISSING:
                    raise HandoverError(f"{path_string(p)} is not set on the object: there is nothing to hand over")
            return vals

        values = read_values(obj)
        md = obj.get("metadata") or {}
        entries = decode_entries(md.get("managedFields"))
        if to == KUBECTL and isinstance((md.get("annotations") or {}).get(LAST_APPLIED_ANNOTATION), str):
            raise HandoverError("an apply by the manager 'kubectl' rewrites the last-applied annotation: hand the "
                                "fields to the manager of the writer that takes them over")
        applied = [e for e in entries if e.manager == to and e.operation == APPLY and not e.subresource]
        from ..fieldpath import FieldSet

        extra = FieldSet()
        for e in applied:
            extra = extra.union(e.fields.recursive_difference(FieldSet(paths)))
        if not extra.is_empty():
            raise HandoverError(f"{to} already applies other fields of this object: applying only {shown} would "
                                "drop them (and the server would delete those nobody else owns); hand over to the "
                                "writer's own manager or a temporary one (e.g. handover-to-hpa)")

        # step 1: the new owner applies the fields alone, with the values they have
        # owning through any entry will do: a controller that took the field over by an update of
        # the scale subresource owns it just as well as through its apply
        owns_all = all(any(e.manager == to and _owns(e.fields, p) for e in entries) for p in paths)
        manifest = build_manifest(obj, paths)
        step1: dict[str, Any] = {"step": 1, "action": "apply", "manager": to, "manifest": manifest}
        steps.append(step1)
        if owns_all:
            step1["description"] = f"{to} already owns {shown}: nothing to apply"
        elif wopts.dry_run == "client":
            step1["description"] = f"{to} would apply {shown} alone (force=false), with the current values"
        else:
            while True:
                body = copy.deepcopy(manifest)
                # the apply is guarded like the patches: it fails if the object changed since it was read
                body["metadata"]["resourceVersion"] = str(md.get("resourceVersion") or "")
                if backups is not None and wopts.dry_run == "none" and backup is None:
                    backup = backups.save(target.res, obj)
                try:
                    out = client.patch(target.res, target.name, target.namespace, body, "apply", field_manager=to,
                                       force=False, dry_run=wopts.dry_run == "server")
                    break
                except Conflict as e:
                    if e.causes:
                        step1["failed"] = True
                        step1["description"] = f"{to} could not apply {shown}: {e}"
                        return fail(f"step 1: the apply by {to} conflicts although it keeps every value: {e}")
                    retries += 1
                    if retries > wopts.max_retries:
                        return fail(f"the object kept changing; gave up after {wopts.max_retries} retries")
                    wopts.sleep(wopts.backoff(retries))
                    obj = client.get(target.res, target.name, target.namespace)
                    md = obj.get("metadata") or {}
                    # another writer may have changed a value meanwhile: hand over what is there now
                    values = read_values(obj)
                    manifest = build_manifest(obj, paths)
                    step1["manifest"] = manifest
            if wopts.dry_run == "none":
                sent += 1
            got = read_values(out)
            changed = [path_string(p) for p, a, b in zip(paths, values, got, strict=True) if not values_equal(a, b)]
            if changed:
                step1["failed"] = True
                return fail(f"step 1 changed {', '.join(changed)} (this is a bug; undo with the backup)")
            step1["description"] = (f"{to} applied {shown} alone (force=false), keeping "
                                    + ", ".join(_value_text(v) for v in values)
                                    + (" (server dry run)" if wopts.dry_run == "server" else ""))

        # step 2: every other owner lets go, in one guarded managedFields patch
        plain = ObjectTarget(target.res, target.name, target.namespace)
        o2 = execute(client, plain, handover_plan(paths, to), wopts, backups)
        retries += o2.retries
        sent += o2.patches_sent
        backup = backup or o2.backup
        step2: dict[str, Any] = {"step": 2, "action": "patch",
                                 "description": "; ".join(o2.notes) if o2.notes else "no other owner to remove"}
        if o2.patches:
            step2["patches"] = o2.patches
        steps.append(step2)
        if o2.result is Result.failed:
            step2["failed"] = True
            return fail(f"step 2: {o2.error}", o2.notes)

        wrote = sent > 0 or (wopts.dry_run != "none" and (not owns_all or o2.result is Result.changed))
        result = Result.changed if wrote else Result.unchanged
        if wopts.dry_run != "none":
            return WriteOutcome.for_target(target, result, retries=retries, notes=[], steps=steps,
                                           dry_run=wopts.dry_run)

        # step 3: nothing changed value, and the new owner owns every field
        final = client.get(target.res, target.name, target.namespace)
        now = [value_at(final, p) for p in paths]
        moved = [f"{path_string(p)} ({_value_text(a)} -> {_value_text(b) if b is not MISSING else 'unset'})"
                 for p, a, b in zip(paths, values, now, strict=True) if b is MISSING or not values_equal(a, b)]
        owners = decode_entries((final.get("metadata") or {}).get("managedFields"))
        unowned = [path_string(p) for p in paths if not any(e.manager == to and _owns(e.fields, p) for e in owners)]
        step3: dict[str, Any] = {"step": 3, "action": "verify"}
        steps.append(step3)
        if moved:
            step3["failed"] = True
            step3["description"] = f"values changed: {', '.join(moved)}"
            return fail(f"the value changed during the handover (another writer?): {', '.join(moved)}")
        if unowned:
            step3["failed"] = True
            step3["description"] = f"{to} does not own {', '.join(unowned)}"
            return fail(f"{to} does not own {', '.join(unowned)} after the handover (a field the server resets "
                        "for this endpoint, such as the status?)")
        step3["description"] = (f"{shown} kept {', '.join(_value_text(v) for v in values)}; "
                                f"{to} owns {'it' if len(paths) == 1 else 'them'}")
        return WriteOutcome.for_target(target, result, retries=retries, patches_sent=sent, backup=backup,
                                       steps=steps)
    except HandoverError as e:
        return fail(str(e))
    except ManagedFieldsError as e:
        return fail(str(e))
    except KubeError as e:
        if is_fatal(e):
            raise
        return fail(str(e))


HELP = """Hand fields over to another manager (a controller, an imperative writer), with no value change.

\b
The server-side variant of the documented procedure: MANAGER applies the fields alone with their
current values, then every other owner lets go (the fields also leave the last-applied annotation
and the client-side manager, so neither 'kubectl apply' nor 'kubectl apply --server-side' of a
manifest without them removes or resets them). The values are checked before and after."""

EPILOG = """\b
Examples:
  # An autoscaler takes over replicas; then remove replicas from the manifest
  kubectl fieldown handover deploy/web --field .spec.replicas --to hpa-controller
\b
  kubectl fieldown handover widget/w1 --field '.spec.containers[name="a"].image' --to image-updater --dry-run=client"""


@handle_errors
def handover(
    resources: Resources = None,
    field: Annotated[
        list[str] | None,
        typer.Option("--field", metavar="PATH", help="A field to hand over (repeatable).", show_default=False),
    ] = None,
    to: Annotated[
        str | None,
        typer.Option("--to", metavar="MANAGER", help="The manager that takes the fields over.", show_default=False),
    ] = None,
    filename: options.Filename = None,
    recursive: options.Recursive = False,
    dry_run: DryRunOption = options.DryRunStrategy.none,
    output: Output = WriteOutput.text,
    backup_dir: BackupDir = None,
    max_retries: MaxRetries = "5",
    verbose: Verbose = False,
    namespace: options.Namespace = None,
    all_namespaces: options.AllNamespaces = False,
    selector: options.Selector = None,
    kubeconfig: options.Kubeconfig = None,
    context: options.Context = None,
) -> int:
    from ..fieldpath import parse_path
    from ..managedfields import KUBECTL_CLIENT_SIDE_APPLY

    paths = list(field or ())
    if not paths:
        raise UsageError("name the fields to hand over with --field PATH (e.g. --field .spec.replicas)")
    for p in paths:
        parse_path(p)
    if not to or not to.strip():
        raise UsageError("--to MANAGER is required: the manager that takes the fields over")
    if to == KUBECTL_CLIENT_SIDE_APPLY:
        raise UsageError(f"{KUBECTL_CLIENT_SIDE_APPLY} cannot take fields over: it only ever updates")
    retries = parse_retries(max_retries)
    cluster = options.ClusterArgs(kubeconfig, context, namespace, all_namespaces)
    sel = Selection(list(resources or ()), list(filename or ()), recursive, selector, cluster)
    sel.validate()
    cfg = RunConfig(f"handover --to {to}", dry_run, output, verbose, backup_dir, retries)
    client = open_client(cluster)
    try:
        items = list(select(client, sel))
        backups = make_backups(client, cfg)
        wopts = write_options(cfg)
        code = run_all(client, items, lambda t: handover_one(client, t, paths, to, wopts, backups), cfg, backups)
    finally:
        client.close()
    if code:
        raise typer.Exit(code)
    return 0


def register(app: typer.Typer) -> None:
    app.command("handover", help=HELP, epilog=EPILOG, no_args_is_help=True)(handover)
