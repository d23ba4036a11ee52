"""Reading a block's project: its files, as the project-aware lint rules see them.

Machinery, not rules: it knows nothing of findings. ``scan.py`` finds the block's root, reads its
``package.json`` and config files and scans its source once (``Project``); ``code.py`` strips
comments from JS/TS/HTML so a scan matches only code; ``html.py`` finds the page's root element.
The rules that read a project are ``rules/lint/project.py`` (which also keeps one ``Project``
per check, ``project_of``); the lint settings (config, baseline, policy) are ``lint/``.
"""
