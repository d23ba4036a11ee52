"""Lint rules on `assetBundleUrl` forms the platform accepts but that are unwise."""

from __future__ import annotations

from typing import Any, Iterator

from blockkit.jsstr import show
from blockkit.platform import LOOPBACK_SUFFIX
from blockkit.rules.base import Hit, RuleContext, rule
from blockkit.urls import parse_web_url

POINTER = "/assetBundleUrl"


def _parsed(manifest: dict[str, Any]) -> Any:
    value = manifest.get("assetBundleUrl")
    if not isinstance(value, str) or not value.startswith("https://"):
        return None, value
    url, _ = parse_web_url(value)
    return url, value


@rule("BK321", "asset-url-credentials", layer="lint", severity="warning", keys=("assetBundleUrl",))
def asset_url_credentials(manifest: dict[str, Any], ctx: RuleContext) -> Iterator[Hit]:
    """`assetBundleUrl` carries credentials (`user@` or `user:password@`).

    ## What it does
    Reports an `assetBundleUrl` whose authority has a user name or password before
    the host, in any spelling a browser reads as such, percent-encoded ones
    included (`https://%75ser:pw@cdn.example.com/`). An empty userinfo (`https://@host/`)
    is not reported.

    ## Why it matters
    The platform accepts such a URL: its public-host and origin checks ignore the
    userinfo. But the manifest is public, so the credentials leak to anyone who
    reads it, and browsers refuse to load subresources whose URL carries
    credentials, so the bundle may not load where it is used.

    ## Example
    "assetBundleUrl": "https://deploy:s3cret@demo-block.civit.ai/bundle.js"

    ## Fix
    Remove everything between `https://` and the `@`:
    "assetBundleUrl": "https://demo-block.civit.ai/bundle.js".
    """
    url, value = _parsed(manifest)
    if url is not None and url.has_credentials:
        yield Hit(POINTER, f"assetBundleUrl {show(value)} carries credentials (user@host); the platform accepts "
                           "it, but the manifest is public and browsers refuse such subresource URLs",
                  hint="remove everything between https:// and the @")


@rule("BK322", "asset-url-localhost-name", layer="lint", severity="warning", keys=("assetBundleUrl",))
def asset_url_localhost_name(manifest: dict[str, Any], ctx: RuleContext) -> Iterator[Hit]:
    """`assetBundleUrl` is on a name under `.localhost`.

    ## What it does
    Reports an `assetBundleUrl` whose host ends in `.localhost`, such as
    `https://cdn.localhost/bundle.js`. The platform denies only the exact name
    `localhost` (BK222), so it accepts these.

    ## Why it matters
    Every browser resolves `localhost` and all names under it to the loopback
    address (RFC 6761), so for a viewer the bundle would be fetched from their own
    machine, never from a server of the app. Such a URL works only on the
    developer's computer.

    ## Example
    "assetBundleUrl": "https://cdn.demo-block.localhost/bundle.js"

    ## Fix
    Serve the bundle from a public origin of the app, e.g.
    "assetBundleUrl": "https://demo-block.civit.ai/bundle.js".
    """
    url, value = _parsed(manifest)
    if url is not None and url.address is None and url.host.endswith(LOOPBACK_SUFFIX):
        yield Hit(POINTER, f"assetBundleUrl {show(value)} is on {url.host}; browsers resolve every name under "
                           "localhost to the viewer's own machine",
                  hint="serve the bundle from a public origin of the app")
