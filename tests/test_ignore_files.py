"""Ignore files (issue 28, item 5): ``.gitignore`` and ``.docshelfignore`` at any depth of a
folder shelf, with git's rules, on real folders.

git itself is the oracle: ``git ls-files --others --exclude-standard`` lists what git does
not ignore in a tree, and the shelf's walk must list exactly that — for the cases named
in the issue and for trees and ignore files hypothesis makes up.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from docshelf.app.runtime import Runtime
from docshelf.app.settings import Settings
from docshelf.storage.ignore_files import IgnoreRules
from docshelf.storage.shelves import Shelf
from tests.support.servers import child_env, run_docshelf
from tests.support.shelves import write_tree

GIT = shutil.which("git")
needs_git = pytest.mark.skipif(GIT is None, reason="git is the oracle of these cases")

EVERY_FILE = IgnoreRules(patterns=())  # only the ignore files decide (no DOCSHELF_IGNORE)


def listed(root: Path, rules: IgnoreRules = EVERY_FILE) -> set[str]:
    return {path for path, _ in Shelf("s", root, rules).walk()}


def git_listed(root: Path, git_dir: Path) -> set[str]:
    """What git does not ignore under ``root``: no global or system excludes, a repository
    kept outside the tree (so no ``.git`` folder is in it)."""
    assert GIT is not None
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(git_dir),
        "XDG_CONFIG_HOME": str(git_dir),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
    }
    if not (git_dir / "HEAD").exists():
        subprocess.run([GIT, "init", "-q", "--bare", str(git_dir)], check=True, env=env)
    out = subprocess.run(
        [
            GIT,
            f"--git-dir={git_dir}",
            f"--work-tree={root}",
            "ls-files",
            "--others",
            "--exclude-standard",
            "-z",
        ],
        cwd=root,
        check=True,
        capture_output=True,
        env=env,
    ).stdout
    return {name for name in out.decode().split("\0") if name}


# -- the rules, case by case ----------------------------------------------------------------

CASES: dict[str, tuple[dict[str, str], set[str]]] = {
    # name: (the tree, what is served of it besides the ignore files themselves)
    "negation": (
        {".gitignore": "*.log\n!keep.log\n", "a.log": "", "keep.log": "", "sub/keep.log": ""},
        {"keep.log", "sub/keep.log"},
    ),
    "directory_only": (
        {".gitignore": "build/\n", "build/out.md": "", "notes/build": "", "b.md": ""},
        {"notes/build", "b.md"},  # a file named build is no folder
    ),
    "anchored": (
        {".gitignore": "/top.md\n", "top.md": "", "sub/top.md": ""},
        {"sub/top.md"},
    ),
    "double_star": (
        {
            ".gitignore": "docs/**/draft*.md\n**/cache/\n",
            "docs/draft1.md": "",
            "docs/a/b/draft2.md": "",
            "docs/a/final.md": "",
            "notes/draft3.md": "",
            "x/y/cache/c.md": "",
        },
        {"docs/a/final.md", "notes/draft3.md"},
    ),
    "patterns_are_relative_to_their_folder": (
        {
            "sub/.gitignore": "/only.md\nsecret.txt\n",
            "only.md": "",
            "secret.txt": "",
            "sub/only.md": "",
            "sub/deeper/only.md": "",
            "sub/deeper/secret.txt": "",
        },
        {"only.md", "secret.txt", "sub/deeper/only.md"},
    ),
    "a_deeper_file_overrides_a_shallower_one": (
        {
            ".gitignore": "*.md\n!*.txt\n",
            "sub/.gitignore": "!*.md\n*.txt\n",
            "a.md": "",
            "a.txt": "",
            "sub/b.md": "",
            "sub/b.txt": "",
            "sub/deeper/c.md": "",
        },
        {"a.txt", "sub/b.md", "sub/deeper/c.md"},
    ),
    "nothing_is_re_included_below_an_ignored_folder": (
        {
            ".gitignore": "build/\n!build/keep.md\n",
            "build/.gitignore": "!*\n",
            "build/keep.md": "",
            "kept.md": "",
        },
        {"kept.md"},
    ),
    "x_double_star_names_what_is_inside_x_not_x": (
        {".gitignore": "x/**\n!x/d.txt\n", "x/d.txt": "", "x/e.txt": "", "x/sub/f.txt": ""},
        {"x/d.txt"},
    ),
    "a_deeper_folder_pattern_does_not_re_include_the_files_inside": (
        {
            ".gitignore": "*.log\n",
            "sub/.gitignore": "!logs/\n",
            "sub/logs/a.log": "",
            "sub/logs/b.md": "",
        },
        {"sub/logs/b.md"},
    ),
    "a_pattern_naming_a_folder_above_says_nothing_of_a_folder_below": (
        {"y/.gitignore": "*/\n!build\n", "y/build/f.md": "", "y/build/deeper/g.md": ""},
        {"y/build/f.md"},  # y/build is re-included, y/build/deeper is */ again
    ),
    "comments_escapes_and_trailing_spaces": (
        {".gitignore": "# a comment\n\\#hash.md\nspaced.md   \n", "#hash.md": "", "spaced.md": ""},
        set(),
    ),
}


@needs_git
@pytest.mark.parametrize("case", list(CASES))
def test_gitignore_rules_are_gits(case: str, tmp_path: Path) -> None:
    files, served = CASES[case]
    root = write_tree(tmp_path / "shelf", files)
    ours = listed(root)
    assert ours == git_listed(root, tmp_path / "git")
    ignore_files = {path for path in files if path.rpartition("/")[2] == ".gitignore"}
    assert ours - ignore_files == served
    shelf = Shelf("s", root, EVERY_FILE)
    for path in files:  # a look at one path says what the walk says
        assert shelf.ignores(path) == (path not in ours), path


def test_a_docshelfignore_comes_after_the_gitignore_of_its_folder(tmp_path: Path) -> None:
    root = write_tree(
        tmp_path / "shelf",
        {
            ".gitignore": "*.pdf\nbuild/\n",
            ".docshelfignore": "!manual.pdf\ndrafts/\n",
            "manual.pdf": "",
            "other.pdf": "",
            "build/x.md": "",
            "drafts/y.md": "",
            "sub/.docshelfignore": "!*.pdf\n",
            "sub/z.pdf": "",
            "kept.md": "",
        },
    )
    # The default rules: the ignore files are dotfiles, not served themselves.
    assert listed(root, IgnoreRules()) == {"manual.pdf", "kept.md", "sub/z.pdf"}


def test_the_operators_patterns_win_over_a_negation(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "shelf", {".gitignore": "!*.tmp\n!.*\n", "a.tmp": "", "b.md": ""})
    assert listed(root, IgnoreRules()) == {"b.md"}  # DOCSHELF_IGNORE has *.tmp and .*


def test_turned_off_every_file_is_served(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "shelf", {".gitignore": "*\n", "a.md": "", "b/c.md": ""})
    assert listed(root, IgnoreRules()) == set()
    assert listed(root, IgnoreRules(files=False)) == {"a.md", "b/c.md"}


def test_an_ignored_folder_is_never_entered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = write_tree(
        tmp_path / "shelf",
        {".gitignore": "node_modules/\n", "a.md": "", "node_modules/pkg/index.js": ""},
    )
    scanned: list[str] = []
    real_scandir = os.scandir

    def recording(path: str | os.PathLike[str]) -> object:
        scanned.append(Path(path).relative_to(root).as_posix())
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", recording)
    assert listed(root, IgnoreRules()) == {"a.md"}
    assert scanned == ["."]


def test_a_fifo_named_gitignore_is_no_ignore_file_and_blocks_nothing(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "shelf", {"sub/a.md": ""})
    os.mkfifo(root / "sub" / ".gitignore")
    (root / ".gitignore").mkdir()  # nor a folder so named
    assert listed(root, IgnoreRules()) == {"sub/a.md"}
    assert not Shelf("s", root).ignores("sub/a.md")


def test_an_ignore_file_that_cannot_be_read_keeps_its_folder_unserved(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    outside = write_tree(tmp_path / "outside", {"patterns": "nothing.md\n"})
    root = write_tree(tmp_path / "shelf", {"a.md": "", "private/secret.md": ""})
    (root / "private" / ".gitignore").symlink_to(outside / "patterns")  # leaves the shelf
    caplog.set_level(logging.WARNING, "docshelf.storage.shelves")
    shelf = Shelf("s", root)
    assert listed(root, IgnoreRules()) == {"a.md"}
    assert listed(root, IgnoreRules()) == {"a.md"}
    assert shelf.ignores("private/secret.md") and shelf.look("private/secret.md") is None
    said = [r.getMessage() for r in caplog.records if "ignore files" in r.getMessage()]
    assert said == [
        "shelf s: cannot read the ignore files of folder private ('private/.gitignore' "
        f"resolves outside shelf 's'): its files are not served until uid {os.getuid()} can "
        "read them, or they are removed"
    ]


# -- git as the oracle of made-up trees ----------------------------------------------------

NAMES = st.sampled_from(["a", "b.md", "c.log", "d.txt", "build", "x"])
FOLDERS = st.lists(st.sampled_from(["x", "y", "build", "deep", "a"]), max_size=4)
PATTERNS = st.sampled_from(
    [
        "*.log",
        "!*.log",
        "!c.log",
        "a",
        "/a",
        "!a",
        "x",
        "x/",
        "!x/",
        "/x/",
        "y/x/",
        "!y/x/",
        "**/x/",
        "build",
        "!build",
        "build/",
        "!build/",
        "/build/",
        "**/b.md",
        "x/**",
        "!x/**",
        "x/**/d.txt",
        "y/a",
        "/x/b.md",
        "*",
        "!*",
        "*/",
        "!*/",
        "!*.md",
        "x/*",
        "!x/*",
        "!x/d.txt",
        "**/y",
        "d.*",
        "deep/",
        "# comment",
        "",
        "\\!a",
        "[bc].*",
        "?.md",
    ]
)
IGNORE_LINES = st.lists(PATTERNS, max_size=4)


@st.composite
def trees(draw: st.DrawFn) -> tuple[set[str], dict[str, tuple[list[str], list[str]]]]:
    """Files, and per folder the lines of its .gitignore and of its .docshelfignore."""
    files = {"/".join([*draw(FOLDERS), draw(NAMES)]) for _ in range(draw(st.integers(1, 10)))}
    folders = {"/".join(p.split("/")[:depth]) for p in files for depth in range(p.count("/") + 1)}
    ignores = {
        folder: (draw(IGNORE_LINES), draw(IGNORE_LINES))
        for folder in draw(st.lists(st.sampled_from(sorted(folders)), max_size=4, unique=True))
    }
    return files, ignores


def lay_out(
    root: Path, files: set[str], ignores: dict[str, tuple[list[str], list[str]]], *, merged: bool
) -> None:
    """The tree; ``merged``: each .docshelfignore's lines appended to its folder's
    .gitignore instead (what git reads in its place)."""
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir()
    # Deepest first: a name drawn both as a folder and as a file ("build") is a folder.
    for relative in sorted(files, key=lambda p: -p.count("/")):
        path = root / relative
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("x")
    for folder, (git_lines, docshelf_lines) in ignores.items():
        where = root / folder
        if not where.is_dir():
            continue
        lines = git_lines + docshelf_lines if merged else git_lines
        (where / ".gitignore").write_text("".join(f"{line}\n" for line in lines))
        (where / ".docshelfignore").write_text(
            "" if merged else "".join(f"{line}\n" for line in docshelf_lines)
        )


@needs_git
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trees())
def test_any_tree_lists_what_git_lists(
    tree: tuple[set[str], dict[str, tuple[list[str], list[str]]]],
) -> None:
    files, ignores = tree
    with tempfile.TemporaryDirectory() as temporary:
        ours, oracle, git_dir = (
            Path(temporary, "ours"),
            Path(temporary, "git-tree"),
            Path(temporary, "repository"),
        )
        lay_out(ours, files, ignores, merged=False)
        lay_out(oracle, files, ignores, merged=True)
        walked = listed(ours)
        assert walked == git_listed(oracle, git_dir), (files, ignores)
        shelf = Shelf("s", ours, EVERY_FILE)
        for path in files:
            if (ours / path).is_file():
                assert shelf.ignores(path) == (path not in walked), path


# -- the index: a file that becomes ignored leaves it, as a deleted one does ---------------


@pytest.fixture
def runtime(tmp_path: Path) -> Iterator[Runtime]:
    shelf = write_tree(
        tmp_path / "shelf",
        {"a.md": "# A\n", "sub/b.md": "# B\n", "sub/c.log": "c\n", "other/d.md": "# D\n"},
    )
    rt = Runtime(Settings(shelves=[str(shelf)], data_dir=tmp_path / "data", workers=1))
    rt.open()
    rt.index()
    yield rt
    rt.close()


def uris(runtime: Runtime) -> set[str]:
    return {record.uri for record in runtime.catalog.page(None, 100)[0]}


def test_an_ignore_file_change_walks_again_only_the_folder_it_governs(
    runtime: Runtime, tmp_path: Path
) -> None:
    shelf = tmp_path / "shelf"
    (shelf / "sub" / ".gitignore").write_text("*.log\n")
    report = runtime.indexer.refresh("shelf", ["sub/.gitignore"])
    assert report.seen == 1  # sub/b.md: the rest of the shelf was not walked
    assert report.changes.removed == {"docshelf://shelf/sub/c.log"}
    assert runtime.catalog.get("docshelf://shelf/sub/c.log") is None

    (shelf / "sub" / ".docshelfignore").write_text("!c.log\n")
    report = runtime.indexer.refresh("shelf", ["sub/.docshelfignore"])
    assert report.changes.added == {"docshelf://shelf/sub/c.log"}

    (shelf / "sub" / ".docshelfignore").unlink()
    (shelf / ".gitignore").write_text("sub/\n")
    report = runtime.indexer.refresh("shelf", [".gitignore"])
    assert report.seen == 2  # the root's: the whole shelf, a.md and other/d.md
    assert uris(runtime) == {"docshelf://shelf/a.md", "docshelf://shelf/other/d.md"}

    (shelf / ".gitignore").unlink()
    runtime.indexer.refresh("shelf", [".gitignore"])
    assert "docshelf://shelf/sub/b.md" in uris(runtime)  # back; sub/c.log is still *.log
    assert runtime.catalog.get("docshelf://shelf/sub/c.log") is None


def test_the_setting_and_its_flag_turn_ignore_files_off(tmp_path: Path) -> None:
    shelf = write_tree(tmp_path / "shelf", {".gitignore": "*.log\n", "a.md": "", "b.log": ""})

    def seen(*flags: str, **env: str) -> int:
        data = tmp_path / f"data-{len(flags)}-{len(env)}"
        done = run_docshelf(
            "index",
            "--root",
            str(shelf),
            "--data-dir",
            str(data),
            "--json",
            *flags,
            env=child_env(**env),
        )
        assert done.returncode == 0, done.stderr
        return int(json.loads(done.stdout)["counts"]["seen"])

    assert seen() == 1
    assert seen("--no-ignore-files") == 2
    assert seen(DOCSHELF_IGNORE_FILES="false") == 2
