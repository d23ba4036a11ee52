"""What ``blockkit lint`` adds to validation, apart from the rules themselves.

- ``project``: the block project next to a manifest (index.html, package.json,
  lockfiles, the block's own source), read once per check and only on demand;
- ``code``: reading JavaScript and HTML source the way the lint rules need it
  (comments removed, line numbers kept);
- ``config``: the lint settings of ``blockkit.toml`` / ``[tool.blockkit]``
  (select, ignore, per-file-ignores, severity, exceptions);
- ``baseline``: the recorded findings a legacy manifest adopts the tool with;
- ``policy``: applies config and baseline to the reports and reports entries
  that no longer match anything.

The lint rules are in ``blockkit.rules.lint``.
"""
