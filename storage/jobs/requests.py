"""What a reindex job is asked to do, checked and put in canonical form before it is queued."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from pathlib import PurePosixPath


class UnknownShelf(LookupError):
    """A request names a shelf this process does not serve."""

    @classmethod
    def check(cls, shelf: str, shelves: Collection[str]) -> None:
        """Raise for ``shelf`` unless it is one of ``shelves``, naming the ones there are."""
        if shelf not in shelves:
            raise cls(f"unknown shelf {shelf!r}; this server has: {', '.join(shelves)}")


def normalize_path(raw: str) -> str:
    """A shelf-relative POSIX path in canonical form; ValueError says what is wrong."""
    if "\x00" in raw:
        raise ValueError(f"path {raw!r} contains a NUL character")
    try:
        raw.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"path {raw!r} is not valid Unicode (a lone surrogate)") from None
    if raw.startswith("/"):
        raise ValueError(
            f"path {raw!r} is absolute: paths are relative to the shelf's root, "
            "e.g. 'guides/intro.md'"
        )
    parts = [part for part in raw.split("/") if part not in ("", ".")]
    if ".." in parts:
        raise ValueError(f"path {raw!r} contains '..': paths must stay inside the shelf")
    if not parts:
        raise ValueError(
            f"path {raw!r} names the shelf's root: leave paths out to reindex the whole shelf"
        )
    return str(PurePosixPath(*parts))


@dataclass(frozen=True, slots=True)
class JobRequest:
    """What to reindex: ``shelf`` None = every shelf; ``paths`` None = the whole shelf."""

    shelf: str | None = None
    paths: tuple[str, ...] | None = None
    force: bool = False

    def validated(self, shelves: Collection[str]) -> JobRequest:
        """This request with canonical paths, for a process serving ``shelves``;
        UnknownShelf or ValueError says what is wrong."""
        if self.shelf is not None:
            UnknownShelf.check(self.shelf, shelves)
        if self.paths is None:
            return self
        if self.shelf is None:
            raise ValueError("paths are relative to a shelf: name the shelf as well")
        if not self.paths:
            raise ValueError("paths is empty: leave it out to reindex the whole shelf")
        paths = tuple(sorted({normalize_path(p) for p in self.paths}))
        return JobRequest(self.shelf, paths, self.force)

    def merged(self, other: JobRequest) -> JobRequest:
        """This request widened by ``other`` (same target): paths united, force or-ed."""
        paths = (
            None
            if self.paths is None or other.paths is None
            else tuple(sorted({*self.paths, *other.paths}))
        )
        return JobRequest(self.shelf, paths, self.force or other.force)


@dataclass(frozen=True, slots=True)
class Submission:
    job_id: int
    coalesced: bool  # True: merged into a job that was already queued
