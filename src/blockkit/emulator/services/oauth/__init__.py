"""The OAuth provider's rules (RFC 6749, 7009, 8628, OIDC), with no HTTP.

- ``validator.py``: oauthlib's request validator over the store: clients, codes, tokens, scopes
- ``memory.py``: what lives in the provider's memory (authorization codes, device codes)
- ``clients.py``: registered clients (confidential, public, the emulator's own)
- ``scopes.py``: the platform's scope bitmask, its names and labels
- ``buzz_limit.py``: the consent's Buzz spend limit
- ``limits.py``: the spec's fixed-window rate limits
- ``device_grant.py``: the device grant: start, poll, issue

The routes are ``http/oauth/``.
"""
