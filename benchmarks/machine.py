"""What else the machine did while a benchmark ran.

These shared 2-core machines slow every figure when another process keeps a core busy: the two cores are hyperthreads
that share one core's units. Measured in December 2026, a cold plan's CPU time grew from 4.0 to 5.3 ms beside one busy
loop, the pure-Python reference from 8.3 to 12.2 ms. A figure is comparable with a target only when the machine was
quiet, so the benchmarks say how quiet it was.
"""

from __future__ import annotations

import os
import time


def load_average_line() -> str:
    """The one-minute load average, as a line for a benchmark's output."""
    return f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (other work on the machine slows every figure)"


class OtherWork:
    """The cores that processes other than this one and its children kept busy from its creation to `line()` (Linux:
    /proc/stat's busy time, less the benchmark's own CPU time: its own and that of the children it waited for)."""

    def __init__(self) -> None:
        self._machine_s = _machine_busy_s()
        self._own_s = _own_cpu_s()
        self._wall_s = time.perf_counter()

    def cores(self) -> float | None:
        """Cores busy with other work on average since creation; None where /proc/stat cannot be read."""
        now = _machine_busy_s()
        if now is None or self._machine_s is None:
            return None
        wall_s = time.perf_counter() - self._wall_s
        others_s = (now - self._machine_s) - (_own_cpu_s() - self._own_s)
        return max(others_s, 0.0) / wall_s if wall_s > 0 else 0.0

    def line(self) -> str:
        cores = self.cores()
        if cores is None:
            return load_average_line()
        return (
            f"other processes kept {cores:.2f} of {os.cpu_count()} cores busy meanwhile (about 0 on a quiet machine;"
            " beside one busy core, figures run 1.3-1.5x slower)"
        )


def _own_cpu_s() -> float:
    """CPU seconds this process and the children it has waited for have spent (user and system)."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def _machine_busy_s(stat_path: str = "/proc/stat") -> float | None:
    """CPU seconds every core has spent busy since boot (user, nice, system, interrupts, steal), from the first line of
    Linux's /proc/stat (in clock ticks); None where that cannot be read."""
    try:
        with open(stat_path, encoding="ascii") as stat:
            fields = stat.readline().split()
    except OSError:
        return None
    if len(fields) < 9 or fields[0] != "cpu":
        return None
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(v) for v in fields[1:9])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")
