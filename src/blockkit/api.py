"""The library calls: validate, validate_file, load_manifest."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional, Union

from blockkit.context import Context
from blockkit.engine import VALIDATION_LAYERS, check, read_path, source_for
from blockkit.platform import LIMITS, MANIFEST_FILENAME
from blockkit.report import Report
from blockkit.source import Source

if TYPE_CHECKING:
    from blockkit.models import Manifest

PathLike = Union[str, "os.PathLike[str]"]


def validate(document_or_text: Any, context: Optional[Context] = None, *, path: str = "<string>") -> Report:
    """Validate a manifest given as a parsed document, JSON text or bytes."""
    if isinstance(document_or_text, (bytearray, memoryview)):
        document_or_text = bytes(document_or_text)
    try:
        source = source_for(document_or_text, path)
    except RecursionError:
        # Too deep for json.dumps to serialise: as a file it would be BK004, so report that.
        source = Source(path, "", None, [("BK004", f"nesting deeper than {LIMITS.nesting_max} levels",
                                          "flatten the structure; no real manifest nests this deep", 0, 0)])
    return Report(files=[check(source, context, layers=VALIDATION_LAYERS)])


def resolve_manifest_path(path: PathLike) -> Path:
    """A manifest file, or a directory holding block.manifest.json."""
    candidate = Path(path)
    if candidate.is_dir():
        return candidate / MANIFEST_FILENAME
    return candidate


def validate_file(path: PathLike, context: Optional[Context] = None) -> Report:
    """Validate the manifest at ``path`` (a file, or a directory holding block.manifest.json).

    Raises ``blockkit.UnreadableFile`` when the path cannot be read at all.
    """
    manifest_path = resolve_manifest_path(path)
    return Report(files=[check(read_path(manifest_path), context, layers=VALIDATION_LAYERS)])


def load_manifest(path: PathLike, context: Optional[Context] = None) -> "Manifest":
    """Load a valid manifest as a ``Manifest`` model in its normalised (stored) form.

    Raises ``blockkit.InvalidManifestError`` (carrying the Report) when the platform would refuse it.
    """
    from blockkit.errors import InvalidManifestError
    from blockkit.models import Manifest

    report = validate_file(path, context)
    file = report.files[0]
    if not file.ok():
        raise InvalidManifestError(report)
    return Manifest.from_document(file.data)
