"""16 clients of mixed reads and writes against a real emulator lose no acknowledged write (issue 27).

A real ``blockkit emulator start`` (small seed, ephemeral ports, an access key) serves 16
clients at once, each a seeded user on its own connections running a fixed list of
operations (``mixed_workload.plan``): catalogue reads checked against the OpenAPI document,
OAuth tokens (client_credentials and authorization codes), userinfo, app-storage reads and
writes, shared-storage appends and votes, goods purchases and workflow submissions (plain, retried with one key, sent twice at
once with one key) and cancels. ``mixed_workload.verify`` then checks from the server's own
view that every acknowledged write is there exactly once and nothing else is, that retries
with one key were applied once, that no Buzz was made or lost, and that nothing answered 5xx
or dropped a connection. Timings are ``benchmarks/bench_mixed.py``'s, never asserted here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
from contract import response_problems
from mixed_workload import KINDS, acknowledged, prepare, run, verify

CLIENTS = 16
OPERATIONS = 40  # per client: 640 in all, each kind of KINDS many times over
ACCESS_KEY = "mixed-workload-access-key-0123"


def conforms(response: httpx.Response) -> list[str]:
    return response_problems(response)


def test_sixteen_clients_of_mixed_reads_and_writes_lose_and_double_nothing(start_emulator: Any, tmp_path: Path
                                                                          ) -> None:
    started = start_emulator("--access-key", ACCESS_KEY, "--data", str(tmp_path / "data"))
    assert started.info["access_key"] == ACCESS_KEY
    world = prepare(started.info, CLIENTS, OPERATIONS)
    told, _wall = run(world, CLIENTS, OPERATIONS, conform=conforms)
    problems = verify(world, told)
    assert problems == {}, "\n".join(f"{check}: {found[:8]}" for check, found in problems.items())
    # The run did what it says: every kind ran, and every family of writes was acknowledged many times.
    ran = {kind for record in told for kind, _ in record.timings}
    assert ran == set(KINDS), set(KINDS) - ran
    counts = acknowledged(told)
    assert all(n >= 10 for n in counts.values()), counts
    assert started.process.poll() is None  # the server is still up
