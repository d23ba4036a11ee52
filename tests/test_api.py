"""The library contract: validate, validate_file, load_manifest; cheap import; thread safety."""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import blockkit


def test_import_is_cheap() -> None:
    code = ("import sys, blockkit\n"
            "print([m for m in ('jsonschema', 'regress', 'pydantic', 'click', 'blockkit.engine') if m in sys.modules])")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_validate_accepts_document_text_and_bytes(manifest) -> None:
    text = json.dumps(manifest)
    for given in (manifest, text, text.encode()):
        report = blockkit.validate(given)
        assert isinstance(report, blockkit.Report) and report.ok and report.exit_code == 0


def test_validate_of_a_document_still_has_positions(manifest) -> None:
    manifest["iframe"]["minHeight"] = 1
    (finding,) = blockkit.validate(manifest).findings
    assert finding.pointer == "/iframe/minHeight" and finding.line > 1 and finding.column > 1


def test_validate_rejects_what_is_not_json_data() -> None:
    with pytest.raises(TypeError):
        blockkit.validate({"a": object()})


def test_validate_file_takes_a_directory(tmp_path: Path, manifest) -> None:
    (tmp_path / "block.manifest.json").write_text(json.dumps(manifest))
    report = blockkit.validate_file(tmp_path)
    assert report.files[0].path.endswith("block.manifest.json") and report.ok


def test_validate_file_raises_for_a_missing_path(tmp_path: Path) -> None:
    with pytest.raises(blockkit.UnreadableFile, match="no such file"):
        blockkit.validate_file(tmp_path / "nope.json")


def test_load_manifest_returns_the_normalised_model(tmp_path: Path, manifest) -> None:
    manifest["repository"] = "https://github.com/Owner/Repo.git/"
    (tmp_path / "block.manifest.json").write_text(json.dumps(manifest))
    model = blockkit.load_manifest(tmp_path)
    assert model.block_id == "demo-block" and model.repository == "https://github.com/Owner/Repo"
    assert model.iframe is not None and model.iframe.sandbox_tokens == ["allow-scripts", "allow-forms"]
    assert model.render_mode == "iframe" and model.auth == "block-token"


def test_load_manifest_raises_with_the_report(tmp_path: Path, manifest) -> None:
    manifest["version"] = "one"
    (tmp_path / "block.manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(blockkit.InvalidManifestError) as caught:
        blockkit.load_manifest(tmp_path)
    assert [f.code for f in caught.value.report.findings] == ["BK104"]
    assert "BK104" in str(caught.value)


def test_context_rejects_unknown_values() -> None:
    with pytest.raises(blockkit.ConfigError):
        blockkit.Context(tier="gold")
    with pytest.raises(blockkit.ConfigError):
        blockkit.Context(granted_scopes=frozenset({"nope:nope"}))


def test_threads_share_the_validator_and_get_the_same_verdicts(manifest) -> None:
    variants = []
    for i in range(40):
        doc = json.loads(json.dumps(manifest))
        if i % 2:
            doc["version"] = f"v{i}"
            doc["iframe"]["minHeight"] = i
        variants.append(doc)
    expected = [[f.code for f in blockkit.validate(v).findings] for v in variants]
    with ThreadPoolExecutor(max_workers=8) as pool:
        for _ in range(5):
            got = list(pool.map(lambda v: [f.code for f in blockkit.validate(v).findings], variants))
            assert got == expected
    assert expected[0] == [] and expected[1] == ["BK104", "BK107"]


def test_a_parsed_document_too_deep_to_serialise_is_a_finding_not_a_recursion_error(manifest) -> None:
    deep: dict = {}
    node = deep
    for _ in range(5000):
        node["a"] = {}
        node = node["a"]
    manifest["goods"] = [{"id": "a", "title": "A", "priceBuzz": 5, "payload": deep}]
    report = blockkit.validate(manifest)
    assert [(f.code, f.line, f.column) for f in report.findings] == [("BK004", 1, 1)] and not report.ok


def test_validate_takes_a_bytearray_like_bytes(manifest) -> None:
    raw = json.dumps(manifest).encode()
    assert blockkit.validate(bytearray(raw)).ok and blockkit.validate(memoryview(raw)).ok


# --- the size limit for every kind of input, and files that are not files (issue 14, rows 5, 6) ---


def test_text_over_the_size_limit_is_bk006_as_bytes_are(manifest) -> None:
    # Review row 5: a 10 MB str was ok=True while the same bytes were BK006.
    manifest["x"] = "a" * (1 << 20)
    text = json.dumps(manifest)
    for given in (text, text.encode()):
        report = blockkit.validate(given)
        assert [f.code for f in report.findings] == ["BK006"] and not report.ok
    assert blockkit.validate(text).findings[0].message == (
        f"the manifest text is {len(text.encode()):,} bytes in UTF-8, over the 1,048,576-byte limit")


def test_text_is_measured_in_utf8_bytes_not_characters(manifest) -> None:
    manifest["x"] = "é" * 600_000  # 600,000 characters, 1.2 MB
    assert [f.code for f in blockkit.validate(json.dumps(manifest, ensure_ascii=False)).findings] == ["BK006"]


def test_text_at_the_limit_is_read(manifest) -> None:
    text = json.dumps(manifest)
    text = text[:-1] + ', "x": "' + "a" * ((1 << 20) - len(text) - 9) + '"}'
    assert len(text.encode()) == 1 << 20
    assert "BK006" not in [f.code for f in blockkit.validate(text).findings]


def test_a_parsed_document_over_the_limit_is_bk006(manifest) -> None:
    manifest["targets"] = [{"slotId": "model.sidebar_top"}] * 40_000  # about 1.3 MB as compact JSON
    report = blockkit.validate(manifest)
    assert [f.code for f in report.findings] == ["BK006"]
    assert "bytes as JSON, over the 1,048,576-byte limit" in report.findings[0].message


def test_a_parsed_document_is_measured_compact_not_as_indented(manifest) -> None:
    # Indented, this is over 1 MiB; written compactly it fits, so it is a manifest that can be uploaded.
    manifest["x"] = [[0]] * 120_000
    assert len(json.dumps(manifest, indent=2)) > 1 << 20 > len(json.dumps(manifest, separators=(",", ":")))
    assert "BK006" not in [f.code for f in blockkit.validate(manifest).findings]


@pytest.mark.skipif(not hasattr(__import__("os"), "mkfifo"), reason="no FIFOs on this platform")
def test_validate_file_refuses_a_fifo_instead_of_waiting_for_a_writer(tmp_path: Path) -> None:
    import os

    os.mkfifo(tmp_path / "block.manifest.json")
    with pytest.raises(blockkit.UnreadableFile, match="is a named pipe"):
        blockkit.validate_file(tmp_path)


def test_validate_file_still_reads_a_character_device() -> None:
    import os

    if not os.path.exists("/dev/null"):
        pytest.skip("no /dev/null")
    assert [f.code for f in blockkit.validate_file("/dev/null").findings] == ["BK002"]
