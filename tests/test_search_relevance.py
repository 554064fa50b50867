"""Search relevance on documents nobody here wrote (issue #10).

The requirement: "a query for a concept finds the page or section that defines
it in the top 3". One shelf holds the MCP specification pages of both eras
(``../shared/spec``) and a selection of the shared PDF corpus; ``docshelf index``
indexes it once, in a subprocess, as a user would. Each concept below is asked
for the way a model would ask (its own words, not the heading copied) and one of
the parts that define it must be among the first three hits: a section of a
specification page (``?section=slug``), the page's introduction (the document's
own URI: the text before its first heading) or a page of a PDF (``?pages=N``).
The same concept usually has a page in each era; either one counts.

:data:`KNOWN_MISSES` are reasonable queries that the ranking does not answer
today, each with the reason found; they are strict ``xfail``: one that starts
passing fails the run, so it moves up into the concepts.

A few of the queries also go through the ``search_documents`` tool over HTTP,
checked against the spec's schema and against the tool's own ``outputSchema``.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from docshelf.storage.database import Database
from docshelf.storage.search import SearchHit, SearchIndex
from tests.support.databases import sqlite_url
from tests.support.paths import CORPUS_PDF, NEEDS_SHARED, SPEC
from tests.support.schema import validate_response
from tests.support.servers import (
    LEGACY,
    MODERN,
    RawClient,
    RunningServer,
    child_env,
    run_docshelf,
    serve,
)

pytestmark = NEEDS_SHARED

SHELF = "relevance"  # the shelf's folder name, so its name in the URIs
TOP = 3
ERAS = ("mcp-2025-11-25", "mcp-2026-07-28")
OLD, NEW = (f"spec/{era}/" for era in ERAS)
GEOTOPO = "corpus/GeoTopo-komprimiert.pdf"  # a German lecture script on topology, 117 pages
# The corpus PDFs with text in them (and the distractors that come with them: lorem
# ipsum, a poem, the Zen of Python, a form). Left out: the encrypted one (never
# indexed) and the one whose metadata does not parse (no text worth searching).
CORPUS = (
    "GeoTopo-komprimiert.pdf",
    "multicolumn.pdf",
    "crazyones-pdfa.pdf",
    "google-doc-document.pdf",
    "pdflatex-4-pages.pdf",
    "pdflatex-outline.pdf",
    "mistitled_outlines_example.pdf",
    "minimal-document.pdf",
    "002-trivial-libre-office-writer.pdf",
    "pdflatex-forms.pdf",
    "habibi.pdf",
    "with-attachment.pdf",
)


@dataclass(frozen=True)
class Concept:
    name: str
    query: str
    defined_in: tuple[str, ...]  # parts as "path" or "path?query"; any one in the top 3
    missed_because: str = ""  # for a known miss: why the ranking does not find it

    def __str__(self) -> str:
        return self.name


def _pages(path: str, *pages: int) -> tuple[str, ...]:
    return tuple(f"{path}?pages={page}" for page in pages)


SPEC_CONCEPTS = [
    Concept(
        "cursor pagination",
        "paginate a long list of results with an opaque cursor",
        (
            f"{OLD}server_utilities_pagination.mdx",
            f"{OLD}server_utilities_pagination.mdx?section=pagination-model",
            f"{NEW}server_utilities_pagination.mdx",
            f"{NEW}server_utilities_pagination.mdx?section=pagination-model",
        ),
    ),
    Concept(
        "progress token",
        "progress token for reporting how far a long-running request has got",
        (
            f"{OLD}basic_utilities_progress.mdx",
            f"{OLD}basic_utilities_progress.mdx?section=progress-flow",
            f"{NEW}basic_patterns_progress.mdx",
            f"{NEW}basic_patterns_progress.mdx?section=progress-flow",
        ),
    ),
    Concept(
        "cancellation",
        "cancel a request that is still in progress",
        (
            f"{OLD}basic_utilities_cancellation.mdx",
            f"{OLD}basic_utilities_cancellation.mdx?section=cancellation-flow",
            f"{NEW}basic_patterns_cancellation.mdx",
            f"{NEW}basic_patterns_cancellation.mdx?section=cancellation-flow",
        ),
    ),
    Concept(
        "resource subscriptions",
        "subscribe to be notified when a resource changes",
        (
            f"{OLD}server_resources.mdx?section=subscriptions",
            f"{NEW}server_resources.mdx?section=subscriptions",
            f"{NEW}basic_patterns_subscriptions.mdx",
        ),
    ),
    Concept(
        "ping",
        "check whether the other side is still responsive",
        (
            f"{OLD}basic_utilities_ping.mdx",
            f"{OLD}basic_utilities_ping.mdx?section=overview",
        ),
    ),
    Concept(
        "logging levels",
        "which severity levels can log messages have",
        (f"{OLD}server_utilities_logging.mdx?section=log-levels",),
    ),
    Concept(
        "argument completion",
        "autocomplete suggestions for prompt arguments",
        (
            f"{OLD}server_utilities_completion.mdx",
            f"{OLD}server_utilities_completion.mdx?section=requesting-completions",
            f"{NEW}server_utilities_completion.mdx",
            f"{NEW}server_utilities_completion.mdx?section=requesting-completions",
        ),
    ),
    Concept(
        "tool annotations",
        "tool annotations describing what a tool does",
        (f"{OLD}server_tools.mdx?section=tool", f"{NEW}server_tools.mdx?section=tool"),
    ),
    Concept(
        "resource templates",
        "parameterized resources using URI templates",
        (
            f"{OLD}server_resources.mdx?section=resource-templates",
            f"{NEW}server_resources.mdx?section=resource-templates",
        ),
    ),
    Concept(
        "version negotiation",
        "how client and server agree on a protocol version",
        (
            f"{OLD}basic_lifecycle.mdx?section=version-negotiation",
            # "This page defines how a client and server agree on what they are speaking"
            f"{NEW}basic_versioning.mdx",
            f"{NEW}basic_versioning.mdx?section=protocol-version-negotiation",
        ),
    ),
    Concept(
        "capability negotiation",
        "declaring which optional features client and server support",
        (f"{OLD}basic_lifecycle.mdx?section=capability-negotiation",),
    ),
    Concept(
        "session management",
        "session id header for streamable HTTP",
        (f"{OLD}basic_transports.mdx?section=session-management",),
    ),
    Concept(
        "resumability",
        "resume a dropped SSE stream and replay missed events",
        (f"{OLD}basic_transports.mdx?section=resumability-and-redelivery",),
    ),
    Concept(
        "structured tool output",
        "return structured JSON from a tool validated against an output schema",
        (
            f"{OLD}server_tools.mdx?section=structured-content",
            f"{OLD}server_tools.mdx?section=output-schema",
            f"{NEW}server_tools.mdx?section=structured-content",
            f"{NEW}server_tools.mdx?section=output-schema",
        ),
    ),
    Concept(
        "tool names",
        "which characters are allowed in a tool name",
        (f"{OLD}server_tools.mdx?section=tool-names", f"{NEW}server_tools.mdx?section=tool-names"),
    ),
    Concept(
        "cache time-to-live",
        "how long may a client cache a result before it is stale",
        (
            f"{NEW}server_utilities_caching.mdx?section=time-to-live-ttl-field",
            f"{NEW}server_utilities_caching.mdx?section=freshness-calculation",
        ),
    ),
    Concept(
        "multi round-trip requests",
        "server asks the user for more input in the middle of a request, e.g. elicitation",
        (
            f"{NEW}basic_patterns_mrtr.mdx",
            f"{NEW}basic_patterns_mrtr.mdx?section=multi-round-trip-requests",
        ),
    ),
    Concept(
        "error codes",
        "reserved JSON-RPC error code ranges",
        (f"{NEW}basic_index.mdx?section=error-codes",),
    ),
    Concept(
        "statelessness",
        "is the protocol stateless between requests",
        (f"{NEW}basic_index.mdx?section=statelessness",),
    ),
    Concept(
        "deprecated features",
        "which features are deprecated and when will they be removed",
        (f"{NEW}deprecated.mdx", f"{NEW}deprecated.mdx?section=deprecated"),
    ),
    Concept(
        "server discovery",
        "how does server discovery work",
        (f"{NEW}server_discover.mdx", f"{NEW}server_discover.mdx?section=response"),
    ),
    Concept(
        "stdio shutdown",
        "stdio server shutdown",
        (
            f"{OLD}basic_lifecycle.mdx?section=shutdown",
            f"{OLD}basic_lifecycle.mdx?section=stdio",
            f"{NEW}basic_transports_stdio.mdx?section=shutdown",
        ),
    ),
]

# The script is German: so are the questions (the index stems English only, so a
# German word matches itself, not its plural or a compound of it).
CORPUS_CONCEPTS = [
    Concept(
        "kompakter Raum",
        "wann heißt ein Raum kompakt, offene Überdeckung mit endlicher Teilüberdeckung",
        _pages(GEOTOPO, 18),  # Definition 16
    ),
    Concept(
        "Hausdorff-Raum",
        "Hausdorff-Raum Definition",
        _pages(GEOTOPO, 12),  # Definition 10
    ),
    Concept(
        "Metrik",
        "Metrik Definition Symmetrie Dreiecksungleichung",
        _pages(GEOTOPO, 10),  # Definition 8
    ),
    Concept(
        "Betti-Zahl",
        "Homologiegruppe und Betti-Zahl eines Simplizialkomplexes",
        _pages(GEOTOPO, 45),  # Definition 41
    ),
    Concept(
        "3-Färbbarkeit",
        "wann ist ein Knotendiagramm 3-färbbar",
        _pages(GEOTOPO, 25),  # Definition 23
    ),
    Concept(
        "EU country table",
        "population and capital of EU countries",
        _pages("corpus/multicolumn.pdf", 3),  # Table 1 on the last page
    ),
]

KNOWN_MISSES = [
    Concept(
        "stdio shutdown, two words",
        "shut down a server running over stdio",
        (
            f"{OLD}basic_lifecycle.mdx?section=shutdown",
            f"{OLD}basic_lifecycle.mdx?section=stdio",
            f"{NEW}basic_transports_stdio.mdx?section=shutdown",
        ),
        # Rank 7. "stdio server shutdown" (in the concepts) finds it first.
        missed_because='"shut down" is two tokens and the spec writes "shutdown", one',
    ),
    Concept(
        "server discovery, as a verb",
        "discover what a server supports without initializing",
        (f"{NEW}server_discover.mdx", f"{NEW}server_discover.mdx?section=response"),
        # Rank 6, behind server_discover.mdx?section=when-to-call and three versioning
        # sections about initialization.
        missed_because='Porter stems "discover" to discov, the title "Discovery" to discoveri',
    ),
    Concept(
        "Überlagerung",
        "Definition Überlagerung",
        _pages(GEOTOPO, 55),  # Definition 48
        # Not in the top 10: pages 58, 61, 64... use the word more often, and cite
        # "Definition 48"; page 55 says it three times ("p heißt Überlagerung").
        missed_because="BM25 ranks the pages that use a word above the page that defines it",
    ),
    Concept(
        "Hausdorffraum",
        "Hausdorffraum Definition",
        _pages(GEOTOPO, 12),  # Definition 10
        # No hit on page 12, which writes "hausdorffsch" and "Hausdorff-Räume".
        missed_because="a German compound is one token; German is neither stemmed nor split",
    ),
]


def part_of(hit: SearchHit) -> str:
    """The hit as the concepts name parts: the path, and the part's query if any."""
    return f"{hit.path}?{hit.part}" if hit.part else hit.path


def describe(hits: list[SearchHit]) -> str:
    return "\n".join(
        f"  {rank}. {part_of(hit)} [{hit.heading}] {hit.score:.2f}"
        + (" (some words)" if hit.partial else "")
        for rank, hit in enumerate(hits, start=1)
    )


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The shelf (spec pages of both eras, corpus PDFs), indexed by ``docshelf index``."""
    base = tmp_path_factory.mktemp("relevance")
    shelf, data = base / SHELF, base / "data"
    for era in ERAS:
        (shelf / "spec" / era).mkdir(parents=True)
        for page in sorted((SPEC / era).glob("*.mdx")):
            shutil.copy(page, shelf / "spec" / era / page.name)
    (shelf / "corpus").mkdir()
    for name in CORPUS:
        shutil.copy(CORPUS_PDF / name, shelf / "corpus" / name)
    done = run_docshelf("index", "--root", str(shelf), "--data-dir", str(data), timeout=120)
    assert done.returncode == 0, done.stderr
    assert ", 0 failed" in done.stdout, done.stdout
    return shelf, data


@pytest.fixture(scope="module")
def search_index(indexed: tuple[Path, Path]) -> Iterator[SearchIndex]:
    _, data = indexed
    database = Database(sqlite_url(data.parent))  # <data dir>/docshelf.db, as the CLI has it
    yield SearchIndex(database)
    database.dispose()


def test_every_page_of_every_corpus_pdf_is_searchable(search_index: SearchIndex) -> None:
    """A page number in the concepts is the page the corpus's files.json counts."""
    declared = {
        Path(entry["path"]).name: entry["pages"]
        for entry in json.loads((CORPUS_PDF / "files.json").read_text())["data"]
    }
    with search_index.database.engine.connect() as connection:
        rows = connection.exec_driver_sql(
            "SELECT d.path, count(DISTINCT p.part) FROM search_parts p"
            " JOIN documents d ON d.id = p.document_id"
            " WHERE p.kind = 1 AND d.path LIKE 'corpus/%' GROUP BY d.path"
        ).all()
    assert {path: count for path, count in rows} == {
        f"corpus/{name}": declared[name] for name in CORPUS
    }


@pytest.mark.parametrize("concept", SPEC_CONCEPTS + CORPUS_CONCEPTS, ids=str)
def test_a_concept_finds_the_part_that_defines_it_in_the_top_3(
    search_index: SearchIndex, concept: Concept
) -> None:
    hits = search_index.search(concept.query, limit=TOP)
    assert {part_of(hit) for hit in hits} & set(concept.defined_in), (
        f"{concept.query!r} should find one of {list(concept.defined_in)} "
        f"in the top {TOP}; it found:\n{describe(search_index.search(concept.query))}"
    )


@pytest.mark.parametrize(
    "concept",
    [
        pytest.param(c, marks=pytest.mark.xfail(strict=True, reason=c.missed_because))
        for c in KNOWN_MISSES
    ],
    ids=str,
)
def test_known_misses_stay_known(search_index: SearchIndex, concept: Concept) -> None:
    hits = search_index.search(concept.query, limit=TOP)
    assert {part_of(hit) for hit in hits} & set(concept.defined_in), describe(hits)


# PostgreSQL ranks with ts_rank, which knows no inverse document frequency: it misses
# these three concepts (common words such as "check" and "resource" outweigh the rare
# ones) and finds one of SQLite's known misses: its English stop words drop "down" and
# "over", and the lifecycle page's "stdio" section, whose title matches, comes second.
# Pinned both ways, like the xfails.
POSTGRES_MISSES = {"resource subscriptions", "ping", "capability negotiation"}
POSTGRES_FINDS_TOO = {"stdio shutdown, two words"}


def test_postgresql_finds_the_same_concepts_but_three(
    indexed: tuple[Path, Path], tmp_path: Path, postgres_url: str
) -> None:
    shelf, _ = indexed
    done = run_docshelf(
        "index", "--root", str(shelf), "--data-dir", str(tmp_path / "data"),
        env=child_env(DOCSHELF_DATABASE_URL=postgres_url), timeout=180,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    database = Database(postgres_url)
    try:
        index = SearchIndex(database)

        def found(concept: Concept) -> bool:
            hits = index.search(concept.query, limit=TOP)
            return bool({part_of(hit) for hit in hits} & set(concept.defined_in))

        misses = {c.name for c in SPEC_CONCEPTS + CORPUS_CONCEPTS if not found(c)}
        finds = {c.name for c in KNOWN_MISSES if found(c)}
    finally:
        database.dispose()
    assert (misses, finds) == (POSTGRES_MISSES, POSTGRES_FINDS_TOO)


# -- the same through the search_documents tool, over HTTP ------------------------------


def named(name: str) -> Concept:
    (found,) = (c for c in SPEC_CONCEPTS + CORPUS_CONCEPTS if c.name == name)
    return found


THROUGH_THE_TOOL = [
    named("cursor pagination"),  # a section or a document's introduction
    named("logging levels"),  # a section
    named("kompakter Raum"),  # a PDF page
]


def uri(part: str) -> str:
    return f"docshelf://{SHELF}/{part}"


@pytest.fixture(scope="module")
def server(indexed: tuple[Path, Path]) -> Iterator[RunningServer]:
    shelf, data = indexed
    with serve(shelf, data) as running:
        yield running


@pytest.fixture(scope="module")
def raw(server: RunningServer) -> Iterator[RawClient]:
    client = RawClient(server.url)
    yield client
    client.close()


@pytest.fixture(scope="module")
def output_schema(raw: RawClient) -> Draft202012Validator:
    tools = raw.modern("tools/list").json()["result"]["tools"]
    (search,) = (tool for tool in tools if tool["name"] == "search_documents")
    return Draft202012Validator(search["outputSchema"])


def call_search(raw: RawClient, arguments: dict[str, Any]) -> dict[str, Any]:
    body = raw.modern(
        "tools/call",
        {"name": "search_documents", "arguments": arguments},
        headers={"Mcp-Name": "search_documents"},  # 2026-07-28 streamable HTTP: the tool's name
    ).json()
    validate_response(MODERN, "CallToolResult", body)
    result: dict[str, Any] = body["result"]
    assert result["isError"] is False, result
    return result


@pytest.mark.parametrize("concept", THROUGH_THE_TOOL, ids=str)
def test_the_tool_finds_the_defining_part_in_the_top_3(
    raw: RawClient, output_schema: Draft202012Validator, concept: Concept
) -> None:
    result = call_search(raw, {"query": concept.query, "limit": TOP})
    output_schema.validate(result["structuredContent"])
    hits = result["structuredContent"]["hits"]
    expected = {uri(part) for part in concept.defined_in}
    assert {hit["uri"] for hit in hits} & expected, json.dumps(hits, indent=1)
    # Every hit comes as a link the client can read, named by the part that matched.
    links = [item["uri"] for item in result["content"] if item["type"] == "resource_link"]
    assert [hit["uri"] for hit in hits] == links[: len(hits)]


def test_the_tools_filters_keep_a_concept_found(
    raw: RawClient, output_schema: Draft202012Validator
) -> None:
    """Narrowed to PDFs (or to one era's folder), the defining part is still first in line."""
    hausdorff = named("Hausdorff-Raum")
    pdf = call_search(raw, {"query": hausdorff.query, "mime_type": "application/pdf", "limit": TOP})
    output_schema.validate(pdf["structuredContent"])
    hits = pdf["structuredContent"]["hits"]
    assert hits and {hit["mimeType"] for hit in hits} == {"application/pdf"}
    assert hits[0]["uri"] == uri(hausdorff.defined_in[0])

    cancellation = named("cancellation")  # a page in each era
    newer = call_search(raw, {"query": cancellation.query, "path_prefix": NEW, "limit": TOP})
    hits = newer["structuredContent"]["hits"]
    assert hits and all(hit["path"].startswith(NEW) for hit in hits)
    expected = {uri(part) for part in cancellation.defined_in if part.startswith(NEW)}
    assert {hit["uri"] for hit in hits} & expected, json.dumps(hits, indent=1)


def test_the_tool_answers_a_2025_session_alike(raw: RawClient) -> None:
    progress = named("progress token")
    session = raw.initialize(LEGACY)
    body = raw.legacy(
        session,
        "tools/call",
        {"name": "search_documents", "arguments": {"query": progress.query, "limit": TOP}},
    ).json()
    validate_response(LEGACY, "CallToolResult", body)
    hits = body["result"]["structuredContent"]["hits"]
    assert {hit["uri"] for hit in hits} & {uri(part) for part in progress.defined_in}
