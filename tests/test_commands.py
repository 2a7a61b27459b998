"""What every management command that names an agent answers when there is no such agent."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command


@pytest.mark.parametrize(
    "arguments",
    [
        ("takeback", "--agent", "nobody", "--conversation", "c-1"),
        ("webhooks", "nobody", "list"),
        ("reembed", "--agent", "nobody"),
        ("suggest", "--agent", "nobody"),
        ("export_agent", "nobody", "--out", "unused.jsonl"),
        ("export_pam", "--agent", "nobody", "--out", "unused.json"),
    ],
    ids=lambda arguments: arguments[0],
)
def test_an_unknown_agent_is_refused_with_the_agents_there_are(agent, other_agent, arguments):
    with pytest.raises(CommandError) as refused:
        call_command(*arguments)
    known = ", ".join(sorted([agent.name, other_agent.name]))
    assert str(refused.value) == f"No agent 'nobody' (agents: {known})."
