"""The surface registry agrees with every place that enumerates surfaces, walked from SURFACES."""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest
from django.conf import settings
from django.core.exceptions import FieldDoesNotExist
from django.urls import reverse

from memoryadmin.api.serializers.inputs import RevisionQuery
from memoryadmin.api.views.surfaces import SURFACE_VIEWSETS
from memoryadmin.mcp.server import tool_definitions
from memoryadmin.settings.app import settle_text_limits
from memoryadmin.web.surfaces import SURFACE_UI
from stores.models import Revision
from stores.selectors.records import record_read, sha256_key
from stores.surfaces import SURFACES, surface_of
from tests.api.conftest import client_for
from tests.factories import UserFactory, agent_token

pytestmark = pytest.mark.django_db

BASE_FIELDS = ["id", "alias", "version", "created_at", "updated_at"]

# One valid creation per surface; a new surface fails test_every_surface_has_an_example
# until it has one here.
EXAMPLES = {
    "memory": {"content": "The user prefers tea.", "category": "taste", "tags": ["drinks"]},
    "working": {"namespace": "session", "key": "focus", "value": "Reviewing the log."},
    "skill": {"name": "deploy", "summary": "How to ship", "content": "# Deploy\n\nRun it.\n"},
    "task": {"name": "morning", "schedule": "0 7 * * *", "directive": "Summarise alerts."},
    "rules": {"content": "# Rules\n\n- Be brief.\n"},
    "file": {"path": "/memories/projects/heron.md", "content": "# Heron\n\nShips Fridays.\n"},
}

SPECS = list(SURFACES.values())


def _field_or_attribute(model, name: str) -> bool:
    try:
        model._meta.get_field(name)
    except FieldDoesNotExist:
        return isinstance(getattr(model, name, None), property)
    return True


def test_every_surface_has_an_example():
    assert set(EXAMPLES) == set(SURFACES)


@pytest.mark.parametrize("spec", SPECS, ids=lambda spec: spec.key)
def test_the_registry_names_fields_its_model_has(spec):
    model = spec.model
    assert surface_of(model()) is spec
    for name in (*spec.text_fields, *spec.updatable_fields, *spec.state_fields):
        model._meta.get_field(name)
    for name in spec.read_fields:
        assert _field_or_attribute(model, name), name
    for name in spec.natural_key or ():
        model._meta.get_field(name)
    assert set(spec.text_fields) <= {*spec.create_fields, *spec.read_fields}
    assert spec.key in settings.MEMORYADMIN["MAX_TEXT_LENGTH"]
    assert all(_field_or_attribute(model, column.field) for column in spec.columns)


@pytest.mark.parametrize("spec", SPECS, ids=lambda spec: spec.key)
def test_a_record_reads_as_its_read_fields_over_api_and_tools(spec, agent, make):
    record = make(spec.key, agent, **EXAMPLES[spec.key])
    api = client_for(agent_token(agent)[1])

    assert reverse(f"api:{spec.key}-list") == f"/api/v1/{spec.api_path}/"
    response = api.call("get", f"{spec.api_path}/{record.pk}/")
    assert response.status_code == 200
    # A full read also proves itself: each text's SHA-256, sent back to replace it whole; and
    # it names the writes that created and last changed the record.
    assert list(response.json()["record"]) == [
        *BASE_FIELDS,
        *spec.read_fields,
        *(sha256_key(name) for name in spec.text_fields),
        "created_by",
        "last_changed_by",
    ]

    response = api.call("post", "tools/read_record/", {"surface": spec.key, "id": record.pk})
    assert response.json()["record"] == record_read(record)

    listed = api.call("get", f"{spec.api_path}/").json()
    assert [item["id"] for item in listed["results"]] == [record.pk]


def test_api_mcp_and_revision_filters_know_every_surface_and_no_other():
    assert list(SURFACE_VIEWSETS) == list(SURFACES)
    assert all(viewset.surface_key == key for key, viewset in SURFACE_VIEWSETS.items())
    assert list(RevisionQuery().fields["surface"].choices) == list(SURFACES)
    surface_params = [
        tool.input_schema["properties"]["surface"]
        for tool in tool_definitions()
        if "surface" in tool.input_schema["properties"]
    ]
    assert surface_params
    for param in surface_params:
        assert param["enum"] == list(SURFACES)
        assert all(spec.tool_hint in param["description"] for spec in SPECS)


def test_revisions_name_their_surface_by_its_registry_key(agent, make):
    for spec in SPECS:
        make(spec.key, agent, **EXAMPLES[spec.key])
    surfaces = Revision.objects.filter(agent=agent).values_list("surface", flat=True)
    assert sorted(surfaces) == sorted(SURFACES)


def test_the_web_shows_every_surface_with_its_labels_and_columns(client, staff_user, agent, make):
    assert list(SURFACE_UI) == list(SURFACES)
    client.force_login(staff_user)
    records = {spec.key: make(spec.key, agent, **EXAMPLES[spec.key]) for spec in SPECS}
    dashboard = client.get(reverse("web:dashboard", args=[agent.name])).content.decode()
    nav = dashboard.split('class="agent-nav"', 1)[1].split("</nav>", 1)[0]
    for spec in SPECS:
        assert f">{spec.plural}</a>" in nav
        page = client.get(
            reverse("web:record_detail", args=[agent.name, spec.key, records[spec.key].pk])
        )
        assert page.status_code == 200
        assert f"{spec.label} {records[spec.key].pk}" in page.content.decode()
        if not SURFACE_UI[spec.key].listed:
            continue
        listing = client.get(reverse("web:record_list", args=[agent.name, spec.key]))
        html = listing.content.decode()
        headings = re.findall(r'<th scope="col">([^<]*)</th>', html)
        assert headings == [column.heading for column in spec.columns] + ["Updated"]
        row = html.split("<tbody", 1)[1].split("</tr>", 1)[0]
        # The bulk checkbox, the id, a cell per column and the update time.
        assert row.count("<td") == 3 + len(spec.columns)


@pytest.mark.parametrize("spec", SPECS, ids=lambda spec: spec.key)
def test_each_surface_has_a_read_only_admin_of_its_records(spec, agent, make, client):
    record = make(spec.key, agent, **EXAMPLES[spec.key])
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    model = spec.model._meta.model_name
    searched = str(getattr(record, spec.search_fields[0]))[:5]
    listed = client.get(reverse(f"admin:stores_{model}_changelist"), {"q": searched})
    assert listed.status_code == 200
    assert reverse(f"admin:stores_{model}_change", args=[record.pk]) in listed.content.decode()
    assert client.get(reverse(f"admin:stores_{model}_add")).status_code == 403
    change = reverse(f"admin:stores_{model}_change", args=[record.pk])
    assert client.post(change, {"version": 99}).status_code == 403
    record.refresh_from_db()
    assert record.version == 1


def test_a_surfaces_text_limit_is_its_own_unless_the_environment_sets_one(monkeypatch):
    monkeypatch.setenv("MEMORYADMIN_MAX_TASK_LENGTH", "1234")
    monkeypatch.delenv("MEMORYADMIN_MAX_SKILL_LENGTH", raising=False)
    fresh = SimpleNamespace(MEMORYADMIN={"MAX_TEXT_LENGTH": {}}, DATA_UPLOAD_MAX_MEMORY_SIZE=0)

    settle_text_limits(fresh)

    limits = fresh.MEMORYADMIN["MAX_TEXT_LENGTH"]
    assert list(limits) == list(SURFACES)
    assert limits["task"] == 1234
    assert limits["skill"] == SURFACES["skill"].max_text_length == 500_000
    # The body limit fits the largest text, each character escaped as JSON at worst.
    body_limit = fresh.DATA_UPLOAD_MAX_MEMORY_SIZE
    assert body_limit == 12 * max(limits.values()) + 1024 * 1024
    assert settings.MEMORYADMIN["MAX_TEXT_LENGTH"] == {
        key: spec.max_text_length for key, spec in SURFACES.items()
    }
