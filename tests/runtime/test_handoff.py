"""The services hand after-commit work on; the background layer, connected when the app is
ready, does it."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured

from stores import tasks
from stores.engine import aftercommit
from stores.runtime.handoff import Handoff


def test_work_handed_to_nothing_is_refused_by_name():
    handoff: Handoff[[int]] = Handoff("count sheep")

    with pytest.raises(ImproperlyConfigured, match="count sheep"):
        handoff(3)


def test_a_connected_handoff_passes_its_arguments_on():
    received: list[tuple[str, int]] = []
    handoff: Handoff[[str, int]] = Handoff("note")
    handoff.connect(lambda surface, record_id: received.append((surface, record_id)))

    handoff("memory", 7)

    assert received == [("memory", 7)]


def test_the_background_layer_does_the_services_after_commit_work():
    assert aftercommit.reembed_record.handler is tasks.enqueue_reembed
    assert aftercommit.deliver_agent_changes.handler is tasks.enqueue_webhooks
