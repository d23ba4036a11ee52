"""BK222 a public https host, BK223 on an allowed origin (default https://<blockId>.civit.ai)."""

from __future__ import annotations

import pytest

from blockkit.context import Context

from .conftest import Run, at, codes, manifest, only

APP = "https://demo-block.civit.ai"


@pytest.mark.parametrize(
    "url",
    [
        f"{APP}/bundle.js",
        APP,
        f"{APP}/",
        "https://DEMO-BLOCK.Civit.AI/bundle.js",  # hosts compare lowercased
        "https://demo-block.civit.ai:443/bundle.js",  # the default port is no port
        "https://demo-block.civit.ai:0443/bundle.js",
        "https://demo-block.civit.ai:/bundle.js",  # an empty port is no port
        f"{APP}/a/../bundle.js?v=3#x",
        "https://%64emo-block.civit.ai/x",  # percent-decoded host
    ],
)
def test_the_apps_own_origin_is_accepted(run: Run, url: str) -> None:
    assert run(manifest(assetBundleUrl=url)) == []


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("https://127.0.0.1/b.js", "127.0.0.1 is an IP address"),
        ("https://2130706433/b.js", "127.0.0.1 is an IP address"),  # integer form
        ("https://0x7f000001/b.js", "127.0.0.1 is an IP address"),  # hex
        ("https://0177.0.0.1/b.js", "127.0.0.1 is an IP address"),  # octal
        ("https://127.1/b.js", "127.0.0.1 is an IP address"),  # short form
        ("https://0x7f.1/b.js", "127.0.0.1 is an IP address"),
        ("https://10.0.0.8/b.js", "IP address"),
        ("https://169.254.169.254/latest", "IP address"),
        ("https://8.8.8.8/b.js", "IP address"),  # public, but still not a host name
        ("https://1.2.3.4./b.js", "1.2.3.4 is an IP address"),
        ("https://[::1]/b.js", "[::1] is an IP address"),
        ("https://[fe80::1]/b.js", "IP address"),
        ("https://[fc00::5]/b.js", "IP address"),
        ("https://[::ffff:127.0.0.1]/b.js", "IPv4-mapped IPv6 address (of 127.0.0.1)"),
        ("https://[::ffff:7f00:1]/b.js", "IPv4-mapped"),
        ("https://localhost/b.js", "localhost is a private name"),
        ("https://LOCALHOST/b.js", "localhost is a private name"),
        ("https://%6c%6fcalhost/b.js", "localhost is a private name"),
        ("https://printer.local/b.js", "ends in .local"),
        ("https://metadata.google.internal/computeMetadata/v1/", "metadata.google.internal is a private name"),
        ("https://api.corp.internal/b.js", "ends in .internal"),
        ("https://intranet/b.js", "has no dot"),
        ("https:///intranet/b.js", "has no dot"),  # WHATWG skips the extra slash
        ("https://demo-block.civit.ai./b.js", "ends with a dot"),
        ("https://a..civit.ai/b.js", "empty label"),
        ("https://demo-block.civit.ai:99999/b.js", "invalid port"),
        ("https://demo-block.civit.ai:8o/b.js", "invalid port"),
        ("https://[::1/b.js", "unclosed ["),
        ("https://256.1.1.1/b.js", "out of range"),
        ("https://1.2.3.4.5/b.js", "too many parts"),
        ("https://demo-block.civit.ai.08/b.js", "not a valid IPv4 address"),
        ("https://exa mple.com/b.js", "cannot contain"),
    ],
)
def test_non_public_urls_are_refused(run: Run, url: str, words: str) -> None:
    findings = run(manifest(assetBundleUrl=url))
    assert at(findings, "BK222") == ["/assetBundleUrl"]
    assert words in findings[0].message
    assert "BK223" not in codes(findings)  # the origin check adds nothing on a host that is not public


@pytest.mark.parametrize(
    "url",
    [
        "https://cdn.example.com/b.js",
        "https://demo-block.civit.ai:8443/b.js",  # another port is another origin
        "https://other-block.civit.ai/b.js",
        "https://demo-block.civit.ai.evil.example/b.js",
        "https://civit.ai/b.js",
        "https://evil.example\\@demo-block.civit.ai/b.js",  # a backslash ends the host, as in a browser
    ],
)
def test_off_origin_urls_are_refused(run: Run, url: str) -> None:
    findings = run(manifest(assetBundleUrl=url))
    assert codes(findings) == {"BK223"}
    assert at(findings, "BK223") == ["/assetBundleUrl"]
    assert APP in findings[0].message


def test_credentials_that_hide_the_real_host(run: Run) -> None:
    # The platform ignores the userinfo: the host is evil.example, public but off-origin.
    findings = run(manifest(assetBundleUrl="https://demo-block.civit.ai@evil.example/b.js"))
    assert codes(findings) == {"BK223"}
    assert "https://evil.example" in only(findings, "BK223")[0].message


@pytest.mark.parametrize("url", ["https://demo-block.civit.ai#@evil.example/", "https://demo-block.civit.ai?u=a@b.example"])
def test_an_at_sign_after_the_host_is_not_userinfo(run: Run, url: str) -> None:
    assert run(manifest(assetBundleUrl=url)) == []


def test_the_off_origin_message_shows_the_port(run: Run) -> None:
    findings = run(manifest(assetBundleUrl="https://demo-block.civit.ai:8443/b.js"))
    assert "https://demo-block.civit.ai:8443" in findings[0].message


@pytest.mark.parametrize("url", ["http://demo-block.civit.ai/b.js", "HTTPS://demo-block.civit.ai/b.js", "//demo-block.civit.ai/b.js"])
def test_other_schemes_are_the_schemas(run: Run, url: str) -> None:
    assert codes(run(manifest(assetBundleUrl=url))) == {"BK104"}


def test_explicit_allowed_origins_replace_the_default(run: Run) -> None:
    context = Context(allowed_origins=("https://CDN.example.com/", "https://assets.example.com:8443"))
    assert run(manifest(assetBundleUrl="https://cdn.example.com/b.js"), context) == []
    assert run(manifest(assetBundleUrl="https://assets.example.com:8443/b.js"), context) == []
    assert codes(run(manifest(assetBundleUrl="https://assets.example.com/b.js"), context)) == {"BK223"}
    assert codes(run(manifest(assetBundleUrl=f"{APP}/b.js"), context)) == {"BK223"}


def test_the_app_domain_comes_from_the_context(run: Run) -> None:
    assert run(manifest(assetBundleUrl="https://demo-block.example.org/b.js"), app_domain="example.org") == []
    assert codes(run(manifest(assetBundleUrl=f"{APP}/b.js"), app_domain="example.org")) == {"BK223"}


def test_without_a_usable_block_id_the_origin_is_not_guessed(run: Run) -> None:
    findings = run(manifest(blockId="Not A Block", assetBundleUrl="https://cdn.example.com/b.js"))
    assert codes(findings) == {"BK104"}
    assert codes(run(manifest(blockId=..., assetBundleUrl="https://cdn.example.com/b.js"))) == {"BK101"}


@pytest.mark.parametrize("value", [None, 42, ["https://x.example"], "https://", "https://\u0000", "https://[", "https://@", "https://:"])
def test_odd_values_never_crash(run: Run, value: object) -> None:
    run(manifest(assetBundleUrl=value))


# --- issue 22: where the platform's lexical guard decides (civitai/civitai@ebed661 ssrf-hostname.ts,
# block-manifest-validator.service.ts); each family at its boundaries ------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "https://user@demo-block.civit.ai/b.js",
        "https://user:pw@demo-block.civit.ai/b.js",
        "https://:pw@demo-block.civit.ai/b.js",
        "https://%75ser:p%40ss@demo-block.civit.ai/b.js",  # percent-encoded, with an encoded @
        "https://us%3Aer@demo-block.civit.ai:443/b.js",
        "https://a@b@demo-block.civit.ai/b.js",  # the last @ ends the userinfo
    ],
)
def test_family1_credentials_on_an_allowed_origin_are_accepted(run: Run, url: str) -> None:
    assert run(manifest(assetBundleUrl=url)) == []


def test_family1_credentials_do_not_excuse_the_host(run: Run) -> None:
    # The userinfo is ignored, not trusted: the host after it still decides.
    assert at(run(manifest(assetBundleUrl="https://user:pw@localhost/b.js")), "BK222") == ["/assetBundleUrl"]
    assert codes(run(manifest(assetBundleUrl="https://user:pw@cdn.example.com/b.js"))) == {"BK223"}


@pytest.mark.parametrize(
    ("entry", "url"),
    [
        ("cdn.example.com", "https://cdn.example.com/b.js"),
        ("CDN.Example.com", "https://cdn.example.com/b.js"),
        ("cdn.example.com:8443", "https://cdn.example.com:8443/b.js"),  # the port is kept
        ("cdn.example.com:443", "https://cdn.example.com/b.js"),  # the default port is no port
        ("cdn.example.com/assets/", "https://cdn.example.com/b.js"),  # a path counts by its origin
        ("https://cdn.example.com", "https://cdn.example.com/b.js"),
        ("https:cdn.example.com", "https://cdn.example.com/b.js"),  # WHATWG needs no slashes after https:
        # The platform's callers lower-case every entry before its validator reads it (git-push.ts:321,
        # publish-request.service.ts:2274, blocks.router.ts:5907), so an upper-case scheme is https.
        ("HTTPS://cdn.example.com", "https://cdn.example.com/b.js"),
        ("Https://CDN.example.com:8443", "https://cdn.example.com:8443/b.js"),
    ],
)
def test_family2_bare_hosts_are_https_origins(run: Run, entry: str, url: str) -> None:
    assert run(manifest(assetBundleUrl=url), allowed_origins=(entry,)) == []


@pytest.mark.parametrize(
    ("entry", "url"),
    [
        ("cdn.example.com:8443", "https://cdn.example.com/b.js"),  # a kept port is another origin
        ("cdn.example.com", "https://cdn.example.com:8443/b.js"),
        ("http://cdn.example.com", "https://cdn.example.com/b.js"),  # starts with http: read as written
        ("HTTP://cdn.example.com", "https://cdn.example.com/b.js"),  # lower-cased: http://, another origin
        ("cdn.example.com", "https://www.cdn.example.com/b.js"),
    ],
)
def test_family2_what_a_bare_host_does_not_allow(run: Run, entry: str, url: str) -> None:
    assert codes(run(manifest(assetBundleUrl=url), allowed_origins=(entry,))) == {"BK223"}


def test_family2_an_unreadable_entry_allows_nothing(run: Run) -> None:
    findings = run(manifest(assetBundleUrl="https://cdn.example.com/b.js"), allowed_origins=("not a host",))
    assert codes(findings) == {"BK223"}
    assert "can be read" in findings[0].message
    # ...but a readable entry beside it still counts
    assert run(manifest(assetBundleUrl="https://cdn.example.com/b.js"),
               allowed_origins=("not a host", "cdn.example.com")) == []


def test_family2_config_entries_are_read_the_same_way(tmp_path, run: Run) -> None:  # type: ignore[no-untyped-def]
    from blockkit.context import load_config

    (tmp_path / "blockkit.toml").write_text('allowed-origins = ["cdn.example.com:8443"]\n', encoding="utf-8")
    context = load_config(tmp_path).context
    assert run(manifest(assetBundleUrl="https://cdn.example.com:8443/b.js"), context) == []
    assert codes(run(manifest(assetBundleUrl="https://cdn.example.com/b.js"), context)) == {"BK223"}


@pytest.mark.parametrize(
    "host",
    ["10.cdn.example.com", "127.app.example.com", "192.168.cdn.example.com", "169.254.x.example.com",
     "172.16.cdn.example.com", "172.31.cdn.example.com", "172.20.x.example", "0.cdn.example.com",
     "%31%30.cdn.example.com", "\uff11\uff10.cdn.example.com"],  # percent-encoded and full-width "10."
)
def test_family4_hosts_that_start_like_a_private_range_are_refused(run: Run, host: str) -> None:
    findings = run(manifest(assetBundleUrl=f"https://{host}/b.js"), allowed_origins=(f"https://{host}",))
    assert at(findings, "BK222") == ["/assetBundleUrl"]
    assert "private address range" in findings[0].message


@pytest.mark.parametrize(
    "host",
    ["100.cdn.example.com", "11.cdn.example.com", "1.cdn.example.com", "172.15.cdn.example.com",
     "172.32.cdn.example.com", "172.3.cdn.example.com", "192.169.cdn.example.com", "169.25.cdn.example.com",
     "00.cdn.example.com", "cdn.10.example.com", "cdn-10.example.com", "x10.example.com"],
)
def test_family4_near_misses_are_public(run: Run, host: str) -> None:
    assert run(manifest(assetBundleUrl=f"https://{host}/b.js"), allowed_origins=(f"https://{host}",)) == []


@pytest.mark.parametrize("host", ["a.localhost", "cdn.demo-block.localhost", "localhost.example.com",
                                  "my-localhost.io"])
def test_family5_names_under_localhost_are_accepted(run: Run, host: str) -> None:
    assert run(manifest(assetBundleUrl=f"https://{host}/b.js"), allowed_origins=(host,)) == []


@pytest.mark.parametrize("host", ["localhost", "LocalHost", "localhost.", "a.localhost."])
def test_family5_only_the_name_localhost_itself_is_private(run: Run, host: str) -> None:
    assert at(run(manifest(assetBundleUrl=f"https://{host}/b.js"), allowed_origins=(host,)), "BK222") == [
        "/assetBundleUrl"]


def test_family2_the_cli_flag_takes_a_bare_host(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import json
    import subprocess
    import sys

    path = tmp_path / "block.manifest.json"
    path.write_text(json.dumps(manifest(assetBundleUrl="https://cdn.example.com:8443/b.js")), encoding="utf-8")
    run_cli = [sys.executable, "-m", "blockkit.cli", "validate", "--format", "json", str(path)]
    ok = subprocess.run([*run_cli, "--allowed-origin", "cdn.example.com:8443"], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    off = subprocess.run([*run_cli, "--allowed-origin", "cdn.example.com"], capture_output=True, text=True)
    assert off.returncode == 1 and "BK223" in off.stdout
