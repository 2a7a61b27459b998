"""What a webhook sends for one change: a Standard Webhooks message, or a Discord embed.

Both are built from the change feed's item (stores.selectors.changes.change_data), so a
receiver of either learns exactly what a feed reader learns; Discord also shows the text,
as Tomori's notice does: the new text of an update, the deleted text of a delete. A
suggestion's event (`suggestion.created`, `.accepted`, `.dismissed`) is no write: it has no
revision, and is told by its suggestion.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from typing import Any

from standardwebhooks import Webhook as Signer

from stores.selectors.changes import SUGGESTION

# Discord's limits on one embed (https://discord.com/developers/docs/resources/message).
DISCORD_DESCRIPTION = 4096
DISCORD_FIELD = 1024
DISCORD_TITLE = 256
# Tomori's notice colours: amber for an update (MEMORY_UPDATE), red for a delete (ERROR).
AMBER = 0xFFBF00
RED = 0xE74C3C
GREEN = 0x2ECC71
COLOURS = {"deleted": RED, "created": GREEN}


@dataclass(frozen=True)
class Message:
    body: bytes
    headers: dict[str, str]


def event_type(item: dict[str, Any]) -> str:
    """`<surface>.<status>`, e.g. memory.updated, or `suggestion.<event>`: what webhooks
    filter on."""
    if item.get(SUGGESTION):
        return f"{SUGGESTION}.{item[SUGGESTION]['event']}"
    return f"{item['surface']}.{item['status']}"


def named(item: dict[str, Any]) -> str:
    """The change as a person reads it in a log: `revision 881`, `suggestion 7`."""
    if item.get(SUGGESTION):
        return f"{SUGGESTION} {item[SUGGESTION]['id']}"
    return f"revision {item['revision']}"


def message_id(item: dict[str, Any]) -> str:
    """The idempotency key of the change, the same on every attempt: a write's revision id;
    a suggestion's event is named by its suggestion, never by a number a revision could have."""
    if item.get(SUGGESTION):
        return f"{SUGGESTION}-{item[SUGGESTION]['id']}-{item[SUGGESTION]['event']}"
    return str(item["revision"])


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def standard(item: dict[str, Any], *, secret: str, now: dt.datetime) -> Message:
    """A Standard Webhooks message; `message_id` is its idempotency key (webhook-id)."""
    body = _json({"type": event_type(item), "timestamp": item["at"], "data": item})
    key = message_id(item)
    signature = Signer(secret).sign(key, now, body)
    return Message(
        body=body.encode("utf-8", "surrogatepass"),
        headers={
            "webhook-id": key,
            "webhook-timestamp": str(int(now.timestamp())),
            "webhook-signature": signature,
        },
    )


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _source_fields(source: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Where the change came from, as an embed field (none when it names no conversation)."""
    if not source or not source.get("conversation"):
        return []
    words = f"conversation {source['conversation']}"
    if source.get("message"):
        words += f", message {source['message']}"
    if source.get("platform"):
        words += f" on {source['platform']}"
    return [{"name": "From", "value": _clip(words, DISCORD_FIELD), "inline": False}]


def discord(item: dict[str, Any], *, text: str, agent: str) -> Message:
    """One Discord embed for the change, with the text it wrote (or deleted); for a
    suggestion's event, its reason and the memories it is about."""
    surface, status = item["surface"], item["status"]
    suggestion = item.get(SUGGESTION)
    if suggestion:
        title = f"{suggestion['kind'].capitalize()} suggestion {suggestion['event']}"
        record = ", ".join(
            f"{surface} {shown['id']} · version {shown['version']}"
            for shown in suggestion["records"]
        )
        text, operation = item["preview"], f"{SUGGESTION} {suggestion['id']}"
    else:
        title = f"{surface.capitalize()} {status}"
        record = f"{surface} {item['id']}" + (
            f" · version {item['version']}" if item["version"] else ""
        )
        operation = item["op"]
    embed = {
        "title": _clip(title, DISCORD_TITLE),
        "description": _clip(text, DISCORD_DESCRIPTION) if text else "*(empty)*",
        "color": COLOURS.get(status, AMBER),
        "fields": [
            {
                "name": "Records" if suggestion else "Record",
                "value": _clip(record, DISCORD_FIELD),
                "inline": True,
            },
            {"name": "By", "value": _clip(item["actor"], DISCORD_FIELD), "inline": True},
            {"name": "Op", "value": _clip(operation, DISCORD_FIELD), "inline": True},
            *_source_fields(item.get("source")),
        ],
        "footer": {"text": _clip(agent, DISCORD_FIELD)},
        "timestamp": item["at"],
    }
    # Memory text is written by models and people: it must never ping anyone (@everyone).
    body = {"username": "memoryadmin", "embeds": [embed], "allowed_mentions": {"parse": []}}
    return Message(body=_json(body).encode("utf-8", "surrogatepass"), headers={})
