"""Static checks of Dockerfile, .dockerignore and compose.yaml (no podman needed).

The running stack is tested in test_image.py and test_compose.py; these pin the shape the
issue asks for: classic-builder syntax, uv from PyPI, a non-root user and a HEALTHCHECK; a
hardened compose file with ports bound to 127.0.0.1.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml  # type: ignore[import-untyped]  # PyYAML ships no stubs

from tests.container.conftest import REPO_ROOT

DOCKERFILE = (REPO_ROOT / "Dockerfile").read_text(encoding="utf-8")
COMPOSE: dict[str, Any] = yaml.safe_load((REPO_ROOT / "compose.yaml").read_text(encoding="utf-8"))
SERVICES: dict[str, dict[str, Any]] = COMPOSE["services"]


def test_dockerfile_uses_no_buildkit_only_syntax() -> None:
    assert not re.search(r"^#\s*syntax=", DOCKERFILE, flags=re.MULTILINE)
    assert "<<" not in DOCKERFILE  # heredocs
    assert not re.search(r"--(link|mount|chmod)\b", DOCKERFILE)


def test_dockerfile_shape() -> None:
    lines = [line for line in DOCKERFILE.splitlines() if line and not line.startswith("#")]
    assert lines[:2] == ["ARG BASE=python:3.12-slim", "FROM ${BASE}"]
    assert "python3 -m pip install --no-cache-dir --disable-pip-version-check uv" in DOCKERFILE
    assert "uv sync --frozen --no-dev" in DOCKERFILE
    assert "COPY --from" not in DOCKERFILE  # uv comes from PyPI, not another registry's image
    assert re.search(r"^USER pwc$", DOCKERFILE, flags=re.MULTILINE)
    assert "PWC_MCP_HOST=0.0.0.0" in DOCKERFILE and "EXPOSE 7860" in DOCKERFILE
    assert re.search(r"^HEALTHCHECK .*/health", DOCKERFILE, flags=re.MULTILINE | re.DOTALL)


def test_dockerignore_keeps_the_context_small() -> None:
    ignored = (REPO_ROOT / ".dockerignore").read_text(encoding="utf-8").split()
    for entry in (".git", ".venv", "tests", "bench", "conformance"):
        assert entry in ignored


@pytest.mark.parametrize("name", sorted(SERVICES))
def test_every_service_is_hardened(name: str) -> None:
    service = SERVICES[name]
    assert service["cap_drop"] == ["ALL"]
    assert service["security_opt"] == ["no-new-privileges:true"]
    assert service["read_only"] is True
    assert service["tmpfs"] == ["/tmp"]


def test_only_the_gateway_is_published_and_only_on_loopback() -> None:
    published = {name: service["ports"] for name, service in SERVICES.items() if "ports" in service}
    assert list(published) == ["gateway"]
    assert all(port.startswith("127.0.0.1:") for port in published["gateway"])


def test_production_shape() -> None:
    assert SERVICES["gateway"]["command"] == ["pwc-mcp", "gateway", "--processes", "2"]
    assert SERVICES["worker"]["scale"] == 2
    assert SERVICES["catalog"]["depends_on"] == {"catalog-import": {"condition": "service_completed_successfully"}}
    assert SERVICES["gateway"]["depends_on"] == {"redis": {"condition": "service_healthy"},
                                                 "catalog": {"condition": "service_healthy"}}
    assert SERVICES["worker"]["depends_on"] == {"redis": {"condition": "service_healthy"}}
    assert "catalog-data:/data" in SERVICES["catalog-import"]["volumes"]
    for name in ("redis", "catalog", "gateway"):
        assert SERVICES[name]["healthcheck"]["test"][0] == "CMD"
    # The cursor key is required: compose refuses to start without it.
    key = SERVICES["gateway"]["environment"]["PWC_MCP_CURSOR_KEY_CURRENT"]
    assert key.startswith("${PWC_MCP_CURSOR_KEY_CURRENT:?")
