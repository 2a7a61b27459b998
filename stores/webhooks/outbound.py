"""One POST to a webhook's URL, made safe to aim at a URL someone typed in.

- http and https only; a timeout on connecting and on every read;
- the host is resolved here and every address it resolves to must be public (not loopback,
  private, link-local, multicast or reserved), unless private addresses are allowed
  (MEMORYADMIN_WEBHOOK_ALLOW_PRIVATE); the connection then goes to the address that was
  checked, so a second lookup cannot swap in another one (DNS rebinding);
- redirects are followed only to the same scheme, host and port (at most MAX_REDIRECTS);
- at most MAX_ANSWER_BYTES of the answer are read.

Written on the standard library's http.client, which lets the connection be pinned to the
checked address while TLS still verifies the host name; nothing here raises: every outcome,
including a refusal, is an `Answer`.
"""

from __future__ import annotations

import http.client
import ipaddress
import logging
import socket
import ssl
import time
from dataclasses import dataclass
from urllib.parse import quote, urljoin, urlsplit

logger = logging.getLogger("memoryadmin.webhooks")

SCHEMES = {"http": 80, "https": 443}
MAX_REDIRECTS = 3
MAX_ANSWER_BYTES = 64 * 1024
REDIRECTS = frozenset({301, 302, 303, 307, 308})
USER_AGENT = "memoryadmin-webhooks/1"
# What stays as it is in a path or query: the URL syntax's own characters and escapes.
URL_SAFE = "!#$%&'()*+,/:;=?@[]~"


class Refused(Exception):
    """A URL this sender will not call; trying again would not help."""


@dataclass(frozen=True)
class Answer:
    status: int | None  # the HTTP status, None when no answer came
    duration_ms: float
    error: str = ""
    # Worth trying again later: no answer (network, timeout), 5xx, 408 and 429.
    retryable: bool = False

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300


def check_url(url: str) -> tuple[str, str, int, str]:
    """(scheme, host, port, path with query) of an acceptable URL, or Refused.

    The host comes back in its ASCII (IDNA) form and the path percent-encoded, as they go
    on the wire: a host that has no such form is refused here, not at every delivery.
    """
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as error:
        raise Refused(f"Not a usable URL: {error}.") from None
    scheme = parts.scheme.lower()
    if scheme not in SCHEMES:
        raise Refused("Only http and https URLs can receive webhooks.")
    if not parts.hostname:
        raise Refused("The URL names no host.")
    if parts.username or parts.password:
        raise Refused("Credentials in the URL are not sent; put a token in its path instead.")
    try:
        host = parts.hostname.encode("idna").decode("ascii")
    except UnicodeError as error:
        raise Refused(f"The URL's host is not a domain name: {error}.") from None
    path = quote(parts.path or "/", safe=URL_SAFE)
    if parts.query:
        path = f"{path}?{quote(parts.query, safe=URL_SAFE)}"
    return scheme, host, port or SCHEMES[scheme], path


def build_url(origin: tuple[str, str, int, str]) -> str:
    """The URL of `check_url`'s parts, the port left out when it is the scheme's own."""
    scheme, host, port, path = origin
    netloc = f"[{host}]" if ":" in host else host
    if port != SCHEMES[scheme]:
        netloc = f"{netloc}:{port}"
    return f"{scheme}://{netloc}{path}"


# IPv6 prefixes whose last 32 bits are an IPv4 address the packet reaches: NAT64
# (RFC 6052), IPv4-translated (RFC 2765) and the deprecated IPv4-compatible form.
_IPV4_INSIDE = tuple(
    ipaddress.IPv6Network(prefix) for prefix in ("64:ff9b::/96", "::ffff:0:0:0/96", "::/96")
)
# Local-use NAT64 (RFC 8215) translates to whatever the site chose, private included.
_LOCAL_NAT64 = ipaddress.IPv6Network("64:ff9b:1::/48")


def _ipv4_inside(ip: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 address stands for (mapped, 6to4, Teredo, NAT64, ...)."""
    if ip.ipv4_mapped is not None:
        return [ip.ipv4_mapped]
    if ip.sixtofour is not None:
        return [ip.sixtofour]
    if ip.teredo is not None:
        return list(ip.teredo)
    if any(ip in network for network in _IPV4_INSIDE):
        return [ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)]
    return []


def public_address(address: str) -> bool:
    """Whether a connection to `address` reaches a public host, IPv4 inside IPv6 included."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address):
        if ip in _LOCAL_NAT64:
            return False
        inside = _ipv4_inside(ip)
        if inside:
            return all(_public(embedded) for embedded in inside)
    return _public(ip)


def _public(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if isinstance(ip, ipaddress.IPv4Address) and any(ip in net for net in NON_PUBLIC_IPV4):
        return False
    return ip.is_global and not ip.is_multicast


# The IPv4 networks no webhook reaches, named so that a URL's form can state them (`url_pattern`):
# those Python's `ipaddress` does not call global (its list grew over versions: the union is
# here), shared address space and multicast.
NON_PUBLIC_IPV4 = tuple(
    ipaddress.IPv4Network(network)
    for network in (
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
    )
)
# A decimal octet as `ipaddress` reads one (no leading zero).
_OCTET = "(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
# A host `check_url` takes: labels of a domain name's characters (RFC 3986's reg-name, in
# ASCII: an international name goes in its xn-- form), none empty or longer than 63, as IDNA
# has them; a trailing dot is allowed.
_LABEL = "[A-Za-z0-9_~!$&'()*+,;=%-]{1,63}"
_HOST = f"({_LABEL}\\.)*{_LABEL}\\.?"
_PORT = "(:([0-9]{1,4}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5]))?"
# The path, query and fragment: anything but spaces and NUL (no text holds one; nor a lone
# surrogate, which every door refuses in any string, left out here as no generator of test
# data can use a pattern naming them).
_REST = "([/?#][^\\s\\u0000]*)?"


def _network_pattern(network: ipaddress.IPv4Network) -> str:
    """The dotted-decimal addresses of `network`, as a regular expression."""
    whole, bits = divmod(network.prefixlen, 8)
    octets = []
    for index, first in enumerate(network.network_address.packed):
        if index < whole:
            octets.append(str(first))
        elif index == whole and bits:
            values = range(first, first + 2 ** (8 - bits))
            octets.append("(" + "|".join(str(value) for value in values) + ")")
        else:
            octets.append(_OCTET)
    return "\\.".join(octets)


def url_pattern(*, allow_private: bool) -> str:
    """The URLs a webhook may be given, as a regular expression (ECMA and Python alike):
    http or https, a host and port `check_url` takes, and, unless private addresses are
    allowed, no IPv4 address of `NON_PUBLIC_IPV4` (a name is checked when it resolves)."""
    refused = ""
    if not allow_private:
        networks = "|".join(_network_pattern(network) for network in NON_PUBLIC_IPV4)
        refused = f"(?!({networks})([:/?#]|$))"
    return f"^https?://{refused}{_HOST}{_PORT}{_REST}$"


def resolve(host: str, port: int, *, allow_private: bool) -> str:
    """The address to connect to: the first the host resolves to, all of them checked."""
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as error:
        raise OSError(f"cannot resolve {host}: {error.strerror or error}") from None
    addresses = [info[4][0] for info in found]
    if not addresses:
        raise OSError(f"{host} resolves to no address")
    if not allow_private:
        private = [address for address in addresses if not public_address(address)]
        if private:
            raise Refused(
                f"{host} resolves to {private[0]}, a loopback, private or link-local address; "
                "webhooks reach only public addresses (MEMORYADMIN_WEBHOOK_ALLOW_PRIVATE=true "
                "lifts this)."
            )
    return addresses[0]


class _PinnedHTTPConnection(http.client.HTTPConnection):
    def __init__(self, host: str, port: int, address: str, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout)
        self._address = address

    def connect(self) -> None:
        self.sock = socket.create_connection((self._address, self.port), self.timeout)


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    def __init__(self, host: str, port: int, address: str, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout, context=ssl.create_default_context())
        self._address = address

    def connect(self) -> None:
        raw = socket.create_connection((self._address, self.port), self.timeout)
        self.sock = self._context.wrap_socket(raw, server_hostname=self.host)


def post(
    url: str,
    body: bytes,
    headers: dict[str, str],
    *,
    timeout: float,
    allow_private: bool,
) -> Answer:
    """POST `body` to `url` with `headers`; every outcome is an Answer."""
    started = time.perf_counter()

    def answer(status: int | None, error: str = "", retryable: bool = False) -> Answer:
        elapsed = (time.perf_counter() - started) * 1000
        return Answer(status, round(elapsed, 1), error[:500], retryable)

    try:
        origin = check_url(url)
        for _hop in range(MAX_REDIRECTS + 1):
            status, location = _post_once(origin, body, headers, timeout, allow_private)
            if status not in REDIRECTS or location is None:
                return answer(
                    status,
                    "" if 200 <= status < 300 else f"HTTP {status}",
                    retryable=status >= 500 or status in (408, 429),
                )
            target = check_url(urljoin(build_url(origin), location))
            if target[:3] != origin[:3]:
                raise Refused(f"Redirected to another host ({target[1]}); not followed.")
            origin = target
        raise Refused(f"More than {MAX_REDIRECTS} redirects.")
    except Refused as refusal:
        return answer(None, str(refusal))
    except ssl.SSLCertVerificationError as error:
        return answer(None, f"TLS certificate not valid: {error.verify_message or error}")
    except (OSError, http.client.HTTPException) as error:
        # Refused connections, resets, timeouts, a host that does not resolve (yet).
        return answer(None, f"{type(error).__name__}: {error}", retryable=True)
    except Exception as error:  # whatever else breaks is a failed delivery, never a crash
        logger.warning("webhook POST to %s failed: %s: %s", url, type(error).__name__, error)
        return answer(None, f"{type(error).__name__}: {error}")


def _post_once(
    origin: tuple[str, str, int, str],
    body: bytes,
    headers: dict[str, str],
    timeout: float,
    allow_private: bool,
) -> tuple[int, str | None]:
    scheme, host, port, path = origin
    address = resolve(host, port, allow_private=allow_private)
    kind = _PinnedHTTPSConnection if scheme == "https" else _PinnedHTTPConnection
    connection = kind(host, port, address, timeout)
    try:
        connection.request(
            "POST",
            path,
            body=body,
            headers={
                "Content-Type": "application/json",
                "User-Agent": USER_AGENT,
                **headers,
            },
        )
        response = connection.getresponse()
        response.read(MAX_ANSWER_BYTES)
        return response.status, response.getheader("Location")
    finally:
        connection.close()
