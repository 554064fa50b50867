"""``compose.scale.yml``: docshelf on more than one machine (issue 27, item 5).

No docker engine here, so, as ``tests/test_deployment.py`` does for the other compose
files, the file is checked offline: against the Compose Specification's schema, for the
services and the order they start in, the settings and credentials each container gets,
the variables compose requires, the balancer's configuration (``caddy validate`` where
Caddy is installed; its upstream name against the services' network alias), and the
bucket step run for real against SeaweedFS.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import uuid
from functools import cache
from typing import Any

import pytest
import yaml

from docshelf.app.settings import Settings
from tests.support.deployment import (
    DEPLOYMENT_DOC,
    ComposeStops,
    compose_schema_errors,
    interpolate,
)
from tests.support.paths import REPO
from tests.support.settings import SETTING_VARIABLES

COMPOSE_SCALE = REPO / "compose.scale.yml"
CADDYFILE = REPO / "deploy" / "Caddyfile.scale"
CREATE_BUCKETS = REPO / "deploy" / "create_buckets.py"
REQUIRED = {"POSTGRES_PASSWORD": "pgsecret", "S3_ACCESS_KEY": "akey", "S3_SECRET_KEY": "skey"}
SERVING = ("indexer", "replica")
AWS_VARIABLES = {"AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"}


@cache
def written() -> dict[str, Any]:
    return yaml.safe_load(COMPOSE_SCALE.read_text())  # YAML merge keys resolved


def config(env: dict[str, str] | None = None) -> dict[str, Any]:
    return interpolate(written(), REQUIRED if env is None else env)


@pytest.mark.parametrize("env_source", ["as written", "with the required variables"])
def test_compose_scale_is_valid_against_the_compose_specification(env_source: str) -> None:
    document = written() if env_source == "as written" else config()
    errors = compose_schema_errors(document)
    assert not errors, "\n".join(errors)


@pytest.mark.parametrize("missing", sorted(REQUIRED))
def test_compose_scale_stops_without_each_secret(missing: str) -> None:
    env = {k: v for k, v in REQUIRED.items() if k != missing}
    with pytest.raises(ComposeStops, match=f"set {missing} in .env"):
        config(env)


def test_the_services_and_the_order_they_start_in() -> None:
    services = config()["services"]
    assert set(services) == {"postgres", "seaweedfs", "buckets", *SERVING, "balancer"}
    for name in SERVING:
        service = services[name]
        assert service["build"] == "." and service["image"] == "docshelf:local"
        assert service["depends_on"] == {
            "postgres": {"condition": "service_healthy"},
            "buckets": {"condition": "service_completed_successfully"},
        }
        assert service["healthcheck"]["test"] == ["CMD", "python", "/opt/docshelf/healthcheck.py"]
        assert service["networks"]["default"]["aliases"] == ["docshelf"]
        assert "ports" not in service  # reached through the balancer only
    assert services["buckets"]["depends_on"] == {"seaweedfs": {"condition": "service_healthy"}}
    assert services["buckets"]["restart"] == "no"  # runs once per `up`
    assert services["balancer"]["depends_on"] == {"indexer": {"condition": "service_healthy"}}
    published = {name for name, service in services.items() if "ports" in service}
    assert published == {"balancer"}  # one port for the whole service
    assert services["balancer"]["ports"] == ["127.0.0.1:8000:8000"]  # loopback by default
    for name in ("postgres", "seaweedfs"):
        assert services[name]["healthcheck"]["test"], name


def test_one_indexer_and_replicas_that_do_not_index() -> None:
    services = config()["services"]
    indexer, replica = services["indexer"]["environment"], services["replica"]["environment"]
    assert "DOCSHELF_INDEX_ON_START" not in indexer  # the default: it indexes
    assert replica["DOCSHELF_INDEX_ON_START"] == "false"
    assert replica["DOCSHELF_WATCH"] == "false"  # a replica that watches is refused at start
    assert services["replica"]["deploy"]["replicas"] == "2"
    assert config({**REQUIRED, "REPLICAS": "5"})["services"]["replica"]["deploy"]["replicas"] == "5"
    assert "deploy" not in services["indexer"]  # exactly one indexes
    # Apart from the role, the replicas get what the indexer gets.
    role = {"DOCSHELF_INDEX_ON_START", "DOCSHELF_WATCH"}
    assert {k: v for k, v in replica.items() if k not in role} == indexer


def test_every_docshelf_process_shares_postgres_and_the_object_store() -> None:
    services = config()["services"]
    for name in SERVING:
        env = services[name]["environment"]
        assert env["DOCSHELF_DATABASE_URL"] == (
            "postgresql+psycopg://docshelf:pgsecret@postgres:5432/docshelf"
        )
        assert env["DOCSHELF_STORE_URL"] == "s3://docshelf/formats"
        assert env["DOCSHELF_SHELVES"] == "shelf=s3://docshelf/shelf"
        assert env["AWS_ENDPOINT_URL"] == "http://seaweedfs:8333"
        assert (env["AWS_ACCESS_KEY_ID"], env["AWS_SECRET_ACCESS_KEY"]) == ("akey", "skey")
        assert env["DOCSHELF_ALLOWED_HOSTS"] == "localhost,docshelf"
        unknown = {k for k in env if k.startswith("DOCSHELF_")} - SETTING_VARIABLES
        assert not unknown, f"{name}: not settings: {sorted(unknown)}"
        # Every value is one docshelf accepts: the settings parse as the container would.
        docshelf = {
            k: str(v) for k, v in env.items() if k.startswith("DOCSHELF_") and v is not None
        }  # a bare name passes what the .env file has; unset, docshelf's default holds
        with pytest.MonkeyPatch.context() as patch:
            for key in [k for k in os.environ if k.startswith("DOCSHELF_")]:
                patch.delenv(key)
            for key, value in docshelf.items():
                patch.setenv(key, value)
            settings = Settings()
        assert settings.store_spec.is_s3
        assert settings.shelf_specs() == [("shelf", "s3://docshelf/shelf")]
    # The bucket step reaches the same store with the same keys.
    buckets = services["buckets"]["environment"]
    serving = services["indexer"]["environment"]
    assert {k: buckets[k] for k in AWS_VARIABLES} == {k: serving[k] for k in AWS_VARIABLES}
    assert services["buckets"]["command"][2:] == [
        serving["DOCSHELF_STORE_URL"],
        serving["DOCSHELF_SHELVES"],
    ]
    assert services["buckets"]["configs"] == [
        {"source": "create-buckets", "target": "/opt/create_buckets.py"}
    ]
    assert config()["configs"]["create-buckets"]["file"] == "./deploy/create_buckets.py"
    assert CREATE_BUCKETS.exists()


def test_the_store_accepts_exactly_the_keys_docshelf_is_given() -> None:
    """SeaweedFS's identities file (a compose config with interpolated content) is JSON and
    names the keys the docshelf containers and the bucket step use."""
    document = config()
    identities = json.loads(document["configs"]["s3-identities"]["content"])
    (identity,) = identities["identities"]
    assert identity["credentials"] == [{"accessKey": "akey", "secretKey": "skey"}]
    assert {"Read", "Write", "List"} <= set(identity["actions"])
    seaweedfs = document["services"]["seaweedfs"]
    assert seaweedfs["image"].startswith("chrislusf/seaweedfs:")
    assert "-s3.config=/etc/seaweedfs/s3.json" in seaweedfs["command"]
    assert seaweedfs["configs"] == [{"source": "s3-identities", "target": "/etc/seaweedfs/s3.json"}]
    assert "-s3.port=8333" in seaweedfs["command"]
    assert document["services"]["indexer"]["environment"]["AWS_ENDPOINT_URL"].endswith(":8333")


def test_the_balancer_sends_to_every_serving_container() -> None:
    text = CADDYFILE.read_text()
    balancer = config()["services"]["balancer"]
    assert balancer["image"].startswith("caddy:")
    (mount,) = balancer["volumes"]
    assert mount == {
        "type": "bind",
        "source": "./deploy/Caddyfile.scale",
        "target": "/etc/caddy/Caddyfile",
        "read_only": True,
    }
    # The name the balancer asks DNS for is the alias every serving container carries, on
    # the port the image serves (DOCSHELF_PORT=8000), and it listens where compose publishes.
    (name,) = re.findall(r"^\s*name\s+(\S+)$", text, re.MULTILINE)
    (port,) = re.findall(r"^\s*port\s+(\d+)$", text, re.MULTILINE)
    assert name == "docshelf" and port == "8000"
    assert balancer["ports"][0].endswith(":8000") and re.search(r"^:8000 \{$", text, re.M)
    assert re.search(r"^\s*health_uri /healthz$", text, re.MULTILINE)
    assert re.search(r"^\s*flush_interval -1$", text, re.MULTILINE)  # SSE streams


@pytest.mark.skipif(shutil.which("caddy") is None, reason="caddy not installed (apt install caddy)")
def test_caddy_accepts_the_balancers_configuration() -> None:
    checked = subprocess.run(
        ["caddy", "validate", "--config", str(CADDYFILE), "--adapter", "caddyfile"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert checked.returncode == 0, checked.stderr[-2000:]
    assert "Valid configuration" in checked.stdout + checked.stderr
    formatted = subprocess.run(
        ["caddy", "fmt", str(CADDYFILE)], capture_output=True, text=True, timeout=60
    )
    assert formatted.stdout == CADDYFILE.read_text(), "run `caddy fmt --overwrite`"


def run_create_buckets(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(CREATE_BUCKETS), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_the_bucket_step_creates_the_buckets_once(s3_server: Any) -> None:
    env = {**os.environ, **s3_server.env()}
    store, shelf = f"formats-{uuid.uuid4().hex[:8]}", f"shelf-{uuid.uuid4().hex[:8]}"
    args = (f"s3://{store}/formats", f"main=s3://{shelf}/docs,local=/srv/folder")
    first = run_create_buckets(*args, env=env)
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip() == f"created: {store}, {shelf}"
    client = s3_server.client()
    for bucket in (store, shelf):
        client.head_bucket(Bucket=bucket)  # raises for a bucket that does not exist
    again = run_create_buckets(*args, env=env)
    assert (again.returncode, again.stdout.strip()) == (0, "the buckets exist already")


def test_the_bucket_step_refuses_a_bad_bucket_name_and_no_arguments() -> None:
    bad = run_create_buckets("s3://Not_A_Bucket/x", env=dict(os.environ))
    assert bad.returncode == 2
    assert bad.stderr.strip() == (
        "create_buckets: 's3://Not_A_Bucket/x': 'Not_A_Bucket' is not a bucket name "
        "(3-63 lowercase letters, digits, '.' or '-')"
    )
    bare = run_create_buckets(env=dict(os.environ))
    assert bare.returncode == 2
    assert bare.stderr.strip() == "usage: create_buckets.py s3://BUCKET[/PREFIX]..."


def test_the_deployment_doc_runs_this_file() -> None:
    text = DEPLOYMENT_DOC.read_text()
    section = text[text.index("## More than one machine") :]
    commands = re.findall(r"^docker compose -f compose\.scale\.yml .*$", section, re.MULTILINE)
    assert commands, "docs/deployment.md shows how to start compose.scale.yml"
    for variable in REQUIRED:
        assert variable in section, variable
    assert "measured" in section and "projected" in section
