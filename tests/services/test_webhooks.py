"""Webhooks against a real HTTP receiver on loopback: signing, retries, order, disabling,
Discord's body, outbound safety, and that no receiver ever holds up a write."""

from __future__ import annotations

import importlib
import io
import json
import socket
import time
from collections.abc import Iterator

import pytest
from cryptography.fernet import Fernet
from django.apps import apps as django_apps
from django.core.management import call_command
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from prometheus_client import REGISTRY
from standardwebhooks import Webhook as Verifier

from stores import tasks
from stores.engine.actors import Actor
from stores.engine.aftercommit import deliver_agent_changes
from stores.models import AgentAccess, Suggestion, Webhook, WebhookDelivery
from stores.selectors.changes import changes_after
from stores.services import record_edit, record_forget
from stores.services.agents import token_authenticate
from stores.services.suggestions import (
    suggest_for_agent,
    suggestion_accept,
    suggestion_dismiss,
)
from stores.services.webhooks import (
    MAX_URL,
    backoff,
    webhook_create,
    webhook_delete,
    webhook_deliver,
    webhook_set_enabled,
    webhooks_sweep,
)
from stores.tasks import background_deliverer
from stores.webhooks import outbound, sealing
from tests.factories import RecordMaker, UserFactory, agent_token
from tests.receivers import receiver

pytestmark = pytest.mark.django_db(transaction=True)
# Several writes of a test commit together: on SQLite the tests' in-memory database refuses
# a second writer at once ("table is locked") where a real file would wait for it, and the
# background sender writes its log as soon as one commit is out.
together = transaction.atomic

MAINTAINER = Actor.maintainer("tests")


@pytest.fixture(autouse=True)
def _webhook_settings(settings):
    settings.MEMORYADMIN = {
        **settings.MEMORYADMIN,
        # The pass after a write commits on its own, after the test's writes: a second writer
        # beside the sender (see `together`). The tests here find suggestions explicitly.
        "SUGGEST_AFTER_WRITE": False,
        "WEBHOOKS": {
            **settings.MEMORYADMIN["WEBHOOKS"],
            "DELIVERY": "thread",
            "ALLOW_PRIVATE": True,  # the receiver is on 127.0.0.1
            "TIMEOUT": 2.0,
            "MAX_ATTEMPTS": 3,
            "BACKOFF_SECONDS": 0.05,
            "MAX_FAILURES": 2,
        },
    }
    yield
    assert background_deliverer.drain(30), "deliveries still running after the test"


def add_webhook(agent, url: str, **options) -> tuple[Webhook, str]:
    result = webhook_create(actor=MAINTAINER, agent=agent, url=url, **options)
    assert result.ok, result.message
    return result.record, result.details.get("secret", "")


def edit(memory, old: str, new: str):
    result = record_edit(
        surface_key="memory",
        agent=memory.agent,
        ref=memory.pk,
        actor=MAINTAINER,
        old_string=old,
        new_string=new,
    )
    assert result.ok, result.message
    return result


def settle() -> None:
    assert background_deliverer.drain(30)


def log_of(webhook: Webhook) -> list[tuple[int | None, int, str]]:
    rows = WebhookDelivery.objects.filter(webhook=webhook).order_by("id")
    return [(row.revision_id, row.attempt, row.outcome) for row in rows]


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_standard_delivery_verifies_with_the_standardwebhooks_library(agent):
    with receiver() as hook:
        webhook, secret = add_webhook(agent, hook.url)
        with together():
            memory = RecordMaker().memory(agent, "The user likes tea.")
            edited = edit(memory, "tea", "mate")
        settle()
        created, updated = hook.wait_for(2)

    assert secret.startswith("whsec_")
    payload = Verifier(secret).verify(updated.body, updated.headers)
    assert payload["type"] == "memory.updated"
    assert payload["data"] == changes_after(agent, after=0, limit=10).items[1]
    assert payload["data"]["preview"] == "The user likes mate."
    assert payload["timestamp"] == payload["data"]["at"]
    # The revision is the idempotency key, the same on every attempt of that change.
    assert updated.headers["webhook-id"] == str(edited.revision)
    assert Verifier(secret).verify(created.body, created.headers)["type"] == "memory.created"
    assert updated.path == "/hooks/memoryadmin"
    with pytest.raises(Exception, match="signature"):
        Verifier(secret).verify(updated.body.replace(b"mate", b"beer"), updated.headers)
    assert log_of(webhook) == [
        (memory_revision, 1, "delivered")
        for memory_revision in (created_revision(agent, 0), edited.revision)
    ]


def created_revision(agent, index: int) -> int:
    return changes_after(agent, after=0, limit=10).items[index]["revision"]


def test_a_server_error_is_retried_with_backoff_until_delivered(agent):
    with receiver([500, 503, 200]) as hook:
        webhook, _secret = add_webhook(agent, hook.url)
        memory = RecordMaker().memory(agent)
        settle()
        tries = hook.wait_for(3)

    assert {attempt.headers["webhook-id"] for attempt in tries} == {str(created_revision(agent, 0))}
    assert [row[1:] for row in log_of(webhook)] == [
        (1, "retrying"),
        (2, "retrying"),
        (3, "delivered"),
    ]
    started = [row.at for row in WebhookDelivery.objects.filter(webhook=webhook).order_by("id")]
    assert started[1] - started[0] >= backoff(1)
    assert started[2] - started[1] >= backoff(2)
    webhook.refresh_from_db()
    assert webhook.consecutive_failures == 0 and webhook.cursor > 0 and memory.pk


def test_a_client_error_is_not_retried_and_the_next_change_goes_out(agent):
    with receiver([400, 200]) as hook:
        webhook, _secret = add_webhook(agent, hook.url)
        with together():
            memory = RecordMaker().memory(agent)
            edit(memory, "tea", "mate")
        settle()
        first, second = hook.wait_for(2)
        time.sleep(0.3)  # a retry of the refused one would have arrived by now
        assert len(hook.received) == 2

    assert first.headers["webhook-id"] != second.headers["webhook-id"]
    assert [row[1:] for row in log_of(webhook)] == [(1, "failed"), (1, "delivered")]
    failed = WebhookDelivery.objects.filter(webhook=webhook, outcome="failed").get()
    assert failed.http_status == 400 and failed.error == "HTTP 400"
    webhook.refresh_from_db()
    assert webhook.enabled and webhook.consecutive_failures == 0


def test_a_webhook_is_disabled_after_n_changes_in_a_row_fail_with_the_reason(agent):
    with receiver(default=404) as hook:
        webhook, _secret = add_webhook(agent, hook.url)
        with together():
            memory = RecordMaker().memory(agent)
            edit(memory, "tea", "mate")
            edit(memory, "mate", "coffee")
        settle()
        assert len(hook.wait_for(2)) == 2
        time.sleep(0.3)
        assert len(hook.received) == 2  # MAX_FAILURES is 2: the third change never went

    webhook.refresh_from_db()
    assert not webhook.enabled and webhook.disabled_at is not None
    assert "2 changes in a row" in webhook.disabled_reason
    assert "HTTP 404" in webhook.disabled_reason
    # Enabled again, it resumes with the change it had not tried.
    with receiver() as hook:
        Webhook.objects.filter(pk=webhook.pk).update(url=hook.url)
        assert webhook_set_enabled(
            actor=MAINTAINER, agent=agent, webhook_id=webhook.pk, enabled=True
        ).ok
        settle()
        (resumed,) = hook.wait_for(1)
    assert json.loads(resumed.body)["data"]["version"] == 3


def test_changes_of_a_record_arrive_in_order_even_across_a_retry(agent):
    with receiver([200, 500, 200, 200, 200]) as hook:
        add_webhook(agent, hook.url)
        with together():
            memory = RecordMaker().memory(agent, "v1")
            for version in range(2, 5):
                edit(memory, f"v{version - 1}", f"v{version}")
        settle()
        arrived = hook.wait_for(5)

    versions = [json.loads(request.body)["data"]["version"] for request in arrived]
    assert versions == [1, 2, 2, 3, 4]


def test_the_discord_format_is_one_embed_per_change_as_tomoris_notice(agent):
    with receiver() as hook:
        webhook, secret = add_webhook(agent, hook.url, format="discord")
        with together():
            memory = RecordMaker().memory(agent, "The garage code is 1234. @everyone")
            edit(memory, "1234", "4321")
            forgotten = record_forget(
                surface_key="memory", agent=agent, ref=memory.pk, actor=MAINTAINER
            )
        assert forgotten.ok
        settle()
        _created, updated, deleted = hook.wait_for(3)

    assert secret == "" and webhook.secret == ""
    update = json.loads(updated.body)
    assert set(update) == {"username", "embeds", "allowed_mentions"}
    assert update["allowed_mentions"] == {"parse": []}  # memory text never pings a channel
    (embed,) = update["embeds"]
    assert embed["title"] == "Memory updated"
    assert embed["color"] == 0xFFBF00
    assert embed["description"] == "The garage code is 4321. @everyone"
    assert {field["name"]: field["value"] for field in embed["fields"]} == {
        "Record": f"memory {memory.pk} · version 2",
        "By": "shell:tests",
        "Op": "edit",
    }
    (gone,) = json.loads(deleted.body)["embeds"]
    assert gone["title"] == "Memory deleted" and gone["color"] == 0xE74C3C
    assert gone["description"] == "The garage code is 4321. @everyone"
    assert "webhook-signature" not in deleted.headers


def found_and_accepted(agent) -> tuple[Suggestion, list[int]]:
    """A conflict the pass finds and a person accepts, in one commit; the memories' ids."""
    maker = RecordMaker()
    with together():
        paris = maker.memory(agent, "The user lives in Paris.")
        lyon = maker.memory(agent, "The user lives in Lyon.")
        suggest_for_agent(agent)
        (suggestion,) = Suggestion.objects.filter(agent=agent)
        accepted = suggestion_accept(
            agent=agent, actor=MAINTAINER, suggestion_id=suggestion.pk, keep=lyon.pk
        )
    assert accepted.ok, accepted.message
    return suggestion, [paris.pk, lyon.pk]


def test_a_suggestion_found_and_accepted_goes_out_signed_named_by_the_suggestion(agent):
    with receiver() as hook:
        webhook, secret = add_webhook(agent, hook.url)
        suggestion, (paris, lyon) = found_and_accepted(agent)
        settle()
        arrived = hook.wait_for(5)

    payloads = [Verifier(secret).verify(r.body, r.headers) for r in arrived]
    assert [payload["type"] for payload in payloads] == [
        "memory.created",
        "memory.created",
        "suggestion.created",
        "memory.invalidated",
        "suggestion.accepted",
    ]
    found, settled = payloads[2]["data"], payloads[4]["data"]
    assert found == changes_after(agent, after=0, limit=10).items[2]
    assert settled["suggestion"]["id"] == found["suggestion"]["id"] == suggestion.pk
    assert settled["suggestion"]["kind"] == "conflict"
    assert settled["suggestion"]["status"] == "accepted"
    assert settled["suggestion"]["records"] == [
        {"id": paris, "version": 1},
        {"id": lyon, "version": 1},
    ]
    assert settled["suggestion"]["revisions"] == [payloads[3]["data"]["revision"]]
    # Its idempotency key names the suggestion and the event, never a revision's number.
    assert [r.headers["webhook-id"] for r in arrived[2::2]] == [
        f"suggestion-{suggestion.pk}-created",
        f"suggestion-{suggestion.pk}-accepted",
    ]
    assert [(revision is None, outcome) for revision, _attempt, outcome in log_of(webhook)] == [
        (False, "delivered"),
        (False, "delivered"),
        (True, "delivered"),
        (False, "delivered"),
        (True, "delivered"),
    ]


def test_a_webhook_for_suggestions_hears_only_of_them_a_dismissal_too(agent):
    with receiver() as hook:
        add_webhook(agent, hook.url, events=["suggestion.*"])
        discord, _ = add_webhook(agent, hook.url, format="discord", events=["suggestion.dismissed"])
        maker = RecordMaker()
        with together():
            maker.memory(agent, "The user lives in Paris.")
            maker.memory(agent, "The user lives in Lyon.")
            suggest_for_agent(agent)
            (suggestion,) = Suggestion.objects.filter(agent=agent)
            assert suggestion_dismiss(agent=agent, actor=MAINTAINER, suggestion_id=suggestion.pk).ok
        settle()
        arrived = hook.wait_for(3)

    standard = [json.loads(r.body) for r in arrived if "webhook-signature" in r.headers]
    assert [payload["type"] for payload in standard] == [
        "suggestion.created",
        "suggestion.dismissed",
    ]
    assert standard[1]["data"]["suggestion"]["status"] == "dismissed"
    (notice,) = [json.loads(r.body) for r in arrived if "webhook-signature" not in r.headers]
    (embed,) = notice["embeds"]
    assert embed["title"] == "Conflict suggestion dismissed"
    assert embed["description"] == suggestion.reason
    fields = {field["name"]: field["value"] for field in embed["fields"]}
    assert fields["Op"] == f"suggestion {suggestion.pk}" and fields["By"] == "shell:tests"
    assert fields["Records"].count("· version 1") == 2
    assert log_of(discord) == [(None, 1, "delivered")]


def test_a_suggestion_gone_stale_goes_out_to_a_webhook_for_stale_ones(agent):
    with receiver() as hook:
        add_webhook(agent, hook.url, events=["suggestion.stale"])
        maker = RecordMaker()
        with together():
            paris = maker.memory(agent, "The user lives in Paris.")
            maker.memory(agent, "The user lives in Lyon.")
            suggest_for_agent(agent)
            (suggestion,) = Suggestion.objects.filter(agent=agent)
            edit(paris, "lives in", "works in")
            suggest_for_agent(agent)
        settle()
        (arrived,) = hook.wait_for(1)

    payload = json.loads(arrived.body)
    assert payload["type"] == "suggestion.stale"
    assert arrived.headers["webhook-id"] == f"suggestion-{suggestion.pk}-stale"
    stale = payload["data"]["suggestion"]
    assert stale["id"] == suggestion.pk and stale["status"] == stale["event"] == "stale"
    assert payload["data"]["actor"] == "pass:suggestions"


def test_another_agents_webhook_never_hears_of_a_suggestion(agent, other_agent):
    with receiver() as hook:
        add_webhook(other_agent, hook.url)
        found_and_accepted(agent)
        RecordMaker().memory(other_agent, "Theirs.")
        settle()
        (only,) = hook.wait_for(1)
        assert len(hook.received) == 1  # every delivery has been made (settle)
    assert json.loads(only.body)["type"] == "memory.created"


def test_a_long_text_is_cut_to_what_one_discord_embed_holds(agent):
    with receiver() as hook:
        add_webhook(agent, hook.url, format="discord")
        RecordMaker().memory(agent, "word " * 2000)
        settle()
        (created,) = hook.wait_for(1)

    (embed,) = json.loads(created.body)["embeds"]
    assert len(embed["description"]) == 4096 and embed["description"].endswith("…")


def test_a_receiver_that_never_answers_does_not_hold_up_a_write(agent):
    with receiver() as hook:
        hook.answering.clear()  # every request is held open, unanswered
        add_webhook(agent, hook.url)
        memory = RecordMaker().memory(agent)
        hook.wait_for(1)  # the first delivery is stuck in the receiver now
        result = edit(memory, "tea", "mate")  # returns while that delivery still hangs
        assert result.ok and len(hook.received) == 1
        hook.answering.set()
        settle()
        assert len(hook.wait_for(2)) == 2


def webhook_queries(captured: CaptureQueriesContext) -> list[str]:
    return [query["sql"] for query in captured.captured_queries if "stores_webhook" in query["sql"]]


def test_a_write_answers_before_its_webhooks_are_looked_up_and_they_still_hear_of_it(agent):
    with receiver() as hook:
        add_webhook(agent, hook.url)
        with together():
            memory = RecordMaker().memory(agent)
        settle()
        hook.wait_for(1)
        with CaptureQueriesContext(connection) as on_the_request:
            edit(memory, "tea", "mate")
        settle()
        assert len(hook.wait_for(2)) == 2
    assert webhook_queries(on_the_request) == []


@pytest.fixture
def broker_sends(settings, monkeypatch) -> Iterator[list[int]]:
    """ "task" delivery with a broker: the webhook ids whose delivery tasks were sent."""
    settings.MEMORYADMIN = {
        **settings.MEMORYADMIN,
        "WEBHOOKS": {**settings.MEMORYADMIN["WEBHOOKS"], "DELIVERY": "task"},
    }
    settings.CELERY_TASK_ALWAYS_EAGER = False
    sent: list[int] = []
    monkeypatch.setattr(tasks.deliver_webhook, "delay", sent.append)
    yield sent
    # The sender keeps its connection between bursts: the test database must not be in use.
    assert tasks.background_webhook_sender.drain(30, release=True)


def test_with_a_broker_the_lookup_and_the_send_leave_the_request_after_commit(agent, broker_sends):
    webhook, _secret = add_webhook(agent, "http://127.0.0.1:9/hook")
    other, _secret = add_webhook(agent, "http://127.0.0.1:9/other")
    with together():
        memory = RecordMaker().memory(agent)
    assert tasks.background_webhook_sender.drain(30)
    broker_sends.clear()
    with CaptureQueriesContext(connection) as on_the_request:
        edit(memory, "tea", "mate")
    assert tasks.background_webhook_sender.drain(30)
    assert webhook_queries(on_the_request) == []
    assert sorted(broker_sends) == [webhook.pk, other.pk]


def test_with_a_broker_a_rolled_back_write_sends_nothing(agent, broker_sends):
    add_webhook(agent, "http://127.0.0.1:9/hook")
    with together():
        memory = RecordMaker().memory(agent)
    assert tasks.background_webhook_sender.drain(30)
    broker_sends.clear()
    with pytest.raises(RuntimeError), together():
        edit(memory, "tea", "mate")
        raise RuntimeError("rolled back")
    assert tasks.background_webhook_sender.drain(30)
    assert broker_sends == []


def token_edit(agent, memory, old: str, new: str):
    """An edit as the API makes it: by the agent its token was read with."""
    _token, raw = agent_token(agent)
    authenticated = token_authenticate(raw)
    result = record_edit(
        surface_key="memory",
        agent=authenticated.agent,
        ref=memory.pk,
        actor=Actor.for_token(authenticated),
        old_string=old,
        new_string=new,
    )
    assert result.ok, result.message
    return result


def test_a_token_whose_agent_has_no_webhook_writes_without_looking_for_one(agent, monkeypatch):
    with together():
        memory = RecordMaker().memory(agent)
    looked: list[int] = []
    monkeypatch.setattr(deliver_agent_changes, "handler", looked.append)

    token_edit(agent, memory, "tea", "mate")

    assert looked == []


def test_a_token_whose_agent_has_a_webhook_still_delivers(agent):
    with receiver() as hook:
        add_webhook(agent, hook.url)
        with together():
            memory = RecordMaker().memory(agent)
        settle()
        hook.wait_for(1)
        token_edit(agent, memory, "tea", "mate")
        settle()
        assert json.loads(hook.wait_for(2)[1].body)["type"] == "memory.updated"


def test_a_webhook_added_while_a_token_request_runs_hears_of_its_write_from_the_sweep(agent):
    with together():
        memory = RecordMaker().memory(agent)
    # The creation's commit sent the deliverer to look up the agent's webhooks: until it has,
    # it could find the one added below and send the edit itself, before the sweep.
    settle()
    _token, raw = agent_token(agent)
    authenticated = token_authenticate(raw)  # the request begins: no webhook yet
    with receiver() as hook:
        add_webhook(agent, hook.url)
        result = record_edit(
            surface_key="memory",
            agent=authenticated.agent,
            ref=memory.pk,
            actor=Actor.for_token(authenticated),
            old_string="tea",
            new_string="mate",
        )
        settle()
        assert result.ok and hook.received == []
        assert webhooks_sweep() == {"webhooks": 1, "delivered": 1, "given_up": 0}
        (arrived,) = hook.wait_for(1)
    assert json.loads(arrived.body)["data"]["revision"] == result.revision


def test_a_closed_port_never_fails_a_write(agent):
    webhook, _secret = add_webhook(agent, f"http://127.0.0.1:{closed_port()}/hook")
    with together():
        memory = RecordMaker().memory(agent)
        result = edit(memory, "tea", "mate")
    settle()

    assert result.ok
    rows = WebhookDelivery.objects.filter(webhook=webhook).order_by("id")
    # Each change tried MAX_ATTEMPTS (3) times, then given up on; two of them disable it.
    assert [row.outcome for row in rows] == ["retrying", "retrying", "failed"] * 2
    assert all("ConnectionRefused" in row.error and row.http_status is None for row in rows)
    webhook.refresh_from_db()
    assert not webhook.enabled and "Connection refused" in webhook.disabled_reason


def test_only_the_events_asked_for_go_out(agent):
    with receiver() as hook:
        webhook, _secret = add_webhook(agent, hook.url, events=["skill.*", "*.deleted"])
        maker = RecordMaker()
        with together():
            memory = maker.memory(agent)
            maker.skill(agent)
            record_forget(surface_key="memory", agent=agent, ref=memory.pk, actor=MAINTAINER)
        settle()
        arrived = hook.wait_for(2)

    assert [json.loads(r.body)["type"] for r in arrived] == ["skill.created", "memory.deleted"]
    webhook.refresh_from_db()
    assert webhook.cursor == changes_after(agent, after=0, limit=10).positions[-1]


def test_a_new_webhook_hears_only_of_changes_from_then_on(agent):
    RecordMaker().memory(agent, "Before the webhook.")
    with receiver() as hook:
        add_webhook(agent, hook.url)
        later = RecordMaker().memory(agent, "After it.")
        settle()
        (only,) = hook.wait_for(1)
    assert json.loads(only.body)["data"]["id"] == later.pk


def test_the_sweep_delivers_what_no_commit_sent(agent):
    """A process that stopped before delivering leaves its changes in the feed."""
    with receiver() as hook:
        webhook, _secret = add_webhook(agent, hook.url)
        Webhook.objects.filter(pk=webhook.pk).update(enabled=False)
        RecordMaker().memory(agent)  # nobody to send it: the webhook is off
        settle()  # the write's own look-up of its webhooks, after the answer, found none
        Webhook.objects.filter(pk=webhook.pk).update(enabled=True)
        assert webhooks_sweep() == {"webhooks": 1, "delivered": 1, "given_up": 0}
        assert len(hook.wait_for(1)) == 1
    assert webhooks_sweep() == {"webhooks": 0, "delivered": 0, "given_up": 0}


def test_one_worker_delivers_at_a_time(agent):
    with receiver() as hook:
        webhook, _secret = add_webhook(agent, hook.url)
        Webhook.objects.filter(pk=webhook.pk).update(
            lease="someone", leased_until=timezone.now() + timezone.timedelta(minutes=1)
        )
        RecordMaker().memory(agent)
        # The write's own delivery runs after its answer, on a thread of its own: let it meet
        # the lease first, or the two race for the webhook's row (a locked table on SQLite).
        settle()
        assert webhook_deliver(webhook.pk).busy
        assert hook.received == []


# --- outbound safety --------------------------------------------------------------------


@pytest.fixture
def public_only(settings):
    settings.MEMORYADMIN["WEBHOOKS"] = {**settings.MEMORYADMIN["WEBHOOKS"], "ALLOW_PRIVATE": False}


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/hook",
        "http://10.1.2.3/hook",
        "http://[::1]/hook",
        "http://169.254.169.254/latest/meta-data",
        "http://[::ffff:127.0.0.1]/hook",
    ],
)
def test_private_addresses_are_refused_unless_allowed(public_only, agent, url):
    result = webhook_create(actor=MAINTAINER, agent=agent, url=url)
    assert result.status == "invalid" and "public addresses" in result.message


def test_a_name_that_resolves_to_a_private_address_is_refused_when_sending(public_only, agent):
    with receiver() as hook:
        local = hook.url.replace("127.0.0.1", "localhost")
        webhook, _secret = add_webhook(agent, local)
        RecordMaker().memory(agent)
        settle()
        assert hook.received == []

    (row,) = WebhookDelivery.objects.filter(webhook=webhook)
    assert row.outcome == "failed" and "resolves to" in row.error


@pytest.mark.parametrize(
    "address",
    [
        "::127.0.0.1",  # IPv4-compatible
        "::ffff:0:127.0.0.1",  # IPv4-translated
        "::ffff:10.0.0.1",  # IPv4-mapped
        "64:ff9b::7f00:1",  # NAT64 of 127.0.0.1
        "64:ff9b::a00:1",  # NAT64 of 10.0.0.1
        "64:ff9b:1::a00:1",  # local-use NAT64
        "2002:7f00:1::1",  # 6to4 of 127.0.0.1
        "2002:c0a8:101::1",  # 6to4 of 192.168.1.1
        "2001:0:4136:e378:8000:63bf:80ff:fffe",  # Teredo of 127.0.0.1
    ],
)
def test_an_ipv4_address_inside_an_ipv6_one_is_checked_itself(address):
    """Regression: these were called public, so a name with such an AAAA record reached them."""
    assert not outbound.public_address(address)


@pytest.mark.parametrize("address", ["64:ff9b::808:808", "2002:808:808::1", "2606:4700::1111"])
def test_a_public_ipv4_address_inside_an_ipv6_one_stays_public(address):
    assert outbound.public_address(address)


def test_a_host_that_is_no_domain_name_is_refused_when_the_webhook_is_added(agent):
    """Regression: accepted, then every delivery raised an uncaught UnicodeError."""
    result = webhook_create(actor=MAINTAINER, agent=agent, url="https://\u00ce\u0081/hook")

    assert result.status == "invalid"
    assert "host" in result.message
    assert not Webhook.objects.exists()


def test_an_international_domain_name_is_kept_in_its_ascii_form(agent):
    webhook, _secret = add_webhook(agent, "https://bücher.example/hooks/ä?x=é")

    assert webhook.url == "https://xn--bcher-kva.example/hooks/%C3%A4?x=%C3%A9"


def test_any_error_of_the_sender_is_a_failed_delivery_and_disables_in_the_end(agent, monkeypatch):
    def broken(*_args, **_kwargs):
        raise RuntimeError("the sender broke")

    monkeypatch.setattr(outbound, "_post_once", broken)
    with receiver() as hook:
        webhook, _secret = add_webhook(agent, hook.url)
        with together():
            RecordMaker().memory(agent)
            RecordMaker().memory(agent)
        settle()

    rows = WebhookDelivery.objects.filter(webhook=webhook)
    assert [row.outcome for row in rows] == ["failed", "failed"]
    assert all("RuntimeError: the sender broke" in row.error for row in rows)
    webhook.refresh_from_db()
    assert not webhook.enabled and "the sender broke" in webhook.disabled_reason


@pytest.mark.parametrize(
    "url",
    ["ftp://example.com/hook", "file:///etc/passwd", "https://user:pw@example.com/", "nohost"],
)
def test_only_http_and_https_urls_are_taken(agent, url):
    assert webhook_create(actor=MAINTAINER, agent=agent, url=url).status == "invalid"


def test_a_url_at_the_limit_that_grows_when_written_out_is_kept_whole(agent):
    """Regression: "https://host?q…" of 2,000 characters gains the "/" of its path when
    written out, and a path's letters beyond ASCII their percent-encoding: the database
    refused the longer text with a 500, then the service refused a URL within the limit."""
    for url in (
        "https://example.com?" + "q" * (MAX_URL - len("https://example.com?")),
        "https://example.com/" + "ä" * (MAX_URL - len("https://example.com/")),
    ):
        assert len(url) == MAX_URL

        created = webhook_create(actor=MAINTAINER, agent=agent, url=url)

        assert created.status == "created", created.message
        kept = Webhook.objects.get(pk=created.id).url
        assert len(kept) > MAX_URL and kept.startswith("https://example.com/")


def test_a_redirect_to_another_host_is_not_followed(agent):
    with receiver([307]) as hook, receiver() as elsewhere:
        hook.location = elsewhere.url.replace("127.0.0.1", "localhost")
        webhook, _secret = add_webhook(agent, hook.url)
        RecordMaker().memory(agent)
        settle()
        assert len(hook.wait_for(1)) == 1
        assert elsewhere.received == []
    (row,) = WebhookDelivery.objects.filter(webhook=webhook)
    assert row.outcome == "failed" and "another host" in row.error


def test_a_redirect_on_the_same_host_is_followed(agent):
    with receiver([308]) as hook:
        hook.location = "/hooks/moved"
        add_webhook(agent, hook.url)
        RecordMaker().memory(agent)
        settle()
        first, moved = hook.wait_for(2)
    assert moved.path == "/hooks/moved" and moved.body == first.body


# --- who may manage them ----------------------------------------------------------------


def test_a_write_token_or_a_person_with_write_access_manages_webhooks(agent, other_agent):
    token, _raw = agent_token(agent)
    read_only, _raw = agent_token(agent, read_only=True)
    theirs, _raw = agent_token(other_agent)
    editor, viewer = UserFactory(), UserFactory()
    AgentAccess.objects.create(user=editor, agent=agent, role="editor")
    AgentAccess.objects.create(user=viewer, agent=agent, role="viewer")
    url = "https://hooks.example.com/memoryadmin"

    def create(actor: Actor) -> str:
        return webhook_create(actor=actor, agent=agent, url=url).status

    assert create(Actor.for_token(token)) == "created"
    assert create(Actor.for_user(editor)) == "created"
    assert create(Actor.for_user(UserFactory(is_staff=True))) == "created"
    assert create(Actor.for_token(read_only)) == "forbidden"
    assert create(Actor.for_user(viewer)) == "forbidden"
    assert create(Actor.for_token(theirs)) == "not_found"
    webhook = Webhook.objects.filter(agent=agent).first()
    refused = webhook_delete(actor=Actor.for_token(read_only), agent=agent, webhook_id=webhook.pk)
    assert refused.status == "forbidden"
    assert webhook_delete(actor=Actor.for_user(editor), agent=agent, webhook_id=webhook.pk).ok
    assert Webhook.objects.filter(agent=agent).count() == 2


@pytest.mark.parametrize(
    "events",
    [
        ["memory"],
        ["memory.changed"],
        ["brain.*"],
        "memory.*",
        [1],
        ["*.*", "x.y"],
        ["suggestion.updated"],
        ["memory.accepted"],
    ],
)
def test_event_patterns_are_checked(agent, events):
    result = webhook_create(
        actor=MAINTAINER, agent=agent, url="https://hooks.example.com/", events=events
    )
    assert result.status == "invalid"


def test_suggestion_event_patterns_are_taken(agent):
    patterns = ["suggestion.*", "suggestion.accepted", "suggestion.dismissed", "*.created"]
    result = webhook_create(
        actor=MAINTAINER, agent=agent, url="https://hooks.example.com/", events=patterns
    )
    assert result.ok and result.record.events == patterns


# --- the shell ----------------------------------------------------------------------------


def test_the_shell_adds_lists_logs_switches_and_deletes_webhooks(agent):
    from io import StringIO

    from django.core.management import CommandError, call_command

    def run(*arguments: str) -> str:
        output = StringIO()
        call_command("webhooks", agent.name, *arguments, stdout=output)
        return output.getvalue()

    with receiver() as hook:
        added = run("add", hook.url, "--events", "memory.*", "--name", "sync")
        webhook = Webhook.objects.get(agent=agent)
        assert added.splitlines()[-1] == sealing.unseal(webhook.secret)
        RecordMaker().memory(agent)
        settle()
        hook.wait_for(1)
    assert "memory.*" in run("list") and "enabled" in run("list")
    assert "memory.created" in run("log", str(webhook.pk))
    assert "delivered" in run("log", str(webhook.pk))
    run("disable", str(webhook.pk))
    assert "disabled: Disabled by shell:maintainer." in run("list")
    with pytest.raises(CommandError, match="no_change"):
        run("disable", str(webhook.pk))
    with pytest.raises(CommandError, match="invalid"):
        run("add", "ftp://example.com/")
    run("delete", str(webhook.pk))
    assert "has no webhooks" in run("list")


# --- Tomori's notice ------------------------------------------------------------------------


def test_tomoris_update_and_delete_go_to_the_channel_as_her_notice(agent):
    """update_long_term_memory writes like every other door, and its update and delete reach
    a Discord channel through the agent's webhook: amber with the new text, red with the
    deleted text, so people can confirm."""
    from stores.tools import ToolContext, call_tool

    token, _raw = agent_token(agent)
    tomori = ToolContext(agent=agent, actor=Actor.for_token(token))
    memory = RecordMaker().memory(agent, "The server's movie night is on Fridays.")
    with receiver() as channel:
        add_webhook(agent, channel.url, format="discord", events=["memory.updated", "*.deleted"])
        content = "The server's movie night moved to Saturdays."
        with together():
            updated = call_tool(
                "update_long_term_memory",
                {"memory_id": memory.pk, "memory_content": content},
                tomori,
            )
            deleted = call_tool(
                "update_long_term_memory", {"memory_id": memory.pk, "memory_content": ""}, tomori
            )
        settle()
        update_notice, delete_notice = channel.wait_for(2)

    assert updated["status"] == "memory_updated_successfully"
    assert deleted["status"] == "memory_deleted_successfully"
    (amber,) = json.loads(update_notice.body)["embeds"]
    assert amber["color"] == 0xFFBF00 and amber["title"] == "Memory updated"
    assert amber["description"] == content
    (red,) = json.loads(delete_notice.body)["embeds"]
    assert red["color"] == 0xE74C3C and red["title"] == "Memory deleted"
    assert red["description"] == deleted["data"]["deleted_content"] == content
    by = {field["name"]: field["value"] for field in red["fields"]}["By"]
    assert by == f"agent:{agent.name}/test"


def delivery_count(outcome: str) -> float:
    samples = REGISTRY.get_sample_value(
        "memoryadmin_webhook_deliveries_total", {"outcome": outcome}
    )
    return samples or 0.0


def test_deliveries_and_failures_are_counted_for_the_metrics(agent):
    before = {outcome: delivery_count(outcome) for outcome in ("delivered", "failed")}
    with receiver([400, 200]) as hook:
        add_webhook(agent, hook.url)
        with together():
            memory = RecordMaker().memory(agent)
            edit(memory, "tea", "mate")
        settle()
        hook.wait_for(2)
    settle()

    assert delivery_count("failed") - before["failed"] == 1
    assert delivery_count("delivered") - before["delivered"] == 1


# --- secrets at rest --------------------------------------------------------------------


def stored_secret(webhook) -> str:
    return Webhook.objects.values_list("secret", flat=True).get(pk=webhook.pk)


def signs_with(agent, webhook, secret: str) -> bool:
    with receiver() as hook:
        Webhook.objects.filter(pk=webhook.pk).update(url=hook.url)
        RecordMaker().memory(agent, "The user likes tea.")
        settle()
        (delivery,) = hook.wait_for(1)
    return Verifier(secret).verify(delivery.body, delivery.headers)["type"] == "memory.created"


def test_the_signing_secret_is_stored_encrypted(agent):
    """Regression: the whsec_ secrets were in the database in clear."""
    webhook, secret = add_webhook(agent, "https://example.com/hook")

    assert secret not in stored_secret(webhook)
    assert "whsec_" not in stored_secret(webhook)
    assert signs_with(agent, webhook, secret)


def test_rotating_the_key_keeps_every_secret(agent, settings):
    webhook, secret = add_webhook(agent, "https://example.com/hook")
    old_key = sealing.keys()[0]
    new_key = Fernet.generate_key().decode()
    webhooks = settings.MEMORYADMIN["WEBHOOKS"]
    settings.MEMORYADMIN["WEBHOOKS"] = {**webhooks, "SECRET_KEYS": [new_key, old_key]}

    assert call_command("rotate_webhook_secrets", stdout=io.StringIO()) is None
    settings.MEMORYADMIN["WEBHOOKS"] = {**webhooks, "SECRET_KEYS": [new_key]}

    assert Fernet(new_key).decrypt(stored_secret(webhook).encode()).decode() == secret
    assert signs_with(agent, webhook, secret)


def test_the_migration_encrypts_the_secrets_stored_in_clear(agent):
    webhook, secret = add_webhook(agent, "https://example.com/hook")
    Webhook.objects.filter(pk=webhook.pk).update(secret=secret)  # as stored before

    migration = importlib.import_module("stores.migrations.0014_webhook_secrets_encrypted")
    migration.encrypt_secrets(django_apps, None)

    assert secret not in stored_secret(webhook)
    assert signs_with(agent, webhook, secret)
