"""Ops only working memory has: its lifetime."""
