"""Server rule on the repository link: the spec's host, path and segment rules."""

from __future__ import annotations

from typing import Any, Iterator

from blockkit.rules.base import Hit, RuleContext, rule
from blockkit.jsstr import show
from blockkit.rules.guard import at
from blockkit.urls import check_repository
from blockkit.platform import REPOSITORY_HOSTS

# Problems another rule already reports: the scheme (schema pattern, BK104) and the
# length (schema BK105 in code points, BK224 in UTF-16 units).
_REPORTED_ELSEWHERE = frozenset({"scheme", "length"})
# A plain link https://<host>/<owner>/<repo> with a lowercase accepted host and segments
# as the server wants them; or no https:// at all (the scheme problem is the schema's).
_SEGMENT = "[A-Za-z0-9][A-Za-z0-9._-]*"
_PLAIN_LINK = ("^https://(" + "|".join(host.replace(".", "[.]") for host in REPOSITORY_HOSTS) + ")/"
               + _SEGMENT + "/" + _SEGMENT + "$")
_GUARD = at(["repository"], {"anyOf": [{"not": {"pattern": "^https://"}}, {"pattern": _PLAIN_LINK}]})


@rule("BK202", "invalid-repository-link", layer="server", severity="error", keys=("repository",), guard=_GUARD)
def invalid_repository_link(manifest: dict[str, Any], ctx: RuleContext) -> Iterator[Hit]:
    """The repository link is not a plain link to a repository on an accepted host.

    ## What it does
    Reads `repository` as the server does: an `https://` link with no credentials
    and no port, on exactly `github.com`, `gitlab.com` or `civitai.com` (host names
    compare case-insensitively; subdomains such as `www.github.com` are refused),
    whose path is exactly `/<owner>/<repo>` once a trailing `/`, a `.git` suffix, a
    query and a fragment are stripped. Each segment must start with an ASCII letter
    or digit and hold only letters, digits, `.`, `-` and `_`. The message names the
    exact problem: credentials, port, host, subdomain, deep link, or a bad segment.
    The stored form is `https://<host>/<owner>/<repo>`
    (`blockkit.urls.normalize_repository`).

    ## Why it matters
    The link is shown on the app's store page; the server refuses any other shape
    at review, so a deep link to a file or a branch fails the submission.

    ## Example
    "repository": "https://github.com/acme/demo-block/tree/main/src"

    ## Fix
    Link the repository itself: "repository": "https://github.com/acme/demo-block".
    """
    value = manifest.get("repository")
    if not isinstance(value, str):
        return
    verdict = check_repository(value)
    if verdict.problem is None or verdict.kind in _REPORTED_ELSEWHERE:
        return
    yield Hit("/repository", f"repository {show(value)} {verdict.problem}",
              hint=verdict.hint)
