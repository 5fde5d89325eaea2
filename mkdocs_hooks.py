"""Hooks of the documentation build (mkdocs.yml, hooks:).

The API reference is generated from the installed pysched: the
checkout's package is in src/, where neither mkdocstrings nor sys.path
looks, so the compiled core is there to be documented.

The scheduler fact sheets (docs/schedulers/) cite their sources as
bracketed tags: [S1], [S2 @0165d775], [M1].  Two tags side by side,
"[S8][S2 @0165d775]", are Markdown's reference-link syntax, which
mkdocs-autorefs reads as a cross-reference to a target named
"S2 @0165d775" and warns that it does not exist; under --strict that
warning fails the build.  The filter drops those warnings, and only those:
any other unresolved cross-reference still fails it."""
import logging
import re

CITATION = re.compile(
    r"schedulers/[\w.-]+\.md: Could not find cross-reference target '[SM]\d+(?: @[0-9a-f]+)?'$")


class _Citations(logging.Filter):
    def filter(self, record):
        return not CITATION.search(record.getMessage())


def on_config(config):
    # the handlers that count warnings for --strict are on the "mkdocs"
    # logger by now; a handler's filter sees every record that reaches it
    for handler in logging.getLogger("mkdocs").handlers:
        if not any(isinstance(f, _Citations) for f in handler.filters):
            handler.addFilter(_Citations())
    return config

