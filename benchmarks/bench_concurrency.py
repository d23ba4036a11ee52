"""The local platform under concurrency (issue 27): wrk at 1 and 16 connections, route by route.

    python3 benchmarks/bench_concurrency.py [--scale large] [--duration 10] [--rounds 3] [--threads N]
                                            [--before REF]

Each round runs every scenario against a real ``blockkit emulator start`` and, for the cached
reads, against the baseline: a bare Starlette app whose one async endpoint sends the same bytes,
under the same uvicorn settings (same HTTP parser, same socket options), started the same way. Rounds alternate the
two, and ratios are the medians of the per-round ratios, so a noisy machine moves both sides.

``--before REF`` (a git commit, e.g. 0f86161) also runs every scenario against that version of
blockkit, from a temporary git worktree, in the same rounds (before, then after, each round), and
prints the two side by side: the "before and after, measured in the same run" of the issue.

Targets:
- every route, 16 connections: p99 <= 50 ms, and req/s >= its own req/s at 1 connection;
- /images?limit=100 (never cached), 16 connections: >= 3x the version before (--before; without
  it, the 160 req/s issue 27 measured on 0f86161 on another machine);
- token (client_credentials), 16 connections: p99 <= 25 ms;
- an uncached /models sort on the large seed, 1 connection: p50 <= 5 ms (every request of the
  scenario is a page no request asked before: the sort, period and type rotate and a counter
  parameter keeps the page cache out);
- cached reads, 16 connections: >= 0.8x the bare app;
- a fresh --scale large start, once its seed template exists: ready in <= 2 s.

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
from dataclasses import dataclass, field
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


REGISTER = textwrap.dedent('''
    import json, sys
    from pathlib import Path
    from blockkit.emulator.store.clock import Clock
    from blockkit.emulator.services.oauth.clients import register_client
    from blockkit.emulator.store import Store
    with Store.open(Path(sys.argv[1]), check=False) as store:
        clock = Clock(store)
        print(json.dumps([register_client(store, clock, name=f"bench {n}", redirect_uris=["http://127.0.0.1:9/cb"],
                                          confidential=True).as_dict() for n in range(int(sys.argv[2]))]))
''')


def register_clients(data: Path, count: int, env: dict[str, str]) -> list[dict[str, Any]]:
    """Confidential clients, registered straight into the running emulator's store (as 'client add' does),
    by the blockkit that serves it (``env`` names its source)."""
    out = subprocess.run([sys.executable, "-c", REGISTER, str(data), str(count)], env=env, capture_output=True,
                         text=True, check=True).stdout
    return list(json.loads(out))


def in_turn_lua(folder: Path, name: str, values: list[str], request: str, spread: int) -> Path:
    """A wrk script whose ``request()`` (Lua, reading ``values[(i % #values) + 1]`` as ``v`` and a counter
    ``i``) walks the values in turn, each wrk thread from its own offset (``spread`` apart)."""
    listed = ",\n".join(json.dumps(value) for value in values)
    path = folder / f"{name}.lua"
    path.write_text(textwrap.dedent('''
        local values = {
        %s
        }
        local n = 0
        function setup(thread) n = n + 1; thread:set("offset", n * %d) end
        function init(args) i = offset or 0 end
        function request()
          i = i + 1
          local v = values[(i %% #values) + 1]
          return %s
        end
    ''') % (listed, spread, request))
    return path


def rotating_lua(folder: Path, bodies: list[str]) -> Path:
    """A wrk script that POSTs the form bodies in turn."""
    return in_turn_lua(folder, "rotating", bodies, 'wrk.format("POST", nil, {["Content-Type"] = '
                       '"application/x-www-form-urlencoded"}, v)', 97)


SORTS = ("Highest Rated", "Most Downloaded", "Most Liked", "Most Discussed", "Most Collected", "Most Images",
         "Newest", "Oldest")
PERIODS = ("AllTime", "Year", "Month", "Week", "Day")
TYPES = ("", "Checkpoint", "LORA", "TextualInversion")


def sort_rotation_lua(folder: Path, base_path: str) -> Path:
    """GET /models pages that no request asked before: sorts, periods and types in turn, and a counter
    parameter (unknown keys are ignored, as the platform's schema strips them) so no page repeats."""
    paths = []
    for sort in SORTS:
        for period in PERIODS:
            for kind in TYPES:
                query = {"limit": "20", "sort": sort, "period": period, **({"types": kind} if kind else {})}
                paths.append(base_path + "?" + urllib.parse.urlencode(query, quote_via=urllib.parse.quote))
    return in_turn_lua(folder, "sorts", paths, 'wrk.format("GET", v .. "&bench=" .. i)', 1000000)


BARE_APP = textwrap.dedent('''
    import sys, uvicorn
    from starlette.applications import Starlette
    from starlette.responses import Response
    from starlette.routing import Route
    body = open(sys.argv[1], "rb").read()
    async def answer(request):  # on the event loop: the least work Starlette can do to send the bytes
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


@dataclass
class Side:
    """One blockkit under test: its source tree, its running emulator and its scenarios."""

    label: str
    env: dict[str, str]
    run: Any = None
    scenarios: list[tuple[str, str, Path | None, bool]] = field(default_factory=list)


def worktree_of(ref: str, where: Path) -> Path:
    """A detached git worktree of ``ref`` (this repository's), for the --before side."""
    repo = Path(__file__).resolve().parent.parent
    subprocess.run(["git", "-C", str(repo), "worktree", "add", "--detach", "--force", str(where), ref],
                   check=True, capture_output=True)
    return where


def bring_up(side: Side, work: Path, scale: str) -> None:
    helptext = subprocess.run([sys.executable, "-m", "blockkit", "emulator", "start", "--help"], capture_output=True,
                              text=True, env=side.env).stdout
    keyless = ["--no-access-key"] if "--no-access-key" in helptext else []  # older blockkits ask no key
    data = work / f"data-{side.label}"
    side.run = start(work, "--scale", scale, *keyless, "--data", str(data), env=side.env, timeout=1800)
    print(f"{side.label}: emulator ready in {side.run.seconds_to_ready:.2f} s (scale {scale}) [{load()}]")
    info = side.run.info
    base, auth = info["base_url"], info["auth_url"]
    folder = work / side.label
    folder.mkdir()
    clients = register_clients(data, CLIENTS, side.env)
    forms = [urllib.parse.urlencode({"grant_type": "client_credentials", "client_id": c["client_id"],
                                     "client_secret": c["client_secret"]}) for c in clients]
    token = json.loads(fetch(f"{auth}/api/auth/oauth/token", forms[0].encode(),
                             {"Content-Type": "application/x-www-form-urlencoded"}))["access_token"]
    model_id = json.loads(fetch(f"{base}/api/v1/models?limit=1"))["items"][0]["id"]
    side.scenarios = [
        # (name, url, wrk script, cached read compared with the bare app)
        ("models?limit=100 (cached)", f"{base}/api/v1/models?limit=100", None, True),
        ("models/{id} (cached)", f"{base}/api/v1/models/{model_id}", None, True),
        ("images?limit=100 (uncached)", f"{base}/api/v1/images?limit=100", None, False),
        ("models, a new sort page each (uncached)", f"{base}/api/v1/models",
         sort_rotation_lua(folder, "/api/v1/models"), False),
        # many clients in turn: the provider allows each 20 token requests a minute (as the platform does)
        ("token client_credentials", f"{auth}/api/auth/oauth/token", rotating_lua(folder, forms), False),
        ("userinfo", f"{auth}/api/auth/oauth/userinfo",
         write_lua(folder, "userinfo", "GET", None, {"Authorization": f"Bearer {token}"}), False),
    ]


def fresh_start_seconds(env: dict[str, str], work: Path, scale: str) -> tuple[float, float]:
    """(first, second) start-up times of a fresh data directory: the first may build the seed template,
    the second copies it."""
    times = []
    for n in range(2):
        run = start(work, "--scale", scale, "--no-access-key", "--data", str(work / f"fresh-{n}"), env=env,
                    timeout=1800)
        times.append(run.seconds_to_ready)
        run.stop()
    return times[0], times[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", choices=("small", "large"), default="large")
    parser.add_argument("--duration", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None, help="BLOCKKIT_EMULATOR_THREADS for the emulator")
    parser.add_argument("--before", metavar="REF", help="also measure this git commit, in the same rounds")
    args = parser.parse_args()
    env = _env()
    if args.threads is not None:
        env["BLOCKKIT_EMULATOR_THREADS"] = str(args.threads)
    work = Path(tempfile.mkdtemp(prefix="bench-concurrency-"))
    sides = [Side("after", env)]
    tree: Path | None = None
    if args.before:
        tree = worktree_of(args.before, work / "before-tree")
        before_env = dict(env, PYTHONPATH=str(tree / "src"))
        sides.insert(0, Side(f"before ({args.before})", before_env))
    try:
        first, second = fresh_start_seconds(env, work, args.scale)
        print(f"a fresh --scale {args.scale} start: {first:.2f} s, then {second:.2f} s with its template [{load()}]")
        for side in sides:
            bring_up(side, work, args.scale)
        results: dict[tuple[str, str, int], list[dict[str, Any]]] = {}
        ratios: dict[str, list[float]] = {}
        for round_number in range(args.rounds):
            for side in sides:
                for name, url, script, cached in side.scenarios:
                    for connections in (1, 16):
                        figures = wrk(url, connections=connections, duration=args.duration, script=script,
                                      threads=1 if connections == 1 else 2)
                        figures["load"] = os.getloadavg()[0]
                        results.setdefault((side.label, name, connections), []).append(figures)
                    if cached and side is sides[-1]:
                        body = fetch(url)
                        bare, bare_url = bare_app(work, body)
                        try:
                            baseline = wrk(f"{bare_url}/x", connections=16, duration=args.duration)
                        finally:
                            bare.terminate()
                            bare.wait(10)
                        mine = results[(side.label, name, 16)][-1]["requests_per_s"]
                        ratios.setdefault(name, []).append(mine / baseline["requests_per_s"])
            print(f"round {round_number + 1} of {args.rounds} done [{load()}]")
        print()

        def med(label: str, name: str, connections: int, key: str) -> float:
            return statistics.median(r.get(key, 0.0) for r in results[(label, name, connections)])

        print(f"{'route':42} {'conn':>4} " + "".join(f"{side.label[:26]:>28}" for side in sides) + "  load")
        print(f"{'':42} {'':>4} " + "".join(f"{'req/s  p50 ms  p99 ms':>28}" for _ in sides))
        for name, _url, _script, _cached in sides[-1].scenarios:
            for connections in (1, 16):
                cells = []
                loads = []
                for side in sides:
                    runs = results[(side.label, name, connections)]
                    errors = sum(r.get("non_2xx", 0) for r in runs)
                    cells.append(f"{med(side.label, name, connections, 'requests_per_s'):>9.0f}"
                                 f"{med(side.label, name, connections, 'p50_ms'):>8.2f}"
                                 f"{med(side.label, name, connections, 'p99_ms'):>8.2f}"
                                 + (f" ({errors} non-2xx)" if errors else "   "))
                    loads.append(statistics.median(r["load"] for r in runs))
                print(f"{name:42} {connections:>4} " + "".join(f"{cell:>28}" for cell in cells)
                      + "  " + "/".join(f"{value:.2f}" for value in loads))
        print()
        after = sides[-1].label
        verdicts = []
        for name, _url, _script, _cached in sides[-1].scenarios:
            verdicts.append((f"{name}: p99 at 16 <= 50 ms", med(after, name, 16, "p99_ms") <= 50,
                             f"{med(after, name, 16, 'p99_ms'):.1f} ms"))
            verdicts.append((f"{name}: req/s at 16 >= at 1", med(after, name, 16, "requests_per_s") >=
                             med(after, name, 1, "requests_per_s"),
                             f"{med(after, name, 16, 'requests_per_s'):.0f} vs {med(after, name, 1, 'requests_per_s'):.0f}"))
        images_name = "images?limit=100 (uncached)"
        images = med(after, images_name, 16, "requests_per_s")
        if len(sides) > 1:
            before = med(sides[0].label, images_name, 16, "requests_per_s")
            verdicts.append((f"images at 16 >= 3x {sides[0].label}'s {before:.0f} req/s (same run)",
                             images >= 3 * before, f"{images:.0f} req/s = {images / before:.1f}x"))
        else:
            verdicts.append((f"images at 16 >= 3x issue 27's {IMAGES_BEFORE_RPS:.0f} req/s (another machine)",
                             images >= 3 * IMAGES_BEFORE_RPS, f"{images:.0f} req/s = {images / IMAGES_BEFORE_RPS:.1f}x"))
        token_p99 = med(after, "token client_credentials", 16, "p99_ms")
        verdicts.append(("token at 16: p99 <= 25 ms", token_p99 <= 25, f"{token_p99:.1f} ms"))
        sort_p50 = med(after, "models, a new sort page each (uncached)", 1, "p50_ms")
        verdicts.append((f"uncached sort page at 1 ({args.scale} seed): p50 <= 5 ms", sort_p50 <= 5,
                         f"{sort_p50:.2f} ms"))
        for name, values in ratios.items():
            ratio = statistics.median(values)
            verdicts.append((f"{name} at 16 vs the bare app >= 0.8x", ratio >= 0.8,
                             f"{ratio:.2f}x (rounds: {', '.join(f'{v:.2f}' for v in values)})"))
        verdicts.append((f"a fresh --scale {args.scale} start with its template: <= 2 s", second <= 2,
                         f"{second:.2f} s"))
        for label, ok, figure in verdicts:
            print(f"{'met    ' if ok else 'NOT met'}  {label}: {figure}  [{load()}]")
    finally:
        for side in sides:
            if side.run is not None:
                side.run.stop()
        if tree is not None:
            subprocess.run(["git", "-C", str(Path(__file__).resolve().parent.parent), "worktree", "remove", "--force",
                            str(tree)], capture_output=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
