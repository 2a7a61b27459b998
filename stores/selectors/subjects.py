"""Finding the people an agent knows by the names a model uses for them."""

from __future__ import annotations

from stores.models import Agent, Subject


def subjects_named(agent: Agent, name: str) -> list[Subject]:
    """Subjects of `agent` whose display name, external id or an alias is `name`.

    Case-insensitive; more than one answer means the name is ambiguous.
    """
    wanted = name.strip().casefold()
    if not wanted:
        return []
    return [
        subject
        for subject in Subject.objects.filter(agent=agent)
        if wanted
        in {
            subject.display_name.casefold(),
            subject.external_id.casefold(),
            *(str(alias).casefold() for alias in subject.aliases or []),
        }
    ]
