"""Which addresses fetch_url may reach, for any address in any spelling (hypothesis): every
IPv4 or IPv6 address in a non-public range is refused, however it is written; public ones
are allowed; a name is judged by every address it resolves to."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.tools.web_guard import (
    Refused,
    anything,
    checked_addresses,
    is_public,
    literal_address,
)

# The ranges the internet's registries set aside (RFC 6890 and its updates), for tests only:
# the code under test asks Python's ipaddress, never a list of ours.
NON_PUBLIC_V4 = [
    "0.0.0.0/8",
    "10.0.0.0/8",
    "100.64.0.0/10",
    "127.0.0.0/8",
    "169.254.0.0/16",
    "172.16.0.0/12",
    "192.0.0.0/24",
    "192.0.2.0/24",
    "192.168.0.0/16",
    "198.18.0.0/15",
    "198.51.100.0/24",
    "203.0.113.0/24",
    "224.0.0.0/4",
    "240.0.0.0/4",
]
NON_PUBLIC_V6 = ["::1/128", "::/128", "fc00::/7", "fe80::/10", "fec0::/10", "ff00::/8"]
# Address blocks of public services (Google, Cloudflare, Quad9, Wikimedia).
PUBLIC_V4 = ["8.8.0.0/16", "1.1.1.0/24", "9.9.9.0/24", "208.80.152.0/22"]
PUBLIC_V6 = ["2001:4860::/32", "2606:4700::/32", "2620:0:860::/46"]


def in_networks(networks: list[str]) -> st.SearchStrategy[ipaddress._BaseAddress]:
    def pick(network: str) -> st.SearchStrategy[ipaddress._BaseAddress]:
        net = ipaddress.ip_network(network)
        first, size = int(net.network_address), net.num_addresses
        return st.integers(0, size - 1).map(lambda n: ipaddress.ip_address(first + n))

    return st.sampled_from(networks).flatmap(pick)


def spellings(address: ipaddress.IPv4Address) -> list[str]:
    """The ways a URL's host can name an IPv4 address that resolvers (inet_aton) accept."""
    n = int(address)
    a, b, c, d = address.packed
    return [
        str(address),
        str(n),  # decimal: http://2130706433/
        hex(n),  # http://0x7f000001/
        f"0x{a:x}.0x{b:x}.0x{c:x}.0x{d:x}",
        f"0{a:o}.0{b:o}.0{c:o}.0{d:o}",  # octal
        f"{a}.{n & 0xFFFFFF}",  # two parts: http://127.1/
        f"0x{a:x}.{n & 0xFFFFFF}",  # http://0x7f.1/
        f"{a}.{b}.{n & 0xFFFF}",  # three parts
        f"::ffff:{address}",  # IPv4-mapped IPv6
        f"[::ffff:{(n >> 16):x}:{(n & 0xFFFF):x}]",
        f"::{address}",  # IPv4-compatible IPv6
        f"2002:{(n >> 16):x}:{(n & 0xFFFF):x}::1",  # 6to4
        f"64:ff9b::{address}",  # NAT64
    ]


async def no_dns(host: str, port: int) -> list[str]:
    raise AssertionError(f"{host} is an address: nothing to resolve")


@given(in_networks(NON_PUBLIC_V4))
async def test_a_non_public_ipv4_address_is_refused_in_every_spelling(
    address: ipaddress.IPv4Address,
) -> None:
    assert not is_public(address)
    for host in spellings(address):
        assert literal_address(host) is not None, host
        with pytest.raises(Refused):
            await checked_addresses(host, 80, resolve=no_dns)


@given(in_networks(NON_PUBLIC_V6))
async def test_a_non_public_ipv6_address_is_refused(address: ipaddress.IPv6Address) -> None:
    assert not is_public(address)
    for host in (str(address), f"[{address}]", address.exploded):
        with pytest.raises(Refused):
            await checked_addresses(host, 443, resolve=no_dns)


@given(in_networks(PUBLIC_V4 + PUBLIC_V6))
async def test_a_public_address_is_allowed(address: ipaddress._BaseAddress) -> None:
    assert is_public(address)
    hosts = spellings(address)[:8] if address.version == 4 else [str(address)]
    for host in hosts:
        found = await checked_addresses(host, 443, resolve=no_dns)
        assert found == [address], host


@given(in_networks(NON_PUBLIC_V4 + NON_PUBLIC_V6))
async def test_private_addresses_are_allowed_when_the_operator_says_so(
    address: ipaddress._BaseAddress,
) -> None:
    found = await checked_addresses(str(address), 80, allow=anything, resolve=no_dns)
    assert found == [address]


@given(
    st.lists(in_networks(PUBLIC_V4 + PUBLIC_V6), min_size=1, max_size=3),
    in_networks(NON_PUBLIC_V4 + NON_PUBLIC_V6),
    st.integers(0, 3),
)
async def test_a_name_is_refused_when_any_address_it_resolves_to_is_not_public(
    public: list[ipaddress._BaseAddress], private: ipaddress._BaseAddress, where: int
) -> None:
    answers = [str(a) for a in public]
    answers.insert(min(where, len(answers)), str(private))

    async def resolve(host: str, port: int) -> list[str]:
        return answers

    with pytest.raises(Refused):
        await checked_addresses("pages.example", 443, resolve=resolve)

    async def only_public(host: str, port: int) -> list[str]:
        return [str(a) for a in public]

    found = await checked_addresses("pages.example", 443, resolve=only_public)
    assert found == public


async def test_localhost_resolves_to_loopback_and_is_refused() -> None:
    with pytest.raises(Refused, match="not a public address"):
        await checked_addresses("localhost", 80)  # /etc/hosts, no DNS query


async def test_a_name_with_no_address_or_a_strange_answer_is_refused() -> None:
    """Through the resolver hook: no DNS query leaves the machine in the tests."""

    async def nothing(host: str, port: int) -> list[str]:
        return []

    async def not_an_address(host: str, port: int) -> list[str]:
        return ["pages.example"]

    with pytest.raises(Refused, match="cannot resolve"):
        await checked_addresses("nowhere.example", 80, resolve=nothing)
    with pytest.raises(Refused, match="not an address"):
        await checked_addresses("odd.example", 80, resolve=not_an_address)
    with pytest.raises(Refused, match="no host"):
        await checked_addresses("", 80, resolve=nothing)


@given(in_networks(PUBLIC_V4))
async def test_a_nat64_address_carrying_a_public_ipv4_address_is_public(
    carried: ipaddress.IPv4Address,
) -> None:
    """64:ff9b::/96 (RFC 6052) is how an IPv6-only network reaches IPv4 hosts: the host it
    reaches decides. The prefix for local use (64:ff9b:1::/48, RFC 8215) is never public."""
    nat64 = ipaddress.IPv6Address(int(ipaddress.IPv6Address("64:ff9b::")) | int(carried))
    assert is_public(nat64)
    assert await checked_addresses(f"64:ff9b::{carried}", 443, resolve=no_dns) == [nat64]

    async def resolve(host: str, port: int) -> list[str]:
        return [str(nat64)]  # as a DNS64 resolver answers for an IPv4-only name

    assert await checked_addresses("pages.example", 443, resolve=resolve) == [nat64]
    local_use = ipaddress.IPv6Address(int(ipaddress.IPv6Address("64:ff9b:1::")) | int(carried))
    assert not is_public(local_use)


@given(in_networks(NON_PUBLIC_V4))
async def test_a_nat64_address_carrying_a_private_ipv4_address_is_not(
    carried: ipaddress.IPv4Address,
) -> None:
    nat64 = ipaddress.IPv6Address(int(ipaddress.IPv6Address("64:ff9b::")) | int(carried))
    assert not is_public(nat64)

    async def resolve(host: str, port: int) -> list[str]:
        return [str(nat64)]

    with pytest.raises(Refused):
        await checked_addresses("pages.example", 443, resolve=resolve)
