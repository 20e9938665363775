"""The load suite's figures: from the requests and files bench/load_users.py saw to one JSON line.

Pure functions, so that what the line says can be checked without a server (tests/unit).
A request is [kind, name, milliseconds, error or None]; its kind is the first word of its name:
"page" (a whole page a person opens), "fragment" (what a page asks for itself: the query's
preview, a file's progress) or "form" (a post).
"""

from __future__ import annotations

from collections.abc import Sequence

from bench.percentiles import percentile


def _ms(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


def page_timings(requests: Sequence[Sequence]) -> list[float]:
    """Milliseconds of every page request, the ones that failed included (errors count them)."""
    return [request[2] for request in requests if request[0] == "page"]


def errors_of(phase: dict, files_not_succeeded: int) -> list[str]:
    """Every error of a phase: failed requests, actions that broke, and files that did not succeed."""
    failed = [request[3] for request in phase["requests"] if request[3] is not None]
    return failed + list(phase["action_errors"]) + ["a file did not succeed"] * files_not_succeeded


def load_line(
    load: dict,
    anchor: dict,
    file_ms: dict[str, Sequence[float]],
    files_not_succeeded: tuple[int, int],
    *,
    users: int,
    seconds: float,
    anchor_seconds: float,
    rows: int,
    files_done: int,
    memory_mb: tuple[float, float],
    load_averages: tuple[Sequence[float], Sequence[float]],
) -> dict:
    """The suite's line. `file_ms`: each small file's milliseconds from the database, "total" from
    the request to "succeeded", "wait" in the queue and "run" in a worker;
    `files_not_succeeded`: the load's and the anchor's files that did not succeed;
    `files_done`: the files the workers finished within the load's window (any requester's);
    `memory_mb`: the highest sums of the server processes' resident and proportional sets;
    `load_averages`: the machine's 1/5/15-minute load averages before and after the load."""
    pages, anchor_pages = page_timings(load["requests"]), page_timings(anchor["requests"])
    page_p95, anchor_p95 = percentile(pages, 95), percentile(anchor_pages, 95)
    seen = [file["seen_ms"] for file in load["files"] if file["seen_ms"] is not None]
    fragments = [request[2] for request in load["requests"] if request[0] == "fragment"]
    cpu = load["cpu_seconds"]
    return {
        "name": "console_load",
        "users": users,
        "seconds": seconds,
        "rows": rows,
        "requests": len(load["requests"]),
        "errors": len(errors_of(load, files_not_succeeded[0])),
        "page_requests": len(pages),
        "page_p50_ms": _ms(percentile(pages, 50)),
        "page_p95_ms": _ms(page_p95),
        "page_max_ms": _ms(max(pages, default=None)),
        "fragment_p95_ms": _ms(percentile(fragments, 95)),
        "files": len(load["files"]),
        "file_p50_ms": _ms(percentile(file_ms["total"], 50)),
        "file_p95_ms": _ms(percentile(file_ms["total"], 95)),
        "file_wait_p95_ms": _ms(percentile(file_ms["wait"], 95)),
        "file_run_p95_ms": _ms(percentile(file_ms["run"], 95)),
        "file_seen_p95_ms": _ms(percentile(seen, 95)),
        "web_cpu_s": cpu["web"],
        "workers_cpu_s": cpu["workers"],
        "scheduler_cpu_s": cpu["scheduler"],
        "web_cpu_ms_per_request": None if not load["requests"] else round(cpu["web"] * 1000 / len(load["requests"]), 1),
        "files_done": files_done,
        "worker_cpu_ms_per_file": None if not files_done else round(cpu["workers"] * 1000 / files_done, 1),
        "peak_rss_mb": round(memory_mb[0], 1),
        "peak_pss_mb": round(memory_mb[1], 1),
        "anchor": "one_user_serial",
        "anchor_seconds": anchor_seconds,
        "anchor_requests": len(anchor["requests"]),
        "anchor_errors": len(errors_of(anchor, files_not_succeeded[1])),
        "anchor_page_p50_ms": _ms(percentile(anchor_pages, 50)),
        "anchor_page_p95_ms": _ms(anchor_p95),
        "ratio": None if not page_p95 or not anchor_p95 else round(page_p95 / anchor_p95, 2),
        "load_average_before": [round(value, 2) for value in load_averages[0]],
        "load_average_after": [round(value, 2) for value in load_averages[1]],
    }
