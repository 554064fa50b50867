"""The layout of DESIGN §3, held by reading the source: one namespace, data flowing one way.

The folders of the design card (``app/``, ``storage/``, ``converters/``, ``migrations/``) install
as ``docshelf.app``, ``docshelf.storage``, … (issue #11: generic top-level names like ``app``
collide in site-packages). Because pytest puts the repository root on ``sys.path``, a stray
``import app`` would still run in the tests and load a second copy of every module; these
checks catch it before that happens.
"""

from __future__ import annotations

import ast
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("app", "storage", "converters", "migrations")
SOURCES = (*PACKAGES, "tests", "bench", "deploy")


def python_files(*folders: str) -> Iterator[Path]:
    for folder in folders:
        yield from (path for path in (ROOT / folder).rglob("*.py") if "data" not in path.parts)


# An import statement inside a string: code run by ``python -c`` in a child process.
IMPORT_IN_CODE = re.compile(r"(?:^|;)\s*(?:from|import) ([\w.]+)", re.MULTILINE)


def imported_modules(path: Path) -> Iterator[str]:
    """Every absolute module name a file imports, in its code or in code it passes as a
    string to another interpreter (``from . import`` stays relative: skipped)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield from IMPORT_IN_CODE.findall(node.value)


def test_every_package_folder_is_installed_under_the_docshelf_namespace() -> None:
    listed = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    folders = sorted(
        "docshelf." + ".".join(init.parent.relative_to(ROOT).parts)
        for package in PACKAGES
        for init in (ROOT / package).rglob("__init__.py")
    )
    assert listed["package-dir"] == {"docshelf": "."}
    assert sorted(listed["packages"]) == folders


@pytest.mark.parametrize("folder", SOURCES)
def test_nothing_imports_a_product_package_by_its_bare_name(folder: str) -> None:
    bare = {
        f"{path.relative_to(ROOT)}: {module}"
        for path in python_files(folder)
        for module in imported_modules(path)
        if module.split(".")[0] in PACKAGES
    }
    assert not bare, "import these as docshelf.<package>"


@pytest.mark.parametrize(
    ("folder", "forbidden"),
    [("converters", {"app", "storage"}), ("storage", {"app"}), ("bench", {"tests"})],
)
def test_data_flows_one_way(folder: str, forbidden: set[str]) -> None:
    """DESIGN §3: files → converters → storage → app. Benchmarks stand on their own: they
    run the product as a user does and bring their own harness, never the tests' helpers."""
    upward = {
        f"{path.relative_to(ROOT)}: {module}"
        for path in python_files(folder)
        for module in imported_modules(path)
        if module.split(".")[0] in forbidden
        or (module.startswith("docshelf.") and module.split(".")[1] in forbidden)
    }
    assert not upward


#: What the protocol layer takes from the converters: format names, error types, and the
#: vocabulary of parts and families (issue 29). Converting — a part included — happens
#: below it, in storage and the converters.
PROTOCOL_VOCABULARY = frozenset(
    {
        "docshelf.converters",
        "docshelf.converters.base",
        "docshelf.converters.families",
        "docshelf.converters.formats",
        "docshelf.converters.members",
        "docshelf.converters.parts",
    }
)


def test_the_protocol_layer_asks_for_bytes_and_converts_nothing() -> None:
    converting = {
        f"{path.relative_to(ROOT)}: {module}"
        for path in python_files("app/mcp")
        for module in imported_modules(path)
        if module.startswith("docshelf.converters") and module not in PROTOCOL_VOCABULARY
    }
    assert not converting


def imported_test_modules(path: Path) -> Iterator[str]:
    """The test modules (``test_*.py`` under ``tests/``) that ``path`` imports, relative
    imports (``from .test_docx import …``, ``from . import test_docx``) resolved."""
    package = path.relative_to(ROOT).parent.parts
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else ()
            module = ".".join((*base, *filter(None, (node.module or "").split("."))))
            names = [module, *(f"{module}.{alias.name}" for alias in node.names)]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if (
                parts[0] == "tests"
                and parts[-1].startswith("test_")
                and ROOT.joinpath(*parts).with_suffix(".py").is_file()
            ):
                yield name


def test_no_test_module_imports_another() -> None:
    """A helper that two test modules need lives in ``tests/support/`` (issue 29): a test
    module that imports another depends on that one's internals, so renaming a helper in one
    suite breaks another, and running one module loads the other's set-up."""
    borrowed = {
        f"{path.relative_to(ROOT)}: {module}"
        for path in python_files("tests")
        for module in imported_test_modules(path)
    }
    assert not borrowed, "move the shared helper to tests/support/"
