"""The local platform for other people's test suites: the pytest plugin (through pytester, as
pytest plugins are tested), ``blockkit.emulator.running`` and its helpers."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import httpx
import pytest

from blockkit.emulator import running
from blockkit.emulator.errors import EmulatorError


# --- running(): the context manager and its helpers -----------------------------------------

@pytest.fixture(scope="module")
def platform():
    with running(seed=1) as local:
        yield local


def test_running_serves_three_origins_and_gives_their_environment(platform) -> None:
    env = platform.env
    assert env["BLOCKKIT_BASE_URL"] == platform.base_url
    assert env["BLOCKKIT_AUTH_URL"] == platform.auth_url
    assert env["BLOCKKIT_ORCHESTRATION_URL"] == platform.orchestration_url
    assert httpx.get(f"{platform.api_url}/enums").status_code == 200
    assert httpx.get(f"{platform.auth_url}/login", headers=platform.headers).status_code == 200
    assert env["BLOCKKIT_ACCESS_KEY"] == platform.access_key


def test_running_has_an_access_key_no_other_account_gets_past(platform) -> None:
    # Security review 2, S06: running() started with no key, so any local account could sign in
    # as anyone (POST /login) or move the clock while the tests ran.
    assert platform.access_key and platform.headers == {"x-blockkit-access-key": platform.access_key}
    assert httpx.get(f"{platform.auth_url}/login").status_code == 401
    user = platform.users()[0].username
    assert httpx.post(f"{platform.auth_url}/login", data={"username": user}).status_code == 401
    assert httpx.post(f"{platform.base_url}/__emulator/clock", json={"advance": 86400}).status_code == 401
    moved = httpx.post(f"{platform.base_url}/__emulator/clock", json={"advance": 1}, headers=platform.headers)
    assert moved.status_code == 200
    assert platform.sign_in_url == f"{platform.auth_url}/login?key={platform.access_key}"
    platform.reset()


def test_running_without_a_key_when_asked() -> None:
    with running(seed=1, access_key=None) as open_platform:
        assert open_platform.access_key is None and open_platform.headers == {}
        assert "BLOCKKIT_ACCESS_KEY" not in open_platform.env
        assert httpx.get(f"{open_platform.auth_url}/login").status_code == 200


def test_reset_undoes_rows_tokens_balances_and_the_clock(platform) -> None:
    user = platform.users()[0]
    before_balance = platform.balance(user.username)
    before_now = platform.now()
    token = platform.oauth_token(user.username)
    me = httpx.get(f"{platform.api_url}/me", headers={"Authorization": f"Bearer {token}"})
    assert me.status_code == 200 and me.json()["username"] == user.username

    platform.set_balance(user.username, "blue", 3)
    assert platform.balance(user.username)["blue"] == 3
    entry = platform.ledger(user.username, limit=1)[0]
    assert (entry["pool"], entry["amount"], entry["kind"]) == ("blue", 3 - before_balance["blue"], "adjustment")
    platform.advance_clock(7 * 86400)
    assert (platform.now() - before_now).days >= 7

    platform.reset()
    assert platform.balance(user.username) == before_balance
    assert (platform.now() - before_now).total_seconds() < 3600
    # the token was issued after the seeded state: it is gone with everything else
    assert httpx.get(f"{platform.api_url}/me", headers={"Authorization": f"Bearer {token}"}).status_code == 401


def test_a_saved_state_comes_back_by_name(platform) -> None:
    user = platform.users()[1]
    platform.reset()
    platform.set_balance(user.username, "green", 11)
    platform.save_state("eleven-green")
    platform.set_balance(user.username, "green", 99)
    platform.reset("eleven-green")
    assert platform.balance(user.username)["green"] == 11
    platform.reset()
    assert platform.balance(user.username)["green"] != 11
    with pytest.raises(EmulatorError, match="no saved state called 'nope'"):
        platform.reset("nope")


def test_a_rate_limit_window_does_not_outlive_a_reset(platform) -> None:
    platform.reset()
    client = platform.register_client(confidential=True)
    form = {"grant_type": "client_credentials", "client_id": client["client_id"], "client_secret": "wrong"}
    statuses = [httpx.post(f"{platform.auth_url}/api/auth/oauth/token", data=form).status_code for _ in range(30)]
    assert 429 in statuses, statuses
    platform.reset()
    again = httpx.post(f"{platform.auth_url}/api/auth/oauth/token", data=form)
    assert again.status_code != 429


def test_sign_in_block_token_api_key_and_client_helpers(platform) -> None:
    platform.reset()
    user = platform.users()[0]
    cookies = platform.sign_in(user.username)
    home = httpx.get(f"{platform.auth_url}/", cookies=cookies)
    assert home.status_code == 200 and user.username in home.text
    block = platform.block_token(user.username, scopes=["user:read:self"])
    me = httpx.get(f"{platform.api_url}/blocks/me", headers={"Authorization": f"Bearer {block}"})
    assert me.status_code == 200, me.text
    # A first visit (no consent recorded): the token holds only the consent-exempt scopes.
    first = platform.block_token(user.username, scopes=["user:read:self", "apps:storage:read"], block_id="fresh",
                                 consented=False)
    me = httpx.get(f"{platform.api_url}/blocks/me", headers={"Authorization": f"Bearer {first}"})
    assert me.status_code == 403 and "user:read:self" in me.text
    key = platform.api_key(user.username)
    workflows = httpx.get(f"{platform.orchestration_url}/v2/consumer/workflows",
                          headers={"Authorization": f"Bearer {key}"})
    assert workflows.status_code == 200, workflows.text
    client = platform.register_client(name="cli", redirect_uris=["http://127.0.0.1:8123/cb"], confidential=True)
    assert client["client_id"] and client["client_secret"]
    with pytest.raises(EmulatorError):
        platform.set_balance(user.username, "purple", 1)


def test_reset_to_an_export_directory(platform, tmp_path: Path) -> None:
    from blockkit.emulator.transfer import export

    platform.reset()
    user = platform.users()[0]
    platform.set_balance(user.username, "yellow", 5)
    export(platform.store, tmp_path / "snap")
    platform.reset()
    assert platform.balance(user.username)["yellow"] != 5
    platform.reset(tmp_path / "snap")
    assert platform.balance(user.username)["yellow"] == 5
    platform.reset()


def test_a_block_token_minted_before_a_reset_is_refused_after_it(platform) -> None:
    """R02 (1): the instance row is gone after the reset, and so is the token's; the same instance
    registered again in the next test does not bring the old token back either."""
    platform.reset()
    user = platform.users()[0]
    old = platform.block_token(user.username, scopes=["user:read:self"])
    headers = {"Authorization": f"Bearer {old}"}
    assert httpx.get(f"{platform.api_url}/blocks/me", headers=headers).status_code == 200
    platform.reset()
    gone = httpx.get(f"{platform.api_url}/blocks/me", headers=headers)
    assert gone.status_code == 401, gone.text
    new = platform.block_token(user.username, scopes=["user:read:self"])  # the same instance id, installed again
    assert httpx.get(f"{platform.api_url}/blocks/me", headers={"Authorization": f"Bearer {new}"}).status_code == 200
    assert httpx.get(f"{platform.api_url}/blocks/me", headers=headers).status_code == 401


def test_a_saved_state_keeps_the_block_tokens_minted_before_it(platform) -> None:
    platform.reset()
    user = platform.users()[0]
    kept = platform.block_token(user.username, scopes=["user:read:self"])
    platform.save_state("with-a-block-token")
    later = platform.block_token(user.username, scopes=["user:read:self"])
    platform.reset("with-a-block-token")
    me = f"{platform.api_url}/blocks/me"
    assert httpx.get(me, headers={"Authorization": f"Bearer {kept}"}).status_code == 200
    assert httpx.get(me, headers={"Authorization": f"Bearer {later}"}).status_code == 401
    platform.reset()


def test_a_download_url_handed_out_before_a_reset_is_gone_after_it(platform) -> None:
    """R02 (2): the file URLs (grants) lived in a module dict keyed by the store's path, for 24 h."""
    platform.reset()
    page = httpx.get(f"{platform.api_url}/models", params={"limit": 1}).json()
    download = page["items"][0]["modelVersions"][0]["downloadUrl"]
    redirect = httpx.get(download)
    assert redirect.status_code == 307, redirect.text
    file_url = redirect.headers["location"]
    assert httpx.get(file_url, headers={"Range": "bytes=0-15"}).status_code in (200, 206)
    platform.reset()
    assert httpx.get(file_url, headers={"Range": "bytes=0-15"}).status_code == 404


def test_the_tags_list_after_a_reset_is_the_restored_data(platform) -> None:
    """R02 (3): /tags answers were cached per store for 60 s of the clock, across resets."""
    platform.reset()
    first = httpx.get(f"{platform.api_url}/tags", params={"limit": 200}).json()["items"]
    name = first[0]["name"]
    with platform.store.write() as db:
        db.execute("UPDATE tags SET name = 'zz-marked-' || name WHERE kind = 'model'")
    platform.save_state("marked-tags")
    platform.reset("marked-tags")
    marked = [t["name"] for t in httpx.get(f"{platform.api_url}/tags", params={"limit": 200}).json()["items"]]
    assert f"zz-marked-{name}" in marked and name not in marked
    platform.reset()
    back = [t["name"] for t in httpx.get(f"{platform.api_url}/tags", params={"limit": 200}).json()["items"]]
    assert name in back and f"zz-marked-{name}" not in back


# Every module-level object of the emulator whose contents may change while it serves, and why a
# reset may leave it as it is. Anything else that changes is in-memory state that outlives a reset:
# keep it on the apps' state (``EmulatorState.kept``), which a reset builds afresh.
KEPT_ACROSS_RESETS = {
    "blockkit.emulator.http.auth._verifiers": "the token verifiers registered at import, not data",
    "blockkit.emulator.http.blocks.blockroutes._HOST_ORIGINS": "blockkit dev's host page origin: configuration",
    "blockkit.emulator.http.catalogue.fragments._caches": "one per store, emptied whenever the database changes"
                                                         " (a reset writes it)",
    "blockkit.emulator.http.catalogue.links._ORIGINS": "a pure function of the request's scheme, Host and address",
    "blockkit.emulator.http.catalogue.models._file_query": "an lru_cache of a pure function of a file's kind",
    "blockkit.emulator.http.oauth.web.templates": "the Jinja environment of the sign-in pages: code, not data",
    "blockkit.emulator.http.oauth.oidc._keys": "the OIDC key file's contents, which no reset changes",
    "blockkit.emulator.services.blocktokens._keys": "the signing key file, read again when the file changes",
    "blockkit.emulator.seed.generate._DAY_PREFIXES": "a pure function of the day number",
    "blockkit.emulator.services.orchestration.media._BUDGET": "the bytes in the media cache on disk, drawn from"
                                                              " stored paths",
    "blockkit.emulator.store.changes.SHARED": "the -shm mappings SQLite's lock lives on (never dropped)",
    "blockkit.emulator.http.connlimit._PROCESS_POOL": "the open connections of this process",
}


def _module_state() -> dict[str, object]:
    """A fingerprint of every module-level object of blockkit.emulator that a request could change."""
    import collections
    import functools
    import importlib
    import pkgutil
    import types
    import weakref

    import blockkit.emulator as package

    containers = (dict, list, set, collections.deque, weakref.WeakKeyDictionary, weakref.WeakValueDictionary,
                  weakref.WeakSet)

    def fingerprint(value: object) -> object:
        if isinstance(value, functools._lru_cache_wrapper):
            return ("lru", value.cache_info().currsize)
        if isinstance(value, (dict, weakref.WeakKeyDictionary, weakref.WeakValueDictionary)):
            items = list(value.items())
            return ("mapping", id(value), len(items), tuple(sorted(repr(k) for k, _ in items)),
                    tuple(sorted(repr(fingerprint(v)) for _, v in items)))
        if isinstance(value, containers):
            return (type(value).__name__, id(value), len(value))  # type: ignore[arg-type]
        if type(value).__module__.startswith("blockkit.") and hasattr(value, "__dict__"):
            return ("object", id(value), tuple(sorted((k, repr(fingerprint(v))) for k, v in vars(value).items())))
        return ("value", id(value))

    found: dict[str, object] = {}
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        try:
            module = importlib.import_module(info.name)
        except ImportError:  # an optional extra (video) that is not installed
            continue
        for name, value in vars(module).items():
            if name.startswith("__") or isinstance(value, (types.ModuleType, type, types.FunctionType)):
                continue
            if isinstance(value, functools._lru_cache_wrapper) and value.__module__ != module.__name__:
                continue
            found[f"{info.name}.{name}"] = fingerprint(value)
    return found


def test_no_module_level_cache_outlives_a_reset(platform, tmp_path: Path) -> None:
    """R02: walk every module of the emulator before and after traffic on every family and a reset;
    whatever changed must be in KEPT_ACROSS_RESETS with its reason."""
    platform.reset()
    before = _module_state()
    user = platform.users()[0]
    token = platform.oauth_token(user.username, scope=platform_full_scope())
    block = platform.block_token(user.username, scopes=["user:read:self"])
    bearer = {"Authorization": f"Bearer {token}"}
    api = platform.api_url
    page = httpx.get(f"{api}/models", params={"limit": 3}).json()
    version_id = page["items"][0]["modelVersions"][0]["id"]
    for path in ("/tags", "/models", f"/models/{page['items'][0]['id']}", f"/model-versions/{version_id}",
                 "/images", "/creators", "/enums", "/me", "/vault/all", "/permissions/check"):
        httpx.get(f"{api}{path}", headers=bearer)
    httpx.get(f"{api}/blocks/me", headers={"Authorization": f"Bearer {block}"})
    redirect = httpx.get(page["items"][0]["modelVersions"][0]["downloadUrl"])
    if redirect.status_code == 307:
        httpx.get(redirect.headers["location"], headers={"Range": "bytes=0-15"})
    httpx.get(f"{platform.auth_url}/.well-known/openid-configuration")
    httpx.get(f"{platform.auth_url}/login", headers={"X-Blockkit-Access-Key": platform.env.get(
        "BLOCKKIT_ACCESS_KEY", "")})
    key = platform.api_key(user.username)
    httpx.get(f"{platform.orchestration_url}/v2/consumer/workflows", headers={"Authorization": f"Bearer {key}"})
    platform.reset()
    after = _module_state()
    changed = sorted(name for name in after if after[name] != before.get(name) and name not in KEPT_ACROSS_RESETS)
    assert not changed, f"module-level state that outlives a reset: {changed}"


def platform_full_scope() -> int:
    from blockkit.emulator.services.oauth import scopes

    return scopes.FULL


# --- the pytest plugin, through pytester ---------------------------------------------------

SUITE = '''
import httpx, pytest

@pytest.fixture(scope="session")
def rich_state(blockkit_emulator_session):
    platform = blockkit_emulator_session.get()
    platform.reset()
    platform.set_balance(platform.users()[0].username, "blue", 123456)
    platform.save_state("rich")
    return "rich"

def test_spend(blockkit_emulator):
    user = blockkit_emulator.users()[0]
    blockkit_emulator.set_balance(user.username, "blue", 1)
    assert blockkit_emulator.balance(user.username)["blue"] == 1

def test_fresh_after_spend(blockkit_emulator):
    user = blockkit_emulator.users()[0]
    assert blockkit_emulator.balance(user.username)["blue"] != 1
    r = httpx.get(blockkit_emulator.api_url + "/users", params={"username": user.username})
    assert r.status_code == 200

@pytest.mark.blockkit_emulator(state="rich")
def test_named_state(rich_state, blockkit_emulator):
    assert blockkit_emulator.balance(blockkit_emulator.users()[0].username)["blue"] == 123456

@pytest.mark.blockkit_emulator(seed=2)
def test_other_seed(blockkit_emulator):
    assert blockkit_emulator.seed == 2

def test_default_seed_from_option(blockkit_emulator, pytestconfig):
    assert blockkit_emulator.seed == (pytestconfig.getoption("blockkit_seed") or 1)

def test_the_fixture_has_a_key(blockkit_emulator):
    assert httpx.post(blockkit_emulator.base_url + "/__emulator/clock", json={"advance": 86400}).status_code == 401
    assert httpx.get(blockkit_emulator.auth_url + "/login", headers=blockkit_emulator.headers).status_code == 200
'''


def test_plugin_gives_each_test_a_fresh_world(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-q")
    result.assert_outcomes(passed=6)


def test_plugin_seed_option(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-q", "--blockkit-seed", "3",
                                           "-k", "default_seed or spend")
    result.assert_outcomes(passed=3)


def test_plugin_is_inert_until_asked(pytester: pytest.Pytester) -> None:
    """A suite that never asks for the fixture starts no emulator and imports none of it."""
    pytester.makepyfile(test_plain='''
import sys
def test_nothing_loaded():
    assert "blockkit.emulator.runtime" not in sys.modules
    assert "starlette" not in sys.modules
''')
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-q")
    result.assert_outcomes(passed=1)


def test_plugin_marker_with_a_bad_argument_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_bad='''
import pytest
@pytest.mark.blockkit_emulator(sede=2)
def test_typo(blockkit_emulator):
    pass
''')
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-q")
    result.stdout.fnmatch_lines(["*unknown arguments sede*"])
    assert result.ret != 0


def test_plugin_under_xdist_one_emulator_per_worker(pytester: pytest.Pytester, tmp_path: Path) -> None:
    pytest.importorskip("xdist")
    out = tmp_path / "seen"
    out.mkdir()
    pytester.makepyfile(test_par=f'''
import json, os, pathlib, pytest
@pytest.mark.parametrize("n", range(6))
def test_where(n, blockkit_emulator):
    user = blockkit_emulator.users()[0]
    assert blockkit_emulator.balance(user.username)["blue"] != 7
    blockkit_emulator.set_balance(user.username, "blue", 7)
    pathlib.Path({str(out)!r}, f"{{n}}.json").write_text(json.dumps(
        {{"worker": os.environ.get("PYTEST_XDIST_WORKER"), "base": blockkit_emulator.base_url}}))
''')
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-q", "-n", "2")
    result.assert_outcomes(passed=6)
    seen = [json.loads(p.read_text()) for p in out.iterdir()]
    by_worker: dict[str, set[str]] = {}
    for row in seen:
        by_worker.setdefault(row["worker"], set()).add(row["base"])
    assert len(by_worker) == 2, by_worker
    assert all(len(bases) == 1 for bases in by_worker.values())  # one emulator per worker...
    assert len(set.union(*by_worker.values())) == 2  # ...on its own port


def test_running_keeps_data_in_a_directory_it_is_given(tmp_path: Path) -> None:
    with running(data=tmp_path / "d") as local:
        user = local.users()[0]
        local.set_balance(user.username, "blue", 42)
    db = sqlite3.connect(tmp_path / "d" / "emulator.sqlite3")
    row = db.execute("SELECT balance FROM buzz_accounts WHERE user_id = ? AND pool = 'blue'", (user.id,)).fetchone()
    assert row == (42,)
