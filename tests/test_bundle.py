"""check_bundle: a submission's zip judged as the platform's submitVersion does, and build_package."""

from __future__ import annotations

import json
import os
import tracemalloc
import zipfile
from io import BytesIO
from pathlib import Path

import pytest
from sample_manifests import PAGE_BLOCK, changed
from zip_helpers import RawEntry, honest_zip, manifest_bytes, manifest_entry, raw_zip

import blockkit
from blockkit.bundle import check_bundle
from blockkit.bundle.package import PackageError, package_tree
from blockkit.platform import BUNDLE_LIMITS
from blockkit.rules import load_all

MiB = 1024 * 1024
TOKEN = "a8f7d6e5c4b3a29180ffzz"


def codes(report: blockkit.BundleReport, severity: str = "error") -> list[str]:
    return [f.code for f in report.findings if f.severity == severity]


def bundle_codes(report: blockkit.BundleReport) -> list[str]:
    """The findings about the bundle itself (the first file of the report)."""
    return [f.code for f in report.files[0].findings]


# --- the library call -------------------------------------------------------------


def test_a_valid_bundle_passes_with_its_summary() -> None:
    data = honest_zip({"index.html": b"<!doctype html><p>hi</p>", "src/app.js": b"console.log(1)\n"})
    report = blockkit.check_bundle(data)
    assert report.ok, [f"{f.code} {f.message}" for f in report.findings]
    assert [meta.path for meta in report.entries] == ["block.manifest.json", "index.html", "src/app.js"]
    assert report.decompressed_bytes == sum(meta.size for meta in report.entries)
    assert report.compressed_bytes == len(data)
    assert report.file_summary is not None and report.file_summary["added"] == [m.path for m in report.entries]
    assert report.manifest_diff == {"kind": "first-version", "fields": sorted(PAGE_BLOCK)}
    import hashlib

    assert report.bundle_sha256 == hashlib.sha256(data).hexdigest()
    assert report.entries[1].sha256 == hashlib.sha256(b"<!doctype html><p>hi</p>").hexdigest()


def test_a_path_and_bytes_give_the_same_verdict(tmp_path: Path) -> None:
    data = honest_zip({"index.html": b"x"}, manifest=changed(PAGE_BLOCK, version="nope"))
    path = tmp_path / "b.zip"
    path.write_bytes(data)
    from_bytes, from_path = check_bundle(data), check_bundle(path)
    assert codes(from_bytes) == codes(from_path) and codes(from_path)
    assert from_path.files[0].path == str(path)


def test_a_missing_path_raises_unreadable_file(tmp_path: Path) -> None:
    with pytest.raises(blockkit.UnreadableFile):
        check_bundle(tmp_path / "none.zip")


def test_the_manifest_gets_the_validators_verdict_with_the_context() -> None:
    data = honest_zip({}, manifest=changed(PAGE_BLOCK, scopes=["buzz:read:self"]))
    report = check_bundle(data)
    assert "BK203" in codes(report)  # a sensitive scope without its justification
    manifest_file = report.files[1]
    assert manifest_file.path == "block.manifest.json"
    verified = check_bundle(honest_zip({}, manifest=changed(
        PAGE_BLOCK, iframe={**PAGE_BLOCK["iframe"], "sandbox": "allow-scripts allow-popups"})),
        blockkit.Context(tier="verified"))
    assert verified.ok


# --- every cap --------------------------------------------------------------------


def test_a_bundle_over_the_size_cap_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "big.zip"
    with open(path, "wb") as stream:
        stream.truncate(BUNDLE_LIMITS.bundle_bytes_max + 1)  # sparse: no disk spent
    report = check_bundle(path)
    assert bundle_codes(report) == ["BK501", "BK512"]
    assert str(BUNDLE_LIMITS.bundle_bytes_max + 1) in report.files[0].findings[0].message
    assert report.bundle_sha256 is None  # never read


def test_an_empty_bundle() -> None:
    assert bundle_codes(check_bundle(b"")) == ["BK502"]
    only_dirs = raw_zip([RawEntry("src/", b"", deflate=False)])
    assert bundle_codes(check_bundle(only_dirs)) == ["BK502"]


def test_two_thousand_and_one_files() -> None:
    entries = [manifest_entry()] + [RawEntry(f"f{i}.txt", b"x", deflate=False) for i in range(2000)]
    report = check_bundle(raw_zip(entries))
    assert bundle_codes(report) == ["BK504"]
    assert "2001 files" in report.files[0].findings[0].message
    assert check_bundle(raw_zip(entries[:2000])).ok


def test_a_central_directory_declaring_too_many_entries_is_refused_from_its_end_record() -> None:
    entries = [manifest_entry()] + [RawEntry(f"f{i}", b"", deflate=False) for i in range(BUNDLE_LIMITS.entries_max)]
    report = check_bundle(raw_zip(entries))
    assert bundle_codes(report) == ["BK504"]
    assert "before its entries were read" in report.files[0].findings[0].message


def test_an_end_record_that_understates_the_entries_does_not_hide_them() -> None:
    entries = [manifest_entry()] + [RawEntry(f"f{i}", b"", deflate=False) for i in range(BUNDLE_LIMITS.entries_max)]
    report = check_bundle(raw_zip(entries, declared_count=1))
    assert bundle_codes(report) == ["BK504"]
    assert f"at least {BUNDLE_LIMITS.entries_max + 1} entries" in report.files[0].findings[0].message


def test_a_file_over_the_per_file_cap_is_refused_from_its_header() -> None:
    big = RawEntry("public/intro.mp4", b"\0" * 100, declared_size=BUNDLE_LIMITS.file_bytes_max + 1)
    report = check_bundle(raw_zip([manifest_entry(), big]))
    assert codes(report) == ["BK505"]
    finding = report.findings[0]
    assert str(BUNDLE_LIMITS.file_bytes_max) in finding.message
    assert str(BUNDLE_LIMITS.file_bytes_max + 1) in finding.message
    assert [f.path for f in report.files if f.findings] == ["public/intro.mp4"]


def test_an_honest_file_over_the_per_file_cap() -> None:
    data = honest_zip({"asset.bin": b"\0" * (BUNDLE_LIMITS.file_bytes_max + 1)})
    assert codes(check_bundle(data)) == ["BK505"]
    assert check_bundle(honest_zip({"asset.bin": b"\0" * BUNDLE_LIMITS.file_bytes_max})).ok


def test_declared_sizes_over_the_total_cap_are_refused_before_anything_is_decompressed() -> None:
    per_file = BUNDLE_LIMITS.file_bytes_max
    count = BUNDLE_LIMITS.decompressed_bytes_max // per_file + 1
    entries = [manifest_entry()] + [RawEntry(f"part{i}.bin", b"\0" * 64, declared_size=per_file) for i in range(count)]
    report = check_bundle(raw_zip(entries))
    assert bundle_codes(report) == ["BK506"]
    assert "nothing was decompressed" in report.findings[0].message
    assert report.entries == []


def test_a_zip_bomb_whose_header_lies_about_its_size_is_stopped_at_the_declared_size() -> None:
    """A deflate stream of 64 MiB of zeros that claims to be 1000 bytes: reading stops at the claim
    (the data then fails its CRC), so the bomb never inflates, in time or memory."""
    bomb = RawEntry("bomb.bin", b"\0" * (64 * MiB), declared_size=1000)
    data = raw_zip([manifest_entry(), bomb])
    assert len(data) < 200 * 1024
    tracemalloc.start()
    try:
        report = check_bundle(data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert codes(report) == ["BK503"]
    assert report.findings[0].message.startswith("bomb.bin:")
    assert peak < 8 * MiB


def test_the_streaming_count_stops_an_entry_at_the_remaining_total() -> None:
    """zipfile never yields more than an entry's declared size, so the declared-size checks are
    what stop a bomb; the running count is the second line, enforced on every chunk."""
    from blockkit.bundle.check import _read_entry

    archive = zipfile.ZipFile(BytesIO(honest_zip({"a.bin": b"\0" * 200_000})))
    outcome = _read_entry(archive, archive.getinfo("a.bin"), remaining_total=100_000)
    assert isinstance(outcome, str) and outcome.startswith("total:")
    content, digest = _read_entry(archive, archive.getinfo("a.bin"), remaining_total=200_000)
    assert len(content) == 200_000 and len(digest) == 64


def test_the_request_body_after_base64_against_the_proxy_limit() -> None:
    noise = os.urandom(8 * MiB)  # incompressible: the zip stays ~8 MiB
    report = check_bundle(honest_zip({"noise.bin": noise}))
    assert codes(report) == ["BK512"]
    assert report.request_body_bytes == len('{"bundleBase64":""}') + 4 * ((report.compressed_bytes + 2) // 3)
    assert report.request_body_bytes > BUNDLE_LIMITS.proxy_body_bytes_max
    assert str(BUNDLE_LIMITS.proxy_body_bytes_max) in report.findings[0].message


# --- names ------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["../evil.js", "src/../../evil.js", "/etc/passwd", "C:/x.js", "src\\x.js"])
def test_names_that_escape_the_bundle(name: str) -> None:
    report = check_bundle(raw_zip([manifest_entry(), RawEntry(name, b"x")]))
    assert codes(report) == ["BK507"]
    assert report.files[0].findings[0].code == "BK507"


def test_duplicate_names() -> None:
    report = check_bundle(raw_zip([manifest_entry(), RawEntry("index.html", b"a"), RawEntry("index.html", b"b")]))
    assert codes(report) == ["BK508"]
    assert "2 times" in report.findings[0].message


def test_a_symbolic_link_entry() -> None:
    report = check_bundle(raw_zip([manifest_entry(), RawEntry("config.js", b"/home/me/secret.js", mode=0o120777)]))
    assert codes(report) == ["BK509"]


def test_a_missing_manifest_and_one_in_a_folder() -> None:
    assert codes(check_bundle(honest_zip({"index.html": b"x"}, with_manifest=False))) == ["BK510"]
    nested = raw_zip([RawEntry("my-block/block.manifest.json", manifest_bytes())])
    assert codes(check_bundle(nested)) == ["BK510"]


def test_a_manifest_that_is_not_utf8_is_one_parse_finding() -> None:
    raw = manifest_bytes().replace(b'"name": "Demo"', b'"name": "D\xffmo"')
    assert b"\xff" in raw
    report = check_bundle(raw_zip([RawEntry("block.manifest.json", raw)]))
    assert len(report.files[1].findings) == 1, report.files[1].findings
    assert report.files[1].findings[0].layer == "parse"


# --- unreadable archives ----------------------------------------------------------


def test_bytes_that_are_not_a_zip() -> None:
    assert bundle_codes(check_bundle(b"not a zip at all")) == ["BK503"]


def test_a_truncated_archive() -> None:
    data = honest_zip({"index.html": b"<p>" * 1000})
    report = check_bundle(data[: len(data) // 2])
    assert bundle_codes(report) == ["BK503"]


def test_an_entry_with_a_bad_crc() -> None:
    data = bytearray(honest_zip({"a.txt": b"hello hello hello"}, with_manifest=True))
    info = zipfile.ZipFile(BytesIO(bytes(data))).getinfo("a.txt")
    start = info.header_offset + 30 + len(info.filename)
    data[start] ^= 0xFF  # corrupt the first byte of the deflate stream
    report = check_bundle(bytes(data))
    assert codes(report) == ["BK503"]


def test_an_encrypted_entry_and_an_unsupported_method() -> None:
    assert codes(check_bundle(raw_zip([manifest_entry(), RawEntry("a.js", b"x", flags=0x1)]))) == ["BK503"]
    buffer = BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("block.manifest.json", manifest_bytes())
        archive.writestr("a.js", b"x" * 100, compress_type=zipfile.ZIP_BZIP2)
    report = check_bundle(buffer.getvalue())
    assert codes(report) == ["BK503"] and "compression method 12" in report.findings[0].message


# --- credentials ------------------------------------------------------------------


def test_credentials_are_reported_by_path_line_and_name_never_by_value() -> None:
    files = {
        ".env.production": f"VITE_LIVE_BLOCK_TOKEN={TOKEN}\n".encode(),
        "src/config.js": f"// config\nexport const apiKey = '{TOKEN}';\n".encode(),
        "keys/id_rsa": b"-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n-----END OPENSSH PRIVATE KEY-----\n",
        "src/ok.js": b"const token = response.data.token;\nconst API_KEY = 'your-api-key-here-please';\n",
    }
    report = check_bundle(honest_zip(files))
    found = sorted((file.path, f.line, f.code) for file in report.files for f in file.findings)
    assert found == [(".env.production", 1, "BK520"), ("keys/id_rsa", 1, "BK520"), ("src/config.js", 2, "BK520")]
    assert report.ok  # advice: a warning, as the platform's CLI gives it
    assert not check_bundle(honest_zip(files)).files[0].findings
    names = {f.message for f in report.findings}
    assert any("VITE_LIVE_BLOCK_TOKEN" in m for m in names) and any("private key" in m for m in names)
    assert TOKEN not in json.dumps(report.to_json())
    from blockkit.render import render

    for fmt in ("text", "json", "github", "sarif", "junit"):
        assert TOKEN not in render(report, fmt)
    strict = check_bundle(honest_zip(files))
    strict.strict = True
    assert not strict.ok


def test_binary_files_are_not_scanned() -> None:
    report = check_bundle(honest_zip({"img.png": b"\x89PNG\0\0" + f"API_KEY={TOKEN}".encode()}))
    assert not report.findings


# --- the summary and diff against a previous bundle -------------------------------


def test_the_file_summary_and_manifest_diff_against_a_previous_bundle() -> None:
    before = honest_zip({"index.html": b"old", "gone.js": b"1", "same.css": b"a{}"})
    after = honest_zip({"index.html": b"new", "added.js": b"2", "same.css": b"a{}"},
                       manifest=changed(PAGE_BLOCK, version="1.1.0", tagline="A new tagline", page=...))
    report = check_bundle(after, previous=before)
    summary = report.file_summary
    assert summary is not None
    assert (summary["added"], summary["removed"], summary["changed"]) == (
        ["added.js"], ["gone.js"], ["block.manifest.json", "index.html"])
    assert [f["path"] for f in summary["files"]] == ["added.js", "block.manifest.json", "index.html", "same.css"]
    assert set(summary["files"][0]) == {"path", "sha256", "sizeBytes"}
    diff = report.manifest_diff
    assert diff is not None and diff["kind"] == "update"
    assert diff["added"] == ["tagline"] and diff["removed"] == ["page"]
    assert diff["changed"] == [{"field": "version", "from": "1.0.0", "to": "1.1.0"}]  # iframe.src: stamped on both


def test_the_stored_manifest_has_the_platforms_iframe_src() -> None:
    report = check_bundle(honest_zip({}), blockkit.Context(app_domain="apps.example"))
    assert report.manifest is not None and report.manifest["iframe"]["src"] == "https://demo-block.apps.example/"


def test_a_large_changed_field_is_summarised() -> None:
    big = {"k": "x" * 3000}
    report_before = check_bundle(honest_zip({}, manifest=changed(PAGE_BLOCK, publicSettingsKeys=[])))
    after = honest_zip({}, manifest=changed(PAGE_BLOCK, version="1.0.1", publicSettingsKeys=[json.dumps(big)]))
    diff = check_bundle(after, previous=report_before).manifest_diff
    assert diff is not None
    [entry] = [c for c in diff["changed"] if c["field"] == "publicSettingsKeys"]
    assert entry["from"] == [] and entry["to"]["__summarised"] is True and len(entry["to"]["preview"]) == 200


def test_the_version_guard_against_the_previous_bundle() -> None:
    before = honest_zip({"index.html": b"a"}, manifest=changed(PAGE_BLOCK, version="1.2.0"))
    after = honest_zip({"index.html": b"b"}, manifest=changed(PAGE_BLOCK, version="1.1.0", name="Renamed"))
    report = check_bundle(after, previous=before)
    assert "BK401" in codes(report)
    assert all(f.code != "BK401" for f in check_bundle(after).findings)


def test_an_unreadable_previous_bundle_is_a_warning_and_a_first_version() -> None:
    report = check_bundle(honest_zip({}), previous=b"garbage")
    assert [f.code for f in report.files[0].findings] == ["BK513"]
    assert report.manifest_diff is not None and report.manifest_diff["kind"] == "first-version"


# --- rules and documentation ------------------------------------------------------


def test_every_bundle_rule_is_documented_and_explained() -> None:
    registry = load_all()
    bundle_rules = [rule for code, rule in registry.items() if code.startswith("BK5")]
    assert len(bundle_rules) >= 14
    for rule in bundle_rules:
        assert rule.layer == "bundle" and rule.doc.why and rule.doc.fix


# --- build_package ----------------------------------------------------------------


def _tree(root: Path, files: dict[str, bytes]) -> Path:
    for name, data in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root


def test_the_package_excludes_what_the_platforms_cli_excludes(tmp_path: Path) -> None:
    root = _tree(tmp_path / "blk", {
        "block.manifest.json": manifest_bytes(), "index.html": b"x", "src/app.js": b"y",
        ".gitignore": b"dist\n", ".github/workflows/ci.yml": b"on: push\n",
        ".env": b"A=1", ".env.local": b"A=1", ".envrc": b"A=1", ".env.example": b"A=", ".env.production": b"A=",
        ".env.sample": b"A=", "sub/.env.production": b"A=", "public/environment.env": b"T",
        ".env.d/credentials.json": b"{}", ".envoy/bootstrap.yaml": b"x", "old.zip": b"PK", "x.ZIP/a": b"1",
        "node_modules/react/index.js": b"x", "dist/app.js": b"x", "build/x": b"x", ".git/HEAD": b"ref",
        "sub/.git": b"gitdir: /elsewhere", "coverage/lcov.info": b"x", ".venv/bin/python": b"x",
    })
    os.symlink("index.html", root / "alias.html")
    package = package_tree(root)
    assert package.files == [".env.example", ".env.production", ".env.sample", ".envoy/bootstrap.yaml",
                             ".github/workflows/ci.yml", ".gitignore", "block.manifest.json", "index.html",
                             "src/app.js"]
    assert zipfile.ZipFile(BytesIO(package.data)).namelist() == package.files
    assert [skip.show() for skip in package.skipped] == [
        ".env (.env*)", ".env.d/ (.env or .env.*)", ".env.local (.env*)", ".envrc (.env*)",
        "alias.html (not a regular file)", "old.zip (*.zip)", "public/environment.env (*.env)",
        "sub/.env.production (.env*)", "x.ZIP/ (*.zip)",
        ".git/", ".venv/", "build/", "coverage/", "dist/", "node_modules/", "sub/.git",
    ]
    line = package.skipped_line()
    assert line is not None and line.startswith("Skipped 16 path(s): .env (.env*), ")


def test_the_same_tree_gives_the_same_bytes(tmp_path: Path) -> None:
    files = {"block.manifest.json": manifest_bytes(), "b.js": b"b", "a/z.js": b"z", "a/b.js": b"ab"}
    first = blockkit.build_package(_tree(tmp_path / "one", files))
    second_root = _tree(tmp_path / "two", dict(reversed(list(files.items()))))
    os.utime(second_root / "b.js", (1_000_000_000, 1_000_000_000))
    os.chmod(second_root / "a/z.js", 0o755)
    assert blockkit.build_package(second_root) == first
    archive = zipfile.ZipFile(BytesIO(first))
    assert archive.namelist() == ["a/b.js", "a/z.js", "b.js", "block.manifest.json"]
    assert {info.date_time for info in archive.infolist()} == {(1980, 1, 1, 0, 0, 0)}
    assert {info.external_attr >> 16 for info in archive.infolist()} == {0o100644}
    assert check_bundle(first).ok
    (second_root / "b.js").write_bytes(b"B")
    assert blockkit.build_package(second_root) != first


def test_a_folder_without_a_manifest_cannot_be_packaged(tmp_path: Path) -> None:
    with pytest.raises(PackageError, match="no block.manifest.json"):
        blockkit.build_package(_tree(tmp_path, {"index.html": b"x"}))
    with pytest.raises(PackageError, match="not a directory"):
        blockkit.build_package(tmp_path / "nothing")


def test_damaged_zips_are_findings_never_exceptions() -> None:
    """Bytes of a real bundle flipped, cut and spliced, at every part of the archive."""
    import random

    rng = random.Random(34)
    good = honest_zip({"index.html": b"<p>hello</p>" * 50, "src/app.js": b"console.log(1)\n" * 40,
                       "caf\u00e9.txt": b"x"})
    for _ in range(400):
        data = bytearray(good)
        for _ in range(rng.randint(1, 6)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        if rng.random() < 0.2:
            cut = rng.randrange(len(data))
            data = data[:cut] + data[cut + rng.randint(1, 40):]
        report = check_bundle(bytes(data))
        assert report.files and report.files[0].path == "<bundle>"
        assert all(f.code.startswith("BK") for f in report.findings)


PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 32
JPEG = b"\xff\xd8\xff\xe0" + b"\0" * 32
WEBP = b"RIFF\0\0\0\0WEBPVP8 " + b"\0" * 32


def test_real_screenshots_pass() -> None:
    report = check_bundle(honest_zip({"screenshots/shot-1.png": PNG, "screenshots/b.JPG": JPEG,
                                      "screenshots/c.webp": WEBP}))
    assert report.ok, [f.message for f in report.findings]


@pytest.mark.parametrize(("name", "content", "words"), [
    ("screenshots/notes.txt", b"hello", "must be one of"),
    ("screenshots/.hidden.png", PNG, "flat screenshot name"),
    ("screenshots/sub/a.png", PNG, "flat screenshot name"),
    ("screenshots/fake.png", JPEG, "not a valid PNG"),
    ("screenshots/big.png", PNG + b"\0" * (2 * 1024 * 1024), "at most 2097152"),
])
def test_a_screenshot_the_platform_refuses(name: str, content: bytes, words: str) -> None:
    report = check_bundle(honest_zip({name: content}))
    assert [(f.code, words in f.message) for f in report.findings] == [("BK514", True)]


def test_a_ninth_screenshot_is_refused() -> None:
    files = {f"screenshots/s{i}.png": PNG for i in range(9)}
    report = check_bundle(honest_zip(files))
    assert bundle_codes(report) == ["BK514"] and "9 files under screenshots/" in report.findings[0].message
    assert check_bundle(honest_zip(dict(list(files.items())[:8]))).ok
