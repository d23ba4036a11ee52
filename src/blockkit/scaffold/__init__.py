"""``blockkit new``: scaffold a block from answers.

Flow, one module per step: ``questions`` (flags, prompts, defaults -> ``options.Answers``)
-> ``manifest`` + ``render`` (answers -> files) -> ``writer`` (files -> disk, keeping
what the developer changed) -> ``config`` (blockkit.toml) -> ``selfcheck``.
"""
