"""Bundles: the zip a block is submitted as.

- ``check``: ``check_bundle``, the platform's verdict on a zip (caps, names, manifest,
  credentials), with the file summary and manifest diff it computes;
- ``package``: ``build_package``, the source zip of a block folder, built as the
  platform's CLI builds it;
- ``secrets``: the credential scan;
- ``summary``: the file summary and manifest diff;
- ``rules``: the bundle rules BK501-BK599 (docs, severities).
"""

from __future__ import annotations

from blockkit.bundle.check import BundleReport, FileMeta, check_bundle

__all__ = ["BundleReport", "FileMeta", "check_bundle"]
