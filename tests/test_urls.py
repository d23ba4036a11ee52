"""blockkit.urls: the WHATWG-leaning URL reader and the strict repository normaliser."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from blockkit.urls import (
    UrlProblem,
    _parse,
    check_repository,
    host_name_problem,
    is_public_host,
    normalize_origin,
    normalize_repository,
    origin_of,
    parse_web_url,
)


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("https://2130706433/", "127.0.0.1"),
        ("https://0x7f000001/", "127.0.0.1"),
        ("https://0177.0.0.1/", "127.0.0.1"),
        ("https://127.1/", "127.0.0.1"),
        ("https://0x7f.1/", "127.0.0.1"),
        ("https://0/", "0.0.0.0"),
        ("https://4294967295/", "255.255.255.255"),
        ("https://[::ffff:127.0.0.1]/", "[::ffff:7f00:1]"),
        ("https://[0:0:0:0:0:0:0:1]/", "[::1]"),
        ("https://Example.COM/", "example.com"),
        ("https://b\u00fccher.de/", "xn--bcher-kva.de"),
        ("https://\uff21\uff22.com/", "ab.com"),  # full-width letters fold
    ],
)
def test_hosts_are_canonicalised_as_a_browser_does(url: str, host: str) -> None:
    parsed, problem = parse_web_url(url)
    assert problem is None and parsed is not None
    assert parsed.host == host


@pytest.mark.parametrize(
    ("url", "origin"),
    [
        ("https://a.example.com:443/x", "https://a.example.com"),
        ("https://a.example.com:8443/x", "https://a.example.com:8443"),
        ("https://u:p@a.example.com/x", "https://a.example.com"),
        ("https://a.example.com@b.example.com/", "https://b.example.com"),
        ("https://b.example.com\\@a.example.com/", "https://b.example.com"),
        ("https://a.exa\tmple.com/", "https://a.example.com"),
        ("  https://a.example.com/  ", "https://a.example.com"),
        ("https:a.example.com/x", "https://a.example.com"),
        ("http://a.example.com:80/", "http://a.example.com"),
    ],
)
def test_origins(url: str, origin: str) -> None:
    assert origin_of(url) == origin


@pytest.mark.parametrize("url", ["a.example.com", "mailto:x@y.z", "https://", "https://[::1", "https://x.com:65536/",
                                 "https://09.1/", "https://%ff.com/", "https://\u2490.com/"])
def test_unparsable_urls_are_a_problem_not_an_exception(url: str) -> None:
    parsed, problem = parse_web_url(url)
    assert parsed is None and problem


@pytest.mark.parametrize("host", ["demo.civit.ai", "cdn.example.com", "a.b.c.d.e", "xn--bcher-kva.de", "1.1.1.1.nip.io",
                                  "x.localhost", "172.32.cdn.example", "172.15.cdn.example", "100.example.com",
                                  "01.example.com", "cdn.10.example.com"])
def test_public_hosts(host: str) -> None:
    assert is_public_host(host)


@pytest.mark.parametrize("host", ["localhost", "127.0.0.1", "2130706433", "[::1]", "intranet", "x.local", "x.internal",
                                  "metadata.google.internal", "example.com.", "a..b", "", "user@example.com", "10.example.com",
                                  "192.168.x.example", "172.31.cdn.example", "0.example.com"])
def test_non_public_hosts(host: str) -> None:
    assert not is_public_host(host)


def test_host_name_problem_explains() -> None:
    assert host_name_problem("example.com") is None
    assert "no dot" in (host_name_problem("intranet") or "")
    assert "ends with a dot" in (host_name_problem("example.com.") or "")


def test_allowed_origins_are_normalised() -> None:
    assert normalize_origin("https://CDN.example.com:443/") == "https://cdn.example.com"
    assert normalize_origin("not a url/") is None  # "https://not a url/": a space is no host character


def test_normalize_repository_examples() -> None:
    assert normalize_repository("https://github.com/acme/demo.git/") == "https://github.com/acme/demo"
    assert normalize_repository("https://www.github.com/acme/demo") is None
    assert check_repository("https://www.github.com/acme/demo").kind == "subdomain"


@settings(max_examples=400, deadline=None)
@given(st.text(max_size=60))
def test_the_url_reader_only_ever_signals_url_problems(tail: str) -> None:
    for url in (tail, "https://" + tail, "https://a.example.com" + tail, "https://[" + tail):
        try:
            _parse(url)
        except UrlProblem:
            pass


@settings(max_examples=400, deadline=None)
@given(st.text(max_size=80))
def test_the_repository_check_never_raises(tail: str) -> None:
    for url in (tail, "https://github.com/" + tail, "https://" + tail):
        verdict = check_repository(url)
        assert (verdict.stored is None) != (verdict.problem is None)
        if verdict.stored is not None:
            assert normalize_repository(verdict.stored) == verdict.stored  # the stored form is a fixed point


DIFFERENTIAL = [
    "https://127.0.0.1/", "https://2130706433/", "https://0x7f000001/", "https://0177.0.0.1/", "https://127.1/",
    "https://[::1]/", "https://[::ffff:127.0.0.1]/", "https://0x7f.1/", "https://0x/", "https://1.2.3.4./",
    "https://1.2.3.4.5/", "https://256.0.0.1/", "https://4294967296/", "https://08.0.0.1/", "https://a.b.0x1/",
    "https://demo.civit.ai:443/", "https://demo.civit.ai:0443/", "https://demo.civit.ai:8443/", "https://demo.civit.ai:/x",
    "https://DEMO.Civit.AI/", "https://user:pw@demo.civit.ai/", "https://demo.civit.ai@evil.com/",
    "https://evil.com\\@demo.civit.ai/", "https://ev\til.com/", " https://x.com/ ", "https:evil.com/x",
    "https:\\\\evil.com/x", "https:///evil.com", "https://%6c%6fcalhost/", "https://b\u00fccher.de/",
    "https://x.com:99999/", "https://x.com:12a/", "https://[::1/", "https://[::1]x/", "https://a b.com/",
    "https://a%20b.com/", "https://@x.com/", "https://u@x.com/", "https://%zz.com/", "https://x.com#@y.com",
    "https://x.com?@y.com", "https://[fe80::1%25eth0]/", "https://0/", "https://09/", "https://x.com.:8080/",
]


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_origins_agree_with_the_whatwg_parser_in_node() -> None:
    script = ("const c=JSON.parse(require('fs').readFileSync(0,'utf8'));console.log(JSON.stringify(c.map(u=>{"
              "try{const x=new URL(u);return [x.origin,!!(x.username||x.password)]}catch(e){return null}})))")
    result = subprocess.run(["node", "-e", script], input=json.dumps(DIFFERENTIAL), capture_output=True, text=True,
                            timeout=60, check=True)
    expected = json.loads(result.stdout)
    for url, theirs in zip(DIFFERENTIAL, expected):
        parsed, _ = parse_web_url(url)
        ours = None if parsed is None else [parsed.origin, parsed.has_credentials]
        assert ours == theirs, url


def test_repository_link_with_any_whitespace_or_unprintable_character_is_refused() -> None:
    """The C-speed pre-check (isprintable, no space, no backslash) must let no odd character through:
    every code point that is whitespace, unprintable or a backslash is refused as a character problem."""
    import sys

    from blockkit.urls import check_repository

    for point in range(sys.maxunicode + 1):
        ch = chr(point)
        if ch.isspace() or not ch.isprintable() or ch == "\\":
            if 0xD800 <= point <= 0xDFFF:
                continue  # lone surrogates: not text a JSON manifest can decode to in the middle of a link
            result = check_repository(f"https://github.com/owner/re{ch}po")
            assert result.kind == "characters", (hex(point), result)
