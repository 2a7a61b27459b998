"""Django's PostgreSQL backend, with a kept connection's health checked without a round trip."""
