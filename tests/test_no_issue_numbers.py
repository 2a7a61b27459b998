"""Code says why, not which ticket: no comment, docstring or string of the source cites an
issue by number (or one of its numbered items), where a reader cannot follow it."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE_DIRS = ("memoryadmin", "stores", "tests", "bench", "bin", "templates", "static", "docs")
SOURCE_FILES = (
    "pyproject.toml",
    "manage.py",
    "gunicorn.conf.py",
    "Dockerfile",
    "docker-compose.yml",
    ".env.example",
)
SUFFIXES = {".py", ".toml", ".html", ".js", ".css", ".yml", ".yaml", ".sh", ".cfg", ".md", ""}
# "issue 12", "issues 3 and 9", "(#16)", "item 4", "items 1-5"
CITATION = re.compile(r"\bissues? #?\d+|\(#\d+\)|\bitems? \d+\b(?! (of|and)\b)", re.IGNORECASE)


def source_files() -> list[Path]:
    found = [ROOT / name for name in SOURCE_FILES]
    for directory in SOURCE_DIRS:
        found += [
            path
            for path in (ROOT / directory).rglob("*")
            if path.is_file()
            and path.suffix in SUFFIXES
            and ".min." not in path.name
            and "__pycache__" not in path.parts
        ]
    return [path for path in found if path.exists()]


def test_no_source_file_cites_an_issue_number():
    files = source_files()
    citations = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in files
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), start=1)
        if CITATION.search(line) and path != Path(__file__)
    ]

    assert len(files) > 200
    assert citations == []
