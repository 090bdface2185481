"""Host and Origin allowlists (docs/tool-contract.md §1.6)."""

from __future__ import annotations

import pytest

from gateway.admission.security import SecurityPolicy
from pwc_mcp_core.errors import ConfigError

POLICY = SecurityPolicy.from_lists(
    ["huggingface-paperswithcode-mcp.hf.space", "localhost:*", "127.0.0.1:*", "[::1]:*", "example.org:8443"],
    ["https://chatgpt.com", "https://claude.ai"],
)


@pytest.mark.parametrize(("host", "allowed"), [
    pytest.param("localhost:7860", True, id="any-port-entry-matches-port"),
    pytest.param("LOCALHOST:7860", True, id="case-insensitive"),
    pytest.param("localhost", True, id="any-port-entry-matches-no-port"),  # nginx's Host $host
    pytest.param("localhost:080", True, id="leading-zero-port"),
    pytest.param("localhost:99999999", False, id="port-over-five-digits"),
    pytest.param("localhost:65536", False, id="port-over-65535"),
    pytest.param("localhost:0", False, id="port-zero"),
    pytest.param("localhost:", False, id="empty-port"),
    pytest.param("localhost:+80", False, id="signed-port"),
    pytest.param("localhost:\u00b2", False, id="superscript-digit-port"),
    pytest.param("localhost:\u0668\u0660\u0660\u0660", False, id="arabic-indic-digit-port"),
    pytest.param("example.org:\u0668443", False, id="mixed-digit-port"),
    pytest.param("example.org", False, id="exact-host-port-entry-needs-its-port"),
    pytest.param("127.0.0.1:1", True, id="ipv4-any-port"),
    pytest.param("[::1]:7860", True, id="ipv6-any-port"),
    pytest.param("huggingface-paperswithcode-mcp.hf.space", True, id="exact-host"),
    pytest.param("huggingface-paperswithcode-mcp.hf.space:443", False, id="exact-host-with-port-differs"),
    pytest.param("example.org:8443", True, id="exact-host-port"),
    pytest.param("example.org:8444", False, id="other-port"),
    pytest.param("evil.example.com", False, id="unknown-host"),
    pytest.param("localhost.evil.com:80", False, id="no-prefix-tricks"),
    pytest.param("localhost:abc", False, id="non-numeric-port"),
    pytest.param("", False, id="empty"),
    pytest.param(None, False, id="absent"),
])
def test_host_allowlist_matches_exactly_or_by_any_port(host: str | None, allowed: bool) -> None:
    assert POLICY.host_allowed(host) is allowed


@pytest.mark.parametrize(("origin", "allowed"), [
    pytest.param(None, True, id="absent-native-client"),
    pytest.param("https://chatgpt.com", True, id="allowlisted"),
    pytest.param("https://CHATGPT.com", True, id="case-insensitive-host"),
    pytest.param("https://chatgpt.com.evil.com", False, id="suffix-trick"),
    pytest.param("http://chatgpt.com", False, id="other-scheme"),
    pytest.param("null", False, id="null-refused"),
    pytest.param("", False, id="empty-refused"),
    pytest.param("https://evil.example.com", False, id="unknown"),
])
def test_origin_allowlist_allows_absent_and_exact_matches_only(origin: str | None, allowed: bool) -> None:
    assert POLICY.origin_allowed(origin) is allowed


@pytest.mark.parametrize(("hosts", "origins"), [
    pytest.param([], ["*"], id="wildcard-origin"),
    pytest.param([], ["https://*.example.com"], id="partial-wildcard-origin"),
    pytest.param(["*"], [], id="wildcard-host"),
    pytest.param(["*.example.com"], [], id="wildcard-subdomain-host"),
])
def test_wildcards_are_refused_at_startup(hosts: list[str], origins: list[str]) -> None:
    with pytest.raises(ConfigError):
        SecurityPolicy.from_lists(hosts, origins)


def test_allowed_host_is_the_normalized_header() -> None:
    assert POLICY.allowed_host(" LocalHost:08000 ") == "localhost:8000"
    assert POLICY.allowed_host("[::1]") == "[::1]"
    assert POLICY.allowed_host("localhost:\u00b2") is None
    assert SecurityPolicy.from_lists(["example.org:08443"], []).allowed_host("example.org:8443") == "example.org:8443"


@pytest.mark.parametrize("entry", ["localhost:\u0668\u0660", "localhost:\u00b2", "localhost:0", "localhost:99999"])
def test_a_host_entry_with_a_port_that_is_not_ascii_1_to_65535_stops_startup(entry: str) -> None:
    with pytest.raises(ConfigError):
        SecurityPolicy.from_lists([entry], [])


def test_an_empty_origin_list_allows_only_native_clients() -> None:
    policy = SecurityPolicy.from_lists(["localhost:*"], [])
    assert policy.origin_allowed(None)
    assert not policy.origin_allowed("https://chatgpt.com")
