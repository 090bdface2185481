"""Rate-limit identity (docs/tool-contract.md §2.2 vectors, adapted to the seed's right-most-hop rule)."""

from __future__ import annotations

import pytest

from gateway.admission.identity import derive_key, hash_identity, parse_networks, resolve_client

TRUSTED = parse_networks(["10.0.0.0/8", "fd00::/8"])
XFF = "X-Forwarded-For"
CLIENT = "X-PwC-MCP-Client"


@pytest.mark.parametrize(("peer", "headers", "expected"), [
    pytest.param("127.0.0.1", {XFF: "203.0.113.9"}, "203.0.113.9", id="loopback-trusts-xff"),
    pytest.param("::1", {XFF: "203.0.113.9"}, "203.0.113.9", id="ipv6-loopback-trusts-xff"),
    pytest.param("127.0.0.5", {XFF: "203.0.113.9"}, "203.0.113.9", id="all-of-127-8-is-loopback"),
    pytest.param("::ffff:127.0.0.1", {XFF: "203.0.113.9"}, "203.0.113.9", id="mapped-loopback"),
    pytest.param("127.0.0.1", {XFF: "198.51.100.7, 203.0.113.9"}, "203.0.113.9", id="loopback-takes-right-most"),
    pytest.param("127.0.0.1", {XFF: "1.1.1.1,  203.0.113.9 "}, "203.0.113.9", id="hops-are-trimmed"),
    pytest.param("127.0.0.1", {XFF: "203.0.113.9, not-an-ip"}, "127.0.0.1", id="invalid-right-most-is-peer"),
    pytest.param("10.0.0.2", {XFF: "203.0.113.9"}, "203.0.113.9", id="trusted-cidr-peer-trusts-xff"),
    pytest.param("192.168.1.2", {XFF: "203.0.113.9"}, "192.168.1.2", id="untrusted-private-peer-ignored"),
    pytest.param("198.51.100.1", {XFF: "203.0.113.9"}, "198.51.100.1", id="public-peer-ignored"),
    pytest.param("127.0.0.1", {CLIENT: "chat-0123abcd"}, "client:chat-0123abcd", id="loopback-names-itself"),
    pytest.param("::1", {CLIENT: "chat-0123abcd"}, "client:chat-0123abcd", id="ipv6-loopback-names-itself"),
    pytest.param("127.0.0.1", {CLIENT: "chat-0123abcd", XFF: "203.0.113.9"}, "203.0.113.9",
                 id="xff-beats-client-header"),
    pytest.param("10.0.0.2", {CLIENT: "chat-0123abcd"}, "10.0.0.2", id="trusted-proxy-cannot-name-identity"),
    pytest.param("192.168.1.2", {CLIENT: "chat-0123abcd"}, "192.168.1.2", id="untrusted-cannot-name-identity"),
    pytest.param("127.0.0.1", {CLIENT: "spaces are/not ok"}, "127.0.0.1", id="invalid-client-name"),
    pytest.param("127.0.0.1", {CLIENT: "a" * 129}, "127.0.0.1", id="client-name-too-long"),
    pytest.param("127.0.0.1", {CLIENT: "a" * 128}, "client:" + "a" * 128, id="client-name-max-length"),
    pytest.param("127.0.0.1", {CLIENT: "-leading-dash"}, "127.0.0.1", id="client-name-bad-first-char"),
    pytest.param("127.0.0.1", {}, "127.0.0.1", id="loopback-no-headers"),
    pytest.param(None, {XFF: "203.0.113.9"}, "unknown", id="no-peer"),
])
def test_identity_follows_the_trust_rules(peer: str | None, headers: dict[str, str], expected: str) -> None:
    assert resolve_client(peer, headers, trusted=TRUSTED) == expected


@pytest.mark.parametrize(("xff", "expected"), [
    pytest.param("203.0.113.9, 10.1.1.1, 10.2.2.2", "203.0.113.9", id="skips-trusted-hops-from-right"),
    pytest.param("6.6.6.6, 203.0.113.9, 10.1.1.1", "203.0.113.9", id="spoofed-left-hop-ignored"),
    pytest.param("6.6.6.6, 203.0.113.9", "203.0.113.9", id="spoofed-left-hop-no-chain"),
    pytest.param("10.9.9.9, 10.1.1.1", "10.9.9.9", id="all-trusted-uses-left-most-trusted"),
    pytest.param("203.0.113.9, garbage, 10.1.1.1", "10.1.1.1", id="invalid-entry-ends-walk"),
    pytest.param("203.0.113.9, garbage", "10.0.0.2", id="invalid-right-most-is-peer"),
    pytest.param("2001:db8::1, fd00::5", "2001:db8::1", id="ipv6-hops"),
    pytest.param("", "10.0.0.2", id="empty-xff"),
])
def test_trusted_proxy_walks_forwarded_hops_from_the_right(xff: str, expected: str) -> None:
    assert resolve_client("10.0.0.2", {XFF: xff}, trusted=TRUSTED) == expected


def test_a_unix_socket_peer_is_treated_as_loopback() -> None:
    assert resolve_client("", {XFF: "203.0.113.9"}, unix_socket=True) == "203.0.113.9"
    assert resolve_client("", {CLIENT: "chat-1"}, unix_socket=True) == "client:chat-1"


def test_lower_case_header_names_are_read() -> None:
    assert resolve_client("127.0.0.1", {"x-forwarded-for": "203.0.113.9"}) == "203.0.113.9"


def test_identity_hash_is_keyed_and_never_contains_the_address() -> None:
    first = hash_identity(b"k" * 32, "203.0.113.9")
    assert first == hash_identity(b"k" * 32, "203.0.113.9")
    assert first != hash_identity(b"j" * 32, "203.0.113.9")
    assert "203" not in first and len(first) == 32


def test_the_identity_key_is_derived_from_the_configured_secret_alone() -> None:
    # Same configuration, same key: two gateways (or one restarted after Redis lost
    # everything) hash one client to one budget.
    assert derive_key("secret-a") == derive_key("secret-a")
    assert derive_key("secret-a") != derive_key("secret-b")
    assert len(derive_key("secret-a")) == 32


def test_long_forwarded_chains_resolve_the_same_without_the_cache() -> None:
    trusted = parse_networks(["10.0.0.0/8"])
    chain = ", ".join(["10.1.2.3"] * 200)  # far over the cached-header bound
    assert resolve_client("10.0.0.1", {"X-Forwarded-For": f"198.51.100.7, {chain}"}, trusted=trusted) \
        == "198.51.100.7"
    assert resolve_client("10.0.0.1", {"X-Forwarded-For": "198.51.100.7, 10.1.2.3"}, trusted=trusted) \
        == "198.51.100.7"
