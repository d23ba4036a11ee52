"""``blockkit package [DIR]``: the source zip the platform accepts, built and judged as on submission."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import click

from blockkit.commands._common import context_options, echo, emit, fail, use_color

if TYPE_CHECKING:
    from blockkit.bundle.check import BundleReport
    from blockkit.bundle.package import Package


def _size(size: Optional[int]) -> str:
    if size is None:
        return "unknown"
    return f"{size} bytes ({size / (1024 * 1024):.2f} MiB)"


def size_lines(report: "BundleReport", package: "Package") -> list[str]:
    from blockkit.platform import BUNDLE_LIMITS

    return [
        f"Packaged {len(package.files)} file(s)",
        f"  compressed:   {_size(report.compressed_bytes)} (limit {BUNDLE_LIMITS.bundle_bytes_max})",
        f"  decompressed: {_size(report.decompressed_bytes)} (limit {BUNDLE_LIMITS.decompressed_bytes_max})",
        f"  request body: {_size(report.request_body_bytes)} once base64-encoded "
        f"(proxy limit {BUNDLE_LIMITS.proxy_body_bytes_max}, route limit {BUNDLE_LIMITS.route_body_bytes_max})",
    ]


def run_package(directory: str, *, out: Optional[Path], force: bool, fmt: str, strict: bool,
                previous: Optional[Path], context: dict[str, Any]) -> int:
    from blockkit.bundle import check_bundle
    from blockkit.bundle.package import PackageError, package_tree
    from blockkit.commands._common import ContextFlags
    from blockkit.context import ConfigError
    from blockkit.engine import UnreadableFile
    from blockkit.platform import MANIFEST_FILENAME
    from blockkit.render import render

    root = Path(directory)
    if out is not None and (out.exists() or out.is_symlink()) and not force:
        fail(f"{out}: already exists; pass --force to replace it")
    try:
        config = ContextFlags(**context).config_for(root / MANIFEST_FILENAME)
    except ConfigError as exc:
        fail(str(exc))
    try:
        package = package_tree(root)
    except PackageError as exc:
        fail(str(exc))
    prefix = "" if str(root) in ("", ".") else f"{root.as_posix().rstrip('/')}/"
    try:
        report = check_bundle(package.data, config.context, previous=previous, label=str(out or root),
                              prefix=prefix)
    except UnreadableFile as exc:
        fail(f"--previous: {exc}")
    report.strict = strict
    if out is not None:
        from blockkit.fix.atomic import write_file

        try:
            write_file(out, package.data)
        except OSError as exc:
            fail(f"{out}: cannot write: {exc.strerror or exc}")
    color = use_color(False)
    if fmt == "json":
        from blockkit.render.json_ import dumps_indented

        document = report.to_json()
        document["package"] = {
            "dir": str(root),
            "out": str(out) if out is not None else None,
            "files": package.files,
            "skipped": [skip.to_json() for skip in package.skipped],
        }
        emit(dumps_indented(document) + "\n", None)
    else:
        emit(render(report, "text", color=color), None)
        line = package.skipped_line()
        if line is not None:
            echo(line)
        for text in size_lines(report, package):
            echo(text)
        if out is not None:
            echo(f"Wrote {out}")
    return report.exit_code


@click.command("package")
@click.argument("directory", default=".", type=click.Path(path_type=str))
@click.option("--out", "-o", "out", type=click.Path(path_type=Path, dir_okay=False),
              help="Write the zip to FILE (never over an existing file without --force).")
@click.option("--force", is_flag=True, help="Replace an existing --out file.")
@click.option("--previous", type=click.Path(path_type=Path, dir_okay=False),
              help="The bundle of the last approved version: file summary, manifest diff, version guard.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="Output format.")
@click.option("--strict", is_flag=True, help="Warnings fail too.")
@context_options
def command(directory: str, out: Optional[Path], force: bool, previous: Optional[Path], fmt: str, strict: bool,
            **context: Any) -> None:
    """Build the source zip of the block in DIRECTORY (default .) and judge it as the platform would.

    The zip leaves out what the platform's CLI leaves out (.git, node_modules, build
    output and caches, *.zip, .env* files but .env.example, .env.sample and
    .env.production at the root, symbolic links) and is the same bytes for the same
    tree. It is checked against every cap of the platform (bundle, files, per file,
    decompressed, the request body after base64), scanned for credentials, and its
    manifest gets the full verdict of `blockkit validate`. Exit status: 0 no errors,
    1 errors found, 2 the tool could not do its job.
    """
    raise SystemExit(run_package(directory, out=out, force=force, fmt=fmt, strict=strict, previous=previous,
                                 context=context))
