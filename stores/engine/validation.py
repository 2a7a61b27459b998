"""Checks and coercions of field values that every door shares."""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Callable
from typing import Any

from croniter import croniter
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from stores.editing.numbers import is_whole_number
from stores.errors import Invalid


def clamp_importance(value: Any) -> tuple[float, bool]:
    """Importance is clamped to 0..1, never refused; the flag says whether it was clamped."""
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        raise Invalid(f"importance must be a number between 0 and 1, not {value!r}.") from None
    if math.isnan(number):
        raise Invalid("importance must be a number between 0 and 1, not NaN.")
    clamped = min(1.0, max(0.0, number))
    return clamped, clamped != number


def tags(value: Any) -> list[str]:
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, list | tuple) or not all(isinstance(tag, str) for tag in value):
        raise Invalid("tags must be a list of strings.")
    cleaned = [tag.strip() for tag in value if tag.strip()]
    return list(dict.fromkeys(cleaned))


def nesting_depth(value: Any, limit: int) -> int:
    """How deeply objects and arrays nest in `value`: 0 for a scalar, 1 for `{}` or `[]`.

    Walked with a stack, never by recursion (a value nested thousands deep must not
    exhaust Python's stack), and only as far as `limit + 1`: deeper values answer that.
    """
    containers = dict | list | tuple
    if not isinstance(value, containers):
        return 0
    deepest = 0
    pending: list[tuple[Any, int]] = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if depth > limit:
            return depth
        deepest = max(deepest, depth)
        children = item.values() if isinstance(item, dict) else item
        pending.extend((child, depth + 1) for child in children if isinstance(child, containers))
    return deepest


def text_problem(value: str) -> str | None:
    """Why no text column can hold `value` (a NUL; an unpaired surrogate, which JSON's
    "\\ud800" decodes to), or None."""
    if "\x00" in value:
        return "contains a NUL character, which cannot be stored"
    if value.isascii():  # no surrogate, and nothing to encode: most texts, at no cost
        return None
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return "contains an unpaired surrogate, which is not valid text"
    return None


def unstorable_string(value: Any) -> tuple[str, str] | None:
    """The first string in parsed JSON, a key or a value, that no text can hold: its path
    (``edits[0].old_string``) and what is wrong with it; None when every string is text.

    Every door checks its whole body once, so no id, name, path or filter reaches a lookup
    (where the database driver raised on it) and the refusal names the field. Walked with a
    stack, as nesting_depth is.
    """
    pending: list[tuple[str, Any]] = [("", value)]
    while pending:
        path, item = pending.pop()
        if isinstance(item, str):
            problem = text_problem(item)
            if problem is not None:
                return path or "the body", problem
        elif isinstance(item, dict):
            children = [(f"{path}.{key}" if path else str(key), key, c) for key, c in item.items()]
            for where, key, _child in children:
                if isinstance(key, str) and (problem := text_problem(key)) is not None:
                    return f"the field name '{where}'", problem
            pending.extend((where, child) for where, _key, child in reversed(children))
        elif isinstance(item, list | tuple):
            pending.extend((f"{path}[{index}]", child) for index, child in enumerate(item))
    return None


def too_deep_message(what: str, limit: int) -> str:
    return f"{what} nests objects and arrays more than {limit} levels deep; the limit is {limit}."


def metadata(value: Any) -> dict[str, Any]:
    """A JSON object of bounded depth and size, whichever door sends it.

    Metadata nested ~900 deep was accepted and then broke the record's admin page; the
    limits hold for the API, the shell and the importer alike.
    """
    if not isinstance(value, dict):
        raise Invalid("metadata must be a JSON object.")
    max_depth = settings.MEMORYADMIN["MAX_METADATA_DEPTH"]
    if nesting_depth(value, max_depth) > max_depth:
        raise Invalid(too_deep_message("metadata", max_depth))
    try:
        size = len(json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":")))
    except (TypeError, ValueError):
        raise Invalid(
            "metadata must hold only JSON values: objects, arrays, strings, finite numbers, "
            "true, false and null."
        ) from None
    max_size = settings.MEMORYADMIN["MAX_METADATA_SIZE"]
    if size > max_size:
        raise Invalid(f"metadata is {size} characters as JSON; the limit is {max_size}.")
    return value


def cron(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise Invalid("schedule must be a cron expression such as '0 7 * * *'.")
    expression = " ".join(value.split())
    if not croniter.is_valid(expression):
        raise Invalid(f"schedule {value!r} is not a valid cron expression.")
    return expression


def text(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise Invalid(f"{name} must be a string.")
    problem = text_problem(value)
    if problem is not None:
        raise Invalid(f"{name} {problem}.")
    return value


def moment(value: Any, name: str) -> dt.datetime | None:
    if value is None or isinstance(value, dt.datetime):
        parsed = value
    elif isinstance(value, str):
        try:
            parsed = parse_datetime(value)
        except ValueError:  # well formed but no such moment, e.g. month 13
            parsed = None
        if parsed is None:
            raise Invalid(f"{name} must be an ISO 8601 date and time, not {value!r}.")
    else:
        raise Invalid(f"{name} must be an ISO 8601 date and time.")
    if parsed is None:
        return None
    if timezone.is_naive(parsed):
        return timezone.make_aware(parsed, dt.UTC)
    try:
        # As UTC: an offset past ±15:59 is ISO 8601 but not a time zone PostgreSQL takes.
        return parsed.astimezone(dt.UTC)
    except OverflowError:
        raise Invalid(f"{name} is out of range once taken to UTC: {value!r}.") from None


def ttl_seconds(value: Any) -> int:
    try:
        seconds = int(value)
    except (TypeError, ValueError):
        raise Invalid(f"ttl must be a whole number of seconds, not {value!r}.") from None
    if seconds <= 0:
        raise Invalid("ttl must be a positive number of seconds.")
    if seconds > 10 * 365 * 24 * 3600:
        raise Invalid("ttl must be at most ten years.")
    return seconds


def flag(value: Any, name: str) -> bool:
    if isinstance(value, bool):
        return value
    raise Invalid(f"{name} must be true or false.")


def importance(value: Any) -> float:
    return clamp_importance(value)[0]


# Fields whose values have a shape their column does not state, checked alike by every
# write: an op's parameters, an import, a restored snapshot.
SHAPED: dict[str, Callable[[Any], Any]] = {
    "tags": tags,
    "metadata": metadata,
    "schedule": cron,
    "importance": importance,
    "importance_floor": importance,
}


def field_value(model_field: models.Field, value: Any) -> Any:
    """`value` checked and coerced for one model field by the field's type, as a write sets it.

    For writes that set fields from stored data rather than from an op's named parameters:
    an import sets any field of a record (or of a revision it carries), a restore sets the
    fields of a revision's snapshot. Choices, length, blank and range are the field's own.
    """
    name = model_field.name
    if value is None:
        if not model_field.null:
            raise Invalid(f"{name} may not be empty (null).")
        return None
    if name in SHAPED:
        value = SHAPED[name](value)
    elif isinstance(model_field, models.DateTimeField):
        value = moment(value, name)
    elif isinstance(model_field, models.BooleanField):
        value = flag(value, name)
    elif isinstance(model_field, models.PositiveIntegerField):
        if not is_whole_number(value) or value < 0:
            raise Invalid(f"{name} must be a whole number of at least 0, not {value!r}.")
    elif isinstance(model_field, models.CharField | models.TextField):
        value = text(value, name)
    if model_field.choices:
        known = [choice for choice, _ in model_field.choices]
        if value not in known:
            raise Invalid(f"{name} must be one of {', '.join(map(repr, known))}, not {value!r}.")
    try:
        if name in SHAPED and type(model_field) is models.JSONField:
            # Its shape has made it JSON already (metadata was encoded to be measured, tags
            # are strings): the field's own check would encode it again, the rest of it stays.
            models.Field.validate(model_field, value, None)
            model_field.run_validators(value)
            return value
        return model_field.clean(value, None)
    except ValidationError as error:
        raise Invalid(f"{name}: {' '.join(error.messages)}") from None
