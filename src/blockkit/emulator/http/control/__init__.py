"""``/__emulator`` on the catalogue origin: the emulator's own controls and the files it serves.

- ``clock.py``: ``/__emulator/clock`` (GET the time, POST an advance)
- ``submissions.py``: ``/__emulator/submissions/{id}/approve|reject`` (the moderator's review)
- ``media.py``: ``/__emulator/media/<path>`` and the orchestration origin's ``/__emulator/blobs/<name>``
"""
