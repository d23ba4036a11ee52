"""The local platform: ``blockkit emulator`` serves the platform's APIs from a seeded SQLite store.

Three origins, as on the platform (DESIGN.md, "The local platform"): the catalogue
(``{base_url}/api/v1``, plus ``/__emulator`` controls), the OAuth provider
(``{auth_url}``) and the orchestration service (``{orchestration_url}``).

Layout, one line per folder, in layers: each imports only from its own layer or those below
it (``tests/emulator/test_layers.py`` holds it so)::

    emulator/
      http/        HTTP: the kit (errors.py, bodies.py, auth.py, region.py, access.py, hostcheck.py, journal.py,
                   connlimit.py, server.py: build_apps, sockets, uvicorn), then one folder per
                   origin: catalogue/ (/api/v1 families, downloads), blocks/ (block routes and
                   REST twins), control/ (/__emulator: clock, media, blobs), oauth/ (auth_url),
                   orchestration/ (orchestration_url)
      seed/        the deterministic generator and landmarks(store) (beside http/)
      services/    the rules, no HTTP: errors.py (ServiceError), buzz.py, goods.py, appstorage.py,
                   usersettings.py, blocktokens.py, files.py; orchestration/ (workflows, edits,
                   funds, upscaler, imaging, video, media, callbacks); oauth/ (validator, memory,
                   clients, scopes, buzz_limit, limits, device_grant)
      state.py     EmulatorState (store, clock, options, urls) shared by every app
      store/       state: SQLite (connection.py: Store), migrate.py, migrations/NNNN_*.sql,
                   indexes/<family>.sql, meta.py, clock.py (the one clock: real UTC + an offset
                   kept in the store), one query module per family
      errors.py    the ground: EmulatorError and StoreError (one line, exit 2); ApiError and the
                   spec's error bodies
      facts.py     the ground: platform facts as tables (enums, base models, NSFW bits, tiers)
      options.py   the ground: EmulatorOptions (start flags, loopback check)
      journal.py   the ground: the request journal's ring, redaction, and note_reason/note_who,
                   which any layer calls to tell it why a request was refused (http/journal.py
                   records and serves it)

    and the building, at the root: runtime.py (Emulator in-process, run_foreground for the CLI),
    testing.py (LocalPlatform, running(), the pytest plugin's engine), execrun.py (``emulator
    exec``), datadir.py (the data directory and its lock), transfer.py (export and import),
    journal_client.py (``emulator log``).

Data flows one way: HTTP request -> route (``http/``) -> service (``services/``) -> store
(``store/``) -> response model -> JSON. Routes hold no SQL; services never see a request and
never import starlette; the store holds no HTTP and no rule.

Adding a catalogue route family (say ``models``):

1. ``store/models.py``: plain functions ``f(db: sqlite3.Connection, ...)`` holding the
   SQL and returning rows or small records. Add the indexes your queries need to
   ``store/indexes/models.sql``; a schema change is a new ``migrations/NNNN_*.sql``.
2. ``http/catalogue/models.py``, in this order: the query model (``params.QueryModel``),
   the response models (pydantic; an unset field is omitted, a field set to None is
   null), the read-only query service (``def list_models(store, clock, query, viewer) ->
   Page``: opens ``with store.read() as db:`` and calls the store functions; no Request),
   then the routes: *sync* ``def`` endpoints (starlette runs them in its thread
   pool, where each thread has its own connection) that parse with
   ``parse_query``, call the service and return ``json_response(...)``; errors are
   raised as ``errors.ApiError`` (``not_found``, ``bad_request``, ``invalid_params``).
   End the module with ``routes = [Route("/models", ...), ...]``.
3. Add the module to ``http/catalogue/__init__.py: ROUTE_MODULES``, and its paths to the
   OpenAPI document (``scripts/build_openapi.py``; a test holds the routes and the document
   equal).
4. Read the SFW clamp with ``region.clamp_browsing_level(request, level)``, the time
   with ``emulator(request).clock``, fixtures in tests with ``seed.landmarks(store)``.

A rule that writes (a charge, a purchase, a grant) is a service in ``services/``, called by
its routes and by ``blockkit dev`` in-process.

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
