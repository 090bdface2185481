"""The Redis target setting (URL or Sentinel) and the one factory of connections."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from pwc_mcp_core.cluster.redis_connect import (
    SentinelTarget,
    async_client,
    reconnect_wait_s,
    sync_client,
    target_from_env,
)
from pwc_mcp_core.cluster.redis_pipe import RedisPipe, SyncPipe
from pwc_mcp_core.errors import ConfigError
from pwc_mcp_core.runtime.core_settings import CoreSettings
from tests.helpers import free_port, stop_process

SENTINEL_ENV = {"PWC_MCP_REDIS_SENTINELS": "10.0.0.5:26379, [::1]:26380", "PWC_MCP_REDIS_SENTINEL_MASTER": "pwc"}


def test_the_sentinel_form_needs_two_variables_and_reads_credentials_and_tls() -> None:
    target = target_from_env({**SENTINEL_ENV, "PWC_MCP_REDIS_PASSWORD": "s3cret", "PWC_MCP_REDIS_TLS": "1",
                              "PWC_MCP_REDIS_TLS_CA_FILE": "/etc/ca.pem", "PWC_MCP_REDIS_DB": "2"})
    assert target == SentinelTarget(sentinels=(("10.0.0.5", 26379), ("::1", 26380)), service="pwc",
                                    password="s3cret", tls=True, tls_ca_file="/etc/ca.pem", db=2)
    assert "s3cret" not in repr(target)
    assert target_from_env({"PWC_MCP_REDIS_URL": "redis://h:6379/0"}) == "redis://h:6379/0"
    assert target_from_env({}) is None


@pytest.mark.parametrize(("env", "names"), [
    ({**SENTINEL_ENV, "PWC_MCP_REDIS_URL": "redis://h"}, "not both"),
    ({"PWC_MCP_REDIS_SENTINELS": "h:1"}, "must be set together"),
    ({"PWC_MCP_REDIS_SENTINEL_MASTER": "pwc"}, "must be set together"),
    ({**SENTINEL_ENV, "PWC_MCP_REDIS_SENTINELS": "h"}, "host:port"),
    ({**SENTINEL_ENV, "PWC_MCP_REDIS_SENTINELS": "h:99999"}, "host:port"),
    ({**SENTINEL_ENV, "PWC_MCP_REDIS_TLS": "yes"}, "PWC_MCP_REDIS_TLS"),
    ({"PWC_MCP_REDIS_URL": "redis://h", "PWC_MCP_REDIS_PASSWORD": "x"}, "in the URL"),
    ({"PWC_MCP_REDIS_URL": "http://h"}, "redis://"),
    ({"PWC_MCP_REDIS_URL": "redis://h", "PWC_MCP_REDIS_FAILOVER_WAIT_S": "9"}, "only with PWC_MCP_REDIS_SENTINELS"),
    ({**SENTINEL_ENV, "PWC_MCP_REDIS_FAILOVER_WAIT_S": "0"}, "PWC_MCP_REDIS_FAILOVER_WAIT_S must be"),
])
def test_a_bad_or_ambiguous_redis_setting_is_one_clear_line(env: dict[str, str], names: str) -> None:
    with pytest.raises(ConfigError, match=names) as raised:
        CoreSettings.from_env({"PWC_MCP_CURSOR_KEY_CURRENT": "k" * 32, **env})
    assert "\n" not in str(raised.value)


def test_core_settings_expose_one_target_and_never_print_the_password() -> None:
    core = CoreSettings.from_env({"PWC_MCP_CURSOR_KEY_CURRENT": "k" * 32, **SENTINEL_ENV, "PWC_MCP_REDIS_PASSWORD": "pw1"})
    assert isinstance(core.redis, SentinelTarget) and core.redis_url is None
    assert "pw1" not in repr(core)


def test_a_command_waits_for_a_new_master_as_long_as_the_call_deadline_unless_told_otherwise() -> None:
    key = {"PWC_MCP_CURSOR_KEY_CURRENT": "k" * 32, **SENTINEL_ENV}
    by_default = CoreSettings.from_env({**key, "PWC_MCP_CALL_DEADLINE": "40"})
    assert isinstance(by_default.redis, SentinelTarget) and by_default.redis.failover_wait_s == 40
    assert reconnect_wait_s(by_default.redis) == 40
    told = CoreSettings.from_env({**key, "PWC_MCP_REDIS_FAILOVER_WAIT_S": "12.5"})
    assert isinstance(told.redis, SentinelTarget) and told.redis.failover_wait_s == 12.5
    assert reconnect_wait_s("redis://h:6379/0") == 0  # a URL fails fast: nobody will promote anything


@pytest.fixture(scope="module")
def one_sentinel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SentinelTarget]:
    """A master and one sentinel (quorum 1) on free ports."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.fail("redis-server is not installed; .ci/run installs it")
    workdir: Path = tmp_path_factory.mktemp("one-sentinel")
    master, sentinel = free_port(), free_port()
    procs = [subprocess.Popen([binary, "--port", str(master), "--bind", "127.0.0.1", "--save", "", "--appendonly",
                               "no", "--dir", str(workdir)], stdout=subprocess.DEVNULL)]
    conf = workdir / "sentinel.conf"
    conf.write_text(f"port {sentinel}\nbind 127.0.0.1\ndir {workdir}\nsentinel monitor m 127.0.0.1 {master} 1\n",
                    encoding="utf-8")
    procs.append(subprocess.Popen([binary, str(conf), "--sentinel"], stdout=subprocess.DEVNULL))
    probe = redis.Redis(port=sentinel, socket_timeout=1)
    try:
        for _ in range(200):
            try:
                if probe.sentinel_master("m"):
                    break
            except redis.RedisError:
                time.sleep(0.05)
        yield SentinelTarget(sentinels=(("127.0.0.1", free_port()), ("127.0.0.1", sentinel)), service="m")
    finally:
        probe.close()
        for proc in procs:
            stop_process(proc)


def test_every_kind_of_connection_finds_the_master_through_the_sentinels(one_sentinel: SentinelTarget) -> None:
    # The first sentinel listed is down: it is skipped. A sync pipe must not dial redis-py's default host.
    pipe = SyncPipe(one_sentinel, timeout_s=2)
    client = sync_client(one_sentinel, socket_timeout=2, connect_timeout=1)
    try:
        assert pipe.execute_many([["SET", "via-sync-pipe", "1"]]) == [b"OK"]
        assert client.get("via-sync-pipe") == b"1"
    finally:
        pipe.close()
        client.close()

    async def main() -> None:
        pipe = RedisPipe(one_sentinel, timeout_s=2.0)
        client = async_client(one_sentinel, socket_timeout=2, connect_timeout=1)
        try:
            assert await pipe.execute("GET", "via-sync-pipe") == b"1"
            assert await client.get("via-sync-pipe") == b"1"
        finally:
            await pipe.close()
            await client.aclose()

    asyncio.run(main())


@pytest.mark.parametrize("command", ["gateway", "worker"])
def test_both_redis_forms_set_is_a_one_line_startup_error_with_exit_2(command: str) -> None:
    import os
    import sys

    env = {**os.environ, "PWC_MCP_CURSOR_KEY_CURRENT": "k" * 32, "PWC_MCP_REDIS_URL": "redis://127.0.0.1:1/0",
           **SENTINEL_ENV}
    done = subprocess.run([sys.executable, "-m", "gateway", command], env=env, capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 2
    expected = (f"pwc-mcp {command}: set either PWC_MCP_REDIS_URL or PWC_MCP_REDIS_SENTINELS with "
                "PWC_MCP_REDIS_SENTINEL_MASTER, not both")
    assert done.stderr.strip().splitlines() == [expected]
