"""Bearer-token access to ``/admin``: closed unless a token is configured.

Without ``DOCSHELF_ADMIN_TOKEN`` every admin route answers 503 with an
explanation — the API is never open by default. With one, requests need
``Authorization: Bearer <token>``; the token is compared in constant time.

The check runs in the route class, before FastAPI reads the body, so an
unauthenticated caller learns nothing from validation errors (a dependency
would run only after the JSON body had been parsed).
"""

from __future__ import annotations

import hmac
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import HTTPException
from fastapi.routing import APIRoute
from fastapi.security import HTTPBearer
from starlette.requests import Request
from starlette.responses import Response

REALM = 'Bearer realm="docshelf-admin"'

DISABLED_MESSAGE = (
    "The admin API is disabled because no admin token is configured. Set DOCSHELF_ADMIN_TOKEN "
    "to a long random secret and restart; then send it as 'Authorization: Bearer <token>'."
)

# Declares the scheme in the OpenAPI document; the check itself is AdminAuth's.
BEARER_SCHEME = HTTPBearer(
    auto_error=False,
    scheme_name="adminToken",
    description="The value of DOCSHELF_ADMIN_TOKEN, as 'Authorization: Bearer <token>'.",
)


class AdminAuth:
    def __init__(self, token: str | None) -> None:
        self._token = token.encode() if token else None

    def check(self, authorization: str | None) -> None:
        """Return if the header carries the token; raise the HTTP error to answer otherwise."""
        if self._token is None:
            raise HTTPException(503, DISABLED_MESSAGE)
        scheme, _, presented = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not presented.strip():
            raise HTTPException(
                401,
                "Authentication required: send 'Authorization: Bearer <admin token>'.",
                headers={"WWW-Authenticate": REALM},
            )
        if not hmac.compare_digest(presented.strip().encode(), self._token):
            raise HTTPException(
                401,
                "The admin token is not valid.",
                headers={"WWW-Authenticate": f'{REALM}, error="invalid_token"'},
            )


class AdminRoute(APIRoute):
    """An APIRoute whose handler checks the token before anything else happens; the check
    is the application's (``app.state.admin_auth``)."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def guarded(request: Request) -> Response:
            auth: AdminAuth = request.app.state.admin_auth
            auth.check(request.headers.get("authorization"))
            return await handler(request)

        return guarded
