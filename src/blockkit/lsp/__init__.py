"""``blockkit lsp``: a Language Server Protocol server for block.manifest.json.

- ``positions``: character offsets <-> LSP positions (UTF-16 by default, UTF-8 and UTF-32 when
  the client asks), with lines broken where LSP breaks them;
- ``checking``: one document checked exactly as ``blockkit lint - --stdin-filename PATH`` checks it;
- ``cursor``: where a position is in a (possibly broken) JSON text: key or value, and its pointer;
- ``knowledge``: what hover and completion say (the schema, the platform's tables, the rule docs);
- ``server``: the pygls server that ties them to the protocol.

Only ``server`` imports pygls and lsprotocol; the rest is plain Python, tested on its own.
"""
