"""Server rules on `assetBundleUrl`: a public https host on one of the app's origins."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Iterator

from blockkit.rules.base import Hit, RuleContext, rule
from blockkit.jsstr import show
from blockkit.platform import PRIVATE_HOST_NAMES, PRIVATE_HOST_PREFIXES, PRIVATE_HOST_SUFFIXES
from blockkit.rules.guard import GuardResult, at
from blockkit.urls import origin_of, parse_web_url, public_host_problem, read_allowed_origin

if TYPE_CHECKING:
    from blockkit.context import Context

POINTER = "/assetBundleUrl"
HTTPS = "https"
# The schema's pattern already refuses anything that does not start with this.
_SCHEMA_PREFIX = "https://"

# --- guards: URLs a browser reads exactly as written -------------------------------


def _literal(text: str) -> str:
    """``text`` as a pattern, for the characters of host names and origins only."""
    assert re.fullmatch(r"[a-z0-9.:/-]*", text), text
    return text.replace(".", "[.]")


_NOT_HTTPS = {"not": {"pattern": "^" + _literal(_SCHEMA_PREFIX)}}
# A path of plain characters: no backslash, percent escape, query or fragment to read.
_PLAIN_PATH = "(/[A-Za-z0-9._~/-]*)?$"
# A lowercase dotted host name of plain labels whose last label is letters only (so never
# an IPv4 number), no credentials, no port.
_LABEL = "[a-z0-9]+(-[a-z0-9]+)*"
_PUBLIC_URL = "^https://" + _LABEL + "([.]" + _LABEL + ")*[.][a-z]+" + _PLAIN_PATH
_PRIVATE_NAME = ("^https://(" + "|".join(map(_literal, sorted(PRIVATE_HOST_NAMES))) + ")(/|$)")
_PRIVATE_SUFFIX = "(" + "|".join(map(_literal, PRIVATE_HOST_SUFFIXES)) + ")(/|$)"
_PRIVATE_PREFIX = "^https://(" + "|".join(map(_literal, PRIVATE_HOST_PREFIXES)) + ")"
_PUBLIC_GUARD = at(["assetBundleUrl"], {"anyOf": [
    _NOT_HTTPS,
    {"pattern": _PUBLIC_URL, "not": {"anyOf": [
        {"pattern": _PRIVATE_NAME}, {"pattern": _PRIVATE_SUFFIX}, {"pattern": _PRIVATE_PREFIX}]}},
]})


def _origin_guard(context: "Context") -> GuardResult:
    """The URL is on one of the allowed origins; with the app's own origin (from the
    blockId, which a schema cannot compare with the URL) only a URL that is not https."""
    plain: list[dict[str, Any]] = []
    for origin in context.allowed_origins or ():
        normal = read_allowed_origin(origin)
        if normal is not None and re.fullmatch(r"https://[a-z0-9.-]+(:[0-9]+)?", normal):
            plain.append({"pattern": "^" + _literal(normal) + _PLAIN_PATH})
    return at(["assetBundleUrl"], {"anyOf": [_NOT_HTTPS, *plain]})


@rule("BK222", "asset-url-not-public", layer="server", severity="error", keys=("assetBundleUrl",),
      guard=_PUBLIC_GUARD)
def asset_url_not_public(manifest: dict[str, Any], ctx: RuleContext) -> Iterator[Hit]:
    """`assetBundleUrl` does not point at a public https host.

    ## What it does
    Reads the URL as a browser does (WHATWG URL parsing: backslashes separate the
    path, the last `@` ends the credentials, numeric hosts are IPv4 addresses) and
    reports it when it cannot be parsed or its host is not a public dotted name:
    any IP literal (dotted `127.0.0.1`, integer `2130706433`, hex `0x7f000001`,
    octal `0177.0.0.1`, short `127.1`, IPv6 in brackets, IPv4-mapped IPv6),
    `localhost`, `metadata.google.internal`, names ending in `.local` or
    `.internal`, a name without a dot, or one with a trailing dot. As the
    platform does, it also refuses a host whose text starts like a private
    address (`127.`, `10.`, `172.16.` to `172.31.`, `192.168.`, `169.254.`, `0.`)
    even when it is a DNS name such as `10.cdn.example.com`. A URL that does not
    start with `https://` is the schema's BK104.

    Like the platform, it does not look at credentials (`user:pw@`) in the URL,
    and it accepts names under `.localhost` other than `localhost` itself: lint
    warns about both (BK321, BK322).

    ## Why it matters
    The platform fetches the bundle from this URL; private addresses would let a
    manifest point it at internal services. Its check is lexical: it refuses these
    hosts by their text at review, before any name is resolved.

    ## Example
    "assetBundleUrl": "https://10.cdn.example.com/bundle.js"

    ## Fix
    Serve the bundle from the app's own origin, e.g.
    "assetBundleUrl": "https://demo-block.civit.ai/bundle.js".
    """
    value = manifest.get("assetBundleUrl")
    if not isinstance(value, str) or not value.startswith(_SCHEMA_PREFIX):
        return
    url, problem = parse_web_url(value)
    if url is None:
        yield Hit(POINTER, f"assetBundleUrl {show(value)} {problem}", hint="use a plain https://<host>/<path> URL")
        return
    host_problem = public_host_problem(url)
    if host_problem is not None:
        yield Hit(POINTER, f"assetBundleUrl {show(value)} is not public: {host_problem}",
                  hint="serve the bundle from a public host name on the app's origin")


@rule("BK223", "asset-url-off-origin", layer="server", severity="error", keys=("assetBundleUrl",),
      guard=_origin_guard)
def asset_url_off_origin(manifest: dict[str, Any], ctx: RuleContext) -> Iterator[Hit]:
    """`assetBundleUrl` is not on one of the app's allowed origins.

    ## What it does
    Computes the URL's origin (scheme, lowercased host, and the port unless it is
    the default 443) and reports it when it is not one of the allowed origins. By
    default that is only the app's own `https://<blockId>.civit.ai`; pass
    `--allowed-origin` (or `allowed-origins` in blockkit.toml) for the origins
    registered in the app's OAuth client. A different port is a different origin;
    `:443` is the same origin as no port.

    Allowed origins are read as the platform reads the OAuth client's
    `allowedOrigins`: lower-cased first (`HTTPS://cdn.example.com` is
    `https://cdn.example.com`), then an entry that does not start with `http` is a bare host and
    means `https://` plus the entry, port kept (`cdn.example.com:8443` is
    `https://cdn.example.com:8443`); an entry with a path counts by its origin;
    an entry that is not a URL allows nothing.

    ## Why it matters
    The platform only loads bundles from the origins registered for the app, so an
    off-origin URL is refused at review.

    ## Example
    "assetBundleUrl": "https://cdn.example.com/bundle.js"   (blockId "demo-block")

    ## Fix
    "assetBundleUrl": "https://demo-block.civit.ai/bundle.js", or register the
    origin in the app's OAuth client and pass it with --allowed-origin.
    """
    value = manifest.get("assetBundleUrl")
    if not isinstance(value, str) or not value.startswith(_SCHEMA_PREFIX):
        return
    url, _ = parse_web_url(value)
    if url is None or url.scheme != HTTPS or public_host_problem(url) is not None:
        return  # BK222 says why; an origin check on a private host adds nothing
    allowed = ctx.context.origins_for(manifest.get("blockId"))
    if ctx.context.allowed_origins is None and not any(origin_of(o) for o in allowed):
        return  # no usable blockId to derive the app's origin from: the schema reports the blockId
    readable = {read_allowed_origin(origin) for origin in allowed} - {None}
    if not readable:
        yield Hit(POINTER, f"assetBundleUrl is on {url.origin}, but no allowed origin of this app can be read as "
                           f"a URL ({', '.join(allowed) or 'none given'})",
                  hint="pass the app's registered origins with --allowed-origin, e.g. https://cdn.example.com")
        return
    if url.origin not in readable:
        yield Hit(POINTER, f"assetBundleUrl is on {url.origin}, which is not an allowed origin of this app "
                           f"({', '.join(allowed)})",
                  hint="serve the bundle from an allowed origin, or register this origin in the app's OAuth "
                       "client and pass it with --allowed-origin")
