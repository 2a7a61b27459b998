"""Django's PostgreSQL backend, with a kept connection's health checked without a round trip.

With CONN_HEALTH_CHECKS, Django sends `SELECT 1` on a kept connection before each request's
first query: a statement more than the request's own, on the edit path one in seven. A
connection PostgreSQL has ended (a restart, an idle timeout, an administrator) has its
goodbye waiting on the socket, or the socket closed: only then is the round trip made, and
the connection found dead is replaced as before. Anything else waiting there (none is
expected: the change feed listens on a connection of its own) gets the full check too.
"""

from __future__ import annotations

import select

from django.db.backends.postgresql import base


class DatabaseWrapper(base.DatabaseWrapper):
    def is_usable(self) -> bool:
        connection = self.connection
        if connection is None or connection.closed:
            return False
        waiting = select.poll()
        waiting.register(connection.fileno(), select.POLLIN)
        return not waiting.poll(0) or super().is_usable()
