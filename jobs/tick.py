"""One tick of the schedule ticker from the command line: `python -m jobs.tick`.

The scheduler loop ticks every minute by itself (jobs/periodic.py); this admits due occurrences
at once, for an operator after downtime and for the benchmark's concurrent tickers. It prints
how many schedules it handled as one JSON line.
"""

from __future__ import annotations

import json

from app.services.schedules.schedule_ticker import tick
from jobs.app_context import worker_app


def main() -> None:
    with worker_app().app_context():
        print(json.dumps({"handled": tick()}), flush=True)


if __name__ == "__main__":
    main()
