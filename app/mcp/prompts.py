"""The prompts (server/prompts): a document summarized, two compared, a question answered
from the shelf (issue 28, item 3).

Prompts are user-controlled (server/prompts "User Interaction Model"): a client shows them
as commands, the user picks one and fills in its arguments (completed by
``completion/complete``), and ``prompts/get`` returns the messages to send the model —
instructions in a text block, then what they are about as embedded resources, each under
its own URI (app.mcp.embedding says how much and which parts).

The set never changes while serving (``listChanged: false``). Errors follow server/prompts
"Error Handling": an unknown prompt, a missing or unknown argument is -32602; a URI that
names no document is the era's resource-not-found error, as in ``resources/read``; a
document still converting past the read wait is -32603 with ``data.reason: pending``.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from docshelf.app.mcp import wire
from docshelf.app.mcp.completeness import what_was_not_read
from docshelf.app.mcp.context import RequestContext
from docshelf.app.mcp.cursor import InvalidCursor, decode_cursor, encode_cursor
from docshelf.app.mcp.embedding import (
    Budget,
    Embedded,
    Embedder,
    Target,
    left_out_text,
    mb_budget,
)
from docshelf.app.mcp.params import GetPromptParams, PageParams
from docshelf.app.mcp.reads import mb
from docshelf.app.mcp.resources import ResourceService
from docshelf.storage.search import (
    MAX_QUERY_CHARS,
    MAX_TERMS,
    Filters,
    InvalidQuery,
    SearchIndex,
    parse_query,
)

SUMMARIZE = "summarize_document"
COMPARE = "compare_documents"
ANSWER = "answer_from_shelf"
#: Search hits answer_from_shelf embeds at most (best first, within the budget).
ANSWER_HITS = 10


class Completes(enum.Enum):
    """What ``completion/complete`` offers for an argument (app.mcp.completion)."""

    DOCUMENT = "document"  # document URIs starting with what was typed
    PATH = "path"  # paths and folders on the shelves
    NOTHING = "nothing"  # free text


@dataclass(frozen=True, slots=True)
class Argument:
    name: str
    title: str
    description: str
    completes: Completes
    required: bool = True

    def listed(self) -> dict[str, Any]:
        """A ``PromptArgument``."""
        return {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "required": self.required,
        }


@dataclass(frozen=True, slots=True)
class Prompt:
    name: str
    title: str
    description: str
    arguments: tuple[Argument, ...]

    def listed(self) -> dict[str, Any]:
        """A ``Prompt`` of ``prompts/list``."""
        return {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "arguments": [argument.listed() for argument in self.arguments],
        }

    def argument(self, name: str) -> Argument | None:
        return next((a for a in self.arguments if a.name == name), None)

    def check(self, given: Mapping[str, str]) -> dict[str, str]:
        """The arguments to use: each given one known, each required one there and not
        blank (an optional one left blank, as a form sends it, is left out); -32602 naming
        the argument otherwise (server/prompts "Error Handling")."""
        names = [argument.name for argument in self.arguments]
        unknown = sorted(set(given) - set(names))
        if unknown:
            raise _invalid(
                f"{self.name}: unknown argument{'s' if len(unknown) > 1 else ''} "
                f"{', '.join(map(repr, unknown))}; this prompt takes {', '.join(names)}",
                {"prompt": self.name, "arguments": unknown},
            )
        values: dict[str, str] = {}
        for argument in self.arguments:
            value = given.get(argument.name, "").strip()
            if value:
                values[argument.name] = value
            elif argument.required:
                raise _invalid(
                    f"{self.name}: argument {argument.name} is required: "
                    f"{argument.description[0].lower()}{argument.description[1:]}",
                    {"prompt": self.name, "argument": argument.name},
                )
        return values


def _invalid(message: str, data: Any = None) -> wire.McpError:
    return wire.McpError(wire.INVALID_PARAMS, message, data)


def _document_argument(name: str, title: str, which: str) -> Argument:
    return Argument(
        name,
        title,
        f"The {which} URI: docshelf://shelf/path, or a part of it (?pages=3-5, ?section=slug)",
        Completes.DOCUMENT,
    )


PROMPTS: Mapping[str, Prompt] = {
    prompt.name: prompt
    for prompt in sorted(
        [
            Prompt(
                SUMMARIZE,
                "Summarize a document",
                "Summarize one document of the shelf: its text is embedded (a long one in "
                "parts, as far as the read cap allows, the rest named by URI).",
                (_document_argument("uri", "Document", "document's"),),
            ),
            Prompt(
                COMPARE,
                "Compare two documents",
                "Compare two documents of the shelf: what they share, where they differ. "
                "Both are embedded, the read cap shared between them.",
                (
                    _document_argument("uri_a", "First document", "first document's"),
                    _document_argument("uri_b", "Second document", "second document's"),
                ),
            ),
            Prompt(
                ANSWER,
                "Answer from the shelf",
                "Answer a question from the documents of the shelf: a full-text search "
                "finds the pages and sections that match, and the best of them are "
                "embedded for the model to answer from and cite.",
                (
                    Argument(
                        "question",
                        "Question",
                        "The question to answer, in your own words",
                        Completes.NOTHING,
                    ),
                    Argument(
                        "path_prefix",
                        "Folder",
                        "Only documents whose path starts with this, e.g. guides/",
                        Completes.PATH,
                        required=False,
                    ),
                ),
            ),
        ],
        key=lambda prompt: prompt.name,
    )
}


def unknown_prompt(name: str, method: str) -> wire.McpError:
    """-32602 (server/prompts "Error Handling": "Invalid prompt name")."""
    return _invalid(
        f"{method}: unknown prompt {name!r}; this server has {', '.join(PROMPTS)}",
        {"name": name},
    )


#: English function words a question is full of and a search is better without: every
#: document has them, so the search's any-word fallback matched every document on them
#: (PostgreSQL's English configuration drops them itself; SQLite's FTS5 does not).
_STOPWORDS = """
    a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for
    from further had has have having he her here hers herself him himself his how i if in
    into is it its itself just me more most my myself no nor not now of off on once only or
    other our ours ourselves out over own same she should so some such than that the their
    theirs them themselves then there these they this those through to too under until up
    very was we were what when where which while who whom why will with would you your
    yours yourself yourselves"""
STOPWORDS = frozenset(_STOPWORDS.split())
# A question's terms: a "quoted phrase", or a word (a prefix* too), as the search reads them.
_QUESTION_TERM = re.compile(r'"([^"]*)"|(\w+\*?)')
_WORD = re.compile(r"\w")


def search_query(question: str) -> str:
    """The search for ``question``: its phrases and words, less the function words (all of
    them if it has nothing else), each once, as many as a query holds. :class:`InvalidQuery`
    if it has no word to search for."""
    terms: list[str] = []
    every: list[str] = []
    for phrase, word in _QUESTION_TERM.findall(question):
        if _WORD.search(phrase):
            terms.append(f'"{phrase}"')
        elif word:
            every.append(word.lower())
            if word.lower().rstrip("*") not in STOPWORDS:
                terms.append(word.lower())
    query = ""
    for term in list(dict.fromkeys(terms or every))[:MAX_TERMS]:
        longer = f"{query} {term}".strip()
        if len(longer) <= MAX_QUERY_CHARS:
            query = longer
    parse_query(query)  # nothing to search for: the search's own message
    return query


def _user(block: dict[str, Any]) -> dict[str, Any]:
    return {"role": "user", "content": block}


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _named(target: Target) -> str:
    """How the instructions name a target: “Title” (uri)."""
    return f"\u201c{target.record.title}\u201d ({target.uri})"


def _result(
    description: str,
    messages: list[dict[str, Any]],
    left_out: Sequence[tuple[str, str]],
    budget: int,
) -> dict[str, Any]:
    """A ``GetPromptResult``: the messages, then the text naming what was left out."""
    named = left_out_text(left_out, budget)
    if named is not None:
        messages.append(_user(_text(named)))
    return {"description": description, "messages": messages}


class PromptService:
    def __init__(self, resources: ResourceService, search: SearchIndex) -> None:
        self.resources = resources
        self.search = search
        self._builders: Mapping[
            str, Callable[[RequestContext, Mapping[str, str]], dict[str, Any]]
        ] = {SUMMARIZE: self._summarize, COMPARE: self._compare, ANSWER: self._answer}

    def list_prompts(self, ctx: RequestContext, params: PageParams) -> dict[str, Any]:
        """server/prompts "Listing Prompts", by name, paged as ``resources/list`` is
        (basic/utilities/pagination: the cursor names the last prompt of the page)."""
        try:
            after = decode_cursor(params.cursor) if params.cursor is not None else None
        except InvalidCursor as exc:
            raise _invalid(f"Invalid cursor: {exc}") from exc
        following = [prompt for name, prompt in PROMPTS.items() if after is None or name > after]
        page = following[: self.resources.page_size]
        result: dict[str, Any] = {"prompts": [prompt.listed() for prompt in page]}
        if len(following) > len(page):
            result["nextCursor"] = encode_cursor(page[-1].name)
        return result

    def get(self, ctx: RequestContext, params: GetPromptParams) -> dict[str, Any]:
        """server/prompts "Getting a Prompt"."""
        prompt = PROMPTS.get(params.name)
        if prompt is None:
            raise unknown_prompt(params.name, "prompts/get")
        return self._builders[prompt.name](ctx, prompt.check(params.arguments))

    # -- the prompts -------------------------------------------------------------------------

    def _summarize(self, ctx: RequestContext, arguments: Mapping[str, str]) -> dict[str, Any]:
        embedder = Embedder(self.resources, ctx)
        target = self._target(embedder, SUMMARIZE, "uri", arguments["uri"])
        budget = self.resources.max_read_bytes
        embedded = self._embed(embedder, SUMMARIZE, target, Budget(budget))
        what = "part of the document" if target.is_part else "document"
        text = f"Summarize the {what} {_named(target)}: its purpose, its main points and "
        text += "what it concludes. "
        if embedded.whole or target.is_part:
            text += "Its text is embedded below."
        else:
            text += (
                f"It is too long to embed whole ({mb(target.size or 0)} of text; this "
                f"prompt embeds at most {mb_budget(budget)}), so its parts are embedded "
                "below in document order, each under its own URI, as far as that goes; "
                "the parts left out are named after them. Say which parts your summary "
                "covers."
            )
        messages = [_user(_text(text)), *map(_user, embedded.blocks)]
        return _result(f"Summarize {_named(target)}", messages, embedded.left_out, budget)

    def _compare(self, ctx: RequestContext, arguments: Mapping[str, str]) -> dict[str, Any]:
        embedder = Embedder(self.resources, ctx)
        targets = [
            self._target(embedder, COMPARE, name, arguments[name]) for name in ("uri_a", "uri_b")
        ]
        if targets[0].uri == targets[1].uri:
            raise _invalid(
                f"{COMPARE}: uri_a and uri_b are the same, {targets[0].uri}; "
                "name two documents (or two parts) to compare",
                {"uri": targets[0].uri},
            )
        # The budget is shared: the shorter document first, with half of it; the other
        # gets the rest, so a short one leaves a long one more room.
        budget = self.resources.max_read_bytes

        def size(index: int) -> int:
            known = targets[index].size
            return budget if known is None else known

        order = sorted(range(2), key=size)
        embedded: dict[int, Embedded] = {}
        used = 0
        for share, index in zip((budget // 2, None), order, strict=True):
            left = Budget(share if share is not None else budget - used)
            start = left.left
            embedded[index] = self._embed(embedder, COMPARE, targets[index], left)
            used += start - left.left
        a, b = targets
        text = (
            f"Compare two documents: A, {_named(a)}, and B, {_named(b)}. Say what they have "
            "in common, where they differ or contradict each other, and what one covers that "
            "the other does not; cite the URIs you draw on."
        )
        if not all(embedded[i].whole or targets[i].is_part for i in range(2)):
            text += (
                f" Together they are too long to embed whole (this prompt embeds at most "
                f"{mb_budget(budget)}, shared between them), so what does not fit its "
                "share is embedded in parts, in document order, each under its own URI; the "
                "parts left out are named at the end."
            )
        messages = [_user(_text(text))]
        for label, index in (("A", 0), ("B", 1)):
            messages.append(_user(_text(f"Document {label}: {_named(targets[index])}")))
            messages.extend(map(_user, embedded[index].blocks))
        left_out = embedded[0].left_out + embedded[1].left_out
        return _result(f"Compare {_named(a)} and {_named(b)}", messages, left_out, budget)

    def _answer(self, ctx: RequestContext, arguments: Mapping[str, str]) -> dict[str, Any]:
        question = arguments["question"]
        prefix = arguments.get("path_prefix")
        try:
            query = search_query(question)
        except InvalidQuery as exc:
            raise _invalid(
                f"{ANSWER}: the question cannot be searched for: {exc}",
                {"prompt": ANSWER, "argument": "question"},
            ) from None
        served = self.resources.shelves.bound()  # a stdio server's roots
        filters = Filters(path_prefix=prefix, served=served)
        hits = self.search.search(query, filters=filters, limit=ANSWER_HITS)
        where = f" under {prefix!r}" if prefix else ""
        text = f"Answer this question from the documents of the shelf:\n\n{question}\n\n"
        budget = self.resources.max_read_bytes
        if not hits:
            text += (
                f"A search of the shelf{where} for {query!r} found nothing: no document's "
                "title, path or text matches it. Say so plainly rather than answer from "
                "general knowledge; the question may need other words, or another folder."
            )
            text += self._unread(filters)
            return _result(f"Answer: {question}", [_user(_text(text))], [], budget)
        embedded = Embedder(self.resources, ctx).hits(hits, Budget(budget))
        if embedded.blocks:
            text += (
                f"A search of the shelf{where} for {query!r} found the passages embedded "
                "below, best match first, each under the URI of its page, section or "
                "document. Answer from them, cite the URIs you use, and say plainly if they "
                "do not answer the question."
            )
        else:
            text += (
                f"A search of the shelf{where} for {query!r} found {len(hits)} "
                f"match{'es' if len(hits) != 1 else ''}, but none of them could be embedded "
                "here (the list below says why). Say so plainly rather than answer from "
                "general knowledge."
            )
        text += self._unread(filters)
        messages = [_user(_text(text)), *map(_user, embedded.blocks)]
        return _result(f"Answer: {question}", messages, embedded.left_out, budget)

    def _unread(self, filters: Filters) -> str:
        """What the search could not read yet, as search_documents says it (honest search):
        the model is told the shelf may hold more than the passages show."""
        notice = what_was_not_read(
            self.search.database, filters, self.resources.shelves, self.resources.catalog_complete()
        ).get("notice")
        return f"\n\nThe search did not read everything: {notice}" if notice else ""

    # -- shared steps -------------------------------------------------------------------------

    def _target(self, embedder: Embedder, prompt: str, argument: str, uri: str) -> Target:
        """What ``argument`` names; an error that says which prompt and argument it was."""
        try:
            return embedder.target(uri)
        except wire.McpError as exc:
            data = exc.data if isinstance(exc.data, dict) else {"uri": uri}
            data = {**data, "argument": argument}
            if exc.message == "Resource not found":  # the era's code, as resources/read's
                reason = f" ({data['reason']})" if data.get("reason") else ""
                message = (
                    f"{prompt}: {argument} names no document: {uri}{reason}; "
                    "completion/complete offers the shelf's document URIs"
                )
            else:
                message = f"{prompt}: {exc.message}"
            raise type(exc)(exc.code, message, data, http_status=exc.http_status) from None

    def _embed(self, embedder: Embedder, prompt: str, target: Target, budget: Budget) -> Embedded:
        """``target`` embedded within ``budget``; -32602 if nothing of it fits."""
        share = budget.left
        embedded = embedder.document(target, budget)
        if not embedded.blocks:
            raise _invalid(
                f"{prompt}: nothing of {target.uri} fits in this prompt: it may embed "
                f"{mb(share)} of it, and its first part is larger; read it in parts with "
                "read_document, or the operator can raise DOCSHELF_MAX_READ_MB",
                {"uri": target.uri, "maxReadBytes": self.resources.max_read_bytes},
            )
        return embedded
