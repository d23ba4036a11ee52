"""The OAuth 2.0 provider on ``{auth_url}`` (spec: "OAuth"), built on oauthlib.

Modules: ``validator`` (oauthlib endpoints, grants and our RequestValidator), ``authorize``
(sign-in, the authorization endpoint and its consent page), ``endpoints`` (token, revoke,
userinfo), ``device`` (RFC 8628), ``oidc`` (discovery, JWKS, id_token), ``memory`` (the
short-lived state the platform keeps in Redis), ``web`` (pages, errors, CORS, sessions, rate limits), ``scopes`` (the bitmask),
``buzz`` (the consent's Buzz limit), ``clients`` (registration), ``legacy`` (the 308s on
base_url). Storage is ``store/oauth.py`` (migration 0004).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from starlette.applications import Starlette

    from blockkit.emulator.state import EmulatorState


def build_auth_app(state: EmulatorState) -> Starlette:
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.routing import Route

    from blockkit.emulator.http.errors import EXCEPTION_HANDLERS, error_body, json_response
    from blockkit.emulator.http.oauth import authorize, device, endpoints, oidc
    from blockkit.emulator.services.oauth.validator import Provider
    from blockkit.emulator.http.region import RegionMiddleware

    def not_found(request: object) -> object:
        return json_response(error_body("Not found"), status_code=404)

    prefix = "/api/auth/oauth"
    routes = [
        Route("/", authorize.home, methods=["GET"]),
        Route("/login", authorize.login_page, methods=["GET"]),
        Route("/login", authorize.login_submit, methods=["POST"]),
        Route("/logout", authorize.logout, methods=["POST"]),
        Route(f"{prefix}/authorize", authorize.authorize, methods=["GET", "POST", "OPTIONS"]),
        Route(f"{prefix}/token", endpoints.token, methods=["POST", "OPTIONS"]),
        Route(f"{prefix}/revoke", endpoints.revoke, methods=["POST", "OPTIONS"]),
        Route(f"{prefix}/userinfo", endpoints.userinfo, methods=["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]),
        Route(authorize.CONSENT_PAGE, authorize.consent_page, methods=["GET"]),
        Route(f"{prefix}/device", device.device, methods=["POST", "OPTIONS"]),
        Route(f"{prefix}/device-token", device.device_token, methods=["POST", "OPTIONS"]),
        Route(f"{prefix}/device-info", device.device_info, methods=["POST"]),
        Route(f"{prefix}/device-approve", device.device_approve, methods=["POST"]),
        Route(device.PAGE, device.device_page, methods=["GET"]),
        Route(device.PAGE, device.device_page_submit, methods=["POST"]),
        Route("/.well-known/openid-configuration", oidc.discovery, methods=["GET"]),
        Route("/.well-known/jwks.json", oidc.jwks_endpoint, methods=["GET"]),
        Route("/{path:path}", not_found, methods=["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]),
    ]
    app = Starlette(routes=routes, middleware=[Middleware(RegionMiddleware, sfw_only=state.options.sfw_only)],
                    exception_handlers=EXCEPTION_HANDLERS)
    app.state.emulator = state
    app.state.origin = "auth"
    app.state.provider = Provider(state)
    return app
