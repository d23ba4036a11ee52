"""The imageUpscaler recipe: a real Lanczos upscale of the input, billed in Buzz.

Python API: ``invoke(store, clock, urls, user_id, payload, *, whatif=False, ephemeral=False,
allow_mature_content=False) -> dict``; ``payload`` is ImageUpscalerInput ``{image, model?,
numberOfRepeats?}`` (1-3, default 1, each doubling the resolution).

- A real run stores the result as a PNG blob and answers ``{"blob": ImageBlob}`` with its URL
  on the orchestration origin; the price (``imaging.price``: 4 Buzz per output megapixel,
  rounded up, at least 1) is debited from the key owner's pools (automatic order).
- ``whatif``: nothing runs and nothing is charged; ``{"blob": {... "available": false},
  "cost": WorkflowCost}`` gives the output size and price.
- ``ephemeral``: nothing is stored; the blob's ``url`` is a ``data:image/png;base64`` URL.
- ``model`` is accepted (an AIR string) and ignored: the emulator has one resampler.
"""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Any

from blockkit.emulator import buzz
from blockkit.emulator.orchestration import imaging, media
from blockkit.emulator.orchestration.errors import bad_request

if TYPE_CHECKING:
    from blockkit.emulator.clock import Clock
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
    with store.write() as db:  # charge first: a refused charge runs nothing
        buzz.charge(db, now, user_id, price, order, kind="recipe", reference="imageUpscaler",
                    description=f"imageUpscaler {width}x{height}")
    result = imaging.upscale(image, repeats)
    if ephemeral:
        url = "data:image/png;base64," + base64.b64encode(imaging.encode(result, "png")).decode("ascii")
        return {"blob": {"type": "image", "id": "ephemeral", "available": True, "url": url,
                         "width": result.width, "height": result.height}}
    row = media.save_blob(store, now, user_id, result)
    return {"blob": {"type": "image", "id": row.id, "available": True, "url": media.blob_url(urls, row),
                     "width": row.width, "height": row.height, "nsfwLevel": "pg"}}
