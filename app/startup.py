"""Start-up mistakes, each explained in one line that says what to change (issue 24).

Before a command serves or indexes, everything it needs is checked in the order a
user would fix it: the settings' values, the shelf folders, the data folder, the
database URL, the port (``serve``), and the database itself (reached, then upgraded).
A mistake ends the process with one line on stderr, ``docshelf: <what is wrong>;
<what to change>``, naming the flag or ``DOCSHELF_*`` variable the value came from,
and an exit status that tells a supervisor (systemd, compose) whether retrying can
help: :data:`CONFIGURATION` (2) when a setting must change, :data:`UNAVAILABLE` (3)
when something a setting names is not there now (a port in use, a database that
does not answer).

No traceback is printed for these: each is a mistake in how docshelf was started,
not a fault in docshelf, and a traceback would bury the one line that matters.
"""

from __future__ import annotations

import errno
import shlex
import socket
import tempfile
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args, get_origin

import annotated_types
from pydantic import ValidationError
from pydantic_core import ErrorDetails
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError

from docshelf.app.settings import Settings, flag_name
from docshelf.storage.shelves import this_process

if TYPE_CHECKING:
    from docshelf.app.runtime import Runtime

CONFIGURATION = 2  # a setting must change (argparse uses 2 for a bad command line too)
UNAVAILABLE = 3  # what a setting names is not there now; uvicorn's status for a failed start
URL_FORM = "postgresql+psycopg://USER:PASSWORD@HOST:PORT/DATABASE or sqlite:///PATH"
BACKLOG = 2048  # uvicorn's default


class StartupError(ValueError):
    """A mistake in how docshelf was started: one line for stderr, and the exit status.

    A ValueError, so that callers which report bad values in one line already
    (``docshelf config desktop``) report these the same way.
    """

    def __init__(self, message: str, status: int = CONFIGURATION) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Sources:
    """Where each setting came from: the fields given as flags; the rest came from the
    environment or are defaults. A message names what the user wrote."""

    flags: Collection[str] = ()

    @staticmethod
    def variable(field: str) -> str:
        return f"{Settings.model_config.get('env_prefix', '')}{field.upper()}"

    def name(self, field: str, settings: Settings) -> str:
        """The flag or variable that set ``field``; for a default, both ways to set it."""
        if field in self.flags:
            return flag_name(field)
        if field in settings.model_fields_set:
            return self.variable(field)
        return f"{flag_name(field)} (or {self.variable(field)})"


# -- settings ---------------------------------------------------------------------------------


def load_settings(overrides: dict[str, Any]) -> Settings:
    """:class:`Settings` from the flags' ``overrides`` and the environment; a bad value is a
    :class:`StartupError` naming the flag or variable and what it takes."""
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        raise StartupError("; ".join(_invalid(e, overrides) for e in exc.errors())) from None


def _invalid(error: ErrorDetails, flags: Collection[str]) -> str:
    """One bad value, as the user wrote it (flag or variable), and what it takes."""
    field = str(error["loc"][0]) if error["loc"] else None
    if error["type"] == "value_error":  # a validator's message says what it takes
        reason = str(error.get("ctx", {}).get("error", error["msg"]))
    else:
        expected = _expected(field) if field in Settings.model_fields else None
        reason = f"expected {expected}" if expected else error["msg"]
    if field is None:  # the model's own checks (shelves, replica): the message says it all
        return reason
    value = shlex.quote(str(error["input"]))
    if field in flags:
        return f"{flag_name(field)} {value} is not valid: {reason}"
    return f"{Sources.variable(field)}={value} is not valid: {reason}"


def _expected(field: str) -> str | None:
    """What a good value of ``field`` looks like, read from its type and bounds."""
    info = Settings.model_fields[field]
    kind = info.annotation
    if kind is bool:
        return "true or false"
    if get_origin(kind) is Literal:
        *others, last = (str(choice) for choice in get_args(kind))
        return f"{', '.join(others)} or {last}" if others else last
    if kind not in (int, float):
        return None
    noun = "a whole number" if kind is int else "a number"
    bounds = {type(m): m for m in info.metadata}
    low, high = bounds.get(annotated_types.Ge), bounds.get(annotated_types.Le)
    above = bounds.get(annotated_types.Gt)
    if low is not None and high is not None:
        return f"{noun} from {low.ge} to {high.le}"
    limits = [
        *([f"at least {low.ge}"] if low is not None else []),
        *([f"above {above.gt}"] if above is not None else []),
        *([f"at most {high.le}"] if high is not None else []),
    ]
    return f"{noun} {' and '.join(limits)}" if limits else noun


# -- the data folder --------------------------------------------------------------------------


def check_data_dir(settings: Settings, sources: Sources) -> None:
    """Make the data folder and the store's local folder (the folder store, or a bucket
    store's cache) and create a file in each: an unusable one is a :class:`StartupError`
    naming the path at fault (and the uid, if it may not write there)."""
    data = settings.data_dir
    local = settings.store_spec.local_folder()
    for folder in (data, *([local] if local is not None else [])):
        try:
            folder.mkdir(parents=True, exist_ok=True)
            tempfile.TemporaryFile(dir=folder).close()
        except OSError as exc:
            if folder != data and data not in folder.parents:  # store_url names a folder
                raise StartupError(
                    f"the store folder {folder} cannot be used: {exc.strerror} "
                    f"({this_process()}); choose another with "
                    f"{sources.name('store_url', settings)}"
                ) from None
            problem, or_else = _data_dir_problem(data, folder, exc)
            choose = f"choose another folder with {sources.name('data_dir', settings)}"
            raise StartupError(f"{problem}; {choose}{or_else}") from None


def _data_dir_problem(data: Path, folder: Path, exc: OSError) -> tuple[str, str]:
    """What is wrong with the data folder, and a second way out (or "")."""
    chain = [*reversed(folder.parents), folder]
    blocker = next((path for path in chain if path.exists() and not path.is_dir()), None)
    if blocker == data:
        return f"the data folder {data} is a file", ""
    if blocker is not None:
        return f"{blocker} is a file, so the data folder {data} cannot be created", ""
    if exc.errno == errno.EROFS:
        return f"the data folder {data} is on a read-only file system", ""
    if exc.errno not in (errno.EACCES, errno.EPERM):
        return f"the data folder {data} cannot be used: {exc.strerror}", ""
    denied = next(path for path in reversed(chain) if path.exists())
    if denied == data:
        where = f"the data folder {data}"
    elif data in denied.parents:
        where = f"{denied} in the data folder"
    else:
        where = f"{denied}, so the data folder {data} cannot be created"
    user = this_process()
    return f"{user} may not write to {where}", f", or let {user} write there"


# -- the database -----------------------------------------------------------------------------


def check_database_url(settings: Settings, sources: Sources) -> None:
    """A database URL SQLAlchemy can build an engine for: it parses, names a database
    SQLAlchemy knows, and its driver is installed (an SQLite file's folder is made).
    Otherwise a :class:`StartupError` saying what to write instead."""
    if settings.database_url is None:  # SQLite in the data folder, checked with it
        return
    setting = sources.name("database_url", settings)
    try:
        url = make_url(settings.database_url)
    except ArgumentError:
        raise StartupError(f"{setting} is not a database URL; write {URL_FORM}") from None
    scheme = f"{url.drivername}://"
    try:
        dialect = url.get_dialect()
    except NoSuchModuleError:
        if url.get_backend_name() == "postgres":  # Heroku's and libpq's spelling
            raise StartupError(
                f"{setting} starts with {scheme}, which SQLAlchemy does not accept; "
                "write postgresql+psycopg:// instead (the rest unchanged)"
            ) from None
        raise StartupError(
            f"{setting} names {scheme}, a database SQLAlchemy does not know; write {URL_FORM}"
        ) from None
    try:
        dialect.import_dbapi()
    except ImportError as exc:
        if url.get_backend_name() != "postgresql":
            fix = "install it where docshelf runs"
        elif url.get_driver_name() == "psycopg":
            fix = "install docshelf[postgres]"
        else:
            fix = "install docshelf[postgres] and write postgresql+psycopg:// (the rest unchanged)"
        raise StartupError(
            f"{setting} needs the Python module {exc.name} (for {scheme}), which is not "
            f"installed; {fix}"
        ) from None
    if url.get_backend_name() == "sqlite" and url.database not in (None, "", ":memory:"):
        folder = Path(url.database).parent
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StartupError(
                f"the folder of the SQLite database {url.database} cannot be created: "
                f"{exc.strerror} ({this_process()}); check {setting}"
            ) from None


def build_runtime(settings: Settings, sources: Sources) -> Runtime:
    """The :class:`Runtime`, once its data folder and database URL are known to be usable;
    a shelf that is not a folder is a :class:`StartupError`."""
    from docshelf.app.runtime import Runtime

    check_data_dir(settings, sources)
    check_database_url(settings, sources)
    try:
        runtime = Runtime(settings)
    except ValueError as exc:
        raise StartupError(str(exc)) from None
    check_store(runtime)
    return runtime


def check_store(runtime: Runtime) -> None:
    """A bucket store answers (reached once, at start): otherwise a :class:`StartupError`
    saying what to change, :data:`CONFIGURATION` for refused credentials and
    :data:`UNAVAILABLE` for a store that is not there now. A folder was checked with the
    data folder."""
    from docshelf.storage.store_s3 import S3Store, StoreUnavailable

    if not isinstance(runtime.store, S3Store):
        return
    try:
        runtime.store.check()
    except StoreUnavailable as exc:
        runtime.close()
        raise StartupError(str(exc), CONFIGURATION if exc.lasting else UNAVAILABLE) from None


def _where(url: URL) -> str:
    if url.get_backend_name() == "sqlite":
        return f"the SQLite database {url.database}"
    host = url.host or "localhost"
    return f"the database at {host}:{url.port}" if url.port else f"the database at {host}"


def _driver_reason(exc: DBAPIError) -> str:
    """The driver's own reason, first line, without its ``connection … failed:`` preamble."""
    lines = str(exc.orig).strip().splitlines() or [type(exc.orig).__name__]
    reason = lines[0].rsplit("failed: ", 1)[-1]
    return " ".join(reason.removeprefix("FATAL:").split())


def open_database(runtime: Runtime, sources: Sources) -> None:
    """Connect once, then bring the schema up to date: a database that cannot be reached
    is a :class:`StartupError` naming where it was looked for."""
    database = runtime.database
    try:
        with database.engine.connect():
            pass
    except DBAPIError as exc:
        url = make_url(database.url)
        setting = sources.name("database_url", runtime.settings)
        if url.get_backend_name() == "sqlite":
            message = f"cannot open {_where(url)}: {_driver_reason(exc)}; check {setting}"
            raise StartupError(message) from None
        raise StartupError(
            f"cannot connect to {_where(url)}: {_driver_reason(exc)}; "
            f"check {setting}, and that the database is running",
            UNAVAILABLE,
        ) from None
    database.upgrade()


# -- the port ---------------------------------------------------------------------------------


def listen(settings: Settings, sources: Sources) -> socket.socket:
    """The listening socket ``serve`` (or every process of ``serve --processes``) accepts on,
    bound before anything says it serves; a port it cannot have is a :class:`StartupError`."""
    host, port = settings.host, settings.port
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(BACKLOG)
    except OSError as exc:
        sock.close()
        raise _listen_problem(exc, settings, sources) from None
    sock.set_inheritable(True)
    return sock


def _listen_problem(exc: OSError, settings: Settings, sources: Sources) -> StartupError:
    host, port = settings.host, settings.port
    if exc.errno == errno.EADDRINUSE:
        return StartupError(
            f"port {port} on {host} is in use; choose another with "
            f"{sources.name('port', settings)}, or stop what listens there",
            UNAVAILABLE,
        )
    if exc.errno == errno.EACCES:
        return StartupError(
            f"port {port} needs privileges {this_process()} does not have; choose one above 1023 "
            f"with {sources.name('port', settings)}"
        )
    reason = exc.strerror or str(exc)
    return StartupError(
        f"cannot listen on {host} port {port}: {reason}; check {sources.name('host', settings)}"
    )
