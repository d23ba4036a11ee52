"""The imageUpscaler recipe: a real Lanczos upscale of the input, billed in Buzz.

Python API: ``invoke(store, clock, urls, user_id, payload, *, whatif=False, ephemeral=False,
allow_mature_content=False) -> dict``; ``payload`` is ImageUpscalerInput ``{image, model?,
numberOfRepeats?}`` (1-3, default 1, each doubling the resolution).

- A real run stores the result as a PNG blob and answers ``{"blob": ImageBlob}`` with its URL
  on the orchestration origin; the price (``imaging.price``: 4 Buzz per output megapixel,
  rounded up, at least 1) is debited from the key owner's pools (automatic order).
- Money: the charge and a ``recipe_jobs`` row ('running') commit together, the ledger's
  reference being the job id; the blob row and the job's 'succeeded' commit together. A job a
  crash left 'running' is refunded at the next start (``recover``), with a ledger row naming it.
- ``whatif``: nothing runs and nothing is charged; ``{"blob": {... "available": false},
  "cost": WorkflowCost}`` gives the output size and price.
- ``ephemeral``: nothing is stored; the blob's ``url`` is a ``data:image/png;base64`` URL.
- ``model`` is accepted (an AIR string) and ignored: the emulator has one resampler.
"""

from __future__ import annotations

import base64
import uuid
from typing import TYPE_CHECKING, Any

import orjson

from blockkit.emulator.services import buzz
from blockkit.emulator.services.orchestration import imaging, media
from blockkit.emulator.services.errors import bad_request
from blockkit.emulator.store import orchestration as orch_store

if TYPE_CHECKING:
    from blockkit.emulator.store.clock import Clock
    from blockkit.emulator.state import Urls
    from blockkit.emulator.store import Store


def check_payload(payload: object) -> tuple[str, int]:
    if not isinstance(payload, dict):
        raise bad_request("bad_body", "the body must be an ImageUpscalerInput object {image, model?, numberOfRepeats?}")
    unknown = sorted(set(payload) - {"image", "model", "numberOfRepeats"})
    if unknown:
        raise bad_request("bad_body", f"unknown ImageUpscalerInput field(s): {', '.join(unknown)}")
    model = payload.get("model")
    if model is not None and (not isinstance(model, str) or not model.startswith("urn:air:")):
        raise bad_request("bad_model", "model must be an AIR (urn:air:...) or null")
    return payload.get("image"), imaging.check_repeats(payload.get("numberOfRepeats"))  # type: ignore[return-value]


def cost(total: int) -> dict[str, Any]:
    return {"base": total, "factors": None, "fixed": None, "tips": {"civitai": 0, "creators": 0}, "total": total}


def invoke(store: Store, clock: Clock, urls: Urls, user_id: int, payload: object, *, whatif: bool = False,
           ephemeral: bool = False, allow_mature_content: bool = False) -> dict[str, Any]:
    source, repeats = check_payload(payload)
    image = imaging.decode_image(source, lambda url: media.resolve_local(urls, store, url))
    width, height = imaging.check_output(image.width, image.height, repeats)
    price = imaging.price(width, height)
    if whatif:
        return {"blob": {"type": "image", "id": "whatif", "available": False, "url": None, "width": width,
                         "height": height}, "cost": cost(price)}
    order = buzz.pool_order(None, mature=allow_mature_content)
    now = clock.iso()
    job_id = str(uuid.uuid4())
    with store.write() as db:  # the charge and its job commit together; a refused charge runs nothing
        debits = buzz.charge(db, now, user_id, price, order, kind="recipe", reference=job_id,
                             description=f"imageUpscaler job {job_id} {width}x{height}")
        orch_store.insert_job(db, job_id, user_id, "imageUpscaler", price, orjson.dumps(debits).decode(), now)
    try:
        result = imaging.upscale(image, repeats)
        if ephemeral:
            url = "data:image/png;base64," + base64.b64encode(imaging.encode(result, "png")).decode("ascii")
            with store.write() as db:
                orch_store.finish_job(db, job_id, "succeeded", None, clock.iso())
            return {"blob": {"type": "image", "id": "ephemeral", "available": True, "url": url,
                             "width": result.width, "height": result.height}}
        row = media.write_blob_file(store, now, user_id, result)
        with store.write() as db:  # the result's blob and the job's end commit together
            orch_store.insert_blob(db, row)
            orch_store.finish_job(db, job_id, "succeeded", row.id, clock.iso())
    except Exception:
        with store.write() as db:
            refund_job(db, clock.iso(), job_id, user_id, debits, "failed")
        raise
    return {"blob": {"type": "image", "id": row.id, "available": True, "url": media.blob_url(urls, row),
                     "width": row.width, "height": row.height, "nsfwLevel": "pg"}}


def refund_job(db: Any, now: str, job_id: str, user_id: int, debits: dict[str, int], why: str) -> None:
    """Refund a recipe job's charge (ledger reference: the job id) and mark it refunded."""
    buzz.refund(db, now, user_id, debits, reference=job_id, description=f"imageUpscaler job {job_id} {why}: refunded")
    orch_store.finish_job(db, job_id, "refunded", None, now)


def recover(store: Store, clock: Clock) -> list[str]:
    """At start: refund every job a crash cut short (still 'running'); their ids."""
    with store.write() as db:
        jobs = orch_store.running_jobs(db)
        for job in jobs:
            refund_job(db, clock.iso(), job["id"], job["user_id"], orjson.loads(job["debits"]),
                       "interrupted by a restart")
    return [job["id"] for job in jobs]
