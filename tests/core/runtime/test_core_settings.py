"""`CoreSettings.from_env`: every variable, its default and its bad values."""

from __future__ import annotations

import ipaddress
from typing import Any

import pytest

from pwc_mcp_core.errors import ConfigError
from pwc_mcp_core.runtime.core_settings import CoreSettings

BASE = {"PWC_MCP_CURSOR_KEY_CURRENT": "current-secret-value-0123456789ab"}


def test_defaults_follow_the_seed_readme() -> None:
    s = CoreSettings.from_env(BASE)
    assert s.api_url == "https://paperswithcode.co/api/v1"
    assert (s.host, s.port) == ("127.0.0.1", 7860)
    assert s.allowed_hosts == ("localhost:*", "127.0.0.1:*", "[::1]:*")
    assert s.allowed_origins == ("https://chatgpt.com", "https://claude.ai")
    assert s.cursor_keys == ("current-secret-value-0123456789ab",) and s.cursor_key_ephemeral is False
    assert (s.request_limit, s.semantic_limit, s.concurrency_limit, s.global_concurrency_limit) == (60, 10, 4, 128)
    assert s.trusted_proxy_cidrs == ()
    assert (s.log_level, s.redis_url, s.worker_threads) == ("INFO", None, 128)
    assert (s.catalog_timeout_s, s.call_deadline_s) == (25.0, 30.0)
    assert (s.max_body_bytes, s.chunk_bytes) == (2 * 1024 * 1024, 8192)  # BENCHMARKS.md "Reading agent"


@pytest.mark.parametrize(("env", "attribute", "value"), [
    pytest.param({"PWC_API_URL": "http://127.0.0.1:9/api/v1/"}, "api_url", "http://127.0.0.1:9/api/v1", id="api-url"),
    pytest.param({"PWC_MCP_HOST": "0.0.0.0"}, "host", "0.0.0.0", id="host"),
    pytest.param({"PORT": "8080"}, "port", 8080, id="port"),
    pytest.param({"PWC_MCP_ALLOWED_HOSTS": "mcp.example.com, localhost:8080,[::1]:*"}, "allowed_hosts",
                 ("mcp.example.com", "localhost:8080", "[::1]:*"), id="hosts"),
    pytest.param({"PWC_MCP_ALLOWED_HOSTS": " "}, "allowed_hosts", ("localhost:*", "127.0.0.1:*", "[::1]:*"),
                 id="blank-hosts-default"),
    pytest.param({"PWC_MCP_ALLOWED_ORIGINS": "https://a.example, http://localhost:3000"}, "allowed_origins",
                 ("https://a.example", "http://localhost:3000"), id="origins"),
    pytest.param({"PWC_MCP_ALLOWED_ORIGINS": ""}, "allowed_origins", (), id="empty-origins-means-none"),
    pytest.param({"PWC_MCP_CURSOR_KEY_PREVIOUS": "old-secret-value-0123456789abcdef"}, "cursor_keys",
                 ("current-secret-value-0123456789ab", "old-secret-value-0123456789abcdef"), id="previous-key"),
    pytest.param({"PWC_MCP_REQUEST_LIMIT": "1"}, "request_limit", 1, id="request-limit-min"),
    pytest.param({"PWC_MCP_SEMANTIC_LIMIT": "10000"}, "semantic_limit", 10000, id="semantic-limit-max"),
    pytest.param({"PWC_MCP_CONCURRENCY_LIMIT": "8"}, "concurrency_limit", 8, id="concurrency"),
    pytest.param({"PWC_MCP_GLOBAL_CONCURRENCY_LIMIT": "16"}, "worker_threads", 40, id="threads-at-least-40"),
    pytest.param({"PWC_MCP_GLOBAL_CONCURRENCY_LIMIT": "300"}, "worker_threads", 300, id="threads-follow-global"),
    pytest.param({"PWC_MCP_WORKER_THREADS": "6"}, "worker_threads", 6, id="threads"),
    pytest.param({"PWC_MCP_TRUSTED_PROXY_CIDRS": "10.0.0.0/8, fd00::/8"}, "trusted_proxy_cidrs",
                 (ipaddress.ip_network("10.0.0.0/8"), ipaddress.ip_network("fd00::/8")), id="cidrs"),
    pytest.param({"LOG_LEVEL": "debug"}, "log_level", "DEBUG", id="log-level"),
    pytest.param({"PWC_MCP_REDIS_URL": "redis://:pw@10.0.0.5:6379/0"}, "redis_url", "redis://:pw@10.0.0.5:6379/0",
                 id="redis"),
    pytest.param({"PWC_MCP_CATALOG_TIMEOUT": "10"}, "call_deadline_s", 15.0, id="deadline-follows-timeout"),
    pytest.param({"PWC_MCP_CALL_DEADLINE": "60"}, "call_deadline_s", 60.0, id="deadline"),
    pytest.param({"PWC_MCP_MAX_BODY_BYTES": "4096"}, "max_body_bytes", 4096, id="max-body"),
    pytest.param({"PWC_MCP_CHUNK_BYTES": "2048"}, "chunk_bytes", 2048, id="chunk"),
    pytest.param({"PWC_MCP_REQUEST_LIMIT": ""}, "request_limit", 60, id="blank-is-default"),
])
def test_each_variable_sets_its_field(env: dict[str, str], attribute: str, value: Any) -> None:
    assert getattr(CoreSettings.from_env({**BASE, **env}), attribute) == value


@pytest.mark.parametrize(("name", "value"), [
    pytest.param("PWC_MCP_REQUEST_LIMIT", "0", id="request-zero"),
    pytest.param("PWC_MCP_REQUEST_LIMIT", "10001", id="request-too-big"),
    pytest.param("PWC_MCP_SEMANTIC_LIMIT", "-1", id="semantic-negative"),
    pytest.param("PWC_MCP_CONCURRENCY_LIMIT", "four", id="concurrency-word"),
    pytest.param("PWC_MCP_GLOBAL_CONCURRENCY_LIMIT", "1.5", id="global-float"),
    pytest.param("PWC_MCP_WORKER_THREADS", "0", id="threads-zero"),
    pytest.param("PORT", "70000", id="port-range"),
    pytest.param("PWC_API_URL", "ftp://x", id="api-url-scheme"),
    pytest.param("PWC_MCP_ALLOWED_HOSTS", "*", id="host-wildcard"),
    pytest.param("PWC_MCP_ALLOWED_HOSTS", "*.example.com", id="host-subdomain-wildcard"),
    pytest.param("PWC_MCP_ALLOWED_HOSTS", "localhost:99999", id="host-bad-port"),
    pytest.param("PWC_MCP_ALLOWED_ORIGINS", "*", id="origin-wildcard"),
    pytest.param("PWC_MCP_ALLOWED_ORIGINS", "https://a.example/path", id="origin-path"),
    pytest.param("PWC_MCP_TRUSTED_PROXY_CIDRS", "10.0.0.0/33", id="cidr-bad"),
    pytest.param("LOG_LEVEL", "LOUD", id="log-level"),
    pytest.param("PWC_MCP_REDIS_URL", "localhost:6379", id="redis-scheme"),
    pytest.param("PWC_MCP_CATALOG_TIMEOUT", "0", id="timeout-zero"),
    pytest.param("PWC_MCP_CATALOG_TIMEOUT", "nan", id="timeout-nan"),
    pytest.param("PWC_MCP_CALL_DEADLINE", "soon", id="deadline-word"),
    pytest.param("PWC_MCP_MAX_BODY_BYTES", "10", id="max-body-small"),
    pytest.param("PWC_MCP_CHUNK_BYTES", "99999999", id="chunk-big"),
])
def test_bad_values_raise_config_error_naming_the_variable(name: str, value: str) -> None:
    with pytest.raises(ConfigError) as info:
        CoreSettings.from_env({**BASE, name: value})
    assert name in str(info.value)
    assert " must " in str(info.value)  # says what is accepted


def test_a_wildcard_origin_is_refused_with_the_reference_message() -> None:
    with pytest.raises(ConfigError, match="PWC_MCP_ALLOWED_ORIGINS must not contain a wildcard"):
        CoreSettings.from_env({**BASE, "PWC_MCP_ALLOWED_ORIGINS": "https://claude.ai,*"})


def test_the_current_cursor_key_is_required_unless_ephemeral_keys_are_allowed() -> None:
    with pytest.raises(ConfigError, match="PWC_MCP_CURSOR_KEY_CURRENT"):
        CoreSettings.from_env({})
    first = CoreSettings.from_env({}, allow_ephemeral_cursor_key=True)
    second = CoreSettings.from_env({}, allow_ephemeral_cursor_key=True)
    assert first.cursor_key_ephemeral and len(first.cursor_keys[0]) >= 32
    assert first.cursor_keys != second.cursor_keys


@pytest.mark.parametrize("name", ["PWC_MCP_CURSOR_KEY_CURRENT", "PWC_MCP_CURSOR_KEY_PREVIOUS"])
@pytest.mark.parametrize("key", ["abc", "k" * 31])
def test_a_cursor_key_shorter_than_32_characters_is_refused_without_echoing_it(name: str, key: str) -> None:
    with pytest.raises(ConfigError) as refused:
        CoreSettings.from_env({**BASE, name: key})
    message = str(refused.value)
    assert message.startswith(f"{name} is too short: use at least 32 random characters")
    assert "openssl rand -hex 32" in message and key not in message
    assert CoreSettings.from_env({**BASE, name: "k" * 32}).cursor_keys  # 32 is enough


def test_repr_redacts_cursor_keys_and_the_redis_url() -> None:
    s = CoreSettings.from_env({**BASE, "PWC_MCP_CURSOR_KEY_PREVIOUS": "old-secret-value-0123456789abcdef",
                               "PWC_MCP_REDIS_URL": "redis://:hunter2@host:6379/0"})
    text = repr(s)
    assert "current-secret-value-0123456789ab" not in text and "old-secret-value-0123456789abcdef" not in text and "hunter2" not in text
    assert "cursor_keys=<2 redacted>" in text and "redis_url=<redacted>" in text
    assert "request_limit=60" in text


def test_settings_are_frozen() -> None:
    s = CoreSettings.from_env(BASE)
    with pytest.raises(AttributeError):
        s.port = 1  # type: ignore[misc]


def test_int_option_takes_env_ints_rule_for_command_line_flags() -> None:
    import argparse

    from pwc_mcp_core.runtime.core_settings import int_option

    parse = int_option("--processes", 1, 256)
    assert (parse("1"), parse("256"), parse(" 7 ")) == (1, 256, 7)
    for bad in ("0", "257", "abc", "", "-1", "2.5"):
        with pytest.raises(argparse.ArgumentTypeError, match="--processes must be an integer between 1 and 256"):
            parse(bad)
