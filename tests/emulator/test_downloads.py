"""Downloads: ``GET /api/download/models/{modelVersionId}``, the file it redirects to, and the hashes
and sizes the catalogue lists for those bytes.

Before this route every ``downloadUrl`` the emulator handed out answered 404 (issue 20, item 4).
Every test here fails on that code: the route, the file URL or ``blockkit.emulator.services.files`` is
missing.

How each row maps to its test (review emulator-fidelity-2026-11-27 and the spec):

=====================================================================  ===============================================
row                                                                    test
=====================================================================  ===============================================
issue 20.4: every downloadUrl answers 404                              test_every_listed_download_url_serves_its_file,
                                                                       test_civitapy_downloads_and_verifies_sha256
spec File ``hashes`` (AutoV1, AutoV2, AutoV3, SHA256, CRC32, BLAKE3)    test_listed_hashes_are_true_for_the_bytes,
                                                                       test_crc32_is_written_as_the_platform_writes_it
spec File ``sizeKB``                                                   test_listed_hashes_are_true_for_the_bytes
a .safetensors download is a safetensors file                          test_safetensors_files_parse
other formats (PickleTensor, training-data zip, config)                test_other_formats_are_what_they_say
redirect shape (307, no-store, file URL on base_url)                   test_redirect_shape_and_content_disposition
Content-Disposition: the platform's download filename                  test_redirect_shape_and_content_disposition,
                                                                       test_download_filename_matches_lodash
byte ranges and HEAD on the file                                       test_file_answers_ranges_and_head
spec Authentication 1 / mini ``requireAuth``: bearer or ``token``       test_require_auth_takes_bearer_or_token_param
early access (running, bought, ended; on the emulator clock)           test_early_access_*, test_clock_ends_*
spec Model ``mode`` Archived: no download (platform: 410)              test_archived_model_is_410
missing version or file: 404 ``File not found``                         test_missing_version_or_file_is_404
query validation (zod's messages), ``Missing modelVersionId``          test_bad_query_is_400_with_zods_message
Private training result, downloads disabled, deleted, unpublished      test_access_rules
primary downloadUrl and file downloadUrls name the listed file          test_each_download_url_resolves_to_its_file
files are small and the download cache bounded (--scale large)         test_cache_is_bounded, test_planned_lengths,
                                                                       test_platform_sized_rows_are_refused
=====================================================================  ===============================================
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import pickle
import re
import struct
import zipfile
import zlib
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

import blake3
import httpx
import pytest
import safetensors
from emulator_helpers import outside_loop

DOWNLOAD = "/api/download/models/{}"
FILE_URL = re.compile(r"/__emulator/downloads/[A-Za-z0-9_-]{20,}/[^/]+")
BROWSER = "Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0"


# --- helpers -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def http(base_url: str) -> httpx.Client:
    with httpx.Client(base_url=base_url, timeout=30.0) as client:
        yield client


def version(http: httpx.Client, version_id: int, token: str | None = None) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    answer = http.get(f"/api/v1/model-versions/{version_id}", headers=headers)
    assert answer.status_code == 200, answer.text
    return answer.json()


def fetch(http: httpx.Client, url: str, **kwargs: Any) -> httpx.Response:
    """The download URL's redirect followed: the file's answer (the redirect must be a 307)."""
    first = http.get(url, **kwargs)
    assert first.status_code == 307, (url, first.status_code, first.text)
    answer = http.get(first.headers["location"])
    assert answer.status_code == 200, answer.text
    return answer


def independent_hashes(data: bytes, safetensors_file: bool) -> dict[str, str]:
    """Each kind recomputed here, from its definition (not from blockkit.emulator.services.files)."""
    sha = hashlib.sha256(data).hexdigest().upper()
    out = {"SHA256": sha, "AutoV2": sha[:10], "BLAKE3": blake3.blake3(data).hexdigest().upper()}
    # .NET's Crc32.GetCurrentHash: the CRC's bytes, least significant first.
    crc = zlib.crc32(data)
    out["CRC32"] = "".join(f"{(crc >> shift) & 0xFF:02X}" for shift in (0, 8, 16, 24))
    if len(data) >= 2 * 1024 * 1024:
        stream = io.BytesIO(data)
        stream.seek(0x100000)
        out["AutoV1"] = hashlib.sha256(stream.read(0x10000)).hexdigest()[:8].upper()
    if safetensors_file:
        (header_length,) = struct.unpack("<Q", data[:8])
        out["AutoV3"] = hashlib.sha256(data[8 + header_length:]).hexdigest()[:12].upper()
    return out


def files_of_kind(store_of: Any, where: str) -> list[tuple[int, int]]:
    """(file id, version id) of public files of healthy published models matching ``where``."""
    with store_of.read() as db:
        return [(r[0], r[1]) for r in db.execute(
            "SELECT f.id, f.version_id FROM model_files f JOIN model_versions v ON v.id = f.version_id"
            " JOIN models m ON m.id = v.model_id WHERE f.visibility = 'Public' AND v.status = 'Published'"
            " AND m.status = 'Published' AND m.mode IS NULL AND m.poi = 0 AND v.require_auth = 0"
            " AND v.usage_control = 'Download' AND v.availability = 'Public' AND m.availability = 'Public'"
            f" AND {where} ORDER BY f.id LIMIT 3")]


def listed_file(http: httpx.Client, version_id: int, file_id: int) -> dict[str, Any]:
    return next(f for f in version(http, version_id)["files"] if f["id"] == file_id)


# --- the end-to-end client ----------------------------------------------------------------------


@outside_loop  # civitapy runs asyncio itself
def test_civitapy_downloads_and_verifies_sha256(base_url: str, landmarks: dict[str, Any], tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """civitapy (PyPI) with verify_hash=True: it reads the version, follows each file's downloadUrl
    (redirect, resume by Range), checks the size against sizeKB and the SHA256 against the API's."""
    from civitapy import CivitAIClient
    from civitapy.errors import CivitAIDownloadError

    known = landmarks["known_hashes"]
    client = CivitAIClient(base_url=f"{base_url}/api/v1", retry_count=1, token="",
                           download_dir=str(tmp_path / "models"), verify_hash=True)
    paths = client.download_model_version(known["version_id"], verify_hash=True)
    listed = client.model_versions_get(known["version_id"])["files"]
    assert len(paths) == len(listed) >= 1
    for path, file in zip(sorted(paths), sorted(listed, key=lambda f: f["name"])):
        data = Path(path).read_bytes()
        assert Path(path).name == file["name"]
        assert len(data) == file["sizeKB"] * 1024
        assert hashlib.sha256(data).hexdigest().upper() == file["hashes"]["SHA256"]

    # The check is real: the same download against a listed SHA256 that is off by one digit fails.
    original = httpx.AsyncClient.send

    async def tampered(self: httpx.AsyncClient, request: httpx.Request, **kwargs: Any) -> httpx.Response:
        response = await original(self, request, **kwargs)
        if request.url.path == f"/api/v1/model-versions/{known['version_id']}":
            body = json.loads(await response.aread())
            for f in body["files"]:
                f["hashes"]["SHA256"] = ("0" if f["hashes"]["SHA256"][0] != "0" else "1") + f["hashes"]["SHA256"][1:]
            return httpx.Response(200, json=body, request=request)
        return response

    monkeypatch.setattr(httpx.AsyncClient, "send", tampered)
    again = CivitAIClient(base_url=f"{base_url}/api/v1", retry_count=1, token="",
                          download_dir=str(tmp_path / "again"), verify_hash=True)
    with pytest.raises(CivitAIDownloadError, match="SHA256"):
        again.download_model_version(known["version_id"], verify_hash=True)


# --- bytes and hashes ---------------------------------------------------------------------------------


def test_every_listed_download_url_serves_its_file(http: httpx.Client, landmarks: dict[str, Any]) -> None:
    """The version's downloadUrl and each file's downloadUrl answer that file's bytes."""
    body = version(http, landmarks["known_hashes"]["version_id"])
    assert body["files"]
    primary = next(f for f in body["files"] if f["primary"])
    whole = fetch(http, body["downloadUrl"]).content
    assert hashlib.sha256(whole).hexdigest().upper() == primary["hashes"]["SHA256"]
    for file in body["files"]:
        data = fetch(http, file["downloadUrl"]).content
        assert hashlib.sha256(data).hexdigest().upper() == file["hashes"]["SHA256"], file["downloadUrl"]


def test_listed_hashes_are_true_for_the_bytes(http: httpx.Client, landmarks: dict[str, Any],
                                              store_of: Any) -> None:
    known = landmarks["known_hashes"]
    samples = [(known["file_id"], known["version_id"])]
    for where in ("f.format = 'SafeTensor'", "f.format = 'PickleTensor'", "f.name LIKE '%.zip'",
                  "f.name LIKE '%.yaml'"):
        samples += files_of_kind(store_of, where)[:1]
    assert len(samples) == 5, samples
    kinds_seen: set[str] = set()
    for file_id, version_id in samples:
        file = listed_file(http, version_id, file_id)
        data = fetch(http, f"{DOWNLOAD.format(version_id)}?fileId={file_id}").content
        assert len(data) == file["sizeKB"] * 1024, file["name"]
        expected = independent_hashes(data, file["name"].endswith(".safetensors"))
        listed = file["hashes"]
        for kind, value in listed.items():
            assert expected[kind] == value, (file["name"], kind)
        kinds_seen |= set(listed)
    # The landmark file is over 2 MiB and a safetensors file: all six kinds, each checked above.
    assert kinds_seen == {"AutoV1", "AutoV2", "AutoV3", "SHA256", "CRC32", "BLAKE3"}
    assert set(listed_file(http, known["version_id"], known["file_id"])["hashes"]) == kinds_seen


def test_crc32_is_written_as_the_platform_writes_it() -> None:
    """civitai/model-scanner's HashTaskTests: "hello world" hashes to CRC32 85114A0D, SHA256 B94D27B9...,
    AutoV2 B94D27B993, Blake3 D74981EF..., and no AutoV1 (under 2 MiB)."""
    from blockkit.emulator.services.files import file_hashes

    hashes = file_hashes(b"hello world", safetensors=False)
    assert hashes == {
        "AutoV2": "B94D27B993", "SHA256": "B94D27B9934D3E08A52E52D7DA7DABFAC484EFE37A5380EE9088F7ACE2EFCDE9",
        "CRC32": "85114A0D", "BLAKE3": "D74981EFA70A0C880B8D8C1985D075DBCBF679B99A5F9914E5AAF96B831A9E24",
    }


def test_safetensors_files_parse(http: httpx.Client, store_of: Any) -> None:
    """The safetensors package reads every precision the seed uses; the values are small finite floats."""
    formats = {"F16": "e", "F32": "f"}
    with store_of.read() as db:
        fps = [r[0] for r in db.execute("SELECT DISTINCT coalesce(fp, '') FROM model_files"
                                        " WHERE format = 'SafeTensor' ORDER BY 1")]
    assert {"", "fp16", "bf16", "fp32"} <= set(fps)
    checked = 0
    for fp in fps:
        where = "f.format = 'SafeTensor' AND " + ("f.fp IS NULL" if not fp else f"f.fp = '{fp}'")
        for file_id, version_id in files_of_kind(store_of, where)[:1]:
            data = fetch(http, f"{DOWNLOAD.format(version_id)}?fileId={file_id}").content
            tensors = safetensors.deserialize(data)
            assert tensors, file_id
            (header_length,) = struct.unpack("<Q", data[:8])
            header = json.loads(data[8:8 + header_length])
            assert header_length % 8 == 0 and all(isinstance(v, str) for v in header["__metadata__"].values())
            dtype = {"fp16": "F16", "bf16": "BF16", "fp32": "F32", "fp8": "F8_E4M3"}.get(fp, "F32")
            for _name, tensor in tensors:
                assert tensor["dtype"] == dtype
                assert math.prod(tensor["shape"]) * {"F16": 2, "BF16": 2, "F32": 4, "F8_E4M3": 1}[dtype] == len(
                    tensor["data"])
                if dtype in formats:
                    values = [v for (v,) in struct.iter_unpack("<" + formats[dtype], tensor["data"])]
                    assert all(math.isfinite(v) and 0 < abs(v) < 1 for v in values)
            checked += 1
    assert checked >= 4


def test_other_formats_are_what_they_say(http: httpx.Client, store_of: Any) -> None:
    (ckpt, ckpt_version), = files_of_kind(store_of, "f.format = 'PickleTensor'")[:1]
    archive = zipfile.ZipFile(io.BytesIO(fetch(http, f"{DOWNLOAD.format(ckpt_version)}?fileId={ckpt}").content))
    assert archive.testzip() is None
    assert {"archive/data.pkl", "archive/version", "archive/byteorder"} <= set(archive.namelist())
    assert "global_step" in pickle.loads(archive.read("archive/data.pkl"))  # a plain dict: no globals
    (bundle, bundle_version), = files_of_kind(store_of, "f.name LIKE '%.zip'")[:1]
    archive = zipfile.ZipFile(io.BytesIO(fetch(http, f"{DOWNLOAD.format(bundle_version)}?fileId={bundle}").content))
    assert archive.testzip() is None
    images = [n for n in archive.namelist() if n.endswith(".png")]
    assert images and all(archive.read(n).startswith(b"\x89PNG\r\n\x1a\n") for n in images)
    from PIL import Image

    assert Image.open(io.BytesIO(archive.read(images[0]))).size == (8, 8)
    (config, config_version), = files_of_kind(store_of, "f.name LIKE '%.yaml'")[:1]
    text = fetch(http, f"{DOWNLOAD.format(config_version)}?fileId={config}").content.decode()
    assert text.startswith("model:\n") and text.endswith("\n")


def test_each_download_url_resolves_to_its_file(store_of: Any) -> None:
    """Over the whole seed: a version's downloadUrl (no query) picks the file listed as primary, and each
    file's downloadUrl query picks that file (the platform's scoring, then its misalignment check)."""
    from blockkit.emulator.http.catalogue.downloads import best_file, file_metadata
    from blockkit.emulator.http.catalogue.models import file_download_url
    from blockkit.emulator.store import models as store

    with store_of.read() as db:
        version_ids = [r[0] for r in db.execute("SELECT id FROM model_versions ORDER BY id")]
        rows = store.files_of_versions(db, version_ids, public_only=True)
    by_version: dict[int, list[tuple[Any, ...]]] = {}
    for row in rows:
        by_version.setdefault(row[1], []).append(row)
    checked = 0
    for version_id, files in by_version.items():
        primary = [r for r in files if r[8]]
        if primary:
            assert best_file(files, {}) == primary[0], version_id
        if len({(r[3], r[5], r[6], r[7]) for r in files}) < len(files):
            continue  # files alike in type and metadata (training epochs): the URL cannot tell them apart
        for row in files:
            url = file_download_url("", version_id, row[3], row[5], row[6], row[7], primary=bool(row[8]))
            query = dict(parse_qsl(urlsplit(url).query))
            candidates = [r for r in files if "type" not in query or r[3] == query["type"]]
            asked = {k: v for k, v in query.items() if k in ("format", "size", "fp")}
            chosen = best_file(candidates, asked)
            assert chosen == row, (version_id, url)
            assert all(file_metadata(chosen).get(k, v) == v for k, v in asked.items())
            checked += 1
    assert checked > 100


# --- the redirect and the file URL ----------------------------------------------------------------------


def test_redirect_shape_and_content_disposition(http: httpx.Client, base_url: str, landmarks: dict[str, Any],
                                                store_of: Any) -> None:
    known = landmarks["known_hashes"]
    first = http.get(DOWNLOAD.format(known["version_id"]))
    assert first.status_code == 307 and first.content == b""
    assert first.headers["cache-control"] == "no-store, max-age=0"
    assert first.headers["access-control-allow-origin"] == "*"
    location = first.headers["location"]
    assert location.startswith(base_url) and FILE_URL.fullmatch(urlsplit(location).path), location
    answer = http.get(location)
    assert answer.headers["content-type"] == "application/octet-stream"
    with store_of.read() as db:
        model_type, model_name, version_name, file_name = db.execute(
            "SELECT m.type, m.name, v.name, f.name FROM model_files f JOIN model_versions v ON v.id = f.version_id"
            " JOIN models m ON m.id = v.model_id WHERE f.id = ?", (known["file_id"],)).fetchone()
    from blockkit.emulator.http.catalogue.downloads import download_filename

    expected = download_filename(model_name, model_type, version_name, [], file_name, "Model")
    assert answer.headers["content-disposition"] == f'attachment; filename="{expected}"'
    assert unquote(urlsplit(location).path.rsplit("/", 1)[1]) == expected
    # The storage URL's own parameter, which clients such as civitai-downloader read the name from.
    assert dict(parse_qsl(urlsplit(location).query)) == {
        "response-content-disposition": answer.headers["content-disposition"]}
    # A LoRA's file keeps its own name; a checkpoint's is <model>_<version>.<ext> in camel case.
    (lora_file, lora_version), = files_of_kind(store_of, "m.type = 'LORA' AND f.type = 'Model'")[:1]
    lora = fetch(http, f"{DOWNLOAD.format(lora_version)}?fileId={lora_file}")
    lora_name = listed_file(http, lora_version, lora_file)["name"]
    assert lora.headers["content-disposition"] == f'attachment; filename="{lora_name}"'
    (ckpt_file, ckpt_version), = files_of_kind(store_of, "m.type = 'Checkpoint' AND f.type = 'Model'")[:1]
    disposition = fetch(http, f"{DOWNLOAD.format(ckpt_version)}?fileId={ckpt_file}").headers["content-disposition"]
    assert re.fullmatch(r'attachment; filename="[a-z0-9][A-Za-z0-9]*_[A-Za-z0-9]*\.safetensors"', disposition)
    # An unknown grant is a 404; HEAD on the download route answers the same redirect.
    assert http.get("/__emulator/downloads/" + "A" * 32 + "/x.safetensors").status_code == 404
    head = http.head(DOWNLOAD.format(known["version_id"]))
    assert head.status_code == 307 and FILE_URL.fullmatch(urlsplit(head.headers["location"]).path)


def test_download_filename_matches_lodash() -> None:
    """getDownloadFilename's filenamize (lodash camelCase and truncate): the vectors are what lodash-es 4
    gives for these names (run once with node)."""
    from blockkit.emulator.http.catalogue.downloads import download_filename, filenamize

    vectors = [("Neon Dreams XL", "v2.0", "neonDreamsXl", "v20"), ("Amber Portrait Mix", "v1.3", "amberPortraitMix", "v13"),
               ("SDXL Lightning Merge", "SDXL Lightning Merge v3", "sdxlLightningMerge", "sdxlLightningMergeV3"),
               ("It's a Model 2nd Edition", "v10.2 Final", "itsAModel2ndEdition", "v102Final"),
               ("ABCdef GHIjkl mnoPQR", "V1", "abCdefGhIjklMnoPqr", "v1"),
               ("a_b_c_d_e_f_g_h_i_j_k_l_m", "x", "aBCDEFGHIJKLM", "x"),
               ("Supercalifragilisticexpialidocious model", "v1.0", "supercalifragilistice", "v10"),
               ("3D Render Helper", "1st try", "3DRenderHelper", "1stTry"), ("!!!", "v1", "", "v1"),
               ("XMLHttpRequest parser", "v1", "xmlHttpRequestParser", "v1")]
    for model, version_name, model_part, version_part in vectors:
        assert filenamize(model) == model_part, model
        assert filenamize(re.sub(re.escape(model_part), "", version_name, flags=re.I)) == version_part, version_name
    assert download_filename("Neon Dreams XL", "Checkpoint", "v2.0", [], "x_pruned.safetensors", "Model") == \
        "neonDreamsXl_v20.safetensors"
    assert download_filename("Neon Dreams XL", "Checkpoint", "v2.0", [], "x.safetensors", "Text Encoder") == \
        "neonDreamsXl_v20_txt.safetensors"
    assert download_filename("Neon Dreams XL", "LORA", "v2.0", [], "keep_me.safetensors", "Model") == \
        "keep_me.safetensors"
    assert download_filename("Neon Dreams XL", "Checkpoint", "v2.0", [], "d.zip", "Training Data") == \
        "neonDreamsXl_v20_trainingData.zip"
    assert download_filename("Ink Style", "TextualInversion", "v1", ["inkstyle"], "a.pt", "Negative") == \
        "inkstyle-neg.pt"
    assert download_filename("Neon Dreams XL", "Checkpoint", "v2.0", [], "vae.safetensors", "VAE") == \
        "vae.safetensors"
    assert download_filename("!!!", "Checkpoint", "v1", [], "odd.safetensors", "Model") == "odd.safetensors"


def test_file_answers_ranges_and_head(http: httpx.Client, landmarks: dict[str, Any]) -> None:
    location = http.get(DOWNLOAD.format(landmarks["known_hashes"]["version_id"])).headers["location"]
    whole = http.get(location)
    assert whole.status_code == 200 and whole.headers["accept-ranges"] == "bytes"
    size = len(whole.content)
    assert int(whole.headers["content-length"]) == size
    for header, (first, last) in {"bytes=0-99": (0, 99), "bytes=100-": (100, size - 1), "bytes=-50": (size - 50, size - 1),
                                  f"bytes=1048576-{size + 9}": (1048576, size - 1)}.items():
        part = http.get(location, headers={"Range": header})
        assert part.status_code == 206, header
        assert part.headers["content-range"] == f"bytes {first}-{last}/{size}", header
        assert part.content == whole.content[first:last + 1], header
    past = http.get(location, headers={"Range": f"bytes={size}-"})
    assert past.status_code == 416 and past.headers["content-range"] == f"bytes */{size}"
    head = http.head(location)
    assert head.status_code == 200 and head.content == b"" and int(head.headers["content-length"]) == size
    assert http.get(location, headers={"Range": "bytes=0-9", "If-Range": head.headers["etag"]}).status_code == 206


# --- who may download -------------------------------------------------------------------------------


def test_require_auth_takes_bearer_or_token_param(http: httpx.Client, landmarks: dict[str, Any], mint: Any) -> None:
    version_id = landmarks["require_auth_model"]["version_ids"][0]
    anonymous = http.get(DOWNLOAD.format(version_id))
    assert anonymous.status_code == 401
    assert anonymous.json() == {"error": "Unauthorized",
                                "message": "The creator of this asset requires you to be logged in to download it"}
    token = mint(landmarks["free_user"]["id"])
    assert http.get(DOWNLOAD.format(version_id), headers={"Authorization": f"Bearer {token}"}).status_code == 307
    by_param = http.get(DOWNLOAD.format(version_id), params={"token": token})
    assert by_param.status_code == 307 and FILE_URL.fullmatch(urlsplit(by_param.headers["location"]).path)
    # A token the platform does not accept leaves the caller anonymous: the same 401, not another error.
    assert http.get(DOWNLOAD.format(version_id), params={"token": "not-a-token"}).json() == anonymous.json()
    # A browser is sent to log in instead.
    browser = http.get(DOWNLOAD.format(version_id), headers={"User-Agent": BROWSER})
    assert browser.status_code == 307
    assert browser.headers["location"] == f"/login?returnUrl=%2Fmodel-versions%2F{version_id}&reason=download-auth"


def test_early_access_needs_a_purchase(http: httpx.Client, landmarks: dict[str, Any], mint: Any) -> None:
    early = landmarks["early_access_version"]
    buyer = landmarks["early_access_purchase"]["user_id"]
    outsider = mint(landmarks["free_user"]["id"])
    refused = http.get(DOWNLOAD.format(early["id"]), headers={"Authorization": f"Bearer {outsider}"})
    assert refused.status_code == 403
    assert refused.json() == {"error": "Early Access", "deadline": early["ends_at"],
                              "message": "This asset is in Early Access. You can use Buzz access it now!"}
    assert version(http, early["id"])["earlyAccessEndsAt"] == early["ends_at"]
    bought = http.get(DOWNLOAD.format(early["id"]), headers={"Authorization": f"Bearer {mint(buyer)}"})
    assert bought.status_code == 307
    browser = http.get(DOWNLOAD.format(early["id"]), headers={"Authorization": f"Bearer {outsider}",
                                                             "User-Agent": BROWSER})
    assert browser.status_code == 307 and browser.headers["location"] == f"/model-versions/{early['id']}"


def test_early_access_that_ended_is_open(http: httpx.Client, landmarks: dict[str, Any], mint: Any) -> None:
    ended = landmarks["ended_early_access_version"]
    token = mint(landmarks["free_user"]["id"])
    assert http.get(DOWNLOAD.format(ended["id"]), headers={"Authorization": f"Bearer {token}"}).status_code == 307


def test_clock_ends_early_access_and_file_links(start_emulator: Any) -> None:
    """On the emulator clock: the early access ends when the clock passes its deadline, and a file URL
    stops working 24 hours after it was given."""
    from blockkit.emulator.store.clock import parse_timestamp
    from blockkit.emulator.seed import landmarks as read_landmarks
    from blockkit.emulator.store import Store
    from blockkit.emulator.store import tokens

    started = start_emulator()
    base = started.info["base_url"].rstrip("/")
    store = Store.open(Path(started.info["data"]), check=False)
    try:
        marks = read_landmarks(store)
        from blockkit.emulator.store.clock import Clock

        with store.write() as db:
            token = tokens.issue_access_token(db, user_id=marks["free_user"]["id"], scope=1, now=Clock(store).now(),
                                              ttl_seconds=10 * 365 * 86400)
    finally:
        store.close()
    early = marks["early_access_version"]
    with httpx.Client(base_url=base, timeout=30.0, headers={"Authorization": f"Bearer {token}"}) as client:
        assert client.get(DOWNLOAD.format(early["id"])).status_code == 403
        known = marks["known_hashes"]
        location = client.get(DOWNLOAD.format(known["version_id"])).headers["location"]
        assert client.get(location).status_code == 200
        assert client.post("/__emulator/clock", json={"advance": 24 * 3600 + 1}).status_code == 200
        expired = client.get(location)
        assert expired.status_code == 403 and "expired" in expired.json()["error"]
        now = parse_timestamp(client.get("/__emulator/clock").json()["now"])
        ahead = (parse_timestamp(early["ends_at"]) - now).total_seconds() + 60
        assert client.post("/__emulator/clock", json={"advance": ahead}).status_code == 200
        assert client.get(DOWNLOAD.format(early["id"])).status_code == 307


def test_archived_model_is_410(http: httpx.Client, landmarks: dict[str, Any]) -> None:
    for version_id in landmarks["archived_model"]["version_ids"]:
        answer = http.get(DOWNLOAD.format(version_id))
        assert answer.status_code == 410
        assert answer.json() == {"error": "Model archived, not available for download"}
        assert answer.headers["cache-control"] == "no-store, max-age=0"
    browser = http.get(DOWNLOAD.format(landmarks["archived_model"]["version_ids"][0]), headers={"User-Agent": BROWSER})
    assert browser.status_code == 410 and browser.headers["content-type"].startswith("text/plain")
    assert browser.text == "Model archived, not available for download"


def test_missing_version_or_file_is_404(http: httpx.Client, landmarks: dict[str, Any], store_of: Any) -> None:
    not_found = {"error": "File not found"}
    assert http.get(DOWNLOAD.format(2_000_000_000)).json() == not_found
    assert http.get(DOWNLOAD.format(-4)).status_code == 404
    assert http.get(DOWNLOAD.format("1.5")).status_code == 404
    assert http.get(DOWNLOAD.format(10**30)).status_code == 404
    known = landmarks["known_hashes"]
    with store_of.read() as db:
        foreign = db.execute("SELECT id FROM model_files WHERE version_id <> ? ORDER BY id LIMIT 1",
                             (known["version_id"],)).fetchone()[0]
    answer = http.get(DOWNLOAD.format(known["version_id"]), params={"fileId": foreign})
    assert answer.status_code == 404 and answer.json() == not_found
    # A query that no file of the version satisfies: the misalignment check.
    assert http.get(DOWNLOAD.format(known["version_id"]), params={"format": "GGUF"}).json() == not_found
    assert http.get(DOWNLOAD.format(known["version_id"]), params={"type": "UNet"}).json() == not_found


def test_bad_query_is_400_with_zods_message(http: httpx.Client, landmarks: dict[str, Any]) -> None:
    """The messages are zod 4.0.17's z.prettifyError for the platform's schema (run once with node)."""
    known = landmarks["known_hashes"]["version_id"]
    cases = {
        (DOWNLOAD.format("abc"), ()): "✖ Invalid input: expected number, received NaN\n  → at modelVersionId",
        (DOWNLOAD.format(known), (("size", "huge"),)): '✖ Invalid option: expected one of "full"|"pruned"\n  → at size',
        (DOWNLOAD.format(known), (("fp", "x" * 65),)): "✖ Too big: expected string to have <=64 characters\n  → at fp",
        (DOWNLOAD.format(known), (("fileId", "x"),)): "✖ Invalid input: expected number, received NaN\n  → at fileId",
        (DOWNLOAD.format(known), (("fp", "a"), ("fp", "b"))): "✖ Invalid input: expected string, received array\n  → at fp",
        (DOWNLOAD.format("Infinity"), ()): "✖ Invalid input: expected number, received number\n  → at modelVersionId",
        (DOWNLOAD.format("x"), (("size", "huge"), ("format", "zip"))): (
            "✖ Invalid input: expected number, received NaN\n  → at modelVersionId\n"
            '✖ Invalid option: expected one of "SafeTensor"|"PickleTensor"|"GGUF"|"Diffusers"|"Core ML"|"ONNX"|"Other"\n'
            "  → at format\n"
            '✖ Invalid option: expected one of "full"|"pruned"\n  → at size'),
    }
    for (path, params), message in cases.items():
        answer = http.get(path, params=list(params))
        assert answer.status_code == 400, (path, params)
        assert answer.json() == {"error": message}, (path, params)
    assert http.get(DOWNLOAD.format(0)).json() == {"error": "Missing modelVersionId"}
    assert http.get(DOWNLOAD.format(" 0x0 ")).json() == {"error": "Missing modelVersionId"}
    # What Number() reads as a number is one: hex, exponent, blanks; fileId "" is no fileId.
    assert http.get(DOWNLOAD.format(hex(known)), params={"fileId": ""}).status_code == 307


def test_access_rules(http: httpx.Client, landmarks: dict[str, Any], mint: Any) -> None:
    epoch = landmarks["private_epoch_version"]
    # A Private training result: signed out, log in; another user, no access; its owner downloads it.
    assert http.get(DOWNLOAD.format(epoch["id"])).json()["message"] == \
        "The creator of this asset requires you to be logged in to download it"
    stranger = http.get(DOWNLOAD.format(epoch["id"]),
                        headers={"Authorization": f"Bearer {mint(landmarks['free_user']['id'])}"})
    assert stranger.status_code == 403
    assert stranger.json() == {"error": "You do not have access to download this file"}
    owner = mint(epoch["owner_id"])
    assert http.get(DOWNLOAD.format(epoch["id"]), headers={"Authorization": f"Bearer {owner}"}).status_code == 307
    generation_only = landmarks["generation_only_model"]["version_ids"][0]
    disabled = http.get(DOWNLOAD.format(generation_only))
    assert disabled.status_code == 401
    assert disabled.json() == {"error": "Unauthorized",
                               "message": "The creator of this asset has disabled downloads on this file"}
    for key in ("deleted_model", "draft_model", "unpublished_model", "poi_model"):
        assert http.get(DOWNLOAD.format(landmarks[key]["version_ids"][0])).json() == {"error": "File not found"}, key
    assert http.get(DOWNLOAD.format(landmarks["unpublished_version"]["id"])).status_code == 404
    taken_down = http.get(DOWNLOAD.format(landmarks["taken_down_model"]["version_ids"][0]))
    assert taken_down.status_code == 404 and taken_down.headers["cache-control"] == "private, no-store"


# --- files are small; the cache is bounded ------------------------------------------------------------------


def test_planned_lengths() -> None:
    from blockkit.emulator.services import files

    lengths = [files.planned_length(7, i, "m.safetensors", "SafeTensor", kb) for i, kb in
               enumerate((4, 250, 9_000, 450_000, 7_200_000))]
    assert all(length % 8 == 0 and length < 32 * 1024 for length in lengths)
    assert lengths == sorted(lengths)  # a larger platform file stays larger
    large = files.planned_length(7, 9, "m.safetensors", "SafeTensor", 10, large=True)
    assert files.AUTOV1_MIN_BYTES <= large < 3 * 1024 * 1024
    recipe = files.Recipe(7, 9, "m.safetensors", "SafeTensor", "fp16", large)
    assert files.file_bytes(recipe) == files.file_bytes(recipe)  # deterministic


def test_cache_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from types import SimpleNamespace

    from blockkit.emulator.services import files
    from blockkit.emulator.http.catalogue import downloads

    monkeypatch.setattr(downloads, "CACHE_MAX_BYTES", 40_000)
    store = SimpleNamespace(path=tmp_path / "store.sqlite3")
    paths = [downloads.cached_file(store, files.Recipe(1, i, f"f{i}.safetensors", "SafeTensor", "fp16", 16_384))
             for i in range(6)]
    kept = sorted(p.name for p in downloads.cache_dir(store).glob("*.bin"))
    assert sum(p.stat().st_size for p in downloads.cache_dir(store).glob("*.bin")) <= 40_000
    assert paths[-1].name in kept and len(kept) == 2
    assert paths[-1].read_bytes() == files.file_bytes(files.Recipe(1, 5, "f5.safetensors", "SafeTensor", "fp16", 16_384))


def test_platform_sized_rows_are_refused(live_emulator: Any) -> None:
    """A data directory seeded before downloads lists gigabyte sizes: a clear 500, never gigabytes made."""
    with live_emulator.store.write() as db:
        file_id, version_id = db.execute(
            "SELECT f.id, f.version_id FROM model_files f JOIN model_versions v ON v.id = f.version_id"
            " JOIN models m ON m.id = v.model_id WHERE f.is_primary = 1 AND v.status = 'Published'"
            " AND v.require_auth = 0 AND v.usage_control = 'Download' AND v.availability = 'Public'"
            " AND m.status = 'Published' AND m.mode IS NULL AND m.poi = 0 ORDER BY f.id LIMIT 1").fetchone()
        db.execute("UPDATE model_files SET size_kb = 6900000.5 WHERE id = ?", (file_id,))
    with httpx.Client(base_url=live_emulator.urls.base_url, timeout=30.0) as client:
        answer = client.get(DOWNLOAD.format(version_id))
    assert answer.status_code == 500
    assert "blockkit emulator reset" in answer.json()["error"]
