"""What ``blockkit lint`` adds to validation, apart from the rules themselves.

- ``config``: the lint settings of ``blockkit.toml`` / ``[tool.blockkit]``
  (select, ignore, per-file-ignores, severity, exceptions);
- ``baseline``: the recorded findings a legacy manifest adopts the tool with;
- ``policy``: applies config and baseline to the reports and reports entries
  that no longer match anything.

The lint rules are in ``blockkit.rules.lint``; the block project they read (index.html,
package.json, lockfiles, the block's own source, comments stripped) is ``blockkit.project``.
"""
