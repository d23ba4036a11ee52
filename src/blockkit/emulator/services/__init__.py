"""The local platform's rules: what each operation does to the state, with no HTTP.

A service is a set of plain functions over ``(store, clock, ...)``: it opens
``store.read()``/``store.write()``, applies the platform's rule and returns records or raises
:class:`~blockkit.emulator.services.errors.ServiceError` (a status, a stable code and a
sentence). It never sees a Request and never imports starlette, so ``blockkit dev`` calls the
same functions in-process that the HTTP routes (``http/``) call over the network.

- ``errors.py``: ServiceError and its shorthands (ProblemDetails bodies)
- ``buzz.py``: Buzz pools, charges, refunds, tips and the ledger
- ``goods.py``: goods catalogues, purchases and entitlements
- ``appstorage.py``: a block's key-value storage (quotas, keys, values)
- ``usersettings.py``: per-user block settings
- ``blocktokens.py``: block JWTs: the signing key, mint, verify, instances, revocation
- ``files.py``: model files' bytes and their hashes
- ``orchestration/``: workflows, their edits, funds, the upscaler, media and blobs, callbacks
- ``oauth/``: the OAuth provider's rules: token validator, grants in memory, clients, scopes,
  the consent's Buzz limit, rate limits, the device grant
"""
