"""The local platform on HTTP: a small shared kit, then one folder per origin.

The kit:

- ``errors.py``: JSON responses and the exception handlers every origin installs
- ``bodies.py``: request bodies read with a size limit
- ``auth.py``: Caller and ``caller_of(request)``: bearer tokens through a verifier registry
- ``region.py``: the restricted-region (SFW) clamp
- ``access.py``: the access key and the browser-origin guard in front of every origin
- ``hostcheck.py``: the Host header check (DNS rebinding), shared with ``blockkit dev``
- ``connlimit.py``: the header deadline and the connection cap (h11 and httptools)
- ``server.py``: ``build_apps`` (the three starlette apps), the sockets and uvicorn

The origins: ``catalogue/`` (``{base_url}/api/v1``, downloads), ``blocks/`` (the block routes
on the catalogue origin), ``control/`` (``/__emulator``: the clock, media and blobs),
``oauth/`` (``{auth_url}``) and ``orchestration/`` (``{orchestration_url}``).

A route parses, calls a service (``services/``) or a read-only query, and answers; it holds no
SQL and no platform rule of its own.
"""
