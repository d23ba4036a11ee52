"""The spec's fixed-window rate limits of the OAuth provider: how many, per what, and the 429's words.

The counting is the store's (``store/oauth.py: hit``); the routes (``http/oauth/web.py:
over_limit``) and the token validator (``services/oauth/validator.py``) both answer from here.
"""

from __future__ import annotations

# The spec's fixed-window limits (per minute): authorize per user, token per client_id,
# revoke per IP.
RATE_LIMITS = {"authorize": 10, "token": 20, "token-failed": 20, "revoke": 20}
# The error name of a 429: the spec names ``rate_limit`` for authorize; elsewhere the platform's.
RATE_ERRORS = {"authorize": ("rate_limit", "Too many authorization requests"),
               "token": ("rate_limited", "Too many token requests"),
               "token-failed": ("rate_limited", "Too many failed client authentications from this address"),
               "revoke": ("rate_limited", "Too many revocation requests")}
RATE_WINDOW_SECONDS = 60


def rate_limited_body(bucket: str) -> dict[str, str]:
    error, words = RATE_ERRORS[bucket]
    return {"error": error, "error_description": f"{words}: at most {RATE_LIMITS[bucket]} a minute. Try again later."}


# Who each bucket counts (the journal's words).
RATE_KEYS = {"authorize": "user", "token": "client", "token-failed": "address", "revoke": "address"}


def limit_reason(bucket: str, key: str, count: int, left: int) -> str:
    """Why a request was refused 429, for the request journal: the window, the count, the limit."""
    return (f"the {bucket} rate limit allows {RATE_LIMITS[bucket]} requests per {RATE_KEYS[bucket]} in a"
            f" {RATE_WINDOW_SECONDS} s window; this was request {count} from {RATE_KEYS[bucket]} {key} in the"
            f" current window, which ends in {left} s")
