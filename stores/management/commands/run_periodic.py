"""Run the periodic passes (sweep, decay, expiry) without Celery beat.

The embedded default has no broker and so no beat: `bin/serve` runs this beside the web
server. It follows the same CELERY_BEAT_SCHEDULE and runs the same tasks, in-process.
"""

from __future__ import annotations

import signal
import threading
import time
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand
from django.db import close_old_connections
from django.utils.module_loading import import_string


class Command(BaseCommand):
    help = "Run the periodic passes on CELERY_BEAT_SCHEDULE in this process (no broker needed)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--once", action="store_true", help="Run every pass once and exit.")

    def handle(self, *args: Any, once: bool = False, **options: Any) -> None:
        schedule = {
            name: (entry["task"], float(entry["schedule"]))
            for name, entry in settings.CELERY_BEAT_SCHEDULE.items()
        }
        stop = threading.Event()
        signal.signal(signal.SIGTERM, lambda *_: stop.set())
        signal.signal(signal.SIGINT, lambda *_: stop.set())
        due = dict.fromkeys(schedule, time.monotonic())
        while not stop.is_set():
            now = time.monotonic()
            for name, (task_name, interval) in schedule.items():
                if due[name] <= now and not stop.is_set():
                    self.run(name, task_name, long_running=not once)
                    due[name] = time.monotonic() + interval
            if once:
                return
            stop.wait(max(0.0, min(due.values()) - time.monotonic()))

    def run(self, name: str, task_name: str, *, long_running: bool) -> None:
        if long_running:
            # Between passes hours apart, drop a connection the database has closed, as
            # Django does between requests.
            close_old_connections()
        try:
            outcome = import_string(task_name).apply(throw=True).get()
        except Exception as error:  # a failed pass is retried at its next time, not fatal
            self.stderr.write(f"{name}: failed: {error}")
            return
        self.stdout.write(f"{name}: {outcome}")
