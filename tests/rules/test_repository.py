"""BK202 and blockkit.urls.normalize_repository: the spec's repository link rules."""

from __future__ import annotations

import pytest

from blockkit.urls import check_repository, normalize_repository

from .conftest import Run, at, codes, manifest, only


@pytest.mark.parametrize(
    ("link", "stored"),
    [
        ("https://github.com/acme/demo", "https://github.com/acme/demo"),
        ("https://github.com/acme/demo/", "https://github.com/acme/demo"),
        ("https://github.com/acme/demo.git", "https://github.com/acme/demo"),
        ("https://github.com/acme/demo.git/", "https://github.com/acme/demo"),
        ("https://gitlab.com/acme/demo?tab=readme#top", "https://gitlab.com/acme/demo"),
        ("https://civitai.com/acme/demo#readme", "https://civitai.com/acme/demo"),
        ("https://github.com/acme/demo?path=/a/b/c", "https://github.com/acme/demo"),
        ("https://github.com/acme/demo.git?x=1", "https://github.com/acme/demo"),
        ("https://GitHub.COM/Acme/Demo", "https://github.com/Acme/Demo"),  # host case-insensitive, stored lowercase
        ("https://github.com/a/b", "https://github.com/a/b"),
        ("https://github.com/0wner/r3po_x-y.z", "https://github.com/0wner/r3po_x-y.z"),
        ("https://github.com/acme/demo.git.git", "https://github.com/acme/demo.git"),  # one .git is stripped
        ("https://github.com/acme/" + "r" * 176, "https://github.com/acme/" + "r" * 176),  # 200 characters
    ],
)
def test_accepted_links_and_their_stored_form(run: Run, link: str, stored: str) -> None:
    assert normalize_repository(link) == stored
    assert run(manifest(repository=link)) == []


@pytest.mark.parametrize(
    ("link", "kind", "words"),
    [
        ("https://user@github.com/a/b", "credentials", "credentials"),
        ("https://user:pw@github.com/a/b", "credentials", "credentials"),
        ("https://github.com:443/a/b", "port", "port (:443)"),
        ("https://github.com:/a/b", "port", "port"),
        ("https://www.github.com/a/b", "subdomain", "subdomain of github.com"),
        ("https://gist.github.com/a/b", "subdomain", "subdomain of github.com"),
        ("https://bitbucket.org/a/b", "host", "not one of github.com, gitlab.com, civitai.com"),
        ("https://github.com./a/b", "host", "github.com."),
        ("https://githubcom/a/b", "host", "not one of"),
        ("https:///a/b", "host", "no host"),
        ("https://github.com", "path", "/<owner>/<repo>"),
        ("https://github.com/", "path", "/<owner>/<repo>"),
        ("https://github.com/acme", "path", "/<owner>/<repo>"),
        ("https://github.com/acme/?x", "path", "/<owner>/<repo>"),
        ("https://github.com/acme/demo/tree/main", "deep-link", "deep link (4 path segments)"),
        ("https://github.com/acme/demo/issues", "deep-link", "deep link (3 path segments)"),
        ("https://github.com/acme/demo//", "segment", "empty path segment"),
        ("https://github.com//acme/demo", "segment", "empty path segment"),
        ("https://github.com/-acme/demo", "segment", "owner segment \"-acme\""),
        ("https://github.com/acme/.demo", "segment", "repository segment \".demo\""),
        ("https://github.com/acme/.git", "segment", "repository segment empty"),
        ("https://github.com//demo", "segment", "owner segment empty"),
        ("https://github.com/acme/de%20mo", "segment", "\"de%20mo\""),
        ("https://github.com/acm\u00e9/demo", "segment", "owner segment"),
        ("https://github.com/acme/demo!", "segment", "\"demo!\""),
        ("https://github.com/acme/de mo", "characters", "contains U+0020 SPACE,"),
        ("https://github.com\\acme\\demo", "characters", "contains U+005C REVERSE SOLIDUS,"),
        ("https://github.com/acme/demo\n", "characters", "contains U+000A LINE FEED,"),
        ("https://github.com/acme/demo\u0085", "characters", "contains U+0085 NEXT LINE,"),
        ("https://github.com/acme/de\u200bmo", "characters", "contains U+200B ZERO WIDTH SPACE,"),
    ],
)
def test_rejected_links_name_the_problem(run: Run, link: str, kind: str, words: str) -> None:
    verdict = check_repository(link)
    assert verdict.stored is None and normalize_repository(link) is None
    assert verdict.kind == kind
    assert words in verdict.problem
    findings = run(manifest(repository=link))
    assert at(findings, "BK202") == ["/repository"]
    assert words in only(findings, "BK202")[0].message


@pytest.mark.parametrize("link", ["http://github.com/a/b", "HTTPS://github.com/a/b", "github.com/a/b", "ftp://github.com/a/b"])
def test_the_scheme_is_reported_by_the_schema_not_twice(run: Run, link: str) -> None:
    assert normalize_repository(link) is None
    assert check_repository(link).kind == "scheme"
    assert codes(run(manifest(repository=link))) == {"BK104"}


def test_length_201_is_the_schemas_and_utf16_overflow_is_bk224(run: Run) -> None:
    long_link = "https://github.com/acme/" + "r" * 177
    assert len(long_link) == 201 and normalize_repository(long_link) is None
    assert codes(run(manifest(repository=long_link))) == {"BK105"}
    # 199 code points and 200 UTF-16 units: at the cap, accepted.
    at_cap = "https://github.com/acme/demo#" + "x" * 169 + "\U0001f600"
    assert (len(at_cap), normalize_repository(at_cap)) == (199, "https://github.com/acme/demo")
    assert run(manifest(repository=at_cap)) == []
    # 200 code points (the schema's cap) and 201 units: only the server's count catches it.
    over = at_cap + "x"
    assert normalize_repository(over) is None
    assert codes(run(manifest(repository=over))) == {"BK224"}


@pytest.mark.parametrize("value", [None, 42, ["https://github.com/a/b"], {"url": "x"}])
def test_non_strings_are_never_normalised_and_never_crash(run: Run, value: object) -> None:
    assert normalize_repository(value) is None
    assert "BK202" not in codes(run(manifest(repository=value)))
