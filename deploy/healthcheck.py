"""The container's health probe: exit 0 when ``GET /healthz`` answers 200, else 1.

Run by the image's ``HEALTHCHECK`` and by docker-compose with the image's Python
(slim images have no curl). It reads the same ``DOCSHELF_*`` variables as the
server: the port, and the allowed hosts, so it presents a name the deployment is
configured to answer to (the server answers 403 to a ``Host`` that is neither a
loopback name nor in ``DOCSHELF_ALLOWED_HOSTS``, whatever address it binds).
"""

from __future__ import annotations

import http.client
import os
import sys


def probe_host(environ: dict[str, str] | os._Environ[str]) -> str:
    """The ``Host`` header to send: the first allowed host, else ``localhost``."""
    hosts = [h.strip() for h in environ.get("DOCSHELF_ALLOWED_HOSTS", "").split(",") if h.strip()]
    return hosts[0] if hosts else "localhost"


def check(port: int, host_header: str, timeout: float = 4.0) -> tuple[bool, str]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request("GET", "/healthz", headers={"Host": host_header})
        response = connection.getresponse()
        body = response.read(200).decode(errors="replace")
        return response.status == 200, f"{response.status} {body}"
    except OSError as exc:
        return False, str(exc)
    finally:
        connection.close()


def main() -> int:
    port = int(os.environ.get("DOCSHELF_PORT", "8000"))
    healthy, detail = check(port, probe_host(os.environ))
    print(detail)
    return 0 if healthy else 1


if __name__ == "__main__":
    sys.exit(main())
