"""OAuth figures of the emulator: refresh grants/s, userinfo latency, a catalogue route with a bearer.

    python benchmarks/bench_oauth.py [--duration S] [--connections N]

Targets (issue 11): userinfo p50 <= 5 ms; >= 200 refresh grants/s. Each refresh rotates its
token, so the script first writes a pool of refresh tokens (with the store's own functions,
spread over clients so the 20-a-minute-per-client limit is not what is measured) and wrk
spends each one once (``lua/refresh_pool.lua``). Access tokens come from a real
client_credentials grant. The emulator is a real ``blockkit emulator start`` subprocess.
wrk comes from apt. The machine is shared: figures are noisy; the load average is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
USERINFO_P50_TARGET_MS = 5.0
REFRESH_TARGET_PER_S = 200.0
TOKENS_PER_CLIENT = 20  # the token endpoint's per-client limit per minute


def start(data: Path) -> tuple[subprocess.Popen[bytes], dict[str, str]]:
    ready = data.parent / "ready.json"
    proc = subprocess.Popen([sys.executable, "-m", "blockkit", "emulator", "start", "--port", "0", "--data", str(data),
                             "--ready-file", str(ready)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not ready.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            sys.exit("bench_oauth: the emulator did not start")
        time.sleep(0.05)
    return proc, json.loads(ready.read_text())


def wrk(url: str, *, duration: int, connections: int, threads: int = 2, script: Path | None = None,
        args: list[str] | None = None, headers: dict[str, str] | None = None) -> dict[str, float | str]:
    cmd = ["wrk", f"-t{threads}", f"-c{connections}", f"-d{duration}s", "--latency"]
    for name, value in (headers or {}).items():
        cmd += ["-H", f"{name}: {value}"]
    if script:
        cmd += ["-s", str(script)]
    cmd.append(url)
    if args:
        cmd += ["--", *args]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout

    def ms(label: str) -> float:
        match = re.search(rf"^\s*{label}\s+([\d.]+)(us|ms|s)\s*$", out, re.M)
        if not match:
            return float("nan")
        value, unit = float(match.group(1)), match.group(2)
        return value / 1000 if unit == "us" else value * 1000 if unit == "s" else value

    rate = re.search(r"Requests/sec:\s+([\d.]+)", out)
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    bad = re.search(r"non-200: (\d+)", out)
    return {"rps": float(rate.group(1)) if rate else float("nan"), "p50": ms("50%"), "p99": ms("99%"),
            "non2xx": int(non2xx.group(1)) if non2xx else 0, "bad": int(bad.group(1)) if bad else 0,
            "requests": int(re.search(r"(\d+) requests in", out).group(1))}  # type: ignore[union-attr]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=int, default=5)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--pool", type=int, default=6000, help="refresh tokens to prepare")
    options = parser.parse_args()
    if shutil.which("wrk") is None:
        sys.exit("bench_oauth: wrk is not installed (apt-get install wrk)")
    sys.path.insert(0, str(HERE.parent / "src"))
    from blockkit.emulator.store.clock import Clock
    from blockkit.emulator.services.oauth.clients import register_client
    from blockkit.emulator.store import Store
    from blockkit.emulator.store import oauth as oauth_store

    with tempfile.TemporaryDirectory(prefix="bench-oauth-") as tmp:
        data = Path(tmp) / "data"
        proc, info = start(data)
        try:
            store = Store.open(data, check=False)
            clock = Clock(store)
            with store.read() as db:
                user_id, username = db.execute("SELECT id, username FROM users WHERE id > 0 AND status = 'active'"
                                               " AND deleted_at IS NULL ORDER BY id LIMIT 1").fetchone()
            lines = []
            for index in range(-(-options.pool // TOKENS_PER_CLIENT)):
                reg = register_client(store, clock, name=f"bench {index}", redirect_uris=["http://127.0.0.1/cb"],
                                      confidential=True, owner=username)
                with store.write() as db:
                    for _ in range(TOKENS_PER_CLIENT):
                        raw = oauth_store.new_secret()
                        oauth_store.save_refresh_token(db, raw, client_id=reg.client_id, user_id=user_id, scope=1,
                                                       now=clock.now())
                        lines.append(f"{reg.client_id} {reg.client_secret} {raw}")
            pool = Path(tmp) / "pool.txt"
            pool.write_text("\n".join(lines) + "\n")
            body = urllib.parse.urlencode({"grant_type": "client_credentials", "client_id": reg.client_id,
                                           "client_secret": reg.client_secret}).encode()
            with urllib.request.urlopen(info["auth_url"] + "/api/auth/oauth/token", data=body) as answer:
                access = json.loads(answer.read())["access_token"]
            bearer = {"Authorization": f"Bearer {access}"}

            threads = 2
            refresh = wrk(info["auth_url"] + "/api/auth/oauth/token", duration=options.duration,
                          connections=options.connections, threads=threads, script=HERE / "lua" / "refresh_pool.lua",
                          args=[str(pool), str(threads)])
            userinfo = wrk(info["auth_url"] + "/api/auth/oauth/userinfo", duration=options.duration,
                           connections=options.connections, headers=bearer)
            userinfo_one = wrk(info["auth_url"] + "/api/auth/oauth/userinfo", duration=options.duration,
                               connections=1, threads=1, headers=bearer)
            me = wrk(info["base_url"] + "/api/v1/me", duration=options.duration, connections=options.connections,
                     headers=bearer)
            models = wrk(info["base_url"] + "/api/v1/models?limit=20&favorites=true", duration=options.duration,
                         connections=options.connections, headers=bearer)
            store.close()
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(30)

    load = os.getloadavg()
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; wrk -t2 -c{options.connections}"
          f" -d{options.duration}s; pool {len(lines)} refresh tokens")
    print(f"{'scenario':<40} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'non-2xx':>8}")
    for name, result in (("refresh grant (rotating)", refresh), ("userinfo", userinfo), ("userinfo (1 connection)", userinfo_one),
                         ("GET /api/v1/me (bearer)", me), ("GET /api/v1/models?favorites (bearer)", models)):
        print(f"{name:<40} {result['rps']:>9.1f} {result['p50']:>8.2f} {result['p99']:>8.2f}"
              f" {int(result['non2xx']) + int(result['bad']):>8}")
    ok_refresh = refresh["rps"] >= REFRESH_TARGET_PER_S and refresh["requests"] < len(lines)
    ok_userinfo = userinfo_one["p50"] <= USERINFO_P50_TARGET_MS  # latency: one connection, no queueing
    print(f"target refresh >= {REFRESH_TARGET_PER_S:.0f}/s: {'met' if ok_refresh else 'NOT met'}"
          f"{'' if refresh['requests'] < len(lines) else ' (the pool ran out: raise --pool)'}")
    print(f"target userinfo p50 <= {USERINFO_P50_TARGET_MS:.0f} ms (1 connection): {'met' if ok_userinfo else 'NOT met'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
