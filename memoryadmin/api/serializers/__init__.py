"""Explicit input serializers (parse a body, never save) and output shapes (for the schema)."""
