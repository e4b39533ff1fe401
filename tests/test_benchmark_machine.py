"""benchmarks/machine.py: what the benchmarks say about other work on the machine while they ran."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import machine

TICK = os.sysconf("SC_CLK_TCK")


def _stat(tmp_path: Path, user: int, system: int, idle: int, steal: int) -> str:
    path = tmp_path / "stat"
    # the aggregate line, then a core's (which must not be read) and a line of another kind
    path.write_text(f"cpu  {user} 5 {system} {idle} 7 1 2 {steal} 0 0\ncpu0 999999 0 0 0 0 0 0 0 0 0\nintr 12345\n")
    return str(path)


def test_busy_time_counts_every_busy_field_but_idle_and_iowait(tmp_path: Path) -> None:
    # user 100 + nice 5 + system 20 + irq 1 + softirq 2 + steal 3 ticks; idle (900) and iowait (7) are not busy
    assert machine._machine_busy_s(_stat(tmp_path, 100, 20, 900, 3)) == pytest.approx(131 / TICK)


def test_busy_time_is_none_where_the_file_cannot_be_read(tmp_path: Path) -> None:
    assert machine._machine_busy_s(str(tmp_path / "absent")) is None
    (tmp_path / "odd").write_text("intr 1 2 3\n")
    assert machine._machine_busy_s(str(tmp_path / "odd")) is None


def test_other_work_leaves_out_this_process_own_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """Machine busy time grows by 3 s while this process spends 1 s and 2 s of wall pass: others kept 1 core busy."""
    busy = iter([10.0, 13.0])
    own = iter([50.0, 51.0])
    wall = iter([100.0, 102.0])
    monkeypatch.setattr(machine, "_machine_busy_s", lambda: next(busy))
    monkeypatch.setattr(machine, "_own_cpu_s", lambda: next(own))
    monkeypatch.setattr(machine.time, "perf_counter", lambda: next(wall))
    work = machine.OtherWork()
    assert work.cores() == pytest.approx(1.0)


def test_own_cpu_counts_the_children_waited_for() -> None:
    """A child process's CPU joins the benchmark's own once it has been waited for (cli_startup's timed commands)."""
    own_before, children_before = machine._own_cpu_s(), _children_cpu_s()
    subprocess.run([sys.executable, "-c", "sum(range(3_000_000))"], check=True)
    child_s = _children_cpu_s() - children_before
    assert child_s > 0
    assert machine._own_cpu_s() - own_before >= child_s - 1e-9  # the sums of tick counts as floats round apart


def _children_cpu_s() -> float:
    times = os.times()
    return times.children_user + times.children_system


def test_other_work_falls_back_to_the_load_average_off_linux(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(machine, "_machine_busy_s", lambda: None)
    line = machine.OtherWork().line()
    assert line.startswith("load average ") and "cores" in line
