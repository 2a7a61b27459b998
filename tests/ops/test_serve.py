"""`bin/serve` listens on loopback only unless told explicitly: the embedded default speaks
plain HTTP. The real script runs, with a stub in place of bin/setup: nothing is installed
and no server starts, whatever the script decides."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SETUP_REACHED = 97


def serve(tmp_path: Path, address: str, **env: str) -> subprocess.CompletedProcess[str]:
    """Run a copy of bin/serve whose bin/setup is a stub that exits at once."""
    (tmp_path / "bin").mkdir(exist_ok=True)
    shutil.copy(ROOT / "bin" / "serve", tmp_path / "bin" / "serve")
    stub = tmp_path / "bin" / "setup"
    stub.write_text(f"#!/usr/bin/env bash\nexit {SETUP_REACHED}\n")
    stub.chmod(0o755)
    clean = {
        name: value for name, value in os.environ.items() if not name.startswith("MEMORYADMIN_")
    }
    return subprocess.run(
        ["bash", str(tmp_path / "bin" / "serve"), address],
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=30,
    )


@pytest.mark.parametrize(
    "address", ["0.0.0.0:58105", "192.168.1.20:58105", "[::]:58105", "memory.example.com:58105"]
)
def test_serve_refuses_a_public_address_and_names_the_opt_in(tmp_path, address):
    done = serve(tmp_path, address)

    assert done.returncode == 2
    assert "refusing to listen" in done.stderr
    assert "MEMORYADMIN_ALLOW_PUBLIC_BIND=true" in done.stderr


@pytest.mark.parametrize("address", ["127.0.0.1:58105", "localhost:58105", "[::1]:58105"])
def test_serve_goes_on_for_a_loopback_address(tmp_path, address):
    assert serve(tmp_path, address).returncode == SETUP_REACHED


def test_serve_goes_on_for_a_public_address_when_told_explicitly(tmp_path):
    done = serve(tmp_path, "0.0.0.0:58105", MEMORYADMIN_ALLOW_PUBLIC_BIND="true")

    assert done.returncode == SETUP_REACHED
    assert "reachable from other machines" in done.stderr
