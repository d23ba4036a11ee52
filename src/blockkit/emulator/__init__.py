"""The local platform: ``blockkit emulator`` serves the platform's APIs from a seeded SQLite store.

Three origins, as on the platform (DESIGN.md, "The local platform"): the catalogue
(``{base_url}/api/v1``, plus ``/__emulator`` controls), the OAuth provider
(``{auth_url}``) and the orchestration service (``{orchestration_url}``).

Layout::

    emulator/
      facts.py            platform facts as tables: enums, base models, NSFW bits, tiers, ...
      errors.py           EmulatorError and StoreError: one line each, the CLI exits 2
      options.py          EmulatorOptions (start flags, loopback check)
      clock.py            the one clock: real UTC + an offset persisted in the store
      state.py            EmulatorState (store, clock, options, urls) shared by every app
      region.py           the restricted-region (SFW) clamp: request.state.region_restricted
      auth.py             Caller and caller_of(request): bearer tokens through a verifier registry
      control.py          /__emulator/clock (GET now, POST advance)
      server.py           build_apps(...) -> three starlette apps; sockets and uvicorn
      runtime.py          Emulator (in-process) and run_foreground (the CLI's start)
      store/              SQLite: connection.py (Store), migrate.py, migrations/NNNN_*.sql,
                          indexes/<family>.sql, meta.py, one query module per family
      seed/               the deterministic generator and landmarks(store)
      catalogue/          /api/v1: errors.py (JSON response, error bodies), params.py
                          (query models), pagination.py (nextPage, page window, absolute
                          URLs), fragments.py (serialised objects cached until the store
                          changes), one route module per family (enums.py, me.py, models.py,
                          model_versions.py, vault.py, permissions.py, ...); downloads.py
                          serves /api/download/models/{id} and the file URLs it redirects to
      oauth/              the OAuth provider on auth_url (oauthlib): sign-in, authorize and
                          consent pages (Jinja), token, revoke, userinfo, client registration,
                          the legacy 308s on base_url; its storage is store/oauth.py
      files.py            model files' bytes (safetensors, PyTorch zip, ...) and their six hashes
      blocktokens.py      block JWTs (joserfc, RS256): key, mint, verify, instances, revocation
      blockroutes.py      /api/v1/block-tokens, JWKS, /blocks/*, the block-scope middleware

Data flows one way: HTTP request -> route -> service -> store -> response model
-> JSON. Routes hold no SQL; the store holds no HTTP.

Adding a catalogue route family (say ``models``):

1. ``store/models.py``: plain functions ``f(db: sqlite3.Connection, ...)`` holding the
   SQL and returning rows or small records. Add the indexes your queries need to
   ``store/indexes/models.sql``; a schema change is a new ``migrations/NNNN_*.sql``.
2. ``catalogue/models.py``, in this order: the query model (``params.QueryModel``),
   the response models (pydantic; an unset field is omitted, a field set to None is
   null), the service (``def list_models(store, clock, query, viewer) -> Page``:
   opens ``with store.read() as db:`` and calls the store functions; no Request),
   then the routes: *sync* ``def`` endpoints (starlette runs them in its thread
   pool, where each thread has its own connection) that parse with
   ``parse_query``, call the service and return ``json_response(...)``; errors are
   raised as ``errors.ApiError`` (``not_found``, ``bad_request``, ``invalid_params``).
   End the module with ``routes = [Route("/models", ...), ...]``.
3. Add the module to ``catalogue.ROUTE_MODULES``.
4. Read the SFW clamp with ``region.clamp_browsing_level(request, level)``, the time
   with ``emulator(request).clock``, fixtures in tests with ``seed.landmarks(store)``.

Nothing here is imported by ``import blockkit``; the CLI imports it on
``blockkit emulator``.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from blockkit.emulator.testing import LocalPlatform, running

__all__ = ["LocalPlatform", "running"]


def __getattr__(name: str) -> Any:
    # ``blockkit.emulator.running(...)`` without importing the servers on ``import blockkit.emulator``.
    if name in ("running", "LocalPlatform"):
        from blockkit.emulator import testing

        return getattr(testing, name)
    raise AttributeError(f"module 'blockkit.emulator' has no attribute {name!r}")
