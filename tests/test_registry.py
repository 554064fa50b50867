"""``server.json``: docshelf as the official MCP Registry lists it.

It validates against the registry's released schema (vendored with its licence in
``tests/data/registry/``, found through its ``$schema`` URL in a local registry: no
network), and what it declares is true of this repository: the name is the one the
PyPI description (README's ``mcp-name:`` marker) and the image's label claim, the
versions are ``app.__version__``, the stdio package's arguments are a real ``docshelf``
command line, and the image's mounts, port and variables are the image's own.
"""

from __future__ import annotations

import json
import re
import tomllib
from typing import Any

import pytest
from jsonschema import Draft7Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT7

from docshelf import app
from docshelf.app.cli import build_parser
from docshelf.app.settings import Settings
from tests.support.deployment import DOCKERFILE, env_pairs, exec_form, parse_dockerfile
from tests.support.paths import DATA, REPO

SERVER_JSON = REPO / "server.json"
SCHEMA_DIR = DATA / "registry"
SERVER_NAME = "io.github.docshelf/docshelf"  # the `docshelf` GitHub organisation's namespace
LABEL = "io.modelcontextprotocol.server.name"


def server() -> dict[str, Any]:
    return json.loads(SERVER_JSON.read_text())


def package(registry_type: str) -> dict[str, Any]:
    [found] = [p for p in server()["packages"] if p["registryType"] == registry_type]
    return found


def vendored_schemas() -> Registry:
    schema = json.loads((SCHEMA_DIR / "server.schema.json").read_text())
    return Registry().with_resource(schema["$id"], Resource.from_contents(schema, DRAFT7))


def final_stage() -> list[Any]:
    instructions = parse_dockerfile(DOCKERFILE.read_text())
    return [i for i in instructions if i.stage == instructions[-1].stage]


def test_the_schema_is_vendored_with_its_licence_and_provenance() -> None:
    assert "MIT License" in (SCHEMA_DIR / "LICENSE").read_text()
    provenance = (SCHEMA_DIR / "README.md").read_text()
    assert re.search(r"\b[0-9a-f]{40}\b", provenance), "the README names the commit"
    schema = json.loads((SCHEMA_DIR / "server.schema.json").read_text())
    assert schema["$schema"] == "http://json-schema.org/draft-07/schema#"
    assert schema["$id"] in provenance


def test_server_json_is_valid_against_the_schema_its_dollar_schema_names() -> None:
    document = server()
    # Resolved locally: an unknown URL (another schema version) is an error, not a download.
    schema = vendored_schemas().contents(document["$schema"])
    validator = Draft7Validator(
        schema, registry=vendored_schemas(), format_checker=Draft7Validator.FORMAT_CHECKER
    )
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(document)]
    assert not errors, "\n".join(errors)


@pytest.mark.parametrize(
    ("change", "complaint"),
    [
        (lambda s: s.pop("version"), "'version' is a required property"),
        (lambda s: s.update(name="docshelf"), "does not match"),
        (lambda s: s.update(description="x" * 101), "is too long"),
        (lambda s: s["packages"][0].update(version="latest"), "should not be valid"),
    ],
)
def test_the_schema_is_awake(change: Any, complaint: str) -> None:
    document = server()
    change(document)
    validator = Draft7Validator(
        vendored_schemas().contents(document["$schema"]), registry=vendored_schemas()
    )
    messages = [e.message for e in validator.iter_errors(document)]
    assert any(complaint in m for m in messages), messages


def test_the_name_and_versions_are_this_repository_s() -> None:
    document = server()
    assert document["name"] == SERVER_NAME
    assert document["version"] == app.__version__
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    pypi = package("pypi")
    assert (pypi["identifier"], pypi["version"]) == (project["name"], app.__version__)
    image, _, tag = package("oci")["identifier"].rpartition(":")
    assert tag == app.__version__
    assert image.count("/") == 2, "the image names its registry (ghcr.io/OWNER/NAME)"


def test_the_pypi_description_carries_the_ownership_marker() -> None:
    """The registry checks a PyPI package by ``mcp-name: <server name>`` in its description,
    which is README.md (pyproject's ``readme``)."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["readme"] == "README.md"
    last_line = (REPO / "README.md").read_text().rstrip("\n").splitlines()[-1]
    assert last_line == f"<!-- mcp-name: {SERVER_NAME} -->"


def test_the_image_carries_the_ownership_label() -> None:
    """The registry checks an OCI image by its ``io.modelcontextprotocol.server.name``."""
    labels = {
        k: v for i in final_stage() if i.keyword == "LABEL" for k, v in env_pairs(i.args).items()
    }
    assert labels.get(LABEL) == SERVER_NAME == server()["name"]


def _argv(arguments: list[dict[str, Any]], inputs: dict[str, str]) -> list[str]:
    """A command line as a client builds it from the declared arguments and the user's
    inputs (keyed by argument name, or by variable name inside a value)."""
    argv: list[str] = []
    for argument in arguments:
        value = argument.get("value", inputs.get(argument.get("name", ""), ""))
        for variable, spec in argument.get("variables", {}).items():
            value = value.replace(f"{{{variable}}}", inputs.get(variable, spec.get("default", "")))
        argv += [f"{argument['name']}={value}"] if argument["type"] == "named" else [value]
    return argv


def test_the_pypi_package_runs_docshelf_stdio_on_the_shelf_folder() -> None:
    pypi = package("pypi")
    assert pypi["runtimeHint"] == "uvx" and pypi["transport"] == {"type": "stdio"}
    [shelf] = [a for a in pypi["packageArguments"] if a.get("format") == "filepath"]
    assert shelf["isRequired"] is True
    args = build_parser().parse_args(_argv(pypi["packageArguments"], {"--root": "/srv/papers"}))
    assert args.command == "stdio" and args.roots == ["/srv/papers"]
    settings = {f"DOCSHELF_{name.upper()}" for name in Settings.model_fields}
    variables = {v["name"]: v for v in pypi["environmentVariables"]}
    assert set(variables) <= settings
    assert variables["DOCSHELF_DATA_DIR"]["format"] == "filepath"
    assert not variables["DOCSHELF_DATA_DIR"]["isRequired"]


def test_the_image_package_mounts_and_publishes_what_the_image_uses() -> None:
    oci = package("oci")
    assert oci["runtimeHint"] == "docker"
    image_env = {
        k: v for i in final_stage() if i.keyword == "ENV" for k, v in env_pairs(i.args).items()
    }
    argv = _argv(oci["runtimeArguments"], {"shelf": "/srv/papers"})
    volumes = [a.split("=", 1)[1] for a in argv if a.startswith("--volume=")]
    assert "/srv/papers:/shelf:ro" in volumes and image_env["DOCSHELF_SHELVES"] == "/shelf"
    assert "docshelf-data:/data" in volumes and image_env["DOCSHELF_DATA_DIR"] == "/data"
    [published] = [a.split("=", 1)[1] for a in argv if a.startswith("--publish=")]
    host_ip, host_port, container_port = published.split(":")
    exposed = exec_form([i for i in final_stage() if i.keyword == "EXPOSE"][-1].args)
    assert host_ip == "127.0.0.1" and container_port == image_env["DOCSHELF_PORT"] == exposed[0]
    transport = oci["transport"]
    assert transport == {"type": "streamable-http", "url": f"http://localhost:{host_port}/mcp"}
    [shelf_mount] = [a for a in oci["runtimeArguments"] if "{shelf}" in a.get("value", "")]
    assert shelf_mount["variables"]["shelf"]["format"] == "filepath"
    assert shelf_mount["variables"]["shelf"]["isRequired"] is True
    [token] = oci["environmentVariables"]
    assert token["name"] == "DOCSHELF_ADMIN_TOKEN" and token["isSecret"] is True


def test_the_deployment_doc_tells_how_to_publish() -> None:
    doc = (REPO / "docs" / "deployment.md").read_text()
    section = doc[doc.index("## Publishing to the MCP Registry") :]
    for needed in ("server.json", "mcp-publisher", SERVER_NAME, LABEL, "mcp-name:"):
        assert needed in section, needed
