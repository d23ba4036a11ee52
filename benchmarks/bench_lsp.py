"""`blockkit lsp` speed and memory, measured from a real LSP client over stdio.

Prints, from one run on this machine (with the load average, since the machine is shared):
  - server start to first diagnostics: from spawning `python -m blockkit lsp` through
    initialize and didOpen to the first publishDiagnostics (median of --starts runs;
    target <= 1 s);
  - diagnostics after a change: didChange (one character of the version, the manifest
    staying valid) to its publishDiagnostics, wall time, p50 and p90 over --changes edits
    of a typical real manifest (the median-sized one of /work/shared/corpus/real, or
    examples/hello-block) named block.manifest.json, with --project-files source files
    beside it for lint's project rules (target p50 <= 30 ms, warm);
  - the server's resident memory (VmRSS) over --edits edits, sampled every tenth of the run
    (target: flat);
  - the same check in-process, for reference: check_text alone, and with the config read
    from a cached ContextFlags instead of again (what re-reading the config per check costs).

Usage: python benchmarks/bench_lsp.py [--starts 5] [--changes 300] [--edits 10000] [--project-files 100]
Needs the lsp and test extras (pygls, lsprotocol, pytest-lsp).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types
from pytest_lsp import ClientServerConfig

REPO = Path(__file__).resolve().parents[1]
PUBLISH = types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS


def typical_manifest() -> Path:
    real = REPO.parent / "shared" / "corpus" / "real"
    candidates = sorted(real.glob("**/*.json"), key=lambda p: p.stat().st_size) if real.is_dir() else []
    candidates = [p for p in candidates if b'"version"' in p.read_bytes()]
    return candidates[len(candidates) // 2] if candidates else REPO / "examples" / "hello-block" / "block.manifest.json"


def server_config() -> ClientServerConfig:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO / "src") + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return ClientServerConfig(server_command=[sys.executable, "-m", "blockkit", "lsp"], server_env=env)


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def next_publish(client) -> "asyncio.Future[object]":  # type: ignore[no-untyped-def]
    return asyncio.wrap_future(client.protocol.wait_for_notification(PUBLISH))


async def start_to_first_diagnostics(path: Path, text: str) -> float:
    started = time.perf_counter()
    client = await server_config().start()
    try:
        await client.initialize_session(types.InitializeParams(capabilities=types.ClientCapabilities()))
        waiting = next_publish(client)
        client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(
            uri=path.as_uri(), language_id="json", version=1, text=text)))
        await waiting
        return time.perf_counter() - started
    finally:
        await client.shutdown_session()
        await client.stop()


def version_edit(text: str, version: int) -> types.TextDocumentContentChangePartial:
    """Replace the last digit of the version with another: the manifest stays valid."""
    at = text.index('"version"')
    digit = text.index('"', text.index(":", at) + 1) + 1
    while text[digit + 1].isdigit() or text[digit + 1] == ".":
        digit += 1
    line = text.count("\n", 0, digit)
    column = digit - (text.rfind("\n", 0, digit) + 1)
    start, end = types.Position(line, column), types.Position(line, column + 1)
    return types.TextDocumentContentChangePartial(range=types.Range(start, end), text=str(version % 10))


async def session_run(path: Path, text: str, changes: int, edits: int) -> None:
    client = await server_config().start()
    try:
        await client.initialize_session(types.InitializeParams(capabilities=types.ClientCapabilities()))
        uri = path.as_uri()
        waiting = next_publish(client)
        client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(
            uri=uri, language_id="json", version=1, text=text)))
        await waiting
        pid = client._server.pid
        version = 1
        latencies = []
        for _ in range(changes):
            version += 1
            waiting = next_publish(client)
            started = time.perf_counter()
            client.text_document_did_change(types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(uri=uri, version=version), [version_edit(text, version)]))
            await waiting
            latencies.append((time.perf_counter() - started) * 1000)
        latencies.sort()
        print(f"diagnostics after a change ({len(text)} chars, {changes} edits): "
              f"p50 {statistics.median(latencies):.1f} ms, p90 {latencies[int(len(latencies) * 0.9)]:.1f} ms "
              f"(target p50 <= 30 ms)")

        samples = [(0, rss_kib(pid))]
        step = max(edits // 10, 1)
        for done in range(1, edits + 1):
            version += 1
            client.text_document_did_change(types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(uri=uri, version=version), [version_edit(text, version)]))
            if done % 50 == 0 or done == edits:
                # Keep the server's queue short: a request is answered after every change before it.
                await client.text_document_hover_async(types.HoverParams(
                    types.TextDocumentIdentifier(uri), types.Position(0, 0)))
            if done % step == 0:
                samples.append((done, rss_kib(pid)))
        first, last = samples[1][1] if len(samples) > 1 else samples[0][1], samples[-1][1]
        print(f"server RSS over {edits} edits: " + ", ".join(f"{n}: {kib / 1024:.1f} MiB" for n, kib in samples))
        print(f"  growth after the first tenth: {(last - first) / 1024:+.1f} MiB (target: flat)")
    finally:
        await client.shutdown_session()
        await client.stop()


def in_process(path: Path, text: str, rounds: int) -> None:
    sys.path.insert(0, str(REPO / "src"))
    from blockkit.lsp.checking import Projects, Settings, check_text

    settings = Settings()
    projects = Projects()  # as the server keeps them
    check_text(path, text, settings, projects)
    fresh = []
    for _ in range(rounds):
        started = time.perf_counter()
        check_text(path, text, settings, projects)
        fresh.append((time.perf_counter() - started) * 1000)
    flags = settings.flags()

    class Cached(Settings):
        def flags(self):  # type: ignore[no-untyped-def]
            return flags  # one ContextFlags, which keeps the config it read

    cached = Cached()
    kept = []
    for _ in range(rounds):
        started = time.perf_counter()
        check_text(path, text, cached, projects)
        kept.append((time.perf_counter() - started) * 1000)
    unkept = []
    for _ in range(min(rounds, 20)):
        started = time.perf_counter()
        check_text(path, text, settings)
        unkept.append((time.perf_counter() - started) * 1000)
    print(f"in process, check_text p50: {statistics.median(fresh):.2f} ms with the config read each time, "
          f"{statistics.median(kept):.2f} ms with it cached; {statistics.median(unkept):.2f} ms with the "
          f"project read again each time (what the server avoids)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--starts", type=int, default=5)
    parser.add_argument("--changes", type=int, default=300)
    parser.add_argument("--edits", type=int, default=10000)
    parser.add_argument("--project-files", type=int, default=100,
                        help="source files (12 KB each) in the block project beside the manifest")
    args = parser.parse_args()
    source = typical_manifest()
    text = source.read_text(encoding="utf-8")
    folder = Path(tempfile.mkdtemp(prefix="bench-lsp-"))
    path = folder / "block.manifest.json"
    path.write_text(text, encoding="utf-8")
    # The block's code beside it, for lint's project rules (kept read between checks while unchanged).
    (folder / "src").mkdir()
    (folder / "index.html").write_text('<div id="root"></div><script type="module" src="/src/m0.js"></script>\n')
    for number in range(args.project_files):
        (folder / "src" / f"m{number}.js").write_text(
            "".join(f"export function f{number}_{i}(a) {{ return a + {i}; }}\n" for i in range(300)))
    print(f"manifest: {source} ({len(text)} chars), with {args.project_files} source files beside it; load average {os.getloadavg()[0]:.2f} on "
          f"{os.cpu_count()} cores")
    starts = [asyncio.run(start_to_first_diagnostics(path, text)) for _ in range(args.starts)]
    print(f"server start to first diagnostics: median {statistics.median(starts) * 1000:.0f} ms, "
          f"best {min(starts) * 1000:.0f} ms over {args.starts} starts (target <= 1 s)")
    asyncio.run(session_run(path, text, args.changes, args.edits))
    in_process(path, text, min(args.changes, 200))
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
