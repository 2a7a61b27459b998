"""Bearer tokens as every door reads them: a live token, no token, or a refusal saying why."""

from __future__ import annotations

import pytest

from memoryadmin.doors.tokens import Unauthenticated, bearer_token, live_token
from stores.engine.actors import Actor
from stores.services.agents import token_revoke
from tests.factories import agent_token


def test_a_live_token_is_its_agents_and_its_use_is_recorded(agent):
    token, raw = agent_token(agent)

    found = bearer_token(f"Bearer {raw}".encode())

    assert found == token
    assert found.agent == agent
    token.refresh_from_db()
    assert token.last_used_at is not None


@pytest.mark.parametrize("header", [b"", b"Basic dXNlcjpwYXNz"])
def test_no_bearer_header_is_no_token(header, db):
    assert bearer_token(header) is None


def test_a_malformed_header_is_refused_with_its_form(db):
    with pytest.raises(Unauthenticated, match="Bearer <token>"):
        bearer_token(b"Bearer two words")


def test_a_token_without_its_keyword_is_told_the_expected_form(agent):
    _token, raw = agent_token(agent)

    with pytest.raises(Unauthenticated) as refusal:
        bearer_token(raw.encode())

    assert "must read 'Bearer <token>'" in refusal.value.message
    assert "this one has the token alone" in refusal.value.message


def test_an_unknown_or_revoked_token_is_refused(agent):
    token, raw = agent_token(agent)
    token_revoke(actor=Actor.maintainer(), token=token)

    with pytest.raises(Unauthenticated) as refusal:
        bearer_token(f"Bearer {raw}".encode())
    assert refusal.value.code == "authentication_failed"
    assert live_token(raw) is None
    with pytest.raises(Unauthenticated):
        bearer_token(b"Bearer ma_nope_nope")
