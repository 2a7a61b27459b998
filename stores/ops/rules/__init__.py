"""Ops on an agent's rules document: one rule at a time, byte for byte elsewhere."""
