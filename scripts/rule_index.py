"""Regenerate the rule index of the guide (docs/rules.md) from the rules' own documentation.

    python scripts/rule_index.py          rewrite the index between the markers
    python scripts/rule_index.py --check  exit 1 if the index is stale (CI, tests)

The index is the output of ``blockkit rules --format markdown``, placed between
``<!-- rules:start -->`` and ``<!-- rules:end -->``; the rest of the page is
left byte for byte as it is.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

START = "<!-- rules:start -->"
END = "<!-- rules:end -->"
PAGE = README = Path(__file__).resolve().parents[1] / "docs" / "rules.md"


class MarkersMissing(Exception):
    pass


def index_markdown() -> str:
    from blockkit.commands.rules import all_rules, render_markdown

    return render_markdown(all_rules())


def with_index(readme: str, index: str) -> str:
    """``readme`` with the text between the markers replaced by ``index``."""
    start = readme.find(START)
    end = readme.find(END, start + len(START)) if start != -1 else -1
    if start == -1 or end == -1:
        raise MarkersMissing(f"the page needs the markers {START} and {END}, in that order")
    return readme[: start + len(START)] + "\n" + index + readme[end:]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="report a stale index instead of rewriting it")
    parser.add_argument("--page", "--readme", dest="readme", type=Path, default=PAGE,
                        help="the page to update (default: the repo's docs/rules.md)")
    args = parser.parse_args(argv)
    try:
        current = args.readme.read_text(encoding="utf-8")
        wanted = with_index(current, index_markdown())
    except (OSError, MarkersMissing) as exc:
        print(f"rule_index: error: {exc}", file=sys.stderr)
        return 2
    if wanted == current:
        return 0
    if args.check:
        print(f"rule_index: {args.readme} is stale; run: python scripts/rule_index.py", file=sys.stderr)
        return 1
    args.readme.write_text(wanted, encoding="utf-8")
    print(f"rule_index: updated {args.readme}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
