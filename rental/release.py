"""The release a process runs, for the shared cache's keys (settings.CACHES VERSION): what one
release stored is never read by another, whose models, templates or messages may differ."""

import hashlib
from pathlib import Path

# What a stored answer or value depends on: code, templates, translations.
_SUFFIXES = {".py", ".html", ".txt", ".mo"}
_SKIPPED = {".venv", "node_modules", "var", "tests", "bench", ".git", "staticfiles", "docs"}


def code_release(base_dir: Path) -> str:
    """A digest of the project's code, templates and compiled messages (RELEASE, set by the
    deploy, names it instead)."""
    digest = hashlib.sha256()
    for path in sorted(base_dir.rglob("*")):
        relative = path.relative_to(base_dir)
        if relative.parts[0] in _SKIPPED or path.suffix not in _SUFFIXES or not path.is_file():
            continue
        digest.update(str(relative).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]
