"""The local platform under concurrency (issue 27): wrk at 1 and 16 connections, route by route.

    python3 benchmarks/bench_concurrency.py [--scale large] [--duration 10] [--rounds 3] [--threads N]

Each round runs every scenario against a real ``blockkit emulator start`` and, for the cached
reads, against the baseline: a bare Starlette app serving the same bytes under the same uvicorn
settings (same HTTP parser, same socket options), started the same way. Rounds alternate the
two, and ratios are the medians of the per-round ratios, so a noisy machine moves both sides.

Targets:
- every route, 16 connections: p99 <= 50 ms, and req/s >= its own req/s at 1 connection;
- /images?limit=100 (never cached), 16 connections: >= 3x the 160 req/s measured on 0f86161;
- token (client_credentials), 16 connections: p99 <= 25 ms;
- an uncached /models sort on the large seed, 1 connection: p50 <= 5 ms;
- cached reads, 16 connections: >= 0.8x the bare app.

wrk comes from Debian (apt-get install wrk). The load average is printed beside every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_emulator import _env, start, wrk  # noqa: E402

IMAGES_BEFORE_RPS = 160.0  # issue 27's figure on 0f86161, /images?limit=100 at 16 connections


def load() -> str:
    return "load %.2f" % os.getloadavg()[0]


def fetch(url: str, data: bytes | None = None, headers: dict[str, str] | None = None) -> bytes:
    request = urllib.request.Request(url, data=data, headers=headers or {})
    with urllib.request.urlopen(request, timeout=60) as response:
        return response.read()


def write_lua(folder: Path, name: str, method: str, body: str | None, headers: dict[str, str]) -> Path:
    lines = [f'wrk.method = "{method}"']
    if body is not None:
        lines.append(f"wrk.body = {json.dumps(body)}")
    for key, value in headers.items():
        lines.append(f'wrk.headers["{key}"] = "{value}"')
    path = folder / f"{name}.lua"
    path.write_text("\n".join(lines) + "\n")
    return path


CLIENTS = 1500


def register_clients(data: Path, count: int) -> list[dict[str, Any]]:
    """Confidential clients, registered straight into the running emulator's store (as 'client add' does)."""
    from blockkit.emulator.clock import Clock
    from blockkit.emulator.oauth.clients import register_client
    from blockkit.emulator.store import Store

    with Store.open(data, check=False) as store:
        clock = Clock(store)
        return [register_client(store, clock, name=f"bench {n}", redirect_uris=["http://127.0.0.1:9/cb"],
                                confidential=True).as_dict() for n in range(count)]


def rotating_lua(folder: Path, bodies: list[str]) -> Path:
    """A wrk script that POSTs the bodies in turn (each thread from its own offset)."""
    listed = ",\n".join(json.dumps(body) for body in bodies)
    path = folder / "rotating.lua"
    path.write_text(textwrap.dedent('''
        local bodies = {
        %s
        }
        local n = 0
        function setup(thread) n = n + 1; thread:set("offset", n * 97) end
        function init(args) i = offset or 0 end
        function request()
          i = i + 1
          return wrk.format("POST", nil, {["Content-Type"] = "application/x-www-form-urlencoded"},
                            bodies[(i %% #bodies) + 1])
        end
    ''') % listed)
    return path


BARE_APP = textwrap.dedent('''
    import sys, uvicorn
    from starlette.applications import Starlette
    from starlette.responses import Response
    from starlette.routing import Route
    body = open(sys.argv[1], "rb").read()
    def answer(request):
        return Response(body, media_type="application/json")
    app = Starlette(routes=[Route("/{path:path}", answer)])
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[2]), log_level="warning", access_log=False,
                server_header=False, proxy_headers=False)
''')


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def bare_app(folder: Path, body: bytes) -> tuple[subprocess.Popen[bytes], str]:
    (folder / "body.json").write_bytes(body)
    (folder / "bare.py").write_text(BARE_APP)
    port = free_port()
    process = subprocess.Popen([sys.executable, str(folder / "bare.py"), str(folder / "body.json"), str(port)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            fetch(f"http://127.0.0.1:{port}/x")
            return process, f"http://127.0.0.1:{port}"
        except OSError:
            time.sleep(0.05)
    process.kill()
    sys.exit("bench_concurrency: the bare app did not start")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", choices=("small", "large"), default="large")
    parser.add_argument("--duration", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None, help="BLOCKKIT_EMULATOR_THREADS for the emulator")
    args = parser.parse_args()
    env = _env()
    if args.threads is not None:
        env["BLOCKKIT_EMULATOR_THREADS"] = str(args.threads)
    work = Path(tempfile.mkdtemp(prefix="bench-concurrency-"))
    helptext = subprocess.run([sys.executable, "-m", "blockkit", "emulator", "start", "--help"], capture_output=True,
                              text=True, env=env).stdout
    keyless = ["--no-access-key"] if "--no-access-key" in helptext else []  # older blockkits ask no key
    run = start(work, "--scale", args.scale, *keyless, "--data", str(work / "data"), env=env, timeout=1800)
    info = run.info
    base, auth = info["base_url"], info["auth_url"]
    print(f"emulator ready in {run.seconds_to_ready:.2f} s (scale {args.scale}) [{load()}]")
    try:
        clients = register_clients(work / "data", CLIENTS)
        forms = [urllib.parse.urlencode({"grant_type": "client_credentials", "client_id": c["client_id"],
                                         "client_secret": c["client_secret"]}) for c in clients]
        form = forms[0]
        token = json.loads(fetch(f"{auth}/api/auth/oauth/token", form.encode(),
                                 {"Content-Type": "application/x-www-form-urlencoded"}))["access_token"]
        model_id = json.loads(fetch(f"{base}/api/v1/models?limit=1"))["items"][0]["id"]
        scenarios: list[tuple[str, str, Path | None, bool]] = [
            # (name, url, wrk script, cached read compared with the bare app)
            ("models?limit=100 (cached)", f"{base}/api/v1/models?limit=100", None, True),
            ("models/{id} (cached)", f"{base}/api/v1/models/{model_id}", None, True),
            ("images?limit=100 (uncached)", f"{base}/api/v1/images?limit=100", None, False),
            ("models?sort=Most Images (uncached sort)",
             f"{base}/api/v1/models?limit=20&sort=Most%20Images", None, False),
            # many clients in turn: the provider allows each 20 token requests a minute (as the platform does)
            ("token client_credentials", f"{auth}/api/auth/oauth/token", rotating_lua(work, forms), False),
            ("userinfo", f"{auth}/api/auth/oauth/userinfo",
             write_lua(work, "userinfo", "GET", None, {"Authorization": f"Bearer {token}"}), False),
        ]
        results: dict[tuple[str, int], list[dict[str, Any]]] = {}
        ratios: dict[str, list[float]] = {}
        for round_number in range(args.rounds):
            for name, url, script, cached in scenarios:
                for connections in (1, 16):
                    figures = wrk(url, connections=connections, duration=args.duration, script=script,
                                  threads=1 if connections == 1 else 2)
                    figures["load"] = os.getloadavg()[0]
                    results.setdefault((name, connections), []).append(figures)
                if cached:
                    body = fetch(url)
                    bare, bare_url = bare_app(work, body)
                    try:
                        baseline = wrk(f"{bare_url}/x", connections=16, duration=args.duration)
                    finally:
                        bare.terminate()
                        bare.wait(10)
                    mine = results[(name, 16)][-1]["requests_per_s"]
                    ratios.setdefault(name, []).append(mine / baseline["requests_per_s"])
            print(f"round {round_number + 1} of {args.rounds} done [{load()}]")
        print()
        print(f"{'route':42} {'conn':>4} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8}  load")
        for (name, connections), runs in results.items():
            rps = statistics.median(r.get("requests_per_s", 0.0) for r in runs)
            p50 = statistics.median(r.get("p50_ms", 0.0) for r in runs)
            p99 = statistics.median(r.get("p99_ms", 0.0) for r in runs)
            errors = sum(r.get("non_2xx", 0) for r in runs)
            note = f"  ({errors} non-2xx)" if errors else ""
            print(f"{name:42} {connections:>4} {rps:>9.0f} {p50:>8.2f} {p99:>8.2f}  "
                  f"{statistics.median(r['load'] for r in runs):.2f}{note}")
        print()

        def med(name: str, connections: int, key: str) -> float:
            return statistics.median(r.get(key, 0.0) for r in results[(name, connections)])

        verdicts = []
        for name, _url, _script, _cached in scenarios:
            verdicts.append((f"{name}: p99 at 16 <= 50 ms", med(name, 16, "p99_ms") <= 50,
                             f"{med(name, 16, 'p99_ms'):.1f} ms"))
            verdicts.append((f"{name}: req/s at 16 >= at 1", med(name, 16, "requests_per_s") >=
                             med(name, 1, "requests_per_s"),
                             f"{med(name, 16, 'requests_per_s'):.0f} vs {med(name, 1, 'requests_per_s'):.0f}"))
        images = med("images?limit=100 (uncached)", 16, "requests_per_s")
        verdicts.append(("images at 16 >= 3x 0f86161's 160 req/s", images >= 3 * IMAGES_BEFORE_RPS,
                         f"{images:.0f} req/s = {images / IMAGES_BEFORE_RPS:.1f}x"))
        token_p99 = med("token client_credentials", 16, "p99_ms")
        verdicts.append(("token at 16: p99 <= 25 ms", token_p99 <= 25, f"{token_p99:.1f} ms"))
        sort_p50 = med("models?sort=Most Images (uncached sort)", 1, "p50_ms")
        verdicts.append((f"uncached sort at 1 ({args.scale} seed): p50 <= 5 ms", sort_p50 <= 5, f"{sort_p50:.2f} ms"))
        for name, values in ratios.items():
            ratio = statistics.median(values)
            verdicts.append((f"{name} at 16 vs the bare app >= 0.8x", ratio >= 0.8,
                             f"{ratio:.2f}x (rounds: {', '.join(f'{v:.2f}' for v in values)})"))
        for label, ok, figure in verdicts:
            print(f"{'met    ' if ok else 'NOT met'}  {label}: {figure}")
    finally:
        run.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
