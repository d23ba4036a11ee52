"""The engine's bounds on hostile input: findings per rule, repeated keys (issue 14, rows 3 and 4)."""

from __future__ import annotations

import copy
import json
import time
from collections import Counter
from typing import Any

import blockkit
from blockkit.engine import FINDINGS_PER_RULE_MAX, RULE_FINDINGS_MAX, check
from blockkit.render import render
from blockkit.report import Report
from blockkit.source import read_text
from sample_manifests import PAGE_BLOCK

CAP = FINDINGS_PER_RULE_MAX


def _text(**changes: Any) -> str:
    doc = copy.deepcopy(PAGE_BLOCK)
    doc.update(changes)
    return json.dumps(doc, indent=2)


def _codes(report: Any) -> Counter[str]:
    return Counter(f.code for f in report.findings)


def test_a_rule_lists_at_most_the_cap_and_counts_the_rest() -> None:
    # Review row 4: 200k invalid scopes took 25 s and 690 MB; a tenth of it shows the shape.
    report = blockkit.validate(_text(scopes=["x"] * 20_000))
    codes = _codes(report)
    assert codes["BK103"] == CAP
    (tail,) = [f for f in report.findings if f.code == "BK010"]
    assert tail.severity == "info" and tail.pointer == f"/scopes/{CAP}"
    assert tail.message.startswith(f"{20_000 - CAP:,} more items of scopes fail the schema")
    assert not report.ok  # the verdict is the same


def test_the_first_findings_in_the_file_are_the_ones_listed() -> None:
    report = blockkit.validate(_text(targets=[{"slotId": "nowhere"}] * (CAP + 50)))
    listed = [f for f in report.findings if f.code == "BK220"]
    assert [f.pointer for f in listed] == [f"/targets/{i}/slotId" for i in range(CAP)]
    summary = report.files[0].more["BK220"]
    assert summary.pointer == f"/targets/{CAP}/slotId"
    assert summary.message.startswith("50 more BK220 (unknown-slot) findings not listed")
    assert (summary.line, summary.column) == (listed[-1].line + 3, listed[-1].column)


def test_a_rule_stops_after_its_ceiling_and_says_there_may_be_more() -> None:
    report = blockkit.validate(_text(targets=[{"slotId": "nowhere"}] * (RULE_FINDINGS_MAX + 500)))
    assert _codes(report)["BK220"] == CAP
    summary = report.files[0].more["BK220"]
    assert summary.message.startswith(f"at least {RULE_FINDINGS_MAX - CAP:,} more BK220 (unknown-slot) findings")


def test_a_normal_manifest_with_many_findings_is_listed_whole() -> None:
    report = blockkit.validate(_text(goods=[{"id": "g", "title": "T", "priceBuzz": -1}] * 40))
    assert "BK010" not in _codes(report) and _codes(report)["BK107"] == 40


def test_many_findings_cost_little_time_and_output() -> None:
    text = _text(scopes=["x"] * 100_000, goods=[{}] * 30_000)
    start = time.perf_counter()
    report = blockkit.validate(text)
    elapsed = time.perf_counter() - start
    assert all(count <= CAP for count in _codes(report).values())
    assert len(render(report, "json")) < 200_000
    assert elapsed < 20  # generous: the bound is structural (above); before, this took minutes


def test_duplicate_keys_under_a_long_key_have_short_messages_and_a_count() -> None:
    # Review row 3: 8000 duplicates under a 100 KB key printed 802 MB.
    key = "k" * 20_000
    members = ",".join(f'"a{i}":0,"a{i}":0' for i in range(500))
    report = blockkit.validate('{"blockId":"abc","' + key + '":{' + members + "}}")
    duplicates = [f for f in report.findings if f.code == "BK009"]
    assert len(duplicates) == CAP
    assert all(len(f.message) < 250 for f in duplicates)
    assert duplicates[0].message == ('duplicate key "a0" in ' + "k" * 79 + "…; the platform keeps the last value")
    assert duplicates[0].pointer == "/" + key + "/a0"  # the pointer is exact: it is an identifier
    assert report.files[0].more["BK009"].message.startswith("400 more BK009 (duplicate-key) findings not listed")
    assert len(render(report, "text")) < 200_000  # was 802 MB for 8000 repeats under a 100 KB key


def test_repeats_in_a_repeated_parent_are_one_finding_per_pointer() -> None:
    report = blockkit.validate('{"a":{"x":1,"x":2},"a":{"x":3,"x":4}}')
    assert [(f.pointer, f.line, f.column) for f in report.findings if f.code == "BK009"] == [
        ("/a/x", 1, 13), ("/a", 1, 20)]


def test_a_repeated_key_is_reported_once_per_object() -> None:
    report = blockkit.validate('{"a":1,"a":2,"a":3,"b":{"a":1,"a":2}}')
    assert [(f.pointer, f.message) for f in report.findings if f.code == "BK009"] == [
        ("/a", 'duplicate key "a" in the manifest; the platform keeps the last value'),
        ("/b/a", 'duplicate key "a" in b; the platform keeps the last value')]


def test_many_objects_with_a_repeated_key_are_counted_exactly() -> None:
    text = '{"x":[' + ",".join(['{"a":0,"a":0}'] * (CAP + 250)) + "]}"
    report = check(read_text(text))
    assert _codes(report)["BK009"] == CAP
    assert report.more["BK009"].message.startswith("250 more BK009")
    assert report.more["BK009"].pointer == f"/x/{CAP}/a"


# read_path reads the descriptor with os.read (engine._read), as read(n) of a file object would.
def test_read_gathers_short_reads_until_the_size_or_the_end() -> None:
    import os
    import threading

    from blockkit.engine import _read

    reading, writing = os.pipe()
    pieces = [b"{", b'"a"', b": ", b"1}", b"tail"]

    def write() -> None:
        for piece in pieces:
            os.write(writing, piece)
            time.sleep(0.01)  # each piece a read of its own
        os.close(writing)

    writer = threading.Thread(target=write)
    writer.start()
    try:
        assert _read(reading, 9) == b'{"a": 1}t'  # stops at the size, mid piece
        assert _read(reading, 100) == b"ail"  # and at the end
        assert _read(reading, 100) == b""
    finally:
        writer.join()
        os.close(reading)


def test_read_path_refusals_and_devices(tmp_path, monkeypatch) -> None:
    import os

    import pytest

    from blockkit import engine

    with pytest.raises(engine.UnreadableFile, match="is a directory"):
        engine.read_path(tmp_path)
    with pytest.raises(engine.UnreadableFile, match="no such file"):
        engine.read_path(tmp_path / "missing.json")
    empty = engine.read_path(engine.Path("/dev/null"))  # a character device is read
    assert empty.text == "" and [p[0] for p in empty.problems] == ["BK002"]

    path = tmp_path / "m.json"
    path.write_bytes(b'{"a": 1}')
    closed: list[int] = []
    real_close = os.close

    def failing_read(descriptor: int, size: int) -> bytes:
        raise PermissionError(13, "Permission denied")

    def counting_close(descriptor: int) -> None:
        closed.append(descriptor)
        real_close(descriptor)

    monkeypatch.setattr(engine.os, "read", failing_read)
    monkeypatch.setattr(engine.os, "close", counting_close)
    with pytest.raises(engine.UnreadableFile, match="permission denied"):
        engine.read_path(path)
    assert len(closed) == 1  # the descriptor is closed on every way out
    monkeypatch.undo()
    assert engine.read_path(path).data == {"a": 1}
