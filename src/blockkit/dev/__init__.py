"""``blockkit dev``: run a block the way the platform hosts it.

The block is served on one loopback origin and a host page on another, so the
block really runs cross-origin in a sandboxed iframe. The host page speaks the
host side of the postMessage bridge (PLATFORM.md §6); the host server records
a protocol trace and judges every inbound message against the contract.

Modules, in the order data flows through them:

- ``timings``, ``protocol``: the platform's host timings and message tables;
- ``manifest``, ``surface``: what the manifest asks for, with dev defaults;
- ``init_payload``: the dev token, viewer, context and ``BLOCK_INIT`` payload;
- ``contract``: which inbound messages break the contract, and why;
- ``bridge``: the host's answers to block requests (token, storage);
- ``trace``: the JSONL protocol trace;
- ``block_app``, ``proxy``, ``host_app``: the two ASGI apps;
- ``hostcheck``: the Host and Origin guard both apps sit behind (any ASGI app can);
- ``servers``, ``session``: binding both apps to loopback and running them;
- ``browser``, ``check``, ``verdict``: headless Chromium, the ``--check`` run
  and its verdict;
- ``terminal``: what comes from the block, escaped for the developer's terminal;
- ``errors``: :class:`DevError`, the one-line failure the command prints.

Nothing here imports starlette, uvicorn or playwright at module level except
the modules that are the servers or the browser driver themselves.
"""
