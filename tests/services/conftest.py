from __future__ import annotations

import pytest

from stores.models import Suggestion
from stores.services.embeddings import reembed_sweep
from stores.services.suggestions import suggest_for_agent


@pytest.fixture
def suggested(agent, make):
    """The suggestions the whole-agent pass makes of `agent` once it holds these memories,
    each embedded."""

    def suggestions(texts: tuple[str, ...]) -> list[Suggestion]:
        for text in texts:
            make.memory(agent, content=text)
        reembed_sweep()
        suggest_for_agent(agent)
        return list(Suggestion.objects.filter(agent=agent))

    return suggestions
