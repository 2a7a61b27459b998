"""Sending webhooks: what goes out for a change (payloads) and how it is sent (outbound)."""
