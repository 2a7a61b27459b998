"""Reads: every door lists, searches and renders records through these functions."""
