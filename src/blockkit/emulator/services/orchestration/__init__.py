"""The orchestration service's rules: workflows from submit to settle, and what they use.

- ``workflows.py``: submit (pricing, the Buzz charge, the row and its events), read, settle, cancel
- ``workflow_edits.py``: PATCH/PUT of a workflow (status, tags, metadata)
- ``funds.py``: the orchestrator's funds (CreateFund, balances)
- ``upscaler.py``: the image upscaler's jobs
- ``imaging.py`` and ``video.py``: procedural images and real MP4s for outputs and seed media
- ``media.py``: seed media and stored blobs (drawing, caching, files); served by ``http/control/media.py``
- ``callbacks.py``: the callback outbox and the background worker that delivers and settles
"""
