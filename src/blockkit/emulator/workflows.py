"""Workflows, as the host bridge runs them (SUBMIT/ESTIMATE/POLL/CANCEL_WORKFLOW, QUERY_APP_WORKFLOWS).

Python API (``blockkit dev`` calls these in-process with the block token's claims):

- ``WorkflowCaller.from_claims(claims)`` -> the caller (viewer, app, block, scopes, buzzBudget, maturity);
- ``submit(store, clock, urls, caller, payload) -> Workflow``;
- ``estimate(store, clock, urls, caller, payload) -> {"cost", "transactions", "spentAccountType"}``;
- ``poll(store, clock, urls, caller, workflow_id) -> Workflow``;
- ``cancel(store, clock, urls, caller, workflow_id) -> Workflow`` (refunds what was charged);
- ``query(store, clock, urls, caller, limit=20, filters=WorkflowFilter()) -> {"items": [Workflow], "next"}``
  (the app's workflows; ``next`` a cursor for ``WorkflowFilter.cursor``, "" on the last page);
- ``check_tags``, ``check_tag``, ``check_metadata``: a WorkflowTemplate's tags and metadata;
  changing a submitted workflow (delete, PATCH, tags, steps) is ``blockkit.emulator.workflow_edits``;
- ``snapshot(workflow)``, ``estimate_snapshot(quote)``, ``failure_snapshot(exc)``: the
  BlockWorkflowSnapshot the platform's host relays over the bridge (``{workflowId, status,
  cost?: {total}, imageUrls?, spentAccountType?, error?}``; civitai/civitai
  ``src/server/services/blocks/workflow.service.ts``, ``snapshotFromWorkflow``);
- ``template_of(body)``: the WorkflowTemplate for a bridge body: a template (``steps``) as is, or
  the platform's ``{kind: "textToImage", modelVersionId?, params: {prompt, ...}}``;
- ``WorkflowCaller.api_key(user_id)``: the orchestration origin's caller (``POST/GET/PUT
  /v2/consumer/workflows``, Bearer API key): no block, no per-generation budget (that budget is a
  block token's claim), mature content when the workflow asks for it (``allowMatureContent``).

The payload is a WorkflowTemplate of @civitai/client: ``{steps: [{$type, name?, input, metadata?}],
tags?, metadata?, allowMatureContent?, accountType?}``. Step types:

- ``imageUpscaler`` (input ImageUpscalerInput): a real Lanczos upscale; output ``{blob: ImageBlob}``;
- ``textToImage`` (input ``{prompt, negativePrompt?, width 64-2048 (default 512), height, seed?,
  quantity 1-4}``): no model runs here. The output ``{images: [ImageBlob], note}`` holds
  deterministic procedural pictures of prompt+seed+index and says so in ``note``.

Cost: ``imaging.price`` of every output image (4 Buzz per output megapixel, rounded up). Rules:
the ``ai:write:budgeted`` scope is needed (403); the total may not exceed the token's per-generation
budget (buzzBudget, default 10, at most 1000; 403 ``budget_exceeded``); ``accountType`` is a
preference under the maturity clamp (``buzz.pool_order``); a mature workflow (allowMatureContent)
needs a caller that may see mature content, else it is clamped to safe-for-work; short of Buzz is 403
(``buzz.charge``; the orchestrator's status for it).

Time (the emulator clock): every workflow is ``unassigned`` for 2 s, then each step is
``processing`` for its duration (3 s an upscale, 4 s a generated image) one after another,
then ``succeeded``. Outputs are computed at submission and shown once their step succeeds.
``spentAccountType`` is the pool of the largest debit.
"""

from __future__ import annotations

import base64
import uuid
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import orjson

from blockkit.emulator import buzz, facts
from blockkit.emulator.clock import format_timestamp, parse_timestamp
from blockkit.emulator.orchestration import imaging, media, upscaler
from blockkit.emulator.orchestration.errors import (
    ServiceError,
    bad_request,
    invalid,
    not_found,
)
from blockkit.emulator.store import orchestration as orch_store

if TYPE_CHECKING:
    from blockkit.emulator.clock import Clock
    from blockkit.emulator.state import Urls
    from blockkit.emulator.store import Store

BUDGET_SCOPE = "ai:write:budgeted"
DEFAULT_BUDGET = 10
BUDGET_CAP = 1000
QUEUE_SECONDS = 2.0
STEP_SECONDS = {"imageUpscaler": 3.0, "textToImage": 4.0}  # textToImage: per image
MAX_STEPS = 10
MAX_QUANTITY = 4
MAX_PROMPT = 6000
MAX_TAGS = 10          # WorkflowTemplate.tags: "At most 10 tags ... each at most 200 characters long"
MAX_TAG_LENGTH = 200
PLACEHOLDER_NOTE = "procedural placeholder: blockkit does not run models; this image is drawn from the prompt and seed"


@dataclass(frozen=True)
class WorkflowCaller:
    user_id: int
    app_id: str | None = None
    block_id: str | None = None
    scopes: frozenset[str] = field(default_factory=lambda: frozenset({BUDGET_SCOPE}))
    buzz_budget: int | None = None     # the token's buzzBudget claim (None: the default)
    mature: bool = False               # the block may see mature content (its maxBrowsingLevel)
    budgeted: bool = True              # a block token's per-generation budget applies (not to an API key)

    @classmethod
    def api_key(cls, user_id: int) -> WorkflowCaller:
        return cls(user_id=user_id, mature=True, budgeted=False)

    @classmethod
    def from_claims(cls, claims: dict[str, Any]) -> WorkflowCaller:
        sub = str(claims.get("sub", ""))
        if not sub.startswith("user:"):
            raise ServiceError(401, "sign_in_required", "workflows need a signed-in viewer")
        level = claims.get("maxBrowsingLevel")
        return cls(user_id=int(sub.split(":", 1)[1]), app_id=claims.get("appId"), block_id=claims.get("blockId"),
                   scopes=frozenset(claims.get("scopes") or ()), buzz_budget=claims.get("buzzBudget"),
                   mature=isinstance(level, int) and bool(level & ~facts.SFW_BROWSING_LEVEL))

    def budget(self) -> int:
        budget = DEFAULT_BUDGET if self.buzz_budget is None else self.buzz_budget
        return max(0, min(int(budget), BUDGET_CAP))


# --- validation and pricing ------------------------------------------------------------------

def _int(value: object, name: str, low: int, high: int, default: int) -> int:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise bad_request("bad_step", f"{name} must be an integer from {low} to {high}")
    return value


def check_tags(value: object, member: str = "tags") -> list[str]:
    """A workflow's tags: at most 10 distinct non-empty strings of at most 200 characters (WorkflowTemplate)."""
    if value is None:
        return []
    if not isinstance(value, list) or len(value) > MAX_TAGS:
        raise invalid("bad_tags", member, f"{member} must be a list of at most {MAX_TAGS} tags")
    for tag in value:
        check_tag(tag, member)
    return list(dict.fromkeys(value))  # a tag is on a workflow once


def check_tag(tag: object, member: str = "tag") -> str:
    if not isinstance(tag, str) or not tag.strip() or len(tag) > MAX_TAG_LENGTH:
        raise invalid("bad_tag", member, f"a tag is a non-empty string of at most {MAX_TAG_LENGTH} characters")
    return tag


def check_metadata(value: object, member: str = "metadata") -> dict[str, Any]:
    """User metadata: a JSON object (null stands for none)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise bad_request("bad_metadata", f"{member} must be a JSON object")
    return value


def _plan(payload: object, fetch: Any) -> list[dict[str, Any]]:
    """Each step checked: {type, name, input, metadata, outputs: [(w, h)], image?: PIL image}."""
    if not isinstance(payload, dict):
        raise bad_request("bad_body", "the workflow must be a JSON object with steps")
    steps = payload.get("steps")
    if not isinstance(steps, list) or not 1 <= len(steps) <= MAX_STEPS:
        raise bad_request("bad_steps", f"steps must be a list of 1 to {MAX_STEPS} step templates")
    check_tags(payload.get("tags"))
    check_metadata(payload.get("metadata"))
    plan: list[dict[str, Any]] = []
    names: set[str] = set()
    for index, step in enumerate(steps):
        if not isinstance(step, dict) or not isinstance(step.get("input"), dict):
            raise bad_request("bad_step", f"steps[{index}] must be an object with $type and input")
        kind, data = step.get("$type"), step["input"]
        name = step.get("name") or f"{index}"
        # Steps are reached by name (GET .../steps/{stepName}), so a name is used once.
        if not isinstance(name, str) or name in names:
            raise bad_request("bad_steps", f"steps[{index}].name must be a string no other step uses")
        names.add(name)
        step_metadata = check_metadata(step.get("metadata"), f"steps[{index}].metadata")
        if kind == "imageUpscaler":
            source, repeats = upscaler.check_payload(data)
            image = imaging.decode_image(source, fetch)
            plan.append({"type": kind, "name": name, "input": data, "image": image, "repeats": repeats,
                         "metadata": step_metadata,
                         "outputs": [imaging.check_output(image.width, image.height, repeats)]})
        elif kind == "textToImage":
            prompt = data.get("prompt")
            if not isinstance(prompt, str) or not prompt.strip() or len(prompt) > MAX_PROMPT:
                raise bad_request("bad_step", f"steps[{index}].input.prompt must be a non-empty string"
                                              f" of at most {MAX_PROMPT} characters")
            width = _int(data.get("width"), "width", 64, 2048, 512)
            height = _int(data.get("height"), "height", 64, 2048, 512)
            seed = _int(data.get("seed"), "seed", 0, 2**32 - 1, 0)
            quantity = _int(data.get("quantity"), "quantity", 1, MAX_QUANTITY, 1)
            plan.append({"type": kind, "name": name, "input": {**data, "seed": seed}, "prompt": prompt,
                         "seed": seed, "metadata": step_metadata, "outputs": [(width, height)] * quantity})
        else:
            raise bad_request("unsupported_step", f"steps[{index}].$type {kind!r} is not supported here"
                                                  " (imageUpscaler, textToImage)")
    return plan


def _price(plan: list[dict[str, Any]]) -> int:
    return sum(imaging.price(w, h) for step in plan for (w, h) in step["outputs"])


def _authorise(caller: WorkflowCaller, total: int) -> None:
    if BUDGET_SCOPE not in caller.scopes:
        raise ServiceError(403, "missing_scope", f"workflows need the {BUDGET_SCOPE} scope")
    if caller.budgeted and total > caller.budget():
        # The platform's words for it (blocks.router submitWorkflow), with the quote kept for the snapshot.
        refusal = ServiceError(403, "budget_exceeded", f"insufficient buzz budget: estimate {total} exceeds"
                                                       f" budget {caller.budget()}")
        refusal.quote = total  # type: ignore[attr-defined]
        raise refusal


def _mature(caller: WorkflowCaller, payload: dict[str, Any]) -> bool:
    wanted = payload.get("allowMatureContent")
    if wanted is not None and not isinstance(wanted, bool):
        raise bad_request("bad_body", "allowMatureContent must be a boolean")
    return bool(wanted) and caller.mature  # a safe-for-work block never widens


def estimate(store: Store, clock: Clock, urls: Urls, caller: WorkflowCaller, payload: object) -> dict[str, Any]:
    plan = _plan(payload, lambda url: media.resolve_local(urls, store, url))
    assert isinstance(payload, dict)
    total = _price(plan)
    order = buzz.pool_order(payload.get("accountType"), mature=_mature(caller, payload))
    _authorise(caller, total)
    held = buzz.balance(store, clock, caller.user_id)
    debits, left = {}, total
    for pool in order:
        take = min(left, held[pool])
        if take:
            debits[pool] = take
            left -= take
    return {"cost": upscaler.cost(total), "spentAccountType": buzz.largest_debit(debits),
            "transactions": {"list": [{"type": "debit", "amount": a, "accountType": p} for p, a in debits.items()],
                             "insufficientBuzz": left > 0}}


# --- running ---------------------------------------------------------------------------------

def _blob(urls: Urls, row: orch_store.BlobRow) -> dict[str, Any]:
    return {"type": "image", "id": row.id, "available": True, "url": media.blob_url(urls, row),
            "width": row.width, "height": row.height, "nsfwLevel": "pg"}


def submit(store: Store, clock: Clock, urls: Urls, caller: WorkflowCaller, payload: object) -> dict[str, Any]:
    plan = _plan(payload, lambda url: media.resolve_local(urls, store, url))
    assert isinstance(payload, dict)
    total = _price(plan)
    mature = _mature(caller, payload)
    order = buzz.pool_order(payload.get("accountType"), mature=mature)
    _authorise(caller, total)
    workflow_id = f"wf-{uuid.uuid4()}"
    now = clock.iso()
    with store.write() as db:  # charge first: a refused charge leaves nothing behind
        debits = buzz.charge(db, now, caller.user_id, total, order, kind="workflow", reference=workflow_id,
                             description=f"workflow ({len(plan)} step(s))")
    steps, offset = [], QUEUE_SECONDS
    for step in plan:
        if step["type"] == "imageUpscaler":
            output = {"blob": _blob(urls, media.save_blob(store, now, caller.user_id,
                                                           imaging.upscale(step["image"], step["repeats"])))}
            duration = STEP_SECONDS["imageUpscaler"]
        else:
            images = [_blob(urls, media.save_blob(store, now, caller.user_id, imaging.procedural(
                f"{step['prompt']}\x00{step['seed']}\x00{i}", w, h))) for i, (w, h) in enumerate(step["outputs"])]
            output = {"images": images, "note": PLACEHOLDER_NOTE}
            duration = STEP_SECONDS["textToImage"] * len(step["outputs"])
        steps.append({"$type": step["type"], "name": step["name"], "input": step["input"], "output": output,
                      "metadata": step["metadata"], "start": offset, "end": offset + duration,
                      "cost": sum(imaging.price(w, h) for (w, h) in step["outputs"])})
        offset += duration
    document = {"steps": steps, "debits": debits, "tags": check_tags(payload.get("tags")),
                "metadata": check_metadata(payload.get("metadata")), "allowMatureContent": mature, "currencies": list(order),
                "refunded": False}
    with store.write() as db:
        orch_store.insert_workflow(db, id=workflow_id, user_id=caller.user_id, app_id=caller.app_id,
                                   block_id=caller.block_id, created_at=now, cost=total,
                                   document=orjson.dumps(document).decode())
        row = orch_store.find_workflow(db, workflow_id)
    assert row is not None
    return render(row, clock)


def render(row: dict[str, Any], clock: Clock) -> dict[str, Any]:
    document = orjson.loads(row["document"])
    created = parse_timestamp(row["created_at"])
    elapsed = (clock.now() - created).total_seconds()
    canceled_at = parse_timestamp(row["canceled_at"]) if row["canceled_at"] else None
    if canceled_at is not None:
        elapsed = min(elapsed, (canceled_at - created).total_seconds())

    def at(seconds: float) -> str:
        return format_timestamp(created + timedelta(seconds=seconds))

    steps = []
    for step in document["steps"]:
        if elapsed >= step["end"]:
            status = "succeeded"
        elif canceled_at is not None:
            status = "canceled"
        elif elapsed >= step["start"]:
            status = "processing"
        else:
            status = "unassigned"
        out: dict[str, Any] = {"$type": step["$type"], "name": step["name"], "priority": "normal",
                               "status": status, "metadata": step.get("metadata") or {}, "input": step["input"],
                               "startedAt": at(step["start"]) if elapsed >= step["start"] else None,
                               "completedAt": at(step["end"]) if status == "succeeded" else None}
        if status == "processing":
            out["estimatedProgressRate"] = round((elapsed - step["start"]) / (step["end"] - step["start"]), 3)
        if status == "succeeded":
            out["output"] = step["output"]
        steps.append(out)
    statuses = [s["status"] for s in steps]
    if all(s == "succeeded" for s in statuses):
        status = "succeeded"
    elif canceled_at is not None:
        status = "canceled"
    elif any(s != "unassigned" for s in statuses):
        status = "processing"
    else:
        status = "unassigned"
    debits = document["debits"]
    transactions = [{"type": "debit", "amount": a, "accountType": p} for p, a in debits.items()]
    if document["refunded"]:
        transactions += [{"type": "credit", "amount": a, "accountType": p} for p, a in debits.items()]
    total = row["cost"]
    return {
        "id": row["id"], "createdAt": row["created_at"], "status": status,
        "startedAt": at(QUEUE_SECONDS) if elapsed >= QUEUE_SECONDS else None,
        "completedAt": at(document["steps"][-1]["end"]) if status == "succeeded" else (
            row["canceled_at"] if status == "canceled" else None),
        "transactions": {"list": transactions}, "spentAccountType": buzz.largest_debit(debits),
        "metadata": document["metadata"], "tags": document["tags"], "arguments": {}, "callbacks": [],
        "tips": {"civitai": 0, "creators": 0}, "cost": upscaler.cost(total), "steps": steps,
        "allowMatureContent": document["allowMatureContent"], "currencies": document["currencies"],
        "upgradeMode": "manual", "forceRefunded": document["refunded"],
    }


def belongs(row: dict[str, Any], caller: WorkflowCaller) -> bool:
    """Whether a stored workflow is the caller's: its viewer's, and its app's when the caller is a block."""
    return row["user_id"] == caller.user_id and (caller.app_id is None or row["app_id"] == caller.app_id)


def owned(db: Any, caller: WorkflowCaller, workflow_id: object) -> dict[str, Any]:
    row = orch_store.find_workflow(db, workflow_id) if isinstance(workflow_id, str) else None
    if row is None or not belongs(row, caller):
        raise not_found("no such workflow for this viewer and app")
    return row


def poll(store: Store, clock: Clock, urls: Urls, caller: WorkflowCaller, workflow_id: str) -> dict[str, Any]:
    with store.read() as db:
        return render(owned(db, caller, workflow_id), clock)


def cancel(store: Store, clock: Clock, urls: Urls, caller: WorkflowCaller, workflow_id: str) -> dict[str, Any]:
    """Cancel a workflow that has not finished and refund every debit; a finished one is 409."""
    with store.write() as db:
        row = cancel_row(db, clock, owned(db, caller, workflow_id), "workflow canceled")
    return render(row, clock)


FINISHED = ("succeeded", "failed", "expired", "canceled")


def cancel_row(db: Any, clock: Clock, row: dict[str, Any], description: str) -> dict[str, Any]:
    """Cancel an owned, unfinished workflow inside the caller's transaction; refund every debit."""
    now = clock.iso()
    current = render(row, clock)
    if current["status"] in FINISHED:
        raise ServiceError(409, "already_finished", f"the workflow is already {current['status']}")
    document = orjson.loads(row["document"])
    buzz.refund(db, now, row["user_id"], document["debits"], reference=row["id"], description=description)
    document["refunded"] = True
    orch_store.cancel_workflow(db, row["id"], now, orjson.dumps(document).decode())
    found = orch_store.find_workflow(db, row["id"])
    assert found is not None
    return found


@dataclass(frozen=True)
class WorkflowFilter:
    """QueryWorkflows' filters. Dates are store timestamps (inclusive); ``cursor`` is a ``next`` we gave."""

    tags: tuple[str, ...] = ()         # every one of them on the workflow
    text: str | None = None            # matched, case-insensitively, inside a metadata value
    from_date: str | None = None
    to_date: str | None = None
    ascending: bool = False
    exclude_failed: bool = False       # leave out failed, expired and canceled workflows
    cursor: str | None = None


def encode_cursor(row: dict[str, Any], ascending: bool) -> str:
    raw = orjson.dumps([row["created_at"], row["id"], "asc" if ascending else "desc"])
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def decode_cursor(cursor: str, ascending: bool) -> tuple[str, str]:
    """The (createdAt, id) a page ends on; 400 for a cursor we did not give or one of the other order."""
    try:
        value = orjson.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    except (ValueError, orjson.JSONDecodeError):
        value = None
    if not (isinstance(value, list) and len(value) == 3 and all(isinstance(v, str) for v in value)):
        raise bad_request("bad_cursor", "cursor is not a `next` value this service gave")
    if value[2] != ("asc" if ascending else "desc"):
        raise bad_request("bad_cursor", "cursor belongs to a query in the other order (ascending)")
    return value[0], value[1]


def _mentions(value: object, needle: str) -> bool:
    """Whether a scalar anywhere inside ``value`` holds ``needle`` (walked with a stack: metadata may
    nest as deep as the JSON parser allows, past Python's recursion limit)."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
        elif item is not None and not isinstance(item, bool) and needle in str(item).casefold():
            return True
    return False


def query(store: Store, clock: Clock, urls: Urls, caller: WorkflowCaller, limit: int = 20,
          filters: WorkflowFilter | None = None) -> dict[str, Any]:
    """One page of the caller's workflows, newest first unless ``ascending``: ``{items, next}``.

    ``next`` is "" on the last page, else the cursor of the page after (the page ends on its last item).
    """
    filters = filters or WorkflowFilter()
    limit = max(1, min(int(limit), 100))
    after = decode_cursor(filters.cursor, filters.ascending) if filters.cursor else None
    needle = filters.text.casefold() if filters.text else None
    items: list[dict[str, Any]] = []
    last: dict[str, Any] | None = None
    more = False
    with store.read() as db:
        for row in orch_store.iter_workflows(db, caller.user_id, caller.app_id, ascending=filters.ascending,
                                             after=after, from_date=filters.from_date, to_date=filters.to_date,
                                             tags=filters.tags):
            if needle is not None and not _mentions(orjson.loads(row["document"])["metadata"], needle):
                continue
            workflow = render(row, clock)
            if filters.exclude_failed and workflow["status"] in ("failed", "expired", "canceled"):
                continue
            if len(items) == limit:
                more = True
                break
            items.append(workflow)
            last = row
    return {"items": items, "next": encode_cursor(last, filters.ascending) if more and last else ""}


# --- the bridge's snapshot -------------------------------------------------------------------

# The orchestrator's states the block contract does not name, mapped as the platform maps them.
SNAPSHOT_STATUS = {"unassigned": "pending", "preparing": "pending", "scheduled": "pending",
                   "processing": "processing", "succeeded": "succeeded", "failed": "failed",
                   "expired": "expired", "canceled": "canceled"}


def snapshot(workflow: dict[str, Any]) -> dict[str, Any]:
    """A Workflow as the bridge carries it: id, public status, total cost, the available output URLs."""
    urls: list[str] = []
    for step in workflow.get("steps") or []:
        output = step.get("output") or {}
        # textToImage's images, as the platform extracts them; an upscale's single blob too (our
        # choice: the platform's bridge has no upscaler, and a block here would see nothing else).
        for blob in [*(output.get("images") or []), *([output["blob"]] if isinstance(output.get("blob"), dict) else [])]:
            if blob.get("available") and isinstance(blob.get("url"), str) and blob["url"]:
                urls.append(blob["url"])
    out: dict[str, Any] = {"workflowId": workflow.get("id") or "whatif",
                           "status": SNAPSHOT_STATUS.get(workflow.get("status", ""), "pending")}
    total = (workflow.get("cost") or {}).get("total")
    if isinstance(total, int):
        out["cost"] = {"total": total}
    if urls:
        out["imageUrls"] = urls
    if workflow.get("spentAccountType"):
        out["spentAccountType"] = workflow["spentAccountType"]
    return out


# The orchestrator's content ratings as civitai's NSFW level bits (an unrated 'na' blob has none).
RATING_LEVEL = {"pg": 1, "pg13": 2, "pg-13": 2, "r": 4, "x": 8, "xxx": 16}


def app_workflow(workflow: dict[str, Any]) -> dict[str, Any]:
    """A Workflow as QUERY_APP_WORKFLOWS and CANCEL_APP_WORKFLOW carry it (the platform's AppWorkflow).

    ``{workflowId, status, images: [{url, width, height, nsfwLevel}], cost, createdAt}``: the available
    outputs in step order (an upscale's blob too, as in :func:`snapshot`), ``cost`` the total or null.
    """
    images: list[dict[str, Any]] = []
    for step in workflow.get("steps") or []:
        output = step.get("output") or {}
        for blob in [*(output.get("images") or []), *([output["blob"]] if isinstance(output.get("blob"), dict) else [])]:
            if blob.get("available") and isinstance(blob.get("url"), str) and blob["url"]:
                images.append({"url": blob["url"], "width": blob.get("width"), "height": blob.get("height"),
                               "nsfwLevel": RATING_LEVEL.get(str(blob.get("nsfwLevel")))})
    total = (workflow.get("cost") or {}).get("total")
    return {"workflowId": workflow.get("id"), "status": SNAPSHOT_STATUS.get(workflow.get("status", ""), "pending"),
            "images": images, "cost": total if isinstance(total, int) else None, "createdAt": workflow.get("createdAt")}


def estimate_snapshot(quote: dict[str, Any]) -> dict[str, Any]:
    """ESTIMATE_RESULT's snapshot: a quote, never polled (``workflowId`` "whatif", as the platform sends)."""
    return snapshot({"status": "unassigned", **quote})


def failure_snapshot(exc: BaseException) -> dict[str, Any]:
    """The platform's failure snapshot: ``{workflowId: "failed", status: "failed", error, cost?}``."""
    detail = getattr(exc, "detail", None) or str(exc) or "workflow request failed"
    out: dict[str, Any] = {"workflowId": "failed", "status": "failed"}
    quote = getattr(exc, "quote", None)
    if isinstance(quote, int):
        out["cost"] = {"total": quote}
    out["error"] = detail
    return out


def template_of(body: object) -> object:
    """The WorkflowTemplate a bridge body stands for (a body the service then checks like any other)."""
    if not isinstance(body, dict) or "steps" in body or body.get("kind") is None:
        return body
    if body["kind"] != "textToImage":
        raise bad_request("unsupported_kind", f"kind {body['kind']!r} is not emulated (textToImage, or a"
                                              " WorkflowTemplate with steps)")
    params = body.get("params")
    if not isinstance(params, dict):
        raise bad_request("bad_body", "a textToImage body carries params {prompt, width?, height?, seed?, quantity?}")
    step_input = {k: params[k] for k in ("prompt", "negativePrompt", "width", "height", "seed", "quantity")
                  if params.get(k) is not None}
    return {"steps": [{"$type": "textToImage", "name": "0", "input": step_input}],
            **({"accountType": body["accountType"]} if "accountType" in body else {})}
