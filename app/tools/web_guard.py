"""Which addresses `fetch_url` may connect to: public ones only, unless the operator allows
private ones (FETCH_PRIVATE_ADDRESSES).

A URL's host is turned into addresses here, once per connection: an IP literal in any form a
resolver accepts (dotted, decimal `2130706433`, hex `0x7f.1`, octal `0177.0.0.1`, IPv6 with an
embedded IPv4), or a name resolved through DNS. Every address it resolves to must be public,
and the connection then goes to the address checked (app.tools.web_fetch), so a second DNS
answer cannot point it elsewhere. An IPv6 address that carries an IPv4 one (IPv4-mapped,
IPv4-compatible, 6to4, NAT64) is judged by the IPv4 address it carries, too; an address of
NAT64's well-known prefix (64:ff9b::/96, RFC 6052: how an IPv6-only network reaches IPv4 hosts)
by that alone, so one carrying a public IPv4 address is public.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Awaitable, Callable

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
# host, port -> the addresses it resolves to (tests point it at their own answers).
Resolve = Callable[[str, int], Awaitable[list[str]]]
# Whether an address may be connected to.
Allow = Callable[[Address], bool]

# IPv6 prefixes that carry an IPv4 address in their last 32 bits: NAT64's well-known prefix,
# and its prefix for local use (RFC 8215), never public.
NAT64_WELL_KNOWN = ipaddress.IPv6Network("64:ff9b::/96")
NAT64 = (NAT64_WELL_KNOWN, ipaddress.IPv6Network("64:ff9b:1::/48"))
IPV4_COMPATIBLE = ipaddress.IPv6Network("::/96")
# IETF protocol assignments: newer Pythons count all of it as private (python/cpython#113171);
# older ones, as 3.11.7, miss part of it (192.0.0.8).
IETF_PROTOCOL = ipaddress.IPv4Network("192.0.0.0/24")


class Refused(Exception):
    """The host may not be reached (a non-public address), or cannot be resolved."""


def is_public(address: Address) -> bool:
    """True for an address on the public internet; anything loopback, private, link-local,
    unspecified, multicast, reserved, shared (CGNAT) or site-local is not, nor an IPv6
    address carrying an IPv4 one that is not."""
    if isinstance(address, ipaddress.IPv6Address):
        if address in NAT64_WELL_KNOWN and not address.scope_id:
            # Python counts the prefix as reserved; the IPv4 host it reaches is what counts.
            return is_public(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
        carried = _carried_ipv4(address)
        if carried is not None and not is_public(carried):
            return False
        if address.scope_id:
            return False
    flags = (
        address in IETF_PROTOCOL if isinstance(address, ipaddress.IPv4Address) else False,
        address.is_loopback,
        address.is_private,
        address.is_link_local,
        address.is_unspecified,
        address.is_multicast,
        address.is_reserved,
        isinstance(address, ipaddress.IPv6Address) and address.is_site_local,
    )
    return address.is_global and not any(flags)


def _carried_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address in IPV4_COMPATIBLE or any(address in n for n in NAT64):
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address.teredo is not None:
        return address.teredo[1]
    return None


def literal_address(host: str) -> Address | None:
    """The address a host names without DNS, in any form a resolver reads as an address
    (`127.0.0.1`, `2130706433`, `0x7f.1`, `0177.0.0.1`, `::ffff:127.0.0.1`); None for a name."""
    bare = host.strip("[]")
    try:
        return ipaddress.ip_address(bare.split("%", 1)[0])
    except ValueError:
        pass
    try:  # the classic inet_aton forms: 1 to 4 parts, each decimal, octal or hex
        return ipaddress.IPv4Address(socket.inet_aton(bare))
    except (OSError, ValueError):
        return None


async def system_resolve(host: str, port: int) -> list[str]:
    loop = asyncio.get_running_loop()
    try:
        answers = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as error:
        raise Refused(f"cannot resolve {host}") from error
    return [str(answer[4][0]) for answer in answers]


def anything(address: Address) -> bool:
    """FETCH_PRIVATE_ADDRESSES=true: any address (an intranet's too)."""
    return True


def policy(*, allow_private: bool) -> Allow:
    return anything if allow_private else is_public


async def checked_addresses(
    host: str, port: int, *, allow: Allow = is_public, resolve: Resolve = system_resolve
) -> list[Address]:
    """The addresses to connect to for `host`; Refused when any of them is not allowed (by
    default: not public), or when there is none."""
    if not host:
        raise Refused("no host")
    literal = literal_address(host)
    if literal is not None:
        found = [literal]
    else:
        found = []
        for answer in await resolve(host, port):
            address = literal_address(answer)
            if address is None:
                raise Refused(f"{host} resolved to something that is not an address")
            found.append(address)
    if not found:
        raise Refused(f"cannot resolve {host}")
    for address in found:
        if not allow(address):
            raise Refused(f"{host} is not a public address ({address})")
    return found
