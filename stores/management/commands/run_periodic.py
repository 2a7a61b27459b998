"""Run the periodic passes (sweep, decay, expiry) without Celery beat.

The embedded default has no broker and so no beat: `bin/serve` runs this beside the web
server. It follows the same CELERY_BEAT_SCHEDULE and runs the same tasks, in-process.
"""

from __future__ import annotations

import os
import select
import signal
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
        schedule: dict[str, tuple[str, float]] = {
            name: (str(entry["task"]), float(entry["schedule"]))
            for name, entry in settings.CELERY_BEAT_SCHEDULE.items()
        }
        if once:
            for name, (task_name, _interval) in schedule.items():
                self.run(name, task_name, long_running=False)
            return
        # A stop asked for (SIGTERM, Ctrl+C) lets the pass under way finish. The handler takes
        # no lock: one that set a threading.Event hung the process for good when the signal
        # came while the loop's wait held that Event's lock. Python writes a byte to `woken`
        # for each signal, which ends the wait between passes at once.
        stopping: list[int] = []
        woken, wake = os.pipe()
        os.set_blocking(wake, False)
        earlier_wakeup = signal.set_wakeup_fd(wake)
        earlier = {
            number: signal.signal(number, lambda caught, _frame: stopping.append(caught))
            for number in (signal.SIGTERM, signal.SIGINT)
        }
        try:
            due = dict.fromkeys(schedule, time.monotonic())
            while not stopping:
                now = time.monotonic()
                for name, (task_name, interval) in schedule.items():
                    if due[name] <= now and not stopping:
                        self.run(name, task_name, long_running=True)
                        due[name] = time.monotonic() + interval
                select.select([woken], [], [], max(0.0, min(due.values()) - time.monotonic()))
        finally:
            for number, handler in earlier.items():
                signal.signal(number, handler)
            signal.set_wakeup_fd(earlier_wakeup)
            os.close(woken)
            os.close(wake)

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
