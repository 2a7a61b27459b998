"""The web import report of our own PAM export says nothing would change; a file that would
change a memory says what, field by field."""

from __future__ import annotations

import json

import pytest

from stores.engine.sources import Source
from stores.models import Revision
from stores.services import record_create
from tests.factories import AgentFactory
from tests.web.conftest import htmx
from tests.web.test_portability_pages import exported, page, upload

pytestmark = pytest.mark.django_db


def test_our_own_export_checked_and_imported_on_the_page_changes_nothing(staff_client, agent):
    told = Source(conversation="conv-1", message="m-1", platform="Discord DM")
    from tests.interchange.test_pam import me

    for number in range(4):
        record_create(
            surface_key="memory",
            agent=agent,
            actor=me.with_source(told),
            values={"content": f"Fact {number}."},
        )
    data = exported(agent)
    check = staff_client.post(
        page(agent), {"file": upload(data), "action": "check"}, headers=htmx("pam-report")
    )
    text = check.content.decode()
    assert 'data-status="checked"' in text and "would change" not in text
    assert "<td>memory</td><td>0</td><td>0</td><td>4</td>" in text
    digest = text.split('name="checked" value="')[1].split('"')[0]
    revisions = Revision.objects.count()
    imported = staff_client.post(
        page(agent),
        {"file": upload(data), "action": "import", "checked": digest},
        headers=htmx("pam-report"),
    )
    assert 'data-status="imported"' in imported.content.decode()
    assert Revision.objects.count() == revisions


def test_the_report_says_what_would_change_in_each_memory(staff_client, agent, make):
    source = AgentFactory(name="source")
    make.memory(source, "Prefers tea.", alias="tea", tags=["drinks"])
    data = exported(source)
    make.memory(agent, "Prefers tea.", alias="tea")
    document = json.loads(data)
    check = staff_client.post(
        page(agent),
        {"file": upload(json.dumps(document).encode()), "action": "check"},
        headers=htmx("pam-report"),
    )
    text = check.content.decode()
    assert "1 memory would change" in text
    assert "tags: [] → [&#x27;drinks&#x27;]" in text
