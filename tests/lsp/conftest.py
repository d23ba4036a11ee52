"""The lsp tests drive `blockkit lsp` over stdio with pytest-lsp; their helpers live in lsp_helpers.py."""
