"""The postMessage bridge as data: which messages exist, and what each needs.

PLATFORM.md §6 names the core messages. The storage, workflow and picker
messages follow the public block SDK's message set, so that a block using them
is not reported as sending unknown types. A platform change to the bridge
should be a change to these tables only: the contract checks, the dev host's
replies and the host page all read them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from urllib.parse import urlencode

ENVELOPE_KEYS = frozenset({"type", "payload"})

FRAGMENT_KEY = "civitai-block"
FRAGMENT_VERSION = "v1"

THEMES = ("dark", "light")

_STORAGE_READ = frozenset({"apps:storage:read", "apps:storage:write"})
_STORAGE_WRITE = frozenset({"apps:storage:write"})
_SHARED_READ = frozenset({"apps:storage:shared:read", "apps:storage:shared:write"})
_SHARED_WRITE = frozenset({"apps:storage:shared:write"})
_GENERATION = frozenset({"ai:write:budgeted"})
_BUZZ_READ = frozenset({"buzz:read:self"})
_GOODS_BUY = frozenset({"goods:purchase:self"})
_GOODS_READ = frozenset({"goods:read:self"})


@dataclass(frozen=True)
class BlockMessage:
    """A message the block may send to the host."""

    # The host -> block type that answers it; set exactly for request-style messages.
    reply: str | None = None
    # The block must declare at least one of these scopes (empty: no scope needed).
    scopes: frozenset[str] = frozenset()
    # Payload members the host relies on, with their JavaScript type.
    fields: Mapping[str, str] = field(default_factory=dict)
    # False: the model-slot host registers no handler (PLATFORM.md §8 "not bridged").
    slot_bridged: bool = True

    @property
    def is_request(self) -> bool:
        return self.reply is not None


def _request(reply: str, scopes: frozenset[str] = frozenset(), *, slot: bool = True, **fields: str) -> BlockMessage:
    return BlockMessage(reply=reply, scopes=scopes, fields={"requestId": "string", **fields}, slot_bridged=slot)


BLOCK_TO_HOST: Mapping[str, BlockMessage] = MappingProxyType(
    {
        "BLOCK_HELLO": BlockMessage(),
        "BLOCK_READY": BlockMessage(fields={"height": "number"}),
        "BLOCK_ERROR": BlockMessage(fields={"message": "string", "fatal": "boolean"}),
        "RESIZE_IFRAME": BlockMessage(fields={"height": "number"}),
        "NAVIGATE": BlockMessage(fields={"path": "string"}, slot_bridged=False),
        "REQUEST_TOKEN": _request("TOKEN_REFRESH_RESPONSE"),
        "REQUEST_SIGN_IN": BlockMessage(),
        "REQUEST_CONSENT": BlockMessage(),
        "TRACK_EVENT": BlockMessage(fields={"eventName": "string"}),
        "APP_STORAGE_GET": _request("APP_STORAGE_GET_RESULT", _STORAGE_READ, key="string"),
        "APP_STORAGE_LIST": _request("APP_STORAGE_LIST_RESULT", _STORAGE_READ),
        "APP_STORAGE_QUOTA": _request("APP_STORAGE_QUOTA_RESULT", _STORAGE_READ),
        "APP_STORAGE_SET": _request("APP_STORAGE_SET_RESULT", _STORAGE_WRITE, key="string"),
        "APP_STORAGE_DELETE": _request("APP_STORAGE_DELETE_RESULT", _STORAGE_WRITE, key="string"),
        "SHARED_LIST": _request("SHARED_LIST_RESULT", _SHARED_READ),
        "SHARED_GET": _request("SHARED_GET_RESULT", _SHARED_READ, key="string"),
        "SHARED_GET_COUNT": _request("SHARED_GET_COUNT_RESULT", _SHARED_READ, key="string"),
        "SHARED_GET_COUNTS": _request("SHARED_GET_COUNTS_RESULT", _SHARED_READ),
        "SHARED_APPEND": _request("SHARED_APPEND_RESULT", _SHARED_WRITE),
        "SHARED_UPDATE": _request("SHARED_UPDATE_RESULT", _SHARED_WRITE, key="string"),
        "SHARED_VOTE": _request("SHARED_VOTE_RESULT", _SHARED_WRITE, key="string"),
        "SHARED_UNVOTE": _request("SHARED_UNVOTE_RESULT", _SHARED_WRITE, key="string"),
        "SHARED_WITHDRAW": _request("SHARED_WITHDRAW_RESULT", _SHARED_WRITE, key="string"),
        "SHARED_REPORT": _request("SHARED_REPORT_RESULT", _SHARED_READ, key="string"),
        "SUBMIT_WORKFLOW": _request("WORKFLOW_SUBMITTED", _GENERATION),
        "ESTIMATE_WORKFLOW": _request("ESTIMATE_RESULT", _GENERATION),
        "POLL_WORKFLOW": _request("WORKFLOW_STATUS", _GENERATION, workflowId="string"),
        "CANCEL_WORKFLOW": _request("WORKFLOW_CANCELED", _GENERATION, workflowId="string"),
        # No scope: the platform's getMyBuzzBalance is "the scope-free convenience path".
        "GET_BUZZ_BALANCE": _request("BUZZ_BALANCE_RESULT"),
        "OPEN_BUZZ_PURCHASE": _request("BUZZ_PURCHASE_RESULT"),
        "OPEN_CHECKPOINT_PICKER": _request("CHECKPOINT_PICKER_RESULT"),
        # Page only: the model slot has the narrower checkpoint picker (civitai hostHandlerParity.ts).
        "OPEN_RESOURCE_PICKER": _request("RESOURCE_PICKER_RESULT", slot=False, resourceType="string"),
        "OPEN_IMAGE_UPLOAD": _request("IMAGE_UPLOAD_RESULT", slot=False),
        "SET_USER_CHECKPOINT": _request("USER_CHECKPOINT_SET"),
        "SAVE_IMAGE": _request("SAVE_IMAGE_RESULT", slot=False),
        "GET_VIEWER": _request("VIEWER_RESULT", slot=False),
        "GET_BUZZ_TRANSACTIONS": _request("BUZZ_TRANSACTIONS_RESULT", _BUZZ_READ, slot=False),
        "GET_BUZZ_ACCOUNTS": _request("BUZZ_ACCOUNTS_RESULT", _BUZZ_READ, slot=False),
        "GET_DAILY_COMPENSATION": _request("DAILY_COMPENSATION_RESULT", _BUZZ_READ, slot=False),
        "QUERY_APP_WORKFLOWS": _request("APP_WORKFLOWS_RESULT", _GENERATION, slot=False),
        "CANCEL_APP_WORKFLOW": _request("CANCEL_APP_WORKFLOW_RESULT", _GENERATION, slot=False, workflowId="string"),
        "PUBLISH_GENERATION_OUTPUTS": _request("PUBLISH_RESULT", _GENERATION, slot=False, workflowId="string"),
        "GET_IMAGES_BY_IDS": _request("IMAGES_RESULT", slot=False),
        # modelVersionId: a number, or a string of one (the platform reads both).
        "GET_WILDCARD_PACK": _request("WILDCARD_PACK_RESULT", slot=False),
        # Goods (our names: the monorepo's handler was not found; README "the dev host").
        "PURCHASE_GOOD": _request("GOOD_PURCHASE_RESULT", _GOODS_BUY, goodId="string"),
        "GET_ENTITLEMENTS": _request("ENTITLEMENTS_RESULT", _GOODS_READ),
    }
)

# Host -> block messages that are not replies.
HOST_PUSHES = frozenset(
    {"BLOCK_INIT", "TOKEN_REFRESH", "THEME_CHANGE", "ROUTE_CHANGED", "SUSPEND", "RESUME", "IMAGE_SCAN_RESOLVED"}
)

HOST_TO_BLOCK = HOST_PUSHES | frozenset(
    spec.reply for spec in BLOCK_TO_HOST.values() if spec.reply is not None
)


def block_message(type_: str) -> BlockMessage | None:
    return BLOCK_TO_HOST.get(type_)


def scopes_satisfied(spec: BlockMessage, declared: frozenset[str] | set[str]) -> bool:
    return not spec.scopes or bool(spec.scopes & set(declared))


def init_fragment(theme: str, render_mode: str, block_instance_id: str, api_base_url: str | None = None) -> str:
    """The URL fragment hint the host appends to the block's URL (without ``#``).

    ``apiBaseUrl`` is blockkit dev's addition (the emulated API's origin); the platform sends none.
    """
    params = {
        FRAGMENT_KEY: FRAGMENT_VERSION,
        "theme": theme,
        "renderMode": render_mode,
        "blockInstanceId": block_instance_id,
    }
    if api_base_url:
        params["apiBaseUrl"] = api_base_url
    return urlencode(params)
