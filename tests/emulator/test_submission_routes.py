"""The submission routes of the local platform, against a running ``blockkit emulator start``.

submit-version, submissions and withdraw as the platform's CLI calls them (a personal API key or
an OAuth token with the Apps-submit bit), each refusal in the platform's order and words, and the
moderator's approve and reject (control routes and ``blockkit emulator submissions``).
"""

from __future__ import annotations

import http.client
import json
from urllib.parse import urlsplit

import pytest
from emulator_helpers import blockkit
from submit_env import APPS_SUBMIT, SubmitPlatform, bundle, encoded, manifest_bundle, platform_fixture
from submit_env import author, key  # noqa: F401 - fixtures: a moderator author and a fresh key of theirs

SUBMIT = "/api/v1/blocks/submit-version"
SUBMISSIONS = "/api/v1/blocks/submissions"
WITHDRAW = "/api/v1/blocks/withdraw"


platform = platform_fixture("submit-routes")


def submit(platform: SubmitPlatform, key: str | None, data: bytes) -> tuple[int, dict, dict]:
    return platform.call("POST", SUBMIT, encoded(data), key=key)


# --- submit-version ------------------------------------------------------------------------------

def test_a_submission_answers_the_publish_request_and_is_listed_pending(platform: SubmitPlatform, key: str) -> None:
    status, body, headers = submit(platform, key, manifest_bundle("first-block", "0.1.0"))
    assert status == 200, body
    assert set(body) == {"publishRequestId", "slug", "version", "status"}
    assert body["publishRequestId"].startswith("pubreq_") and len(body["publishRequestId"]) == 33
    assert (body["slug"], body["version"], body["status"]) == ("first-block", "0.1.0", "pending")
    assert headers.get("cache-control") == "no-store"

    status, listed, _ = platform.call("GET", SUBMISSIONS, key=key)
    assert status == 200
    row = next(r for r in listed["submissions"] if r["id"] == body["publishRequestId"])
    assert (row["blockId"], row["version"], row["status"], row["rejectionReason"], row["liveUrl"]) == (
        "first-block", "0.1.0", "pending", None, None)
    assert "submittedByUserId" not in row and "bundle" not in row


@pytest.mark.parametrize(("headers", "message"), [
    ({}, "Missing or malformed Bearer token"),
    ({"Authorization": "Basic dXNlcjpwYXNz"}, "Missing or malformed Bearer token"),
    ({"Authorization": "Bearer not-a-key-we-know"}, "Invalid API key"),
])
@pytest.mark.parametrize("route", [("POST", SUBMIT), ("GET", SUBMISSIONS), ("POST", WITHDRAW)])
def test_no_or_a_bad_credential_is_401(platform: SubmitPlatform, headers: dict, message: str,
                                       route: tuple[str, str]) -> None:
    method, path = route
    body = encoded(manifest_bundle("never-stored")) if path == SUBMIT else (
        {"publishRequestId": "pubreq_x"} if method == "POST" else None)
    status, answer, _ = platform.call(method, path, body, headers=headers)
    assert (status, answer) == (401, {"message": message})


def test_an_oauth_token_needs_the_apps_submit_bit(platform: SubmitPlatform, author: str) -> None:
    unscoped = platform.oauth_token(author, scope=(1 << 25) - 1)  # Full: everything but AppBlocksSubmit
    status, answer, _ = submit(platform, unscoped, manifest_bundle("oauth-block"))
    assert status == 403
    assert answer == {"message": "Submitting an App requires a personal API key or an OAuth token with the"
                                 " Apps submit scope"}
    status, answer, _ = platform.call("GET", SUBMISSIONS, key=unscoped)
    assert status == 403 and answer["message"].startswith("App status requires")
    status, answer, _ = platform.call("POST", WITHDRAW, {"publishRequestId": "pubreq_x"}, key=unscoped)
    assert status == 403 and answer["message"].startswith("Withdrawing an App requires")

    scoped = platform.oauth_token(author, scope=APPS_SUBMIT | 1)
    status, answer, _ = submit(platform, scoped, manifest_bundle("oauth-block"))
    assert status == 200, answer
    assert answer["slug"] == "oauth-block"


@pytest.mark.parametrize("status_of_user", ["active", "banned"])
def test_a_user_outside_the_author_cohort_is_refused(platform: SubmitPlatform, status_of_user: str) -> None:
    outsider = platform.api_key(platform.user(moderator=False, status=status_of_user))
    for method, path, body in (("POST", SUBMIT, encoded(manifest_bundle("outsider-block"))),
                               ("GET", SUBMISSIONS, None), ("POST", WITHDRAW, {"publishRequestId": "pubreq_x"})):
        status, answer, _ = platform.call(method, path, body, key=outsider)
        assert (status, answer) == (403, {"message": "Apps are restricted to the Civitai team"}), path


def test_submit_is_rate_limited_per_key_ten_a_minute(platform: SubmitPlatform, key: str, author: str) -> None:
    for _ in range(10):  # refused payloads count too: the limit comes before the body is read
        status, answer, _ = platform.call("POST", SUBMIT, {"bundleBase64": ""}, key=key)
        assert (status, answer) == (400, {"message": "Invalid bundle payload"})
    status, answer, headers = submit(platform, key, manifest_bundle("limited-block"))
    assert status == 429
    assert answer["message"] == "Rate limit exceeded"
    assert (answer["limit"], answer["windowSeconds"]) == (10, 60)
    assert 1 <= int(headers["retry-after"]) <= 60 and answer["retryAfterSeconds"] == int(headers["retry-after"])

    other_key = platform.api_key(author)  # the bucket is the key's, not the user's
    status, _, _ = platform.call("POST", SUBMIT, {"bundleBase64": ""}, key=other_key)
    assert status == 400

    platform.advance(61)
    status, answer, _ = platform.call("POST", SUBMIT, {"bundleBase64": ""}, key=key)
    assert status == 400, answer


def test_a_body_over_72_mb_is_refused_before_it_is_read(platform: SubmitPlatform, key: str) -> None:
    parts = urlsplit(platform.base_url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    try:
        connection.putrequest("POST", SUBMIT)
        connection.putheader("Authorization", f"Bearer {key}")
        connection.putheader("Content-Type", "application/json")
        connection.putheader("Content-Length", str(72 * 1024 * 1024 + 1))
        connection.endheaders()
        connection.send(b'{"bundleBase64": "')
        response = connection.getresponse()
        assert response.status == 413
        assert json.loads(response.read()) == {"message": "Body exceeded 72mb limit"}
    finally:
        connection.close()


@pytest.mark.parametrize(("data", "message"), [
    (b"PK\x03\x04 this is not really a zip", "the bundle is not a zip archive"),
    (bundle({"index.html": "<p>"}), "the bundle has no block.manifest.json at its root"),
    (bundle({"block.manifest.json": "{not json"}), "block.manifest.json: member name 'not' must be in double quotes"),
    (bundle({"block.manifest.json": "[1, 2]"}), "block.manifest.json: the manifest is a list; it must be a JSON object"),
    (bundle({"block.manifest.json": json.dumps({"blockId": "Bad_Id", "version": "1.0.0", "name": "x"})}),
     'manifest.blockId "Bad_Id" must be 3-40 chars'),
    (bundle({"block.manifest.json": json.dumps({"blockId": "fine-id", "version": "1", "name": "x"})}),
     'manifest.version "1" must be semver'),
    (bundle({"block.manifest.json": json.dumps({"blockId": "fine-id", "version": "1.0.0", "name": ""})}),
     "manifest.name must be a non-empty string"),
    (bundle({"../escape.txt": "x", "block.manifest.json": "{}"}), "the entry name '../escape.txt' holds a '..' segment"),
], ids=["not-a-zip", "no-manifest", "manifest-not-json", "manifest-not-object", "bad-block-id", "bad-version",
        "empty-name", "traversal"])
def test_a_bad_bundle_is_a_400_with_the_reason(platform: SubmitPlatform, key: str, data: bytes, message: str) -> None:
    status, answer, _ = submit(platform, key, data)
    assert status == 400
    assert message in answer["message"], answer


def test_bad_base64_and_a_bad_payload_are_400s(platform: SubmitPlatform, key: str) -> None:
    status, answer, _ = platform.call("POST", SUBMIT, {"bundleBase64": "not base64!!"}, key=key)
    assert status == 400 and answer["message"].startswith("bundleBase64 is not valid base64")
    status, answer, _ = platform.call("POST", SUBMIT, {"bundle": "x"}, key=key)
    assert (status, answer) == (400, {"message": "Invalid bundle payload"})


def test_one_pending_request_per_block(platform: SubmitPlatform, key: str, author: str) -> None:
    status, first, _ = submit(platform, key, manifest_bundle("one-pending"))
    assert status == 200
    status, answer, _ = submit(platform, key, manifest_bundle("one-pending", "1.0.1"))
    assert status == 400
    assert first["publishRequestId"] in answer["message"] and "withdraw it first" in answer["message"]


# --- submissions ---------------------------------------------------------------------------------

def test_submissions_are_the_callers_own(platform: SubmitPlatform, key: str) -> None:
    status, mine, _ = submit(platform, key, manifest_bundle("mine-only"))
    assert status == 200
    other_author = platform.api_key(platform.user(moderator=True))  # the same user, another key: still mine
    status, one, _ = platform.call("GET", f"{SUBMISSIONS}?id={mine['publishRequestId']}", key=other_author)
    assert status == 200 and one["submission"]["id"] == mine["publishRequestId"]
    status, narrowed, _ = platform.call("GET", f"{SUBMISSIONS}?blockId=mine-only", key=key)
    assert [r["blockId"] for r in narrowed["submissions"]] == ["mine-only"]

    scoped_stranger = platform.oauth_token("civitai", scope=APPS_SUBMIT | 1)  # the system moderator
    status, answer, _ = platform.call("GET", f"{SUBMISSIONS}?id={mine['publishRequestId']}", key=scoped_stranger)
    assert (status, answer) == (404, {"message": "Submission not found"})
    status, listed, _ = platform.call("GET", SUBMISSIONS, key=scoped_stranger)
    assert all(r["id"] != mine["publishRequestId"] for r in listed["submissions"])


# --- withdraw, approve, reject ---------------------------------------------------------------------

def test_withdraw_moves_a_pending_request_and_is_idempotent(platform: SubmitPlatform, key: str) -> None:
    _, created, _ = submit(platform, key, manifest_bundle("to-withdraw"))
    request_id = created["publishRequestId"]
    stranger = platform.oauth_token("civitai", scope=APPS_SUBMIT | 1)
    status, answer, _ = platform.call("POST", WITHDRAW, {"publishRequestId": request_id}, key=stranger)
    assert (status, answer) == (404, {"message": "Publish request not found"})  # not yours: as if it did not exist

    for _ in range(2):
        status, answer, _ = platform.call("POST", WITHDRAW, {"publishRequestId": request_id}, key=key)
        assert (status, answer) == (200, {"ok": True})
    _, one, _ = platform.call("GET", f"{SUBMISSIONS}?id={request_id}", key=key)
    assert one["submission"]["status"] == "withdrawn"

    status, answer, _ = platform.call("POST", WITHDRAW, {"id": request_id}, key=key)
    assert (status, answer) == (400, {"message": "Invalid body"})
    # withdrawn, the block takes a new submission
    status, _, _ = submit(platform, key, manifest_bundle("to-withdraw"))
    assert status == 200


def test_approve_serves_the_version_and_guards_the_next(platform: SubmitPlatform, key: str) -> None:
    _, created, _ = submit(platform, key, manifest_bundle("approved-block", "1.2.0"))
    request_id = created["publishRequestId"]

    status, answer, _ = platform.control(f"/submissions/{request_id}/approve", {}, with_key=False)
    assert status == 401  # a control write asks for the access key
    status, answer, _ = platform.control(f"/submissions/{request_id}/approve", {"notes": "looks good"})
    assert status == 200, answer
    assert answer["submission"]["status"] == "approved"

    _, one, _ = platform.call("GET", f"{SUBMISSIONS}?id={request_id}", key=key)
    row = one["submission"]
    assert (row["status"], row["approvalNotes"], row["deployState"], row["liveUrl"]) == (
        "approved", "looks good", "live", "https://approved-block.civit.ai/")
    assert row["reviewedAt"] is not None

    status, answer, _ = platform.control(f"/submissions/{request_id}/approve", {})
    assert status == 409 and answer["message"] == "cannot approve a request in status approved"
    status, answer, _ = platform.call("POST", WITHDRAW, {"publishRequestId": request_id}, key=key)
    assert (status, answer) == (409, {"message": "cannot withdraw a request in status approved"})

    for lower in ("1.1.9", "1.2.0-rc.1"):
        status, answer, _ = submit(platform, key, manifest_bundle("approved-block", lower))
        assert status == 400
        assert answer["message"] == f'BK401: version "{lower}" is lower than the previous "1.2.0"'
    changed = bundle({"block.manifest.json": json.dumps({"blockId": "approved-block", "version": "1.2.0",
                                                         "name": "Renamed"}), "index.html": "<p>"})
    status, answer, _ = submit(platform, key, changed)  # a changed manifest must raise its version
    assert status == 400 and answer["message"].startswith("BK401: ")
    status, answer, _ = submit(platform, key, manifest_bundle("approved-block", "1.2.1"))
    assert status == 200, answer


def test_reject_needs_a_reason_that_the_submitter_reads(platform: SubmitPlatform, key: str) -> None:
    _, created, _ = submit(platform, key, manifest_bundle("rejected-block"))
    request_id = created["publishRequestId"]
    status, answer, _ = platform.control(f"/submissions/{request_id}/reject", {"reason": "no"})
    assert (status, answer) == (400, {"message": "rejection reason must be at least 3 characters"})
    status, answer, _ = platform.control(f"/submissions/{request_id}/reject", {})
    assert status == 400
    status, answer, _ = platform.control(f"/submissions/{request_id}/reject", {"reason": "uses eval()"})
    assert status == 200 and answer["submission"]["status"] == "rejected"
    _, one, _ = platform.call("GET", f"{SUBMISSIONS}?id={request_id}", key=key)
    assert (one["submission"]["status"], one["submission"]["rejectionReason"]) == ("rejected", "uses eval()")
    status, answer, _ = platform.control(f"/submissions/{request_id}/approve", {})
    assert status == 409
    status, answer, _ = platform.control("/submissions/pubreq_NOPE/approve", {})
    assert status == 404


def test_the_emulator_cli_lists_approves_and_rejects(platform: SubmitPlatform, key: str) -> None:
    _, first, _ = submit(platform, key, manifest_bundle("cli-approve"))
    _, second, _ = submit(platform, key, manifest_bundle("cli-reject"))
    data = str(platform.data)

    listed = blockkit("emulator", "submissions", "list", "--status", "pending", "--format", "json", "--data", data)
    assert listed.returncode == 0, listed.stderr
    pending = {row["id"] for row in json.loads(listed.stdout)["submissions"]}
    assert {first["publishRequestId"], second["publishRequestId"]} <= pending

    approved = blockkit("emulator", "submissions", "approve", first["publishRequestId"], "--data", data)
    assert approved.returncode == 0, approved.stderr
    assert json.loads(approved.stdout)["submission"]["status"] == "approved"
    rejected = blockkit("emulator", "submissions", "reject", second["publishRequestId"], "--reason", "too big",
                        "--data", data)
    assert rejected.returncode == 0, rejected.stderr
    again = blockkit("emulator", "submissions", "reject", second["publishRequestId"], "--reason", "too big",
                     "--data", data)
    assert again.returncode == 2
    assert again.stderr.strip() == (f"blockkit emulator: reject {second['publishRequestId']}: cannot reject a"
                                    " request in status rejected")

    text = blockkit("emulator", "submissions", "list", "--data", data)
    assert f"{second['publishRequestId']}  cli-reject  1.0.0  rejected" in text.stdout
    assert "(too big)" in text.stdout
