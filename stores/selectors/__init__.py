"""Reads: query functions the web doors, tasks and commands share (services write)."""
