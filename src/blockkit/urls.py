"""URLs as the platform reads them: asset-bundle origins and repository links.

Two readers live here, on purpose with different temperaments:

- ``parse_web_url`` follows the WHATWG URL parser (what the platform's
  JavaScript and every browser use) for the parts that decide *where* a URL
  points: tab/newline removal, ``\\`` as a path separator, the last ``@`` ending
  the userinfo, numeric IPv4 forms (``2130706433``, ``0x7f.1``, ``0177.0.0.1``,
  ``127.1``), percent-decoding and IDNA of the host, default ports. A lenient
  reader is the safe one here: whatever a browser would fetch is what we judge.
- ``check_repository`` is strict: the stored link is rebuilt from owner and repo,
  so anything the spec does not name (backslashes, percent escapes, whitespace)
  is refused rather than guessed at.

Nothing here raises on any string input; problems come back as values.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Optional, Union
from urllib.parse import unquote_to_bytes

from blockkit.jsstr import char_name, quote, utf16_len
from blockkit.platform import (
    LIMITS,
    PRIVATE_HOST_NAMES,
    PRIVATE_HOST_PREFIXES,
    PRIVATE_HOST_SUFFIXES,
    REPOSITORY_HOSTS,
)
from blockkit.record import FrozenRecord

_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443, "ftp": 21}
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
# WHATWG "forbidden domain code points" (after percent-decoding), minus "%" handled separately.
_FORBIDDEN_HOST_CHARS = frozenset("\x00\t\n\r #/:<>?@[\\]^|%\x7f") | frozenset(map(chr, range(0x20)))

IPAddress = Union[ipaddress.IPv4Address, ipaddress.IPv6Address]


class WebUrl(FrozenRecord):
    """The parts of a parsed URL that decide where it points."""

    __slots__ = ("scheme", "host", "port", "has_credentials", "address")
    scheme: str  # lowercased
    host: str  # canonical: lowercased ASCII name, dotted IPv4, or [IPv6]
    port: Optional[int]  # None when absent or the scheme's default
    has_credentials: bool
    address: Optional[IPAddress]  # set when the host is an IP literal in any notation

    def __init__(self, scheme: str, host: str, port: Optional[int], has_credentials: bool,
                 address: Optional[IPAddress] = None) -> None:
        self._set(scheme=scheme, host=host, port=port, has_credentials=has_credentials, address=address)

    @property
    def origin(self) -> str:
        return f"{self.scheme}://{self.host}" + (f":{self.port}" if self.port is not None else "")


class UrlProblem(Exception):
    """Internal signal; never escapes this module."""


def parse_web_url(value: str) -> tuple[Optional[WebUrl], Optional[str]]:
    """Parse an absolute http(s)-like URL; return (url, None) or (None, problem)."""
    try:
        return _parse(value), None
    except UrlProblem as problem:
        return None, str(problem)
    except Exception as exc:  # a parser bug must not become a traceback
        return None, f"cannot be parsed ({type(exc).__name__})"


def _parse(value: str) -> WebUrl:
    # WHATWG: strip leading/trailing C0 controls and spaces, drop every tab and newline.
    text = value.strip("".join(map(chr, range(0x21)))).replace("\t", "").replace("\n", "").replace("\r", "")
    match = _SCHEME.match(text)
    if not match:
        raise UrlProblem("is not an absolute URL")
    scheme = match.group()[:-1].lower()
    if scheme not in _DEFAULT_PORTS:
        raise UrlProblem(f"uses the {scheme}: scheme")
    rest = text[match.end():]
    # Special schemes ignore any run of slashes and backslashes before the authority.
    rest = rest.lstrip("/\\")
    end = len(rest)
    for stop in "/\\?#":
        index = rest.find(stop)
        if index != -1:
            end = min(end, index)
    authority = rest[:end]
    userinfo, at, hostport = authority.rpartition("@")
    has_credentials = bool(at) and bool(userinfo.replace(":", ""))
    host_text, port = _split_port(hostport, scheme)
    host, address = _parse_host(host_text)
    return WebUrl(scheme=scheme, host=host, port=port, has_credentials=has_credentials, address=address)


def _split_port(hostport: str, scheme: str) -> tuple[str, Optional[int]]:
    if hostport.startswith("["):
        close = hostport.find("]")
        if close == -1:
            raise UrlProblem("has an unclosed [ in its host")
        host, after = hostport[: close + 1], hostport[close + 1:]
        if after and not after.startswith(":"):
            raise UrlProblem("has characters after its bracketed IPv6 host")
        port_text = after[1:] if after else ""
    else:
        host, _, port_text = hostport.partition(":")
    if not port_text:
        return host, None
    if not port_text.isascii() or not port_text.isdigit():
        raise UrlProblem(f"has an invalid port {quote(port_text)}")
    port = int(port_text)
    if port > 65535:
        raise UrlProblem(f"has an invalid port {port_text} (above 65535)")
    return host, (None if port == _DEFAULT_PORTS[scheme] else port)


def _parse_host(text: str) -> tuple[str, Optional[IPAddress]]:
    if not text:
        raise UrlProblem("has no host")
    if text.startswith("["):
        inner = text[1:-1]
        if "%" in inner:  # zone ids are not part of URL syntax
            raise UrlProblem(f"has an invalid IPv6 host {text}")
        try:
            address6 = ipaddress.IPv6Address(inner)
        except ValueError:
            raise UrlProblem(f"has an invalid IPv6 host {text}") from None
        return f"[{address6.compressed}]", address6
    try:
        decoded = unquote_to_bytes(text).decode("utf-8")
    except UnicodeDecodeError:
        raise UrlProblem("has a host with percent-escapes that are not UTF-8") from None
    host = _domain_to_ascii(decoded)
    if any(ch in _FORBIDDEN_HOST_CHARS for ch in host):
        raise UrlProblem(f"has a host {quote(host)} with characters a host name cannot contain")
    if _ends_in_number(host):
        number = _parse_ipv4(host)
        address4 = ipaddress.IPv4Address(number)
        return str(address4), address4
    return host, None


def _domain_to_ascii(name: str) -> str:
    if name.isascii():
        return name.lower()
    try:
        # IDNA 2003 ToASCII per label; its nameprep also folds case and maps full-width dots.
        # (Browsers use UTS #46, which differs on a few characters such as "ß".)
        ascii_name = name.encode("idna").decode("ascii").lower()
    except (UnicodeError, ValueError):
        raise UrlProblem(f"has a host {quote(name)} that is not a valid international domain name") from None
    if "" in ascii_name.rstrip(".").split("."):  # a mapping such as U+2490 "⒐" -> "9." made an empty label
        raise UrlProblem(f"has a host {quote(name)} that is not a valid international domain name")
    return ascii_name


def _ends_in_number(host: str) -> bool:
    parts = host.split(".")
    if parts[-1] == "" and len(parts) > 1:
        parts = parts[:-1]
    last = parts[-1]
    if last.isascii() and last.isdigit():
        return True
    return _ipv4_number(last) is not None


def _ipv4_number(part: str) -> Optional[int]:
    """WHATWG IPv4 number parser: decimal, 0x hex, or 0-prefixed octal; None if not a number."""
    if not part or not part.isascii():
        return None
    radix = 10
    if part[:2] in ("0x", "0X"):
        part, radix = part[2:], 16
        if not part:
            return 0
    elif len(part) > 1 and part[0] == "0":
        part, radix = part[1:], 8
    digits = {10: "0123456789", 16: "0123456789abcdefABCDEF", 8: "01234567"}[radix]
    if not all(ch in digits for ch in part):
        return None
    return int(part, radix)


def _parse_ipv4(host: str) -> int:
    parts = host.split(".")
    if parts[-1] == "" and len(parts) > 1:
        parts = parts[:-1]
    if len(parts) > 4:
        raise UrlProblem(f"has a host {quote(host)} that looks like an IPv4 address but has too many parts")
    numbers = []
    for part in parts:
        number = _ipv4_number(part)
        if number is None:
            raise UrlProblem(f"has a host {quote(host)} that ends in a number but is not a valid IPv4 address")
        numbers.append(number)
    if any(n > 255 for n in numbers[:-1]) or numbers[-1] >= 256 ** (5 - len(numbers)):
        raise UrlProblem(f"has a host {quote(host)} that is out of range as an IPv4 address")
    value = numbers[-1]
    for index, number in enumerate(numbers[:-1]):
        value += number * 256 ** (3 - index)
    return value


def public_host_problem(url: WebUrl) -> Optional[str]:
    """Why ``url``'s host is not a public dotted host name, or None when it is."""
    address = url.address
    if address is not None:
        mapped = getattr(address, "ipv4_mapped", None)
        if mapped is not None:
            return f"its host {url.host} is an IPv4-mapped IPv6 address (of {mapped}), not a host name"
        return f"its host {url.host} is an IP address, not a host name"
    return host_name_problem(url.host)


def host_name_problem(host: str) -> Optional[str]:
    """Why a canonical (lowercase ASCII) host name is not public, or None when it is."""
    if host.endswith("."):
        return f"its host {quote(host)} ends with a dot"
    if host in PRIVATE_HOST_NAMES:
        return f"its host {host} is a private name"
    for suffix in PRIVATE_HOST_SUFFIXES:
        if host.endswith(suffix):
            return f"its host {host} ends in {suffix}, which names a private network"
    for prefix in PRIVATE_HOST_PREFIXES:
        if host.startswith(prefix):
            return (f"its host {host} starts with {prefix}, the start of a private address range; the platform "
                    "refuses such hosts by their text, even when they are DNS names")
    if "." not in host:
        return f"its host {quote(host)} has no dot, so it is not a public host name"
    if "" in host.split("."):
        return f"its host {quote(host)} has an empty label"
    return None


def is_public_host(host: str) -> bool:
    """Whether ``host`` (as written in a URL's authority) is a public dotted host name."""
    if any(ch in host for ch in "@:/\\?#"):
        return False  # userinfo, a port or a path: more than a host
    url, problem = parse_web_url(f"https://{host}/")
    return url is not None and problem is None and public_host_problem(url) is None


def origin_of(url: str) -> Optional[str]:
    """The serialised origin of ``url`` (scheme, lowercased host, non-default port), or None."""
    parsed, _ = parse_web_url(url)
    return parsed.origin if parsed is not None else None


def read_allowed_origin(entry: str) -> Optional[str]:
    """An allowed-origin entry read as the platform reads its OAuth client's ``allowedOrigins``.

    The entry is lower-cased first, as every caller of the platform's validator does before
    handing the origins over (so ``HTTPS://cdn.example.com`` is ``https://cdn.example.com``).
    Then an entry that does not start with ``http`` is a bare host: it is read as
    ``https://`` + the entry, so ``cdn.example.com:8443`` is the origin
    ``https://cdn.example.com:8443``. The result is the URL's origin (scheme, lowercased
    host, port unless the default); an entry that is not a URL gives None and allows
    nothing. Source: civitai/civitai@ebed661
    src/server/services/block-manifest-validator.service.ts (``normalizeOriginLoose``: the
    ``startsWith('http')`` test, then ``new URL``), and its callers
    src/pages/api/internal/blocks/git-push.ts, src/server/services/blocks/publish-request.service.ts
    (approve) and src/server/routers/blocks.router.ts (the web edit), which pass
    ``allowedOrigins.map((o) => o.toLowerCase())``.
    """
    entry = entry.lower()
    return origin_of(entry if entry.startswith("http") else f"https://{entry}")


def normalize_origin(origin: str) -> Optional[str]:
    """An allowed-origin setting in canonical form (see ``read_allowed_origin``); None when unreadable."""
    return read_allowed_origin(origin)


# --- repository links ---------------------------------------------------------

REPOSITORY_SCHEME = "https://"
_SEGMENT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._\-]*")
_GIT_SUFFIX = ".git"


class RepositoryCheck(FrozenRecord):
    """The verdict on a repository link: the stored form, or the first problem found."""

    __slots__ = ("stored", "problem", "kind", "hint")
    stored: Optional[str]
    problem: Optional[str]
    # scheme | length | characters | credentials | port | host | subdomain | path | deep-link | segment
    kind: Optional[str]
    hint: Optional[str]

    def __init__(self, stored: Optional[str] = None, problem: Optional[str] = None, kind: Optional[str] = None,
                 hint: Optional[str] = None) -> None:
        self._set(stored=stored, problem=problem, kind=kind, hint=hint)


def check_repository(url: object) -> RepositoryCheck:
    try:
        return _check_repository(url)
    except Exception as exc:  # defensive: a bug here must not crash validation
        return RepositoryCheck(problem=f"cannot be read ({type(exc).__name__})", kind="characters")


def normalize_repository(url: object) -> Optional[str]:
    """The stored form ``https://<host>/<owner>/<repo>`` of a repository link, or None when invalid."""
    return check_repository(url).stored


def _bad(kind: str, problem: str, hint: Optional[str] = None) -> RepositoryCheck:
    return RepositoryCheck(problem=problem, kind=kind, hint=hint)


def _check_repository(url: object) -> RepositoryCheck:
    if not isinstance(url, str):
        return _bad("scheme", "is not a string")
    if not url.startswith(REPOSITORY_SCHEME):
        return _bad("scheme", "must start with https://")
    if utf16_len(url) > LIMITS.repository_max:
        return _bad("length", f"is longer than {LIMITS.repository_max} characters")
    rest = url[len(REPOSITORY_SCHEME):]
    # Every whitespace character but the space is unprintable: one C-speed test clears a usual link.
    odd = None
    if not rest.isprintable() or " " in rest or "\\" in rest:
        odd = next((ch for ch in rest if ch.isspace() or not ch.isprintable() or ch == "\\"), None)
    if odd is not None:
        return _bad("characters", f"contains {char_name(odd)}, which a repository link cannot contain",
                    "write the link as https://<host>/<owner>/<repo>")
    end = min([i for i in (rest.find("/"), rest.find("?"), rest.find("#")) if i != -1], default=len(rest))
    authority, remainder = rest[:end], rest[end:]
    allowed = ", ".join(REPOSITORY_HOSTS)
    if "@" in authority:
        return _bad("credentials", "contains credentials (user@host); links must not carry credentials",
                    "remove everything between https:// and the @")
    host, colon, port = authority.partition(":")
    if colon:
        return _bad("port", f"has a port (:{port}); ports are not allowed", f"remove :{port}")
    host = host.lower()  # host names are case-insensitive; the stored form is lowercase
    if not host:
        return _bad("host", "has no host", f"use one of {allowed}")
    if host not in REPOSITORY_HOSTS:
        parent = next((h for h in REPOSITORY_HOSTS if host.endswith("." + h)), None)
        if parent is not None:
            return _bad("subdomain", f"is on {host}, a subdomain of {parent}; only {parent} itself is accepted",
                        f"use https://{parent}/<owner>/<repo>")
        return _bad("host", f"is on {host}, which is not one of {allowed}",
                    "link the repository on one of those hosts")
    path = remainder.split("#", 1)[0].split("?", 1)[0]
    if path.endswith("/"):
        path = path[:-1]
    if path.endswith(_GIT_SUFFIX):
        path = path[: -len(_GIT_SUFFIX)]
    segments = path[1:].split("/") if path else []
    if len(segments) > 2 and "" in segments:  # "//", or a second trailing slash: not a deeper path
        return _bad("segment", "has an empty path segment (\"//\"); the path must be exactly /<owner>/<repo>",
                    f"e.g. https://{host}/<owner>/<repo>")
    if len(segments) < 2:
        return _bad("path", "does not name a repository: the path must be exactly /<owner>/<repo>",
                    f"e.g. https://{host}/<owner>/<repo>")
    if len(segments) > 2:
        owner, repo = segments[0], segments[1]
        return _bad("deep-link", f"is a deep link ({len(segments)} path segments); the path must be exactly /<owner>/<repo>",
                    f"link the repository itself: https://{host}/{owner}/{repo}")
    for name, segment in zip(("owner", "repository"), segments):
        if not _SEGMENT.fullmatch(segment):
            shown = quote(segment) if segment else "empty"
            return _bad("segment", f"has an invalid {name} segment {shown}: it must start with an ASCII letter or "
                        "digit and contain only letters, digits, '.', '-' and '_'")
    return RepositoryCheck(stored=f"https://{host}/{segments[0]}/{segments[1]}")
