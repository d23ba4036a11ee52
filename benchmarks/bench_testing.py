"""Testing against the local platform: reset time, `emulator exec -- true`, and the core install.

Targets (issue 23): reset <= 50 ms on the small seed; `exec -- true` <= 1.5 s end to end on the
small seed; the core install <= 1.5x the size of check-jsonschema's (the baseline, installed the
same way in the same run).

    python3 benchmarks/bench_testing.py [--resets 50] [--execs 5] [--no-install]

Prints each figure with its target and the machine's load average beside it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def load() -> str:
    return "load %.2f %.2f %.2f" % os.getloadavg()


def bench_reset(count: int) -> None:
    from blockkit.emulator.testing import running

    with running(seed=1, scale="small") as platform:
        user = platform.users()[0]
        times = []
        for _ in range(count):
            platform.set_balance(user.username, "blue", 1)  # something to undo
            start = time.perf_counter()
            platform.reset()
            times.append((time.perf_counter() - start) * 1000)
    times.sort()
    p50 = statistics.median(times)
    p95 = times[int(len(times) * 0.95) - 1]
    print(f"reset (small seed, {count} runs): p50 {p50:.1f} ms, p95 {p95:.1f} ms, max {times[-1]:.1f} ms"
          f"  target p50 <= 50 ms: {'met' if p50 <= 50 else 'NOT met'}  [{load()}]")


def bench_exec(count: int) -> None:
    blockkit = shutil.which("blockkit") or f"{sys.executable} -m blockkit"
    times = []
    for _ in range(count):
        start = time.perf_counter()
        subprocess.run([*blockkit.split(), "emulator", "exec", "--", "true"], check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    p50 = statistics.median(times)
    print(f"exec -- true ({count} runs): median {p50:.2f} s, min {min(times):.2f} s, max {max(times):.2f} s"
          f"  target <= 1.5 s: {'met' if p50 <= 1.5 else 'NOT met'}  [{load()}]")


def tree_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def install_into_fresh_venv(requirement: str, root: Path) -> tuple[float, int, int]:
    """(seconds, bytes of site-packages beyond a bare venv, number of distributions) for one install."""
    env_dir = root / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    bare = tree_size(site)
    bare_count = len(list(site.glob("*.dist-info")))
    start = time.perf_counter()
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-cache-dir",
                    requirement], check=True, capture_output=True)
    seconds = time.perf_counter() - start
    return seconds, tree_size(site) - bare, len(list(site.glob("*.dist-info"))) - bare_count


def bench_install() -> None:
    with tempfile.TemporaryDirectory(prefix="bench-install-") as tmp:
        tmp_path = Path(tmp)
        wheels = tmp_path / "wheels"
        subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                        str(wheels), str(REPO)], check=True, capture_output=True)
        wheel = next(wheels.glob("blockkit-*.whl"))
        (tmp_path / "core").mkdir()
        (tmp_path / "baseline").mkdir()
        (tmp_path / "server").mkdir()
        core = install_into_fresh_venv(str(wheel), tmp_path / "core")
        baseline = install_into_fresh_venv("check-jsonschema", tmp_path / "baseline")
        full = install_into_fresh_venv(f"{wheel}[server]", tmp_path / "server")
    mb = 1024 * 1024
    ratio = core[1] / baseline[1]
    print(f"check-jsonschema (baseline): {baseline[1] / mb:.1f} MB in {baseline[2]} packages, {baseline[0]:.1f} s"
          f"  [{load()}]")
    print(f"blockkit core:               {core[1] / mb:.1f} MB in {core[2]} packages, {core[0]:.1f} s"
          f"  ratio {ratio:.2f}x  target <= 1.5x: {'met' if ratio <= 1.5 else 'NOT met'}")
    print(f"blockkit[server]:            {full[1] / mb:.1f} MB in {full[2]} packages, {full[0]:.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resets", type=int, default=50)
    parser.add_argument("--execs", type=int, default=5)
    parser.add_argument("--no-install", action="store_true", help="skip the install measurement (needs PyPI)")
    args = parser.parse_args()
    bench_reset(args.resets)
    bench_exec(args.execs)
    if not args.no_install:
        bench_install()


if __name__ == "__main__":
    main()
