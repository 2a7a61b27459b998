"""An erasure leaves no copy of the text in the SQLite database file or its write-ahead log.

A real installation in a folder of its own (migrated, written through the edit service,
erased with `manage.py erase`), its files read byte by byte before and after.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SECRET = f"zebra-quartz-{uuid.uuid4().hex}"

WRITE = f"""
from stores.models import Agent
from stores.engine.actors import Actor
from stores.services import record_create, record_edit
me = Actor.maintainer("proof")
agent = Agent.objects.create(name="proof")
kept = record_create(surface_key="memory", agent=agent, actor=me, values={{"content": "Tea."}})
gone = record_create(
    surface_key="memory", agent=agent, actor=me, values={{"content": "Code {SECRET}."}}
).record
record_edit(
    surface_key="memory", agent=agent, ref=gone.pk, actor=me,
    old_string="{SECRET}", new_string="rotated",
)
record_create(
    surface_key="memory", agent=agent, actor=me, values={{"content": "Again {SECRET} here."}}
)
"""


def manage(folder: Path, *args: str) -> str:
    env = {key: value for key, value in os.environ.items() if key != "MEMORYADMIN_DATABASE_URL"}
    env |= {"MEMORYADMIN_DATA_DIR": str(folder), "DJANGO_SETTINGS_MODULE": "memoryadmin.settings"}
    done = subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def file_bytes(folder: Path) -> bytes:
    return b"".join(path.read_bytes() for path in sorted(folder.glob("memoryadmin.sqlite3*")))


@pytest.mark.database_free
def test_the_database_file_holds_no_copy_of_erased_text(tmp_path):
    manage(tmp_path, "migrate", "-v0")
    manage(tmp_path, "shell", "-c", WRITE)
    assert SECRET.encode() in file_bytes(tmp_path)

    manage(tmp_path, "erase", "--agent", "proof", "--text", SECRET, "--reason", "proof")

    held = file_bytes(tmp_path)
    assert SECRET.encode() not in held
    assert SECRET.rsplit("-", 1)[1].encode() not in held
    assert b"Tea." in held
