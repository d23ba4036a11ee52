"""What the lint rules need from index.html: whether ``#root`` paints anything.

Read with the standard library's forgiving HTML tokenizer, so any file gives an
answer and nothing raises.
"""

from __future__ import annotations

from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Optional

from blockkit.jsstr import is_blank

ROOT_ID = "root"
# Elements that never have content or an end tag.
_VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
                   "track", "wbr"})


@dataclass(frozen=True)
class RootElement:
    line: int  # 1-based line of the start tag in index.html
    tag: str
    empty: bool  # no element children and no text but whitespace (comments do not count)


class _RootFinder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root: Optional[RootElement] = None
        self._tag: Optional[str] = None  # set while inside #root and nothing was found in it yet
        self._done = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, Optional[str]]]) -> None:
        self._start(tag, attrs, closed=tag in _VOID)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, Optional[str]]]) -> None:
        # HTML ignores the "/" of <div/>: only void elements are closed by it.
        self._start(tag, attrs, closed=tag in _VOID)

    def _start(self, tag: str, attrs: list[tuple[str, Optional[str]]], closed: bool) -> None:
        if self._done:
            return
        if self._tag is not None:  # an element inside #root: it has content
            self._finish(empty=False)
            return
        if any(name == "id" and value == ROOT_ID for name, value in attrs):
            line = self.getpos()[0]
            self.root = RootElement(line=line, tag=tag, empty=True)
            if closed:
                self._done = True
            else:
                self._tag = tag

    def handle_endtag(self, tag: str) -> None:
        if self._tag is not None and tag == self._tag:
            self._finish(empty=True)

    def handle_data(self, data: str) -> None:
        if self._tag is not None and not is_blank(data):
            self._finish(empty=False)

    def _finish(self, empty: bool) -> None:
        assert self.root is not None
        self.root = RootElement(line=self.root.line, tag=self.root.tag, empty=empty)
        self._tag = None
        self._done = True


def find_root(html: str) -> Optional[RootElement]:
    """The first element with id "root", or None when there is none."""
    finder = _RootFinder()
    try:
        finder.feed(html)
        finder.close()
    except Exception:  # the tokenizer is forgiving; anything left is not worth a traceback
        pass
    return finder.root
