"""What the product's processes use, read from /proc: CPU time and memory of process trees.

Shared by bench/load.py (memory, sampled while the people run) and bench/load_users.py (CPU
time at the edges of each measured phase, which only that process knows).
"""

from __future__ import annotations

import os

from bench.cases import _descendants

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def tree(roots: list[int]) -> list[int]:
    """The processes `roots` and every live process below them."""
    return roots + [kid for root in roots for kid in _descendants(root)]


def cpu_seconds(roots: list[int]) -> float:
    """User + system CPU seconds of every live process of the trees, plus what the children they
    have reaped used (an RQ work-horse's time joins its worker's once it exits)."""
    ticks = 0
    for pid in tree(roots):
        try:
            with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
                # After "pid (name)": state is the first field, utime, stime, cutime, cstime the 12th to 15th.
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        ticks += sum(int(value) for value in fields[11:15])
    return ticks / CLOCK_TICKS


def memory_kib(pid: int) -> dict[str, int]:
    """A process's memory totals in KiB ("Rss:", "Pss:", …) from smaps_rollup; empty once it has exited."""
    try:
        with open(f"/proc/{pid}/smaps_rollup", encoding="ascii") as rollup:
            return {parts[0]: int(parts[1]) for parts in (line.split() for line in rollup) if len(parts) == 3}
    except (OSError, ValueError):
        return {}
