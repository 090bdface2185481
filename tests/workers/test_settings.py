"""`workers.settings`: what a worker reads from the environment, its defaults and its refusals."""

from __future__ import annotations

import os
import socket
import time

import pytest

from pwc_mcp_core.errors import ConfigError
from workers.settings import DEFAULT_THREADS, WorkerSettings

BASE = {"PWC_MCP_REDIS_URL": "redis://127.0.0.1:6390/0", "PWC_MCP_CURSOR_KEY_CURRENT": "k" * 32}


def test_the_defaults() -> None:
    settings = WorkerSettings.from_env(BASE)
    assert settings.threads == DEFAULT_THREADS == 32
    assert settings.drain_s == 30.0
    assert settings.worker_id == f"{socket.gethostname()}-{os.getpid()}"
    assert settings.clock_skew_s == 0.0
    assert settings.redis == settings.core.redis


def test_every_variable_is_read() -> None:
    settings = WorkerSettings.from_env({**BASE, "PWC_MCP_WORKER_THREADS": "3", "PWC_MCP_WORKER_ID": " w7 ",
                                        "PWC_MCP_WORKER_DRAIN_S": "5", "PWC_MCP_WORKER_CLOCK_SKEW_S": "-20"})
    assert (settings.threads, settings.worker_id, settings.drain_s, settings.clock_skew_s) == (3, "w7", 5.0, -20.0)
    assert abs(settings.clock() - (time.time() - 20)) < 1


def test_a_blank_worker_id_falls_back_to_host_and_pid() -> None:
    assert WorkerSettings.from_env({**BASE, "PWC_MCP_WORKER_ID": "  "}).worker_id.endswith(f"-{os.getpid()}")


def test_without_redis_there_is_no_worker() -> None:
    with pytest.raises(ConfigError, match="PWC_MCP_REDIS_URL"):
        WorkerSettings.from_env({"PWC_MCP_CURSOR_KEY_CURRENT": "k" * 32})


@pytest.mark.parametrize(("name", "value"), [
    ("PWC_MCP_WORKER_DRAIN_S", "0"), ("PWC_MCP_WORKER_DRAIN_S", "601"), ("PWC_MCP_WORKER_DRAIN_S", "soon"),
    ("PWC_MCP_WORKER_CLOCK_SKEW_S", "61"), ("PWC_MCP_WORKER_CLOCK_SKEW_S", "-61"),
    ("PWC_MCP_WORKER_THREADS", "0"),
])
def test_a_value_out_of_range_is_refused_by_name(name: str, value: str) -> None:
    with pytest.raises(ConfigError, match=name):
        WorkerSettings.from_env({**BASE, name: value})


def test_the_repr_shows_no_redis_url() -> None:
    """The URL may carry a password; the settings are logged."""
    settings = WorkerSettings.from_env({**BASE, "PWC_MCP_REDIS_URL": "redis://:s3cret@127.0.0.1:6390/0",
                                        "PWC_MCP_WORKER_ID": "w1"})
    assert "s3cret" not in repr(settings) and "w1" in repr(settings)
