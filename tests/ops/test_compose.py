"""docker-compose.yml is valid, wired as an operator expects, and its settings documented."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
REQUIRED_VALUES = {
    "POSTGRES_PASSWORD": "0123456789abcdef0123456789abcdef",
    "MEMORYADMIN_SECRET_KEY": "x7Qm2v9LkP0sT4wZrB8nC1dF6gH3jY5uE-aV_oXiN2qRtS7mK9pL4zW8cJ0bD3f",
}
APP_SERVICES = ("migrate", "web", "worker", "beat")

docker_compose = shutil.which("docker-compose")
needs_compose = pytest.mark.skipif(
    docker_compose is None,
    reason="docker-compose is not installed (bin/system-deps installs Debian's package)",
)


def project(tmp_path: Path, env_text: str) -> Path:
    """The compose file beside an .env, as an operator lays them out."""
    shutil.copy(ROOT / "docker-compose.yml", tmp_path / "docker-compose.yml")
    (tmp_path / ".env").write_text(env_text)
    return tmp_path


def filled_example() -> str:
    text = (ROOT / ".env.example").read_text()
    for name, value in REQUIRED_VALUES.items():
        text, count = re.subn(rf"^{name}=$", f"{name}={value}", text, flags=re.MULTILINE)
        assert count == 1, f"{name} is not an empty required line in .env.example"
    return text


def compose(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [docker_compose, *args], cwd=folder, capture_output=True, text=True, timeout=60
    )


@needs_compose
def test_compose_file_is_valid_with_the_example_settings(tmp_path):
    done = compose(project(tmp_path, filled_example()), "config", "-q")

    assert done.returncode == 0, done.stderr


@needs_compose
def test_compose_refuses_to_start_without_a_database_password(tmp_path):
    done = compose(project(tmp_path, (ROOT / ".env.example").read_text()), "config", "-q")

    assert done.returncode != 0
    assert "POSTGRES_PASSWORD" in done.stderr


@needs_compose
def test_services_start_in_order_with_health_checks_and_volumes(tmp_path):
    yaml = pytest.importorskip("yaml")
    done = compose(project(tmp_path, filled_example()), "config")
    assert done.returncode == 0, done.stderr
    config = yaml.safe_load(done.stdout)
    services = config["services"]

    assert set(services) == {"db", "redis", "migrate", "web", "worker", "beat"}
    assert services["db"]["image"].startswith("pgvector/pgvector:")
    for name in ("web", "worker", "beat"):
        depends = services[name]["depends_on"]
        assert depends["migrate"]["condition"] == "service_completed_successfully"
        assert depends["db"]["condition"] == "service_healthy"
        assert depends["redis"]["condition"] == "service_healthy"
    for name in ("db", "redis", "web", "worker"):
        assert services[name]["healthcheck"]["test"], name
    assert "/readyz" in " ".join(services["web"]["healthcheck"]["test"])
    assert services["migrate"]["restart"] == "no"
    assert set(config["volumes"]) == {"pgdata", "redisdata", "appdata"}
    for name in APP_SERVICES:
        environment = services[name]["environment"]
        assert environment["MEMORYADMIN_ENV"] == "production"
        assert environment["MEMORYADMIN_DATABASE_URL"].startswith("postgres://memoryadmin:0123")
        assert environment["MEMORYADMIN_SECRET_KEY"] == REQUIRED_VALUES["MEMORYADMIN_SECRET_KEY"]


def variables_read_by_the_code() -> set[str]:
    settings_text = "\n".join(
        path.read_text() for path in (ROOT / "memoryadmin" / "settings").glob("*.py")
    )
    gunicorn_text = (ROOT / "gunicorn.conf.py").read_text()
    names = {
        f"MEMORYADMIN_{name}"
        for name in re.findall(r'\benv(?:_bool|_list)?\(\s*"([A-Z0-9_]+)"', settings_text)
    }
    names |= {
        f"MEMORYADMIN_{name}" for name in re.findall(r'_setting\(\s*"([A-Z0-9_]+)"', gunicorn_text)
    }
    compose_text = (ROOT / "docker-compose.yml").read_text()
    names |= set(re.findall(r"\$\{(MEMORYADMIN_[A-Z0-9_]+)", compose_text))
    return names


def test_every_setting_is_documented_in_the_example_env():
    example = (ROOT / ".env.example").read_text()
    documented = set(re.findall(r"^#? ?(MEMORYADMIN_[A-Z0-9_]+)=", example, flags=re.MULTILINE))

    read = variables_read_by_the_code()

    assert len(read) > 20
    assert read - documented == set()
