"""Configuration: flags > environment (``DOCSHELF_*``) > defaults (DESIGN D9).

Everything is validated when the process starts, so a bad value fails at the
door with a message that says what a good one looks like.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

import platformdirs
from pydantic import Field, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from docshelf.app.negotiation import parse_default_features
from docshelf.app.negotiation_features import Features
from docshelf.storage.ignore_files import DEFAULT_IGNORE
from docshelf.storage.s3 import S3Location, is_s3_url
from docshelf.storage.store import StoreSpec, folder_of
from docshelf.storage.uris import is_valid_shelf_name, shelf_name_for

DEFAULT_ALLOWED_ORIGINS = ("http://localhost", "http://127.0.0.1", "http://[::1]")


def _split_csv(value: object) -> object:
    if isinstance(value, str):
        return [item.strip() for item in value.split(",") if item.strip()]
    return value


class FlagGroup(enum.Enum):
    """A section of a command's ``--help``, in this order (after the command's own options)."""

    SHELVES = "shelves and storage"
    HTTP = "HTTP"
    CONNECTIONS = "HTTP connections"
    SESSIONS = "2025-era sessions"


EVERY_COMMAND = frozenset({"serve", "stdio", "index", "reindex", "config desktop"})
SERVING = frozenset({"serve", "stdio"})
SERVE = frozenset({"serve"})


@dataclass(frozen=True)
class Flag:
    """The command-line flag of a setting: declared on its field, so that the field is
    the one place a setting's flag, variable (``DOCSHELF_`` + its name) and default come
    from; :mod:`app.cli` builds every parser from these, in the fields' order.

    The flag is ``--FIELD`` dashed, or ``--no-FIELD`` for a switch on by default, unless
    ``name`` says otherwise; its type and choices are the field's. A field may carry one
    per set of ``commands`` whose help differs.
    """

    help: str
    commands: frozenset[str] = EVERY_COMMAND
    group: FlagGroup | None = None  # None: among the command's own options
    name: str | None = None
    metavar: str | None = None
    choices: tuple[str, ...] | None = None  # a ``str`` field's allowed values
    repeat: bool = False  # given once per value (a list setting)


NO_INDEX_HELP = (
    "a replica: serve the index another process keeps in the same database — no start-up "
    "pass, no watching; on SQLite no background conversion either (a read still builds a "
    "format it needs), on PostgreSQL it shares the conversion backlog unless --no-convert; "
    "changes that process makes reach this one's subscribers through the database "
    "(env DOCSHELF_INDEX_ON_START=false)"
)


class Settings(BaseSettings):
    # Each field with a Flag is a command-line flag too; the fields are in the order the
    # flags appear in ``--help`` (by section, FlagGroup).
    # An empty variable is an unset one: `DOCSHELF_WORKERS=` in an .env file, or a
    # compose `${VAR:-}`, means "the default", not "" (which no number or level parses).
    model_config = SettingsConfigDict(env_prefix="DOCSHELF_", extra="ignore", env_ignore_empty=True)

    shelves: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Shelves as DIR, NAME=DIR or NAME=s3://BUCKET/PREFIX (env: comma-separated).",
    )
    host: Annotated[
        str,
        Flag("address to bind (env DOCSHELF_HOST; default 127.0.0.1)", SERVE, FlagGroup.HTTP),
    ] = "127.0.0.1"
    port: Annotated[int, Flag("port (env DOCSHELF_PORT; default 8000)", SERVE, FlagGroup.HTTP)] = (
        Field(8000, ge=0, le=65535)
    )
    data_dir: Annotated[
        Path,
        Flag(
            "where the SQLite index and converted representations live (env "
            "DOCSHELF_DATA_DIR; default: the per-user data folder)",
            group=FlagGroup.SHELVES,
            metavar="DIR",
        ),
    ] = Field(default_factory=lambda: Path(platformdirs.user_data_dir("docshelf")))
    database_url: Annotated[
        str | None,
        Flag(
            "any SQLAlchemy URL (env DOCSHELF_DATABASE_URL; default: SQLite in the data dir)",
            group=FlagGroup.SHELVES,
            metavar="URL",
        ),
    ] = None
    # Issue 27: the stored formats in a bucket that every host reaches (storage.store_s3),
    # or a folder; None is the folder data_dir/representations.
    store_url: str | None = Field(
        None, description="where stored formats live: s3://BUCKET/PREFIX, or a folder"
    )
    store_cache_mb: int = Field(
        512,
        ge=0,
        description="a bucket store's local cache in the data folder, in MB (0 = none)",
    )
    store_sweep_grace_s: float = Field(
        86_400,
        ge=0,
        description="stored objects no row names are deleted once this old (what a killed "
        "process left); must outlast the longest conversion",
    )
    allowed_origins: Annotated[
        list[str],
        NoDecode,
        Flag(
            "a browser Origin allowed to call /mcp besides localhost ones, e.g. "
            "https://app.example.com; repeatable (env DOCSHELF_ALLOWED_ORIGINS)",
            SERVE,
            FlagGroup.HTTP,
            name="--allowed-origin",
            metavar="ORIGIN",
            repeat=True,
        ),
    ] = Field(default_factory=list)
    allowed_hosts: Annotated[
        list[str],
        NoDecode,
        Flag(
            "a Host header value to accept besides loopback names; repeatable "
            "(env DOCSHELF_ALLOWED_HOSTS)",
            SERVE,
            FlagGroup.HTTP,
            name="--allowed-host",
            metavar="HOST",
            repeat=True,
        ),
    ] = Field(default_factory=list)
    page_size: Annotated[
        int, Flag("resources/list page size (default 100)", group=FlagGroup.SHELVES, metavar="N")
    ] = Field(100, ge=1, le=10_000)
    workers: Annotated[
        int, Flag("conversion processes (default 2)", group=FlagGroup.SHELVES, metavar="N")
    ] = Field(2, ge=1, le=64, description="conversion worker processes")
    convert_timeout: float = Field(120.0, gt=0, description="seconds one file may take to convert")
    read_wait: float = Field(
        10.0,
        ge=0,
        description="seconds a read waits for formats not built yet before it answers with "
        "what exists (the rest go on building; subscribers hear when they land)",
    )
    convert_memory_mb: int = Field(
        2048, ge=0, description="address-space cap per worker (0 = none)"
    )
    max_convert_mb: float = Field(
        100.0, gt=0, description="files larger than this are not converted"
    )
    max_read_mb: float = Field(
        32.0, gt=0, description="at most this much content in one resources/read or prompts/get"
    )
    render: Annotated[
        Literal["lazy", "eager"],
        Flag(
            "rendered PDFs of non-PDF documents: when first asked for (lazy, the default) "
            "or at index time (eager) (env DOCSHELF_RENDER)",
            group=FlagGroup.SHELVES,
        ),
    ] = Field(
        "lazy", description="rendered PDFs of non-PDF documents: on first request, or at index time"
    )
    ignore: Annotated[list[str], NoDecode] = Field(default_factory=lambda: list(DEFAULT_IGNORE))
    ignore_files: Annotated[
        bool,
        Flag(
            "serve what .gitignore and .docshelfignore files exclude too (they are honoured "
            "by default, at any depth of a shelf) (env DOCSHELF_IGNORE_FILES=false)",
            group=FlagGroup.SHELVES,
        ),
    ] = Field(
        True,
        description="honour .gitignore and .docshelfignore files at any depth of a shelf "
        "shelf (gitignore rules): what they exclude is not listed, watched or converted",
    )
    heap_trim_interval: float = Field(
        60.0,
        ge=0,
        description="seconds between handing freed heap memory back to the system "
        "(glibc's malloc_trim; 0 = never)",
    )
    malloc_arenas: int = Field(
        2,
        ge=0,
        description="malloc arenas a serving process's threads share (glibc; 0 = glibc's "
        "default of 8 per core)",
    )
    malloc_mmap_threshold: int = Field(
        256 * 1024,
        ge=0,
        description="bytes from which a block gets its own mapping, returned when freed "
        "(glibc; 0 = glibc's default, a threshold that rises with the blocks freed)",
    )
    image_gps: bool = Field(
        False,
        description="put the GPS position of photos (EXIF) in their conversions; the image "
        "converter reads DOCSHELF_IMAGE_GPS itself, and turning it on or off converts again",
    )
    # OCR (issue 26, DESIGN D34): the converters and the builder read DOCSHELF_OCR* themselves
    # (converters.ocr), in every process alike; these fields check the values at the door.
    ocr: bool = Field(
        True,
        description="read pages that carry only pictures of text (scans, photos) by OCR, "
        "in a second pass after every cheaper conversion",
    )
    ocr_languages: str = Field(
        "eng", description="languages OCR reads, Tesseract's names, comma- or plus-separated"
    )
    ocr_page_timeout: float = Field(30.0, gt=0, description="seconds OCR may spend on one page")
    admin_token: str | None = None
    log_level: Annotated[
        str,
        Flag(
            "default info",
            group=FlagGroup.SHELVES,
            choices=("debug", "info", "warning", "error"),
        ),
    ] = "info"
    # uvicorn's line per request: a few percent of a small read's time, so off unless asked for.
    access_log: Annotated[
        bool,
        Flag(
            "log one line per HTTP request (env DOCSHELF_ACCESS_LOG; default off)",
            SERVE,
            FlagGroup.HTTP,
        ),
    ] = False
    keepalive_s: float = Field(15.0, gt=0, description="SSE keep-alive comment interval")
    session_idle_timeout: Annotated[
        float,
        Flag(
            "end a session unused this long; later requests with its id get 404 "
            "(env DOCSHELF_SESSION_IDLE_TIMEOUT; default 3600)",
            SERVE,
            FlagGroup.SESSIONS,
            metavar="SECONDS",
        ),
    ] = Field(
        3600.0, gt=0, description="seconds a 2025-era HTTP session may go unused before it ends"
    )
    max_sessions: Annotated[
        int,
        Flag(
            "sessions kept at once; a new one ends the least recently used idle one "
            "(env DOCSHELF_MAX_SESSIONS; default 1000)",
            SERVE,
            FlagGroup.SESSIONS,
            metavar="N",
        ),
    ] = Field(
        1000,
        ge=1,
        description="2025-era HTTP sessions kept at once (then the least recently "
        "used idle one ends)",
    )
    # HTTP connections (uvicorn's limits, and the request-head deadline it lacks).
    header_timeout: Annotated[
        float,
        Flag(
            "close a connection whose request line and headers take longer "
            "(env DOCSHELF_HEADER_TIMEOUT; default 10)",
            SERVE,
            FlagGroup.CONNECTIONS,
            metavar="SECONDS",
        ),
    ] = Field(
        10.0, gt=0, description="seconds a client may take to send a request's line and headers"
    )
    body_timeout: Annotated[
        float,
        Flag(
            "answer 408 to a POST whose body takes longer (env DOCSHELF_BODY_TIMEOUT; default 30)",
            SERVE,
            FlagGroup.CONNECTIONS,
            metavar="SECONDS",
        ),
    ] = Field(30.0, gt=0, description="seconds a client may take to send a POST body")
    keep_alive_timeout: Annotated[
        int,
        Flag(
            "close an idle keep-alive connection after this (env DOCSHELF_KEEP_ALIVE_TIMEOUT; "
            "default 5)",
            SERVE,
            FlagGroup.CONNECTIONS,
            metavar="SECONDS",
        ),
    ] = Field(5, ge=1, description="seconds an idle keep-alive connection stays open")
    max_connections: Annotated[
        int,
        Flag(
            "answer 503 beyond this many open connections or running requests, streams "
            "included (env DOCSHELF_MAX_CONNECTIONS; default 1000)",
            SERVE,
            FlagGroup.CONNECTIONS,
            metavar="N",
        ),
    ] = Field(1000, ge=1, description="open connections and requests (streams too) before 503")
    max_header_bytes: Annotated[
        int,
        Flag(
            "answer 400 to a request line and headers still incomplete at this size "
            "(env DOCSHELF_MAX_HEADER_BYTES; default 16384)",
            SERVE,
            FlagGroup.CONNECTIONS,
            metavar="N",
        ),
    ] = Field(
        16 * 1024,
        ge=1024,
        description="a request line and headers still incomplete at this size get 400",
    )
    shutdown_timeout: Annotated[
        int,
        Flag(
            "on SIGTERM, wait at most this long for requests in progress "
            "(env DOCSHELF_SHUTDOWN_TIMEOUT; default 10)",
            SERVE,
            FlagGroup.CONNECTIONS,
            metavar="SECONDS",
        ),
    ] = Field(10, ge=0, description="seconds shutdown waits for requests in progress")
    processes: Annotated[
        int,
        Flag(
            "serving processes on the one port, sharing the index; the first indexes, "
            "watches and converts, the others serve (env DOCSHELF_PROCESSES; default 1)",
            SERVE,
            metavar="N",
        ),
    ] = Field(
        1, ge=1, le=64, description="serve: processes serving the one port (the first indexes)"
    )
    binary_cap_mb: float = Field(
        1.0, gt=0, description="negotiation: binary variants above this are left out"
    )
    default_features: Annotated[
        str,
        Flag(
            "content negotiation: the feature tags a client that negotiates none gets, "
            "comma-separated as a client sends them, e.g. format=markdown,verbosity=compact "
            "(env DOCSHELF_DEFAULT_FEATURES; default none: every representation)",
            SERVING,
            metavar="TAGS",
        ),
    ] = Field(
        "",
        description="negotiation: the feature tags a client that negotiates none gets, "
        "comma-separated as a client sends them (empty: every representation)",
    )
    index_on_start: Annotated[
        bool,
        Flag(
            NO_INDEX_HELP,
            SERVING,
            name="--no-index",
        ),
        Flag(
            "a replica of an index another process keeps (no indexing, watching or "
            "background conversion)",
            frozenset({"config desktop"}),
            name="--no-index",
        ),
    ] = Field(
        True,
        description="this process indexes: the start-up pass, watching (unless watch is off) "
        "and background conversion; off makes a replica of a database indexed elsewhere",
    )
    convert: Annotated[
        bool,
        Flag(
            "build no formats in the background: this process takes nothing from the conversion "
            "backlog, and builds only the formats its own reads need, at once (env "
            "DOCSHELF_CONVERT=false; lease length DOCSHELF_CONVERSION_LEASE_S, default 60)",
            SERVING,
        ),
    ] = Field(
        True,
        description="this process builds pending formats in the background (on PostgreSQL "
        "every such process shares the backlog; on SQLite only the indexing one does); off "
        "(--no-convert): it builds only what its own reads need",
    )
    conversion_lease_s: float = Field(
        60.0,
        ge=1,
        le=3600,
        description="seconds a process holds a document it converts before another may take "
        "it (renewed three times per lease while it works; a process that dies leaves its "
        "documents to the others this long after)",
    )
    watch: Annotated[
        bool,
        Flag(
            "do not follow the folders for changes",
            frozenset({"serve", "stdio", "config desktop"}),
        ),
    ] = True
    watch_debounce_ms: int = Field(
        200, ge=10, le=10_000, description="quiet time before a batch is indexed"
    )
    bucket_poll_s: float = Field(
        10.0,
        gt=0,
        le=3600,
        description="how often the indexing process lists each bucket shelf for changes "
        "(a bucket notification to POST /admin/shelves/NAME/notify is seen at once)",
    )
    change_poll_ms: int = Field(
        200,
        ge=10,
        le=10_000,
        description="how often a serving process looks for changes other processes made "
        "(PostgreSQL also wakes it at once by LISTEN/NOTIFY)",
    )

    _split = field_validator(
        "shelves", "allowed_origins", "allowed_hosts", "ignore", mode="before"
    )(_split_csv)

    @field_validator("log_level")
    @classmethod
    def _level(cls, value: str) -> str:
        if value.lower() not in {"debug", "info", "warning", "error", "critical"}:
            raise ValueError("log level must be debug, info, warning, error or critical")
        return value.lower()

    @field_validator("store_url")
    @classmethod
    def _store_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        if is_s3_url(value):
            return str(S3Location.parse(value))  # raises ValueError naming what is wrong
        if "://" in value and not value.startswith("file://"):
            raise ValueError(
                f"{value.partition('://')[0]}:// is not a store; write s3://BUCKET/PREFIX, "
                "file:///PATH or a folder path"
            )
        return folder_of(value)

    @field_validator("default_features")
    @classmethod
    def _tags(cls, value: str) -> str:
        # A client's bad tag is ignored (SEP requirement 4); the operator's stops the start.
        parse_default_features(value)
        return value

    @model_validator(mode="after")
    def _check_shelves(self) -> Settings:
        self.shelf_specs()  # raises ValueError on a bad spec
        return self

    @model_validator(mode="after")
    def _check_replica(self) -> Settings:
        # A replica that watched would index every change itself, into the database the
        # indexing process keeps: two indexers. Watching belongs to the indexing process.
        if not self.index_on_start and self.watch and "watch" in self.model_fields_set:
            raise ValueError(
                "watching needs indexing: --no-index (DOCSHELF_INDEX_ON_START=false) makes a "
                "replica, which never watches (the indexing process does); "
                "drop DOCSHELF_WATCH=true, or --no-index"
            )
        return self

    def shelf_specs(self) -> list[tuple[str, str]]:
        """(name, location) for each configured shelf: a folder, or an ``s3://BUCKET/PREFIX``
        URL (a shelf in a bucket, issue 27), checked here so a typo is one line at start."""
        specs = []
        for entry in self.shelves:
            name, sep, folder = entry.partition("=")
            if is_s3_url(entry):  # a bare URL: named after its last prefix folder or bucket
                where = S3Location.parse(entry)
                last = where.prefix.rstrip("/").rpartition("/")[2] or where.bucket
                specs.append((shelf_name_for(last), str(where)))
            elif sep and name and not Path(entry).exists():
                if not is_valid_shelf_name(name):
                    raise ValueError(
                        f"shelf name {name!r} is invalid: "
                        "use lowercase letters, digits, '.', '_', '-'"
                    )
                if is_s3_url(folder):
                    specs.append((name, str(S3Location.parse(folder))))
                else:
                    specs.append((name, str(Path(folder).expanduser())))
            else:
                path = Path(entry).expanduser()
                specs.append((shelf_name_for(path.resolve().name), str(path)))
        return specs

    def negotiation_default(self) -> Features:
        """``default_features`` as the negotiation reads it (checked by :meth:`_tags`)."""
        return parse_default_features(self.default_features)

    @property
    def resolved_database_url(self) -> str:
        return self.database_url or f"sqlite:///{self.data_dir / 'docshelf.db'}"

    @property
    def store_dir(self) -> Path:
        """The folder store's default place (used when ``store_url`` is unset)."""
        return self.data_dir / "representations"

    @property
    def store_spec(self) -> StoreSpec:
        """The configured store as :func:`storage.store.open_store` opens it (in this
        process and in each conversion worker): a folder, or a bucket prefix with its
        bounded cache in the data folder."""
        if self.store_url is None or not is_s3_url(self.store_url):
            return StoreSpec(self.store_url or str(self.store_dir))
        return StoreSpec(
            self.store_url, str(self.data_dir / "store-cache"), self.store_cache_mb * 1024 * 1024
        )

    @property
    def origins(self) -> list[str]:
        return list(DEFAULT_ALLOWED_ORIGINS) + self.allowed_origins


def setting_flags(command: str | None = None) -> Iterator[tuple[str, str, Flag]]:
    """(field, flag name, :class:`Flag`) of every setting that is a flag, or of those
    ``command`` takes, in the fields' order."""
    for field, info in Settings.model_fields.items():
        dashed = field.replace("_", "-")
        for flag in info.metadata:
            if isinstance(flag, Flag) and (command is None or command in flag.commands):
                switched_off = info.annotation is bool and info.default is True
                yield (
                    field,
                    flag.name or (f"--no-{dashed}" if switched_off else f"--{dashed}"),
                    flag,
                )


def flag_name(field: str) -> str:
    """How the command line spells ``field``: its flag, or ``--FIELD`` dashed for a setting
    that has none (a message may name either way to set it)."""
    names = [name for each, name, _ in setting_flags() if each == field]
    return names[0] if names else "--" + field.replace("_", "-")
