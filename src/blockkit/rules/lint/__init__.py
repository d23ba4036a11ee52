"""Lint rules (BK3xx): mistakes the platform accepts that fail later.

Advice, never the platform's verdict: every rule here is a warning or a
notice by default, and only these rules can be selected, ignored, re-graded,
excepted or baselined (see ``blockkit.lint.config``). The project-aware rules
read the block's files through ``blockkit.project.scan`` and stay silent when
lint runs on a manifest without its project.
"""
