"""A fleet shares one memory in an S3-compatible object store (moto, local, started here)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from memhelpers import ask, event, make_config

from guard.memory.table import storage_options

BUCKET = "guard-fleet"


class TestStorageOptions:
    def test_environment_then_settings_then_explicit_items(self) -> None:
        cfg = make_config(
            memory__s3_endpoint="http://127.0.0.1:9000",
            memory__s3_allow_http=True,
            memory__storage_options="timeout=5s,aws_region=eu-west-1",
        )
        env = {"AWS_ENDPOINT_URL": "http://elsewhere", "AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "k"}
        assert storage_options("s3://b/p", cfg, env) == {
            "aws_endpoint": "http://127.0.0.1:9000",
            "aws_region": "eu-west-1",
            "aws_access_key_id": "k",
            "allow_http": "true",
            "timeout": "5s",
        }

    def test_local_paths_take_no_s3_options(self) -> None:
        assert storage_options("/tmp/x", make_config(), {"AWS_REGION": "us-east-1"}) == {}


@pytest.fixture(scope="module")
def s3_endpoint() -> Iterator[str]:
    try:
        import boto3
        from moto.server import ThreadedMotoServer
    except ImportError as exc:
        pytest.skip(f"moto[server] is not installed: {exc}")
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    try:
        server.start()
        host, port = server.get_host_and_port()
        endpoint = f"http://{host}:{port}"
        boto3.client(
            "s3",
            endpoint_url=endpoint,
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
            region_name="us-east-1",
        ).create_bucket(Bucket=BUCKET)
    except Exception as exc:
        pytest.skip(f"local S3 server (moto) could not start on 127.0.0.1: {exc}")
    yield endpoint
    server.stop()


@pytest.fixture
def fleet(lancedb: Any, s3_endpoint: str, tmp_path: Path, monkeypatch: Any, request: Any) -> Any:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    uri = f"s3://{BUCKET}/{request.node.name}"
    cfg = make_config(memory__s3_endpoint=s3_endpoint, memory__s3_region="us-east-1", memory__s3_allow_http=True)
    from guard.memory.lance import LanceMemory

    opened: list[Any] = []

    def host(name: str) -> Any:
        m = LanceMemory(uri, cfg, state_dir=tmp_path / name)
        opened.append(m)
        assert m.wait_ready(60), m.status
        return m

    yield host
    for m in opened:
        m.close()


@pytest.mark.lancedb
class TestFleet:
    def test_hosts_share_outcomes(self, fleet: Any) -> None:
        a, b = fleet("a"), fleet("b")
        for _ in range(3):
            a.remember(event("terraform plan"))
        assert a.flush()
        assert b.refresh()
        got = ask(b, "terraform plan")
        assert got.available and got.matched == 3 and got.success_rate == 1.0
        assert b._snapshot is not None  # the hot path reads the local snapshot, not S3

    def test_a_new_host_starts_from_the_shared_memory(self, fleet: Any) -> None:
        a = fleet("a")
        a.remember(event("helm upgrade", success=False))
        assert a.flush()
        c = fleet("c")
        assert ask(c, "helm upgrade").success_rate == 0.0

    def test_maintenance_on_the_object_store(self, fleet: Any) -> None:
        a = fleet("a")
        for _ in range(3):
            a.remember(event("make"))
            assert a.flush()
        report = a.tidy(force=True)
        assert not report.errors and report.merged == 2
        assert report.before["files"] is None  # remote: no local file count
        assert a.marker is not None and a.marker.exists()  # the marker stays on the host
        assert a.refresh() and ask(a, "make").matched == 3

    def test_unreachable_endpoint_is_unavailable(self, lancedb: Any, monkeypatch: Any) -> None:
        from guard.memory.lance import LanceMemory

        monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
        cfg = make_config(
            memory__s3_endpoint="http://127.0.0.1:9",
            memory__s3_allow_http=True,
            memory__s3_region="us-east-1",
            memory__storage_options="connect_timeout=1s,timeout=2s,client_max_retries=0",
        )
        m = LanceMemory("s3://nobucket/x", cfg)
        try:
            assert m.wait_ready(60) is False
            r = ask(m, "ls")
            assert not r.available and r.score == 40.0 and "cannot open s3://nobucket/x" in r.note
        finally:
            m.close()
