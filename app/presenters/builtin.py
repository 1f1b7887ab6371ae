"""Built-in presenters for the tools seen in dsh logs (and their common variants).

Argument names follow the fixtures (``file_path``, ``old_string``/``new_string``,
``command``/``description``, ``todos[{content,status}]``, ``description``/``prompt`` …) and
tolerate the usual variants of other harnesses (``path``, ``old_str``, ``cmd``, ``queries`` …).
Result text conventions parsed (all seen in fixtures):

* shell output: ``stdout`` then ``[stderr]\\n<stderr>``, then trailer lines such as
  ``[exit code: 1]``, ``[sandbox: …]``, ``[status: killed, …]``; ``[shell exited: code 9]``;
* read: ``<path>…</path>\\n<type>file|image</type>\\n<content>\\n…\\n</content>`` with
  ``meta {path, offset, lines[{number,text}], totalLines}``;
* write/edit: ``meta {diffs: [{path, oldText, newText}]}``;
* web_fetch: ``Fetched <url> (HTTP 200)\\n\\n<body>`` with ``meta {url, statusCode, truncated}``;
* glob: ``meta {shape: "paths", paths, truncated, total}``.
"""
from __future__ import annotations

# Each module registers its tools when imported (one module per family of tools).
from . import shell, files, web, tasks, generic  # noqa: F401
