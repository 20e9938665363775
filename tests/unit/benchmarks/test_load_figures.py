"""The load suite's line says what its people saw: pages apart from fragments and posts, every
error counted once, files timed from the database, and the load set against one person alone."""

from __future__ import annotations

from bench.load_figures import load_line


def _phase(
    requests: list[list],
    action_errors: list[str] | None = None,
    files: list[dict] | None = None,
    cpu_seconds: dict | None = None,
) -> dict:
    return {
        "requests": requests,
        "action_errors": action_errors or [],
        "files": files or [],
        "cpu_seconds": cpu_seconds or {"web": 1.0, "workers": 1.0, "scheduler": 0.1},
        "window": [0.0, 60.0],
    }


def _line(
    load: dict, anchor: dict | None = None, file_ms: dict | None = None, not_succeeded=(0, 0), files_done: int = 1
) -> dict:
    return load_line(
        load,
        anchor or _phase([["page", "page files list", 10.0, None]]),
        file_ms or {"total": [], "wait": [], "run": []},
        not_succeeded,
        users=30,
        seconds=60,
        anchor_seconds=20,
        rows=100,
        files_done=files_done,
        memory_mb=(900.04, 600.06),
        load_averages=((1.234, 1.0, 0.5), (2.0, 1.5, 0.75)),
    )


def test_page_figures_leave_out_fragments_and_posts():
    load = _phase(
        [
            ["page", "page files list", 100.0, None],
            ["page", "page file", 200.0, None],
            ["fragment", "fragment file progress", 5000.0, None],
            ["form", "form request file", 9000.0, None],
        ]
    )

    line = _line(load)

    assert (line["requests"], line["page_requests"]) == (4, 2)
    assert (line["page_p50_ms"], line["page_max_ms"]) == (150.0, 200.0)
    assert line["fragment_p95_ms"] == 5000.0


def test_errors_count_failed_requests_broken_actions_and_files_that_did_not_succeed():
    load = _phase(
        [["page", "page files list", 100.0, "page files list: answered 500"], ["page", "page file", 90.0, None]],
        action_errors=["AttributeError: 'NoneType' object has no attribute 'group'"],
    )
    anchor = _phase([["page", "page overview", 50.0, None]])

    line = _line(load, anchor, not_succeeded=(2, 1))

    assert (line["errors"], line["anchor_errors"]) == (4, 1)


def test_file_figures_come_from_the_database_and_what_the_person_saw_from_the_page():
    load = _phase([], files=[{"id": 1, "sent_at": 0.0, "seen_ms": 900.0}, {"id": 2, "sent_at": 0.0, "seen_ms": None}])

    line = _line(load, file_ms={"total": [400.0, 800.0], "wait": [100.0, 300.0], "run": [250.0, 450.0]})

    assert line["files"] == 2
    assert (line["file_p50_ms"], line["file_p95_ms"]) == (600.0, 780.0)
    assert (line["file_wait_p95_ms"], line["file_run_p95_ms"]) == (290.0, 440.0)
    assert line["file_seen_p95_ms"] == 900.0


def test_ratio_is_the_page_p95_under_load_over_one_person_alone():
    load = _phase([["page", "page files list", 300.0, None]])
    anchor = _phase([["page", "page files list", 100.0, None]])

    line = _line(load, anchor)

    assert (line["anchor"], line["anchor_page_p95_ms"], line["ratio"]) == ("one_user_serial", 100.0, 3.0)


def test_the_line_carries_the_house_fields_rounded():
    line = _line(_phase([["page", "page overview", 12.345, None]]))

    assert {key: line[key] for key in ("name", "users", "seconds", "rows", "anchor_seconds")} == {
        "name": "console_load",
        "users": 30,
        "seconds": 60,
        "rows": 100,
        "anchor_seconds": 20,
    }
    assert (line["page_p95_ms"], line["peak_rss_mb"], line["peak_pss_mb"]) == (12.3, 900.0, 600.1)
    assert line["load_average_before"] == [1.23, 1.0, 0.5]


def test_cpu_is_given_per_request_for_the_web_and_per_finished_file_for_the_workers():
    load = _phase(
        [["page", "page overview", 10.0, None]] * 40, cpu_seconds={"web": 2.0, "workers": 3.0, "scheduler": 0.25}
    )

    line = _line(load, files_done=12)

    assert (line["web_cpu_s"], line["workers_cpu_s"], line["scheduler_cpu_s"]) == (2.0, 3.0, 0.25)
    assert (line["web_cpu_ms_per_request"], line["worker_cpu_ms_per_file"]) == (50.0, 250.0)


def test_no_finished_file_gives_no_cpu_per_file():
    assert _line(_phase([["page", "page overview", 10.0, None]]), files_done=0)["worker_cpu_ms_per_file"] is None
