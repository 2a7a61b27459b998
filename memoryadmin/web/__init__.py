"""The browser door: server-rendered pages and HTMX fragments for people reviewing memory."""
