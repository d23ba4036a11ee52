"""Changing a submitted workflow: delete it, update or JSON-Patch it, its tags, its steps' metadata.

Python API (the orchestration origin's routes call these with ``WorkflowCaller.api_key``; a
caller reaches only its own workflows, anything else is 404 as in :func:`workflows.poll`):

- ``delete(store, clock, caller, workflow_id)``: an unfinished workflow is canceled first, which
  refunds every debit as ``cancel`` does; then the workflow is gone (GET/DELETE answer 404);
- ``update(store, clock, caller, workflow_id, changes)``: UpdateWorkflowRequest ``{status?:
  "canceled", metadata?, tags?, allowMatureContent?}``; a member left out or null is kept;
- ``patch(store, clock, caller, workflow_id, operations)``: an RFC 6902 JSON Patch over the
  workflow's patchable members (:data:`PATCHABLE`), applied by the ``jsonpatch`` library;
- ``add_tag``, ``remove_tag``, ``remove_all_tags``;
- ``get_step(store, clock, caller, workflow_id, step_name) -> WorkflowStep``, ``update_step(...,
  {metadata})`` (UpdateWorkflowStepRequest: the step's metadata replaced) and ``patch_step(...,
  operations)`` (a JSON Patch over ``/metadata``).

Refusals are ServiceErrors: 400 (``bad_patch``, ``bad_tag``/``bad_tags`` as ValidationProblemDetails,
``bad_metadata``, ``bad_status``, ``already_finished``), 404 (``not_found``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import jsonpatch
import jsonpointer
import orjson

from blockkit.emulator import journal
from blockkit.emulator.services.errors import ServiceError, bad_request, invalid, not_found
from blockkit.emulator.store import orchestration as orch_store
# The module, not its names: workflows imports buzz, which imports the orchestration package, whose
# routes import this module, so a name read from a half-imported workflows here would not exist yet.
from blockkit.emulator.services.orchestration import workflows

if TYPE_CHECKING:
    from blockkit.emulator.services.orchestration.workflows import WorkflowCaller
    from blockkit.emulator.store.clock import Clock
    from blockkit.emulator.store import Store

# What a PATCH may touch: the members the client's operation names ("cancel a workflow, update
# metadata and add additional tags") and UpdateWorkflowRequest's allowMatureContent.
PATCHABLE = ("status", "metadata", "tags", "allowMatureContent")
STEP_PATCHABLE = ("metadata",)
MAX_OPERATIONS = 100  # our cap


# --- delete ----------------------------------------------------------------------------------

def delete(store: Store, clock: Clock, caller: WorkflowCaller, workflow_id: str) -> None:
    with store.write() as db:
        row = workflows.settle(db, clock, workflows.owned(db, caller, workflow_id))  # an expired one: refunded
        if workflows.render(row, clock)["status"] not in workflows.FINISHED:
            # The client: deleting "may trigger a refund if the work ... has not yet started". The
            # emulator refunds an unfinished workflow in full, exactly as canceling it does.
            workflows.cancel_row(db, clock, row, "workflow deleted")
        orch_store.delete_workflow(db, row["id"])


# --- update and patch ------------------------------------------------------------------------

def _view(workflow: dict[str, Any]) -> dict[str, Any]:
    return {name: workflow[name] for name in PATCHABLE}


def _apply(db: Any, clock: Clock, caller: WorkflowCaller, row: dict[str, Any], wanted: dict[str, Any],
           *, cancel: bool) -> None:
    """Store ``wanted`` (a full view: status, metadata, tags, allowMatureContent) over ``row``.

    ``cancel``: the request set the status; canceling a finished workflow (canceled included) is a
    400, as PUT ``{status: "canceled"}`` has always answered.
    """
    current = workflows.render(row, clock)
    document = orjson.loads(row["document"])
    document["metadata"] = workflows.check_metadata(wanted["metadata"])
    document["tags"] = workflows.check_tags(wanted["tags"])
    mature = wanted["allowMatureContent"]
    if mature is not None and not isinstance(mature, bool):
        raise bad_request("bad_body", "allowMatureContent must be a boolean")
    document["allowMatureContent"] = bool(mature) and caller.mature  # a safe-for-work caller never widens
    status = wanted["status"]
    if status != current["status"] and status != "canceled":
        sent = repr(status) if isinstance(status, str) else journal.kind_of(status)
        journal.note_reason(f"workflow {row['id']} is {current['status']}, and the request sets status {sent};"
                            " the status changes only to \"canceled\" (or stays as it is)")
        raise bad_request("bad_status", "status can only be changed to \"canceled\"")
    orch_store.update_workflow_document(db, row["id"], orjson.dumps(document).decode())
    if status == "canceled" and (cancel or current["status"] != "canceled"):
        fresh = orch_store.find_workflow(db, row["id"])
        assert fresh is not None
        try:
            workflows.cancel_row(db, clock, fresh, "workflow canceled")
        except ServiceError as exc:  # the client lists 400, 401 and 404 for these operations
            raise bad_request("already_finished", exc.detail) from None


def update(store: Store, clock: Clock, caller: WorkflowCaller, workflow_id: str, changes: object) -> None:
    if not isinstance(changes, dict) or set(changes) - set(PATCHABLE):
        raise bad_request("bad_body", "UpdateWorkflowRequest: {status?: \"canceled\", metadata?, tags?,"
                                      " allowMatureContent?}")
    if changes.get("status") not in (None, "canceled"):
        sent = repr(changes["status"]) if isinstance(changes["status"], str) else journal.kind_of(changes["status"])
        journal.note_reason(f"the request sets status {sent} on workflow {workflow_id}; an update"
                            " sets only \"canceled\" (or leaves status out)")
        raise bad_request("bad_status", "status can only be set to \"canceled\"")
    with store.write() as db:
        row = workflows.owned(db, caller, workflow_id)
        wanted = _view(workflows.render(row, clock))
        wanted.update({k: v for k, v in changes.items() if v is not None})
        _apply(db, clock, caller, row, wanted, cancel=changes.get("status") == "canceled")


def _patched(target: dict[str, Any], operations: object, allowed: tuple[str, ...]) -> dict[str, Any]:
    """``target`` with ``operations`` applied; 400 ``bad_patch`` for a malformed, failing or out-of-bounds patch."""
    if not isinstance(operations, list) or not 1 <= len(operations) <= MAX_OPERATIONS:
        journal.note_reason(f"a JSON Patch holds 1 to {MAX_OPERATIONS} operations; this one holds {len(operations)}"
                            if isinstance(operations, list) else
                            f"a JSON Patch is a list of operations; the body is {journal.kind_of(operations)}")
        raise bad_request("bad_patch", f"a JSON Patch document is a list of 1 to {MAX_OPERATIONS} operations")
    for index, op in enumerate(operations):
        if not isinstance(op, dict) or not isinstance(op.get("op"), str) or not isinstance(op.get("path"), str):
            raise bad_request("bad_patch", f"operation {index} must be an object with op and path")
        for member in ("path", "from"):
            pointer = op.get(member)
            if member == "from" and pointer is None:
                continue
            top = pointer.split("/")[1] if isinstance(pointer, str) and pointer.startswith("/") else None
            if top not in allowed:
                raise bad_request("bad_patch", f"operation {index}: {member} {pointer!r} is outside what can be"
                                               f" patched ({', '.join('/' + name for name in allowed)})")
    try:
        return jsonpatch.JsonPatch(operations).apply(target)
    except jsonpatch.JsonPatchTestFailed as exc:
        raise bad_request("bad_patch", f"a test operation failed: {exc}") from None
    except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException) as exc:
        raise bad_request("bad_patch", f"the patch cannot be applied: {exc}") from None


def patch(store: Store, clock: Clock, caller: WorkflowCaller, workflow_id: str, operations: object) -> None:
    with store.write() as db:
        row = workflows.owned(db, caller, workflow_id)
        wanted = _patched(_view(workflows.render(row, clock)), operations, PATCHABLE)
        if set(wanted) != set(PATCHABLE):
            raise bad_request("bad_patch", "a patch cannot remove status, metadata, tags or allowMatureContent")
        assert isinstance(operations, list)  # _patched refused anything else
        touches_status = any(op.get("path") == "/status" for op in operations if op.get("op") != "test")
        _apply(db, clock, caller, row, wanted, cancel=touches_status)


# --- tags ------------------------------------------------------------------------------------

def _set_tags(store: Store, clock: Clock, caller: WorkflowCaller, workflow_id: str, change: Any) -> None:
    with store.write() as db:
        row = workflows.owned(db, caller, workflow_id)
        document = orjson.loads(row["document"])
        document["tags"] = change(document["tags"])
        orch_store.update_workflow_document(db, row["id"], orjson.dumps(document).decode())


def add_tag(store: Store, clock: Clock, caller: WorkflowCaller, workflow_id: str, tag: object) -> None:
    """Add a tag; one already there changes nothing; an 11th is 400."""
    workflows.check_tag(tag)

    def add(tags: list[str]) -> list[str]:
        if tag in tags:
            return tags
        if len(tags) >= workflows.MAX_TAGS:
            journal.note_reason(f"workflow {workflow_id} carries {len(tags)} tags ({journal.described(tags)}), the"
                                f" most a workflow carries ({workflows.MAX_TAGS}); tag {tag!r} would be one more")
            raise invalid("bad_tags", "tag", f"a workflow carries at most {workflows.MAX_TAGS} tags")
        return [*tags, tag]

    _set_tags(store, clock, caller, workflow_id, add)


def remove_tag(store: Store, clock: Clock, caller: WorkflowCaller, workflow_id: str, tag: str) -> None:
    """Remove a tag; a tag the workflow does not carry changes nothing (DELETE is idempotent)."""
    workflows.check_tag(tag)
    _set_tags(store, clock, caller, workflow_id, lambda tags: [t for t in tags if t != tag])


def remove_all_tags(store: Store, clock: Clock, caller: WorkflowCaller, workflow_id: str) -> None:
    _set_tags(store, clock, caller, workflow_id, lambda tags: [])


# --- steps -----------------------------------------------------------------------------------

def _step_index(document: dict[str, Any], step_name: str) -> int:
    for index, step in enumerate(document["steps"]):
        if step["name"] == step_name:
            return index
    names = journal.described([repr(step["name"]) for step in document["steps"]])
    journal.note_reason(f"the workflow's steps are named {names}; none is {step_name!r}")
    raise not_found(f"the workflow has no step named {step_name!r}")


def get_step(store: Store, clock: Clock, caller: WorkflowCaller, workflow_id: str, step_name: str) -> dict[str, Any]:
    with store.read() as db:
        row = workflows.owned(db, caller, workflow_id)
    index = _step_index(orjson.loads(row["document"]), step_name)
    return workflows.render(row, clock)["steps"][index]


def _set_step_metadata(store: Store, caller: WorkflowCaller, workflow_id: str, step_name: str, change: Any) -> None:
    with store.write() as db:
        row = workflows.owned(db, caller, workflow_id)
        document = orjson.loads(row["document"])
        step = document["steps"][_step_index(document, step_name)]
        step["metadata"] = change(step.get("metadata") or {})
        orch_store.update_workflow_document(db, row["id"], orjson.dumps(document).decode())


def update_step(store: Store, clock: Clock, caller: WorkflowCaller, workflow_id: str, step_name: str,
                body: object) -> None:
    """UpdateWorkflowStepRequest ``{metadata: {...}}``: the step's metadata replaced."""
    if not isinstance(body, dict) or set(body) != {"metadata"} or not isinstance(body["metadata"], dict):
        raise bad_request("bad_body", "UpdateWorkflowStepRequest: {\"metadata\": {...}}")
    _set_step_metadata(store, caller, workflow_id, step_name, lambda old: body["metadata"])


def patch_step(store: Store, clock: Clock, caller: WorkflowCaller, workflow_id: str, step_name: str,
               operations: object) -> None:
    """A JSON Patch over the step's ``/metadata``."""
    def change(old: dict[str, Any]) -> dict[str, Any]:
        wanted = _patched({"metadata": old}, operations, STEP_PATCHABLE)
        if "metadata" not in wanted:
            raise bad_request("bad_patch", "a patch cannot remove a step's metadata (replace it with {})")
        return workflows.check_metadata(wanted["metadata"])

    _set_step_metadata(store, caller, workflow_id, step_name, change)
