"""Ops only long-term memory has: recall, importance, reinforcement, invalidation."""
