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
  changing a submitted workflow (delete, PATCH, tags, steps) is ``blockkit.emulator.services.orchestration.workflow_edits``;
- ``snapshot(workflow)``, ``estimate_snapshot(quote)``, ``failure_snapshot(exc)``: the
  BlockWorkflowSnapshot the platform's host relays over the bridge (``{workflowId, status,
  cost?: {total}, imageUrls?, spentAccountType?, error?}``; civitai/civitai
  ``src/server/services/blocks/workflow.service.ts``, ``snapshotFromWorkflow``);
- ``template_of(body)``: the WorkflowTemplate for a bridge body: a template (``steps``) as is, or
  the platform's ``{kind: "textToImage", modelVersionId?, params: {prompt, ...}}``;
- ``WorkflowCaller.api_key(user_id)``: the orchestration origin's caller (``POST/GET/PUT
  /v2/consumer/workflows``, Bearer API key): no block, no per-generation budget (that budget is a
  block token's claim), mature content when the workflow asks for it (``allowMatureContent``).

The payload is a WorkflowTemplate of @civitai/client: ``{steps: [{$type, name?, input, metadata?,
priority?, timeout?, retries?}], tags?, metadata?, arguments?, allowMatureContent?, currencies?,
externalId?, tips?, callbacks?, accountType?}``. Step types:

- ``imageUpscaler`` (input ImageUpscalerInput): a real Lanczos upscale; output ``{blob: ImageBlob}``;
- ``textToImage`` (input ``{prompt, negativePrompt?, width 64-2048 (default 512), height, seed?,
  quantity 1-4}``): no model runs here. The output ``{images: [ImageBlob], note}`` holds
  deterministic procedural pictures of prompt+seed+index and says so in ``note``.

Cost: ``imaging.price`` of every output image (4 Buzz per output megapixel, rounded up) is
``cost.base``; ``tips`` (rates) add their share, rounded up; ``cost.total`` is charged. Rules: the
``ai:write:budgeted`` scope is needed (403); the total may not exceed the token's per-generation
budget (buzzBudget, default 10, at most 1000; 403 ``budget_exceeded``). Who pays: ``currencies``,
drained in order (green never pays mature work); without it, a block pays as the platform offers
(blue, then the token's domain currency; ``block_currencies``) and an API key in the automatic
order under the maturity clamp (``buzz.pool_order``, ``accountType`` a preference). Short of Buzz
is 403 (``buzz.charge``; the orchestrator's status for it). ``externalId`` is an idempotency key per
owner. Money: the charge, the blob rows, the workflow row and its callback events are one
transaction (``submit``).

Time (the emulator clock): every workflow is ``unassigned`` for 2 s, then each step is
``processing`` for its duration (3 s an upscale, 4 s a generated image) one after another,
then ``succeeded``. A step ``timeout`` shorter than its duration expires each attempt, ``retries``
runs it again, and then the step and the workflow are ``expired`` and refunded (``settle``; the
background worker's ``settle_due``, or the first read). Each attempt is a job. Outputs are computed
at submission and shown once their step succeeds. ``spentAccountType`` is the pool of the largest
debit. Ids are ``<userId>-<timestamp>``; a block's workflow carries the platform's provenance tags,
and a block reaches only the workflows its id names the viewer of and its app's tag is on (403).
Callback events are delivered by ``orchestration.callbacks``.
"""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import orjson

from blockkit.emulator.services import buzz, faults
from blockkit.emulator import facts, journal
from blockkit.emulator.store.clock import format_timestamp, parse_timestamp
from blockkit.emulator.services.orchestration import imaging, media, upscaler
from blockkit.emulator.services.errors import ServiceError, invalid, not_found
from blockkit.emulator.store import orchestration as orch_store

if TYPE_CHECKING:
    from blockkit.emulator.store.clock import Clock
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
MAX_EXTERNAL_ID = 128  # WorkflowTemplate.externalId: "Max 128 chars, [A-Za-z0-9_-]+"
EXTERNAL_ID = re.compile(r"[A-Za-z0-9_-]{1,128}", re.ASCII)
# A block's idempotency key (civitai/civitai src/server/utils/block-gen-idempotency.ts, BLOCK_IDEMPOTENCY_KEY_REGEX)
BLOCK_IDEMPOTENCY_KEY = re.compile(r"[A-Za-z0-9_-]{1,64}", re.ASCII)
CURRENCIES = ("yellow", "blue", "green", "fakeRed")  # BuzzClientAccount
PRIORITIES = ("high", "normal", "low")               # Priority
MAX_RETRIES = 10        # our bound on WorkflowStepTemplate.retries
MAX_TIP_RATE = 1.0      # our bound on a WorkflowTips rate
CALLBACK_TYPES = tuple(f"{scope}:{status}" for scope in ("workflow", "step", "job") for status in
                       ("*", "unassigned", "processing", "succeeded", "failed", "expired", "canceled"))
MAX_CALLBACKS = 10      # our bound on WorkflowTemplate.callbacks
PLACEHOLDER_NOTE = "procedural placeholder: blockkit does not run models; this image is drawn from the prompt and seed"


def bad_request(code: str, detail: str) -> ServiceError:
    """A 400 ProblemDetails with ``errors.messages``, where the platform reads an orchestrator 400's reasons
    (civitai/civitai ``src/server/services/orchestrator/workflows.ts``, ``error.errors.messages``)."""
    return ServiceError(400, code, detail, errors={"messages": [detail]})


@dataclass(frozen=True)
class WorkflowCaller:
    user_id: int
    app_id: str | None = None
    block_id: str | None = None
    scopes: frozenset[str] = field(default_factory=lambda: frozenset({BUDGET_SCOPE}))
    buzz_budget: int | None = None     # the token's buzzBudget claim (None: the default)
    mature: bool = False               # the block may see mature content (its maxBrowsingLevel)
    budgeted: bool = True              # a block token's per-generation budget applies (not to an API key)
    instance_id: str | None = None     # the token's blockInstanceId (a provenance tag)

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
                   instance_id=claims.get("blockInstanceId"),
                   scopes=frozenset(claims.get("scopes") or ()), buzz_budget=claims.get("buzzBudget"),
                   mature=isinstance(level, int) and bool(level & ~facts.SFW_BROWSING_LEVEL))

    def budget(self) -> int:
        budget = DEFAULT_BUDGET if self.buzz_budget is None else self.buzz_budget
        return max(0, min(int(budget), BUDGET_CAP))


# --- validation and pricing ------------------------------------------------------------------

def _int(value: object, name: str, low: int, high: int, default: int, where: str | None = None) -> int:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        journal.note_reason(f"{where or name} is {journal.kind_of(value)}; it must be an integer from {low} to {high}")
        raise bad_request("bad_step", f"{name} must be an integer from {low} to {high}")
    return value


def check_tags(value: object, member: str = "tags") -> list[str]:
    """A workflow's tags: at most 10 distinct non-empty strings of at most 200 characters (WorkflowTemplate)."""
    if value is None:
        return []
    if not isinstance(value, list) or len(value) > MAX_TAGS:
        journal.note_reason(f"{member} holds {len(value)} tags, and a workflow carries at most {MAX_TAGS}"
                            if isinstance(value, list) else f"{member} is {journal.kind_of(value)}, not a list of tags")
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


_SPAN = re.compile(r"(?:(\d+)\.)?(\d{1,2}):(\d{2}):(\d{2})(?:\.(\d{1,7}))?", re.ASCII)


def _span_seconds(value: object, member: str) -> float | None:
    """A .NET date-span (``[d.]hh:mm:ss[.fffffff]``, the client's ``timeout``) in seconds; None when absent."""
    if value is None:
        return None
    match = _SPAN.fullmatch(value) if isinstance(value, str) else None
    if match is None:
        raise bad_request("bad_step", f"{member} must be a date-span such as \"00:00:30\" (or null)")
    days, hours, minutes, seconds, fraction = match.groups()
    total = int(days or 0) * 86400 + int(hours) * 3600 + int(minutes) * 60 + int(seconds)
    total += float(f"0.{fraction}") if fraction else 0.0
    if total <= 0:
        raise bad_request("bad_step", f"{member} must be longer than zero")
    return total


def _step_controls(step: dict[str, Any], index: int) -> dict[str, Any]:
    """WorkflowStepTemplate's priority, timeout and retries, checked."""
    priority = step.get("priority") or "normal"
    if priority not in PRIORITIES:
        raise bad_request("bad_step", f"steps[{index}].priority must be one of {', '.join(PRIORITIES)}")
    timeout = _span_seconds(step.get("timeout"), f"steps[{index}].timeout")
    retries = _int(step.get("retries"), f"steps[{index}].retries", 0, MAX_RETRIES, 0)
    return {"priority": priority, "timeout": step.get("timeout"), "timeoutSeconds": timeout, "retries": retries}


def _plan(payload: object, fetch: Any) -> list[dict[str, Any]]:
    """Each step checked: {type, name, input, metadata, outputs: [(w, h)], image?: PIL image, controls}."""
    if not isinstance(payload, dict):
        raise bad_request("bad_body", "the workflow must be a JSON object with steps")
    steps = payload.get("steps")
    if not isinstance(steps, list) or not 1 <= len(steps) <= MAX_STEPS:
        journal.note_reason(f"a workflow holds 1 to {MAX_STEPS} steps; this one sends {len(steps)}"
                            if isinstance(steps, list) else
                            f"a workflow's steps are a list of 1 to {MAX_STEPS} step templates; steps is"
                            f" {'missing' if 'steps' not in payload else journal.kind_of(steps)}")
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
        controls = _step_controls(step, index)
        if kind == "imageUpscaler":
            source, repeats = upscaler.check_payload(data)
            image = imaging.decode_image(source, fetch)
            plan.append({"type": kind, "name": name, "input": data, "image": image, "repeats": repeats,
                         "metadata": step_metadata, "controls": controls,
                         "outputs": [imaging.check_output(image.width, image.height, repeats)]})
        elif kind == "textToImage":
            prompt = data.get("prompt")
            if not isinstance(prompt, str) or not prompt.strip() or len(prompt) > MAX_PROMPT:
                raise bad_request("bad_step", f"steps[{index}].input.prompt must be a non-empty string"
                                              f" of at most {MAX_PROMPT} characters")
            at = f"steps[{index}].input"
            width = _int(data.get("width"), "width", 64, 2048, 512, f"{at}.width")
            height = _int(data.get("height"), "height", 64, 2048, 512, f"{at}.height")
            seed = _int(data.get("seed"), "seed", 0, 2**32 - 1, 0, f"{at}.seed")
            quantity = _int(data.get("quantity"), "quantity", 1, MAX_QUANTITY, 1, f"{at}.quantity")
            plan.append({"type": kind, "name": name, "input": {**data, "seed": seed}, "prompt": prompt,
                         "seed": seed, "metadata": step_metadata, "controls": controls,
                         "outputs": [(width, height)] * quantity})
        else:
            raise bad_request("unsupported_step", f"steps[{index}].$type {kind!r} is not supported here"
                                                  " (imageUpscaler, textToImage)")
    return plan


def _base_price(plan: list[dict[str, Any]]) -> int:
    return sum(imaging.price(w, h) for step in plan for (w, h) in step["outputs"])


def _tips(value: object) -> dict[str, float]:
    """WorkflowTips: the rates of tipping to civitai and to creators (0 to 1 each)."""
    if value is None:
        return {"civitai": 0, "creators": 0}
    if not isinstance(value, dict) or set(value) - {"civitai", "creators"}:
        raise bad_request("bad_tips", "tips must be {civitai, creators}: tipping rates from 0 to 1")
    out: dict[str, float] = {}
    for name in ("civitai", "creators"):
        rate = value.get(name, 0)
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 <= rate <= MAX_TIP_RATE:
            raise bad_request("bad_tips", f"tips.{name} must be a rate from 0 to {MAX_TIP_RATE:g}")
        out[name] = rate
    return out


def workflow_cost(base: int, tips: dict[str, float]) -> dict[str, Any]:
    """WorkflowCost: base, the tips (each rate of the base, rounded up to whole Buzz) and total = base + tips."""
    amounts = {name: -(-int(round(base * rate * 1_000_000)) // 1_000_000) for name, rate in tips.items()}
    return {"base": base, "factors": None, "fixed": None, "tips": amounts, "total": base + sum(amounts.values())}


def _currencies(caller: WorkflowCaller, payload: dict[str, Any], mature: bool) -> tuple[str, ...]:
    """The pools that pay, in the order the orchestrator drains them.

    ``currencies`` (WorkflowTemplate: "limit the currencies that can be used to pay") is taken in its
    own order; green, the safe-for-work currency, never pays a mature workflow. Absent (or empty), the
    emulator's automatic order under the maturity clamp applies, with ``accountType`` as a preference.
    """
    wanted = payload.get("currencies")
    if caller.app_id is not None and (wanted is None or wanted == []):
        return block_currencies(caller, payload.get("accountType"))
    if wanted is None or wanted == []:
        return buzz.pool_order(payload.get("accountType"), mature=mature)
    if not isinstance(wanted, list) or not all(isinstance(c, str) and c in CURRENCIES for c in wanted):
        raise bad_request("bad_currencies", f"currencies must be a list of {', '.join(CURRENCIES)}")
    usable = tuple(c for c in dict.fromkeys(wanted) if c in buzz.POOLS and not (mature and c == "green"))
    if not usable:
        raise bad_request("bad_currencies", "none of the currencies can pay this workflow (green pays only"
                                            " safe-for-work workflows; fakeRed is not emulated)")
    return usable


def block_currencies(caller: WorkflowCaller, account_type: object) -> tuple[str, ...]:
    """What the platform offers the orchestrator for a block's workflow (blocks.router
    ``resolveBlockCurrenciesForAccount``, buzz-helpers ``orderBlockCurrencyTypes``): blue first, then the
    token's domain currency (green under a safe-for-work ceiling, yellow under a mature one); a viewer-picked
    ``accountType`` moves to the front, and one outside that pair is refused (400), never widened to."""
    allowed = ("blue", "yellow") if caller.mature else ("blue", "green")
    if account_type is None:
        return allowed
    if account_type not in allowed:
        raise bad_request("bad_account_type", f"buzz account '{account_type}' is not spendable for this app's"
                                              " content rating")
    return (account_type, *(p for p in allowed if p != account_type))


def _callbacks(value: object) -> list[dict[str, Any]]:
    """WorkflowCallback list: {url (http or https), type: [event types], detailed?}."""
    if value is None:
        return []
    if not isinstance(value, list) or len(value) > MAX_CALLBACKS:
        raise bad_request("bad_callbacks", f"callbacks must be a list of at most {MAX_CALLBACKS} callbacks")
    out = []
    for index, callback in enumerate(value):
        if not isinstance(callback, dict) or set(callback) - {"url", "type", "detailed"}:
            raise bad_request("bad_callbacks", f"callbacks[{index}] must be {{url, type, detailed?}}")
        url, types, detailed = callback.get("url"), callback.get("type"), callback.get("detailed")
        parts = urlsplit(url) if isinstance(url, str) else None
        if parts is None or parts.scheme not in ("http", "https") or not parts.hostname or len(url) > 2048:
            raise bad_request("bad_callbacks", f"callbacks[{index}].url must be an absolute http(s) URL")
        if not isinstance(types, list) or not types or not all(t in CALLBACK_TYPES for t in types):
            raise bad_request("bad_callbacks", f"callbacks[{index}].type must list event types such as"
                                               " workflow:*, step:succeeded, job:failed")
        if detailed is not None and not isinstance(detailed, bool):
            raise bad_request("bad_callbacks", f"callbacks[{index}].detailed must be a boolean")
        out.append({"url": url, "type": list(dict.fromkeys(types)), "detailed": detailed})
    return out


def _external_id(value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not EXTERNAL_ID.fullmatch(value):
        raise bad_request("bad_external_id", f"externalId must be 1-{MAX_EXTERNAL_ID} characters of A-Z a-z 0-9 _ -")
    return value


def _outputs_described(plan: list[dict[str, Any]]) -> str:
    """The output images a plan prices, grouped by size: ``4 images of 2048x2048 at 17 Buzz``."""
    sizes: dict[tuple[int, int], int] = {}
    for step in plan:
        for size in step["outputs"]:
            sizes[size] = sizes.get(size, 0) + 1
    return journal.described([f"{n} image{'s' if n != 1 else ''} of {w}x{h} at {imaging.price(w, h)} Buzz"
                              for (w, h), n in sizes.items()])


def _budget_reason(caller: WorkflowCaller, cost: dict[str, Any], plan: list[dict[str, Any]]) -> str:
    budget, claim = caller.budget(), caller.buzz_budget
    if claim is None:
        source = "the default: the block token carries no buzzBudget claim"
    elif budget != claim:
        source = f"the block token's buzzBudget claim {claim}, held to 0-{BUDGET_CAP}"
    else:
        source = (f"the block token's buzzBudget claim: the install's budget per generation, {DEFAULT_BUDGET} when"
                  " the install sets none")
    tips = sum(cost["tips"].values())
    priced = f"{cost['base']} for {_outputs_described(plan)}" + (f", plus {tips} in tips" if tips else "")
    return (f"budget per generation: this workflow costs {cost['total']} Buzz ({priced}) and the budget is"
            f" {budget} ({source}); over by {cost['total'] - budget}")


def _authorise(caller: WorkflowCaller, total: int, cost: dict[str, Any] | None = None,
               plan: list[dict[str, Any]] | None = None) -> None:
    if BUDGET_SCOPE not in caller.scopes:
        journal.note_reason(f"a workflow needs the block scope {BUDGET_SCOPE}; the block token holds"
                            f" {journal.described(sorted(caller.scopes))}")
        raise ServiceError(403, "missing_scope", f"workflows need the {BUDGET_SCOPE} scope")
    if caller.budgeted and total > caller.budget():
        if cost is not None and plan is not None:
            journal.note_reason(_budget_reason(caller, cost, plan))
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


def provenance_tags(caller: WorkflowCaller, base_model: str | None) -> list[str]:
    """The tags the platform stamps on a block's workflow (blocks.router ``buildWorkflowTags``, plus the
    service's leading ``civitai``): generation, image, txt2img, the base model and the app-block tags."""
    if caller.app_id is None:
        return []
    tags = ["civitai", "generation", "image", "txt2img", *([base_model] if base_model else []), "app-block",
            f"app-block:{caller.app_id}"]
    if caller.block_id:
        tags.append(f"app-block:block:{caller.block_id}")
    if caller.instance_id:
        tags.append(f"app-block:instance:{caller.instance_id}")
    return tags


def _schedule(plan: list[dict[str, Any]]) -> str:
    """Time every step on the emulator clock (seconds after submission) and return the workflow's outcome.

    A step runs for its duration; with a ``timeout`` shorter than that, each attempt expires at the
    timeout and is run again ``retries`` times, and the step (so the workflow) then expires; the steps
    after it never start. Each attempt is a job.
    """
    offset, outcome = QUEUE_SECONDS, "succeeded"
    for step in plan:
        if outcome != "succeeded":
            step.update(start=None, end=None, outcome="skipped", jobs=[])
            continue
        duration = STEP_SECONDS[step["type"]] * (len(step["outputs"]) if step["type"] == "textToImage" else 1)
        timeout, retries = step["controls"]["timeoutSeconds"], step["controls"]["retries"]
        if timeout is None or duration <= timeout:
            attempts = [(offset, offset + duration, "succeeded")]
        else:
            attempts = [(offset + i * timeout, offset + (i + 1) * timeout, "expired") for i in range(retries + 1)]
        step.update(start=offset, end=attempts[-1][1], outcome=attempts[-1][2],
                    jobs=[{"id": str(uuid.uuid4()), "start": a, "end": b, "status": st} for a, b, st in attempts])
        outcome = step["outcome"]
        offset = step["end"]
    return outcome


def _events(plan: list[dict[str, Any]], outcome: str, callbacks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The callback events a workflow raises, with the seconds after submission each is due."""
    timeline: list[tuple[float, dict[str, Any]]] = [(0.0, {"scope": "workflow", "status": "unassigned"}),
                                                    (QUEUE_SECONDS, {"scope": "workflow", "status": "processing"})]
    end = QUEUE_SECONDS
    for step in plan:
        if step["outcome"] == "skipped":
            continue
        timeline.append((step["start"], {"scope": "step", "status": "processing", "step": step["name"]}))
        for job in step["jobs"]:
            timeline.append((job["start"], {"scope": "job", "status": "processing", "step": step["name"],
                                            "job": job["id"]}))
            timeline.append((job["end"], {"scope": "job", "status": job["status"], "step": step["name"],
                                          "job": job["id"]}))
        timeline.append((step["end"], {"scope": "step", "status": step["outcome"], "step": step["name"]}))
        end = step["end"]
    timeline.append((end, {"scope": "workflow", "status": outcome}))
    return _matching(timeline, callbacks)


def _matching(timeline: list[tuple[float, dict[str, Any]]], callbacks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for callback in callbacks:
        for due, spec in timeline:
            kind = f"{spec['scope']}:{spec['status']}"
            if kind in callback["type"] or f"{spec['scope']}:*" in callback["type"]:
                out.append({"url": callback["url"], "type": kind, "due": due,
                            "spec": {**spec, "detailed": bool(callback.get("detailed"))}})
    return out


def _quote_debits(held: dict[str, int], order: tuple[str, ...], total: int) -> tuple[dict[str, int], int]:
    debits, left = {}, total
    for pool in order:
        take = min(left, held.get(pool, 0))
        if take:
            debits[pool] = take
            left -= take
    return debits, left


def _prepare(store: Store, urls: Urls, caller: WorkflowCaller, payload: object) -> dict[str, Any]:
    """Everything a submit or a whatif needs before any money moves: the plan, price, pools, members."""
    plan = _plan(payload, lambda url: media.resolve_local(urls, store, url))
    assert isinstance(payload, dict)
    mature = _mature(caller, payload)
    tips = _tips(payload.get("tips"))
    base = _base_price(plan)
    cost = workflow_cost(base, tips)
    order = _currencies(caller, payload, mature)
    callbacks = _callbacks(payload.get("callbacks"))
    external_id = _external_id(payload.get("externalId"))
    outcome = _schedule(plan)
    tags = check_tags(payload.get("tags"))
    if caller.app_id is not None:  # the platform stamps its provenance tags after the block's own
        tags = check_tags(list(dict.fromkeys([*tags, *provenance_tags(caller, payload.get("baseModel"))]))[-MAX_TAGS:])
    _authorise(caller, cost["total"], cost, plan)
    return {"plan": plan, "mature": mature, "tips": tips, "cost": cost, "order": order, "callbacks": callbacks,
            "externalId": external_id, "outcome": outcome, "tags": tags,
            "metadata": check_metadata(payload.get("metadata")), "arguments": check_metadata(
                payload.get("arguments"), "arguments")}


def _document(prep: dict[str, Any], debits: dict[str, int], outputs: list[Any]) -> dict[str, Any]:
    steps = []
    for step, output in zip(prep["plan"], outputs):
        steps.append({"$type": step["type"], "name": step["name"], "input": step["input"], "output": output,
                      "metadata": step["metadata"], "start": step["start"], "end": step["end"],
                      "outcome": step["outcome"], "jobs": step["jobs"], "priority": step["controls"]["priority"],
                      "timeout": step["controls"]["timeout"], "retries": step["controls"]["retries"],
                      "cost": sum(imaging.price(w, h) for (w, h) in step["outputs"])})
    return {"steps": steps, "debits": debits, "tags": prep["tags"], "metadata": prep["metadata"],
            "arguments": prep["arguments"], "allowMatureContent": prep["mature"], "currencies": list(prep["order"]),
            "callbacks": prep["callbacks"], "tips": prep["tips"], "costDetail": prep["cost"],
            "outcome": prep["outcome"], "externalId": prep["externalId"], "refunded": False}


def estimate(store: Store, clock: Clock, urls: Urls, caller: WorkflowCaller, payload: object) -> dict[str, Any]:
    """SubmitWorkflow with ``whatif``: the Workflow that would be submitted (no id; nothing runs, nothing is
    charged); ``transactions`` the debits it would take now, with ``insufficientBuzz``."""
    prep = _prepare(store, urls, caller, payload)
    held = buzz.balance(store, clock, caller.user_id)
    debits, left = _quote_debits(held, prep["order"], prep["cost"]["total"])
    document = _document(prep, debits, [None] * len(prep["plan"]))
    row = {"id": None, "created_at": clock.iso(), "canceled_at": None, "cost": prep["cost"]["total"],
           "document": orjson.dumps(document).decode()}
    workflow = render(row, clock)
    del workflow["id"]  # Workflow.id is optional: a whatif has none
    workflow["transactions"]["insufficientBuzz"] = left > 0
    return workflow


# --- running ---------------------------------------------------------------------------------

def _blob(urls: Urls, row: orch_store.BlobRow) -> dict[str, Any]:
    return {"type": "image", "id": row.id, "available": True, "url": media.blob_url(urls, row),
            "width": row.width, "height": row.height, "nsfwLevel": "pg"}


def new_workflow_id(clock: Clock, user_id: int) -> str:
    """``<owning userId>-<timestamp>``, as the orchestrator mints ids (the platform reads the owner off it);
    the timestamp's digits are the emulator clock's UTC time to the millisecond, then 6 random digits."""
    return f"{user_id}-{clock.now().strftime('%Y%m%d%H%M%S%f')[:-3]}{secrets.randbelow(10**6):06d}"


def _existing(db: Any, caller: WorkflowCaller, external_id: str | None) -> dict[str, Any] | None:
    return None if external_id is None else orch_store.find_by_external_id(db, caller.user_id, external_id)


def submit(store: Store, clock: Clock, urls: Urls, caller: WorkflowCaller, payload: object) -> dict[str, Any]:
    """Submit a workflow: its charge, blobs, row and callback events commit in one transaction.

    The outputs are drawn first (files only); a refused charge removes them. The same ``externalId``
    from the same owner answers the first workflow and charges nothing.
    """
    external_id = _external_id(payload.get("externalId")) if isinstance(payload, dict) else None
    if external_id is not None:
        with store.read() as db:
            found = _existing(db, caller, external_id)
        if found is not None:
            return render(found, clock)
    prep = _prepare(store, urls, caller, payload)
    total = prep["cost"]["total"]
    held = buzz.balance(store, clock, caller.user_id)
    if _quote_debits(held, prep["order"], total)[1] > 0:  # refused before any drawing (charge re-checks)
        with store.write() as db:
            buzz.charge(db, clock.iso(), caller.user_id, total, prep["order"], kind="workflow", reference=None,
                        description="workflow")
    now = clock.iso()
    workflow_id = new_workflow_id(clock, caller.user_id)
    blobs: list[orch_store.BlobRow] = []
    outputs: list[Any] = []
    step_blobs: list[list[orch_store.BlobRow]] = []
    try:
        for step in prep["plan"]:
            if step["outcome"] != "succeeded":
                outputs.append(None)
                step_blobs.append([])
            elif step["type"] == "imageUpscaler":
                row = media.write_blob_file(store, now, caller.user_id, imaging.upscale(step["image"], step["repeats"]))
                blobs.append(row)
                step_blobs.append([row])
                outputs.append({"blob": _blob(urls, row)})
            else:
                rows = [media.write_blob_file(store, now, caller.user_id, imaging.procedural(
                    f"{step['prompt']}\x00{step['seed']}\x00{i}", w, h)) for i, (w, h) in enumerate(step["outputs"])]
                blobs.extend(rows)
                step_blobs.append(rows)
                outputs.append({"images": [_blob(urls, r) for r in rows], "note": PLACEHOLDER_NOTE})
        with store.write() as db:
            found = _existing(db, caller, external_id)  # a concurrent twin may have committed meanwhile
            if found is not None:
                media.remove_blob_files(store, blobs)
                return render(found, clock)
            if faults.take(db, "workflow-fails", caller.user_id):  # committed with the workflow it fails
                dropped = _fail_first_step(prep)
                for index in dropped:
                    outputs[index] = None
                unused = [b for index in dropped for b in step_blobs[index]]
                blobs = [b for b in blobs if b not in unused]
                media.remove_blob_files(store, unused)
            debits = buzz.charge(db, now, caller.user_id, total, prep["order"], kind="workflow",
                                 reference=workflow_id, description=f"workflow {workflow_id} ({len(prep['plan'])}"
                                                                    " step(s))")
            for blob in blobs:
                orch_store.insert_blob(db, blob)
            document = _document(prep, debits, outputs)
            orch_store.insert_workflow(db, id=workflow_id, user_id=caller.user_id, app_id=caller.app_id,
                                       block_id=caller.block_id, created_at=now, cost=total,
                                       document=orjson.dumps(document).decode(), external_id=external_id)
            created = parse_timestamp(now)
            for event in _events(prep["plan"], prep["outcome"], prep["callbacks"]):
                orch_store.add_event(db, workflow_id, event["url"], event["type"], orjson.dumps(event["spec"]).decode(),
                                     format_timestamp(created + timedelta(seconds=event["due"])))
            row = orch_store.find_workflow(db, workflow_id)
    except BaseException:
        media.remove_blob_files(store, blobs)
        raise
    assert row is not None
    return render(row, clock)


FAIL_AFTER_SECONDS = 1.0  # how long a failing step runs before it fails (faults.py: workflow-fails)


def _fail_first_step(prep: dict[str, Any]) -> list[int]:
    """Make the workflow fail in its first step that runs (``faults.py``); the steps that will show no
    output now (their indexes). The step's one job fails ``FAIL_AFTER_SECONDS`` after it starts; the
    steps after it never start."""
    plan = prep["plan"]
    dropped: list[int] = []
    failing = True
    for index, step in enumerate(plan):
        if step["start"] is None:
            continue
        if failing:
            end = step["start"] + FAIL_AFTER_SECONDS
            job = step["jobs"][0]
            step.update(end=end, outcome="failed", jobs=[{**job, "end": end, "status": "failed"}])
            failing = False
        else:
            step.update(start=None, end=None, outcome="skipped", jobs=[])
        dropped.append(index)
    prep["outcome"] = "failed"
    return dropped


def _status_at(step: dict[str, Any], elapsed: float, canceled: bool, finished: bool) -> str:
    if step["start"] is None:  # never started: an earlier step ended the workflow
        return "canceled" if (canceled or finished) else "unassigned"
    if elapsed >= step["end"]:
        return step.get("outcome", "succeeded")
    if canceled:
        return "canceled"
    return "processing" if elapsed >= step["start"] else "unassigned"


def render(row: dict[str, Any], clock: Clock, at: datetime | None = None) -> dict[str, Any]:
    """The Workflow as it stands now on the emulator clock (or at the moment ``at``)."""
    document = orjson.loads(row["document"])
    created = parse_timestamp(row["created_at"])
    elapsed = ((at or clock.now()) - created).total_seconds()
    canceled_at = parse_timestamp(row["canceled_at"]) if row["canceled_at"] else None
    if canceled_at is not None:
        elapsed = min(elapsed, (canceled_at - created).total_seconds())

    def stamp(seconds: float) -> str:
        return format_timestamp(created + timedelta(seconds=seconds))

    last_end = max((s["end"] for s in document["steps"] if s["end"] is not None), default=QUEUE_SECONDS)
    outcome = document.get("outcome", "succeeded")
    finished = elapsed >= last_end
    steps = []
    for step in document["steps"]:
        status = _status_at(step, elapsed, canceled_at is not None, finished)
        out: dict[str, Any] = {"$type": step["$type"], "name": step["name"], "priority": step.get("priority", "normal"),
                               "status": status, "metadata": step.get("metadata") or {}, "input": step["input"],
                               "startedAt": stamp(step["start"]) if step["start"] is not None
                               and elapsed >= step["start"] else None,
                               "completedAt": stamp(step["end"]) if status in ("succeeded", "expired", "failed")
                               else None}
        if step.get("timeout") is not None:
            out["timeout"] = step["timeout"]
        if step.get("retries"):
            out["retries"] = step["retries"]
        jobs = []
        for job in step.get("jobs") or []:
            if elapsed < job["start"]:
                continue
            done = elapsed >= job["end"]
            jobs.append({"id": job["id"], "status": job["status"] if done else ("canceled" if canceled_at else
                                                                                "processing"),
                         "startedAt": stamp(job["start"]), "completedAt": stamp(job["end"]) if done else None,
                         "cost": step["cost"] if job["status"] == "succeeded" else 0})
        if jobs:
            out["jobs"] = jobs
        if status == "processing":
            out["estimatedProgressRate"] = round((elapsed - step["start"]) / (step["end"] - step["start"]), 3)
        if status == "succeeded" and step["output"] is not None:
            out["output"] = step["output"]
        steps.append(out)
    statuses = [s["status"] for s in steps]
    if finished and canceled_at is None:
        status = outcome
    elif canceled_at is not None:
        status = "canceled"
    elif any(s != "unassigned" for s in statuses) or elapsed >= QUEUE_SECONDS:
        status = "processing"
    else:
        status = "unassigned"
    debits = document["debits"]
    transactions = [{"type": "debit", "amount": a, "accountType": p} for p, a in debits.items()]
    if document["refunded"]:
        transactions += [{"type": "credit", "amount": a, "accountType": p} for p, a in debits.items()]
    total = row["cost"]
    cost = document.get("costDetail") or workflow_cost(total, {"civitai": 0, "creators": 0})
    out_workflow = {
        "id": row["id"], "createdAt": row["created_at"], "status": status,
        "startedAt": stamp(QUEUE_SECONDS) if elapsed >= QUEUE_SECONDS else None,
        "completedAt": stamp(last_end) if status in ("succeeded", "expired", "failed") else (
            row["canceled_at"] if status == "canceled" else None),
        "transactions": {"list": transactions}, "spentAccountType": buzz.largest_debit(debits),
        "metadata": document["metadata"], "tags": document["tags"], "arguments": document.get("arguments") or {},
        "callbacks": document.get("callbacks") or [],
        "tips": document.get("tips") or {"civitai": 0, "creators": 0}, "cost": cost, "steps": steps,
        "allowMatureContent": document["allowMatureContent"], "currencies": document["currencies"],
        "upgradeMode": "manual", "forceRefunded": document["refunded"],
    }
    if document.get("externalId") is not None:
        out_workflow["externalId"] = document["externalId"]
    return out_workflow


# Outcomes whose charge comes back once the moment is due: a step expired, or failed (faults.py).
REFUNDED_OUTCOMES = ("expired", "failed")


def settle(db: Any, clock: Clock, row: dict[str, Any]) -> dict[str, Any]:
    """Refund a workflow whose step expired (or failed) once that moment has passed on the clock (inside ``db``'s
    write transaction); the ledger's refund rows name the workflow. Returns the (fresh) row."""
    document = orjson.loads(row["document"])
    outcome = document.get("outcome")
    if outcome not in REFUNDED_OUTCOMES or document["refunded"] or row["canceled_at"]:
        return row
    if render(row, clock)["status"] != outcome:
        return row
    buzz.refund(db, clock.iso(), row["user_id"], document["debits"], reference=row["id"],
                description=f"workflow {row['id']} {outcome}")
    document["refunded"] = True
    orch_store.update_workflow_document(db, row["id"], orjson.dumps(document).decode(), status=outcome)
    found = orch_store.find_workflow(db, row["id"])
    assert found is not None
    return found


def settle_due(store: Store, clock: Clock, limit: int = 50) -> int:
    """Settle every expired, unrefunded workflow (the background worker's sweep); how many were refunded."""
    with store.read() as db:
        candidates = orch_store.expiring_workflows(db, limit)
    done = 0
    for workflow_id in candidates:
        with store.write() as db:
            row = orch_store.find_workflow(db, workflow_id)
            if row is not None and settle(db, clock, row) is not row:
                done += 1
    return done


def owner_of(workflow_id: str) -> int | None:
    """The owning user id an orchestrator workflow id names (``<userId>-<timestamp>``), or None."""
    prefix = workflow_id.split("-", 1)[0]
    return int(prefix) if prefix.isascii() and prefix.isdigit() else None


def belongs(row: dict[str, Any], caller: WorkflowCaller) -> bool:
    """Whether a stored workflow is the caller's: its viewer's, and, for a block, tagged for its app
    (the platform's two gates: the id names the viewer, the record carries ``app-block:<appId>``)."""
    if row["user_id"] != caller.user_id:
        return False
    return caller.app_id is None or f"app-block:{caller.app_id}" in orjson.loads(row["document"])["tags"]


def owned(db: Any, caller: WorkflowCaller, workflow_id: object) -> dict[str, Any]:
    """The caller's workflow. An API key's caller gets 404 for anything not its own. A block's caller
    gets the platform's answers: 403 "workflow does not belong to this viewer" when the id does not
    name the viewer (checked before any lookup), 404 when there is no such workflow, 403 "workflow is
    not tagged for this app" for the viewer's workflow of another app."""
    if caller.app_id is not None:
        if not isinstance(workflow_id, str) or owner_of(workflow_id) != caller.user_id:
            journal.note_reason(_not_viewers(workflow_id, caller.user_id))
            raise ServiceError(403, "not_viewers", "workflow does not belong to this viewer")
        row = orch_store.find_workflow(db, workflow_id)
        if row is None:
            journal.note_reason(_missing_workflow(workflow_id))
            raise not_found("workflow not found")
        if not belongs(row, caller):
            apps = sorted(t for t in orjson.loads(row["document"])["tags"]
                          if t.startswith("app-block:") and t.count(":") == 1)
            journal.note_reason(f"workflow {workflow_id} is user {caller.user_id}'s, but it is tagged for"
                                f" {journal.described(apps) if apps else 'no app (it was not submitted by a block)'},"
                                f" not app-block:{caller.app_id}; a block reaches its own app's workflows only")
            raise ServiceError(403, "not_apps", "workflow is not tagged for this app")
        return row
    row = orch_store.find_workflow(db, workflow_id) if isinstance(workflow_id, str) else None
    if row is None or not belongs(row, caller):
        journal.note_reason(_missing_workflow(workflow_id) if row is None else
                            f"workflow {workflow_id} is user {row['user_id']}'s, and the API key's owner is user"
                            f" {caller.user_id}; a key reaches its owner's workflows only")
        raise not_found("no such workflow for this viewer and app")
    return row


def _not_viewers(workflow_id: object, viewer: int) -> str:
    if not isinstance(workflow_id, str):
        return f"the workflow id is {journal.kind_of(workflow_id)}, not a string"
    owner = owner_of(workflow_id)
    if owner is None:
        return (f"{workflow_id!r} is not a workflow id (ids are <userId>-<timestamp>, the owner first); the block"
                f" token's viewer is user {viewer}")
    return (f"workflow {workflow_id} names user {owner} as its owner (the id's prefix), and the block token's viewer"
            f" is user {viewer}")


def _missing_workflow(workflow_id: object) -> str:
    return (f"this run holds no workflow {workflow_id!r}: it was never submitted here, or it was deleted"
            if isinstance(workflow_id, str) else f"the workflow id is {journal.kind_of(workflow_id)}, not a string")


def poll(store: Store, clock: Clock, urls: Urls, caller: WorkflowCaller, workflow_id: str) -> dict[str, Any]:
    with store.write() as db:  # a write: an expired workflow is refunded the first time it is seen
        return render(settle(db, clock, owned(db, caller, workflow_id)), clock)


def cancel(store: Store, clock: Clock, urls: Urls, caller: WorkflowCaller, workflow_id: str) -> dict[str, Any]:
    """Cancel a workflow that has not finished and refund every debit; a finished one is 409."""
    with store.write() as db:
        row = cancel_row(db, clock, owned(db, caller, workflow_id), "workflow canceled")
    return render(row, clock)


FINISHED = ("succeeded", "failed", "expired", "canceled")


def cancel_row(db: Any, clock: Clock, row: dict[str, Any], description: str) -> dict[str, Any]:
    """Cancel an owned, unfinished workflow inside the caller's transaction; refund every debit.

    The workflow's callback events not yet due are dropped, and its canceled events (the workflow's,
    and the step's that was running or waiting) are due now.
    """
    now = clock.iso()
    current = render(row, clock)
    if current["status"] in FINISHED:
        journal.note_reason(f"workflow {row['id']} finished ({current['status']}) at {current['completedAt']}; the"
                            f" emulator's clock reads {now}, and only an unassigned or processing workflow"
                            " can be canceled")
        raise ServiceError(409, "already_finished", f"the workflow is already {current['status']}")
    document = orjson.loads(row["document"])
    buzz.refund(db, now, row["user_id"], document["debits"], reference=row["id"], description=description)
    document["refunded"] = True
    orch_store.cancel_workflow(db, row["id"], now, orjson.dumps(document).decode())
    orch_store.drop_events(db, row["id"], after=now)
    timeline = [(0.0, {"scope": "step", "status": "canceled", "step": step["name"]})
                for step in current["steps"] if step["status"] not in FINISHED]
    timeline.append((0.0, {"scope": "workflow", "status": "canceled"}))
    for event in _matching(timeline, document.get("callbacks") or []):
        orch_store.add_event(db, row["id"], event["url"], event["type"], orjson.dumps(event["spec"]).decode(), now)
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


BLOCK_PROMPT_MAX = 1500  # civitai/civitai src/server/schema/blocks/workflow.schema.ts PROMPT_MAX, NEG_PROMPT_MAX
BLOCK_ADDITIONAL_RESOURCES_MAX = 5
BLOCK_ACCOUNT_TYPES = ("blue", "green", "yellow")


def _zod_number(value: object, path: str, *, low: float | None = None, high: float | None = None,
                integer: bool = True, optional: bool = True, coerce: bool = True, positive: bool = False) -> None:
    """One number member as the platform's zod (v4) schema checks it; its message on failure."""
    if value is None:
        if optional:
            return
        raise bad_request("bad_body", f"{path}: Invalid input: expected number, received undefined")
    if coerce and isinstance(value, str):
        try:
            value = float(value) if value.strip() else 0.0
        except ValueError:
            value = None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise bad_request("bad_body", f"{path}: Invalid input: expected number, received {_js_kind(value)}")
    if integer and value != int(value):
        raise bad_request("bad_body", f"{path}: Invalid input: expected int, received number")
    if positive and value <= 0:
        raise bad_request("bad_body", f"{path}: Too small: expected number to be >0")
    if low is not None and value < low:
        raise bad_request("bad_body", f"{path}: Too small: expected number to be >={low:g}")
    if high is not None and value > high:
        raise bad_request("bad_body", f"{path}: Too big: expected number to be <={high:g}")


def _js_kind(value: object) -> str:
    if value is None:
        return "null"
    return {bool: "boolean", str: "string", list: "array", int: "number", float: "number"}.get(type(value), "object")


def _zod_string(value: object, path: str, *, low: int = 0, high: int) -> None:
    if value is None:
        return
    if not isinstance(value, str):
        raise bad_request("bad_body", f"{path}: Invalid input: expected string, received {_js_kind(value)}")
    if len(value) > high:
        raise bad_request("bad_body", f"{path}: Too big: expected string to have <={high} characters")
    if len(value) < low:
        raise bad_request("bad_body", f"{path}: Too small: expected string to have >={low} characters")


def check_block_text_to_image(body: dict[str, Any]) -> dict[str, Any]:
    """A block's textToImage body, checked as the platform's ``blockTextToImageBodySchema`` checks it
    (civitai/civitai ``src/server/schema/blocks/workflow.schema.ts``): modelId and modelVersionId are
    required positive integers; params.prompt and negativePrompt at most 1500 characters; width and
    height 64-2048; quantity 1-4; steps 1-50; cfgScale 1-30; clipSkip 0-12; sampler 1-64 characters;
    additionalResources at most 5; accountType blue, green or yellow. Returns the params."""
    _zod_number(body.get("modelId"), "modelId", positive=True, optional=False, coerce=False)
    _zod_number(body.get("modelVersionId"), "modelVersionId", positive=True, optional=False, coerce=False)
    params = body.get("params")
    if not isinstance(params, dict):
        raise bad_request("bad_body", f"params: Invalid input: expected object, received {_js_kind(params)}")
    _zod_string(params.get("prompt"), "params.prompt", high=BLOCK_PROMPT_MAX)
    _zod_string(params.get("negativePrompt"), "params.negativePrompt", high=BLOCK_PROMPT_MAX)
    _zod_string(params.get("sampler"), "params.sampler", low=1, high=64)
    _zod_number(params.get("cfgScale"), "params.cfgScale", low=1, high=30, integer=False)
    _zod_number(params.get("steps"), "params.steps", low=1, high=50)
    _zod_number(params.get("seed"), "params.seed")
    for side in ("width", "height"):
        _zod_number(params.get(side), f"params.{side}", low=64, high=2048)
    _zod_number(params.get("clipSkip"), "params.clipSkip", low=0, high=12)
    _zod_number(params.get("quantity"), "params.quantity", low=1, high=MAX_QUANTITY)
    extra = body.get("additionalResources")
    if extra is not None and (not isinstance(extra, list) or len(extra) > BLOCK_ADDITIONAL_RESOURCES_MAX):
        raise bad_request("bad_body", f"additionalResources: Too big: expected array to have"
                                      f" <={BLOCK_ADDITIONAL_RESOURCES_MAX} items")
    account = body.get("accountType")
    if account is not None and account not in BLOCK_ACCOUNT_TYPES:
        raise bad_request("bad_body", "accountType: Invalid option: expected one of \"blue\"|\"green\"|\"yellow\"")
    return params


def keyed(template: object, app_block_id: object, key: object) -> object:
    """The WorkflowTemplate of a block's submission carrying ``idempotencyKey``: its ``externalId`` names the key.

    The platform threads a block's key into the orchestrator's ``externalId``, namespaced by the
    app block (civitai/civitai ``blocks.router.ts`` submitWorkflow, ``composeBlockExternalId``), so
    a retry with the same key from the same viewer and app answers the first workflow and charges
    nothing (``submit``'s dedupe on owner + externalId). The platform composes ``blk`` + the app
    block id's length + the id + the key; the emulator's app block id (``<appId>/<blockId>``) holds
    a ``/`` the orchestrator's charset refuses, so ours is ``blk`` + 16 hex digits of its sha256 +
    the key (at most 83 characters of ``[A-Za-z0-9_-]``). A key that is not a string of
    ``BLOCK_IDEMPOTENCY_KEY`` is 400; without a key the template is unchanged.
    """
    if key is None or not isinstance(template, dict):
        return template
    if not isinstance(key, str) or not BLOCK_IDEMPOTENCY_KEY.fullmatch(key):
        raise bad_request("bad_idempotency_key", "idempotencyKey must be 1-64 characters of A-Z a-z 0-9 _ -")
    digest = hashlib.sha256(str(app_block_id).encode()).hexdigest()[:16]
    return {**template, "externalId": f"blk{digest}{key}"}


# What a block's workflow may not carry (security review 2, S03 and S13). On the platform a block's
# workflow events reach civitai's servers and the host, never a URL the block names; here a
# callback would make the developer's machine POST to any loopback or LAN address the block's code
# (or one of its dependencies) names. The externalId is the platform's, composed from idempotencyKey
# (``keyed``); a raw one would let one app answer with another app's workflow.
BLOCK_REFUSED_MEMBERS = {
    "callbacks": "a block's workflow takes no callbacks: its events reach the host, not a URL the block names",
    "externalId": "a block's workflow takes no externalId: send idempotencyKey, which the platform makes it from",
}


def template_of(body: object, store: Store | None = None) -> object:
    """The WorkflowTemplate a block's body stands for (a body the service then checks like any other).

    A block's body names no ``callbacks`` or ``externalId`` (``BLOCK_REFUSED_MEMBERS``; 400).

    A textToImage body is checked as the platform checks it (``check_block_text_to_image``); its
    ``modelVersionId``'s base model (from ``store``, when the catalogue has the version) becomes a
    provenance tag.
    """
    if isinstance(body, dict):
        for member, why in BLOCK_REFUSED_MEMBERS.items():
            if member in body:
                raise bad_request(f"block_{member.lower()}", why)
    if not isinstance(body, dict) or "steps" in body or body.get("kind") is None:
        return body
    if body["kind"] != "textToImage":
        raise bad_request("unsupported_kind", f"kind {body['kind']!r} is not emulated (textToImage, or a"
                                              " WorkflowTemplate with steps)")
    params = check_block_text_to_image(body)
    step_input = {k: int(float(params[k])) if isinstance(params[k], str) else params[k]
                  for k in ("width", "height", "seed", "quantity") if params.get(k) is not None}
    step_input.update({k: params[k] for k in ("prompt", "negativePrompt") if params.get(k) is not None})
    step_input.setdefault("prompt", "")
    template: dict[str, Any] = {"steps": [{"$type": "textToImage", "name": "0", "input": step_input}]}
    if "accountType" in body:
        template["accountType"] = body["accountType"]
    if store is not None:
        with store.read() as db:
            found = db.execute("SELECT base_model FROM model_versions WHERE id = ?",
                               (body["modelVersionId"],)).fetchone()
        if found is not None:
            template["baseModel"] = found[0]
    return template
