"""The block routes on the catalogue origin: what a block (or its host page) calls over HTTP.

- ``verifier.py``: block JWTs accepted on these routes only, and the Caller they make;
- ``blockroutes.py``: ``/api/v1/block-tokens`` (mint, JWKS), ``/blocks/models|images|me``, and the
  block-scope middleware that marks a request as on a block route;
- ``blockrest.py``: the bridge procedures' REST twins (``/blocks/app-storage``, workflows, Buzz, ...);
- ``submissions.py``: ``/blocks/submit-version``, ``/blocks/submissions``, ``/blocks/withdraw`` (API key or
  an Apps-submit OAuth token);
- ``entitlements.py``: goods (``/blocks/goods/*``, ``GET /blocks/entitlements``).

``ROUTE_MODULES`` lists the modules whose ``routes`` are mounted under /api/v1 after the
catalogue's families (``http/server.py: build_catalogue_app``).
"""

from __future__ import annotations

ROUTE_MODULES: tuple[str, ...] = (
    "blockkit.emulator.http.blocks.entitlements",  # goods: GET /blocks/entitlements
    "blockkit.emulator.http.blocks.blockroutes",  # block tokens: mint, JWKS, /blocks/models|images|me
    "blockkit.emulator.http.blocks.blockrest",  # the bridge procedures' REST twins (/blocks/app-storage, workflows, buzz, ...)
    "blockkit.emulator.http.blocks.submissions",  # the platform CLI's submit-version, submissions, withdraw
)
