"""System health against worked numbers: psutil-shaped readings in, the mean of the headroom out.

``system = mean(100-cpu%, 100-mem%, 100-disk%)`` (docs/fusion.md). Each expected value below is
worked by hand from that formula; none is computed by guard. psutil itself is replaced by
readings of its own shapes (``svmem``, ``sdiskusage``, the load-average tuple); guard is real.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
from freezegun import freeze_time

from guard.config import Config
from guard.system import SystemHealth

T0 = "2026-01-01 00:00:00"


class Machine:
    """A psutil reading: ``cpu`` is what cpu_percent(None) returns after priming."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.load = (1.0, 2.0, 3.0)  # 1-, 5-, 15-minute load averages
        self.cores: int | None = 4
        self.cpu = 10.0
        self.mem = 40.0
        self.disk: dict[str, float] = {"/": 70.0}
        self.disk_asked: list[str] = []
        self.cpu_calls = 0
        self.broken: Exception | None = None
        real = psutil.virtual_memory()
        self._disk_shape = psutil.disk_usage("/")  # psutil's own record, its fields replaced
        monkeypatch.setattr(psutil, "getloadavg", lambda: self.load)
        monkeypatch.setattr(psutil, "cpu_count", lambda logical=True: self.cores)
        monkeypatch.setattr(psutil, "cpu_percent", self._cpu_percent)
        monkeypatch.setattr(psutil, "virtual_memory", lambda: self._memory(real))
        monkeypatch.setattr(psutil, "disk_usage", self._disk_usage)

    def _cpu_percent(self, interval: float | None = None) -> float:
        self.cpu_calls += 1
        return self.cpu

    def _memory(self, real: Any) -> Any:
        if self.broken is not None:
            raise self.broken
        return real._replace(percent=self.mem)

    def _disk_usage(self, path: str) -> Any:
        self.disk_asked.append(path)
        if path not in self.disk:
            raise FileNotFoundError(path)
        pct = self.disk[path]
        return self._disk_shape._replace(total=1000, used=int(pct * 10), free=1000 - int(pct * 10), percent=pct)


@pytest.fixture
def machine(monkeypatch: pytest.MonkeyPatch) -> Iterator[Machine]:
    yield Machine(monkeypatch)


def health(tmp_path: Path, **overrides: Any) -> SystemHealth:
    return SystemHealth(Config.load(tmp_path / "ws", env={}, overrides=overrides))


def test_first_sample_uses_the_one_minute_load_per_core(tmp_path: Path, machine: Machine) -> None:
    # cpu = 100 * 1.0 / 4 = 25; (75 + 60 + 30) / 3 = 55
    with freeze_time(T0):
        s = health(tmp_path).sample()
    assert s.score == 55.0
    assert s.available is True
    assert s.detail == "cpu 25%, mem 40%, disk 70%"


def test_each_term_counts_a_third(tmp_path: Path, machine: Machine) -> None:
    """Dropping any term (the review dropped disk) moves the score."""
    machine.load, machine.mem, machine.disk = (0.0, 0.0, 0.0), 0.0, {"/": 90.0}
    with freeze_time(T0):
        assert health(tmp_path).sample().score == 70.0  # (100 + 100 + 10) / 3
    machine.mem, machine.disk = 90.0, {"/": 0.0}
    with freeze_time(T0):
        assert health(tmp_path).sample().score == 70.0  # (100 + 10 + 100) / 3
    machine.load, machine.mem = (3.6, 0.0, 0.0), 0.0
    with freeze_time(T0):
        assert health(tmp_path).sample().score == 70.0  # cpu 90: (10 + 100 + 100) / 3


def test_load_above_the_cores_is_cpu_100(tmp_path: Path, machine: Machine) -> None:
    machine.load = (12.0, 0.0, 0.0)  # 300% of 4 cores, capped at 100
    with freeze_time(T0):
        s = health(tmp_path).sample()
    assert s.score == 30.0  # (0 + 60 + 30) / 3
    assert s.detail == "cpu 100%, mem 40%, disk 70%"


def test_unknown_core_count_counts_one_core(tmp_path: Path, machine: Machine) -> None:
    machine.load, machine.cores, machine.mem, machine.disk = (0.5, 0.0, 0.0), None, 20.0, {"/": 50.0}
    with freeze_time(T0):
        assert health(tmp_path).sample().score == 60.0  # cpu 50 of 1 core: (50 + 80 + 50) / 3


def test_no_load_average_reads_cpu_0_at_first(
    tmp_path: Path, machine: Machine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delattr(psutil, "getloadavg")
    machine.mem, machine.disk = 40.0, {"/": 10.0}
    with freeze_time(T0):
        assert health(tmp_path).sample().score == pytest.approx(250 / 3)  # (100 + 60 + 90) / 3


def test_configured_disk_is_the_one_measured(tmp_path: Path, machine: Machine) -> None:
    machine.disk = {"/data": 40.0}
    with freeze_time(T0):
        s = health(tmp_path, **{"system.disk_path": "/data"}).sample()
    assert machine.disk_asked == ["/data"]
    assert s.score == 65.0  # (75 + 60 + 60) / 3


def test_unreadable_disk_counts_as_empty(tmp_path: Path, machine: Machine) -> None:
    machine.disk, machine.mem = {}, 25.0
    with freeze_time(T0):
        s = health(tmp_path).sample()
    assert s.score == pytest.approx(250 / 3)  # (75 + 75 + 100) / 3
    assert s.detail == "cpu 25%, mem 25%, disk 0%"


def test_psutil_failure_is_neutral_and_unavailable(tmp_path: Path, machine: Machine) -> None:
    machine.broken = RuntimeError("no /proc")
    with freeze_time(T0):
        s = health(tmp_path).sample()
    assert (s.score, s.available, s.detail) == (50.0, False, "system: unavailable (no /proc)")


def test_pinned_value_is_not_measured(tmp_path: Path, machine: Machine) -> None:
    s = health(tmp_path, **{"system.health": 12}).sample()
    assert (s.score, s.available, s.detail) == (12.0, True, "pinned by system.health")
    assert machine.disk_asked == []


def test_guard_mode_smooths_the_next_sample(tmp_path: Path, machine: Machine) -> None:
    """After the cache (2 s) a new reading counts 0.3: 0.3 * 60 + 0.7 * 55 = 56.5."""
    with freeze_time(T0) as clock:
        h = health(tmp_path)
        assert h.sample().score == 55.0
        clock.tick(2.0)  # exactly the cache time: measured again
        s = h.sample()
    # second reading: cpu_percent 10 -> (90 + 60 + 30) / 3 = 60
    assert machine.cpu_calls == 2  # primed once, then read
    assert s.score == pytest.approx(56.5, abs=1e-9)
    assert s.detail == "cpu 10%, mem 40%, disk 70%"


def test_seed_mode_takes_each_reading_as_is(tmp_path: Path, machine: Machine) -> None:
    with freeze_time(T0) as clock:
        h = health(tmp_path, **{"fusion.mode": "seed"})
        assert h.sample().score == 55.0
        clock.tick(2.0)
        assert h.sample().score == 60.0


def test_a_sample_is_reused_within_the_cache_time(tmp_path: Path, machine: Machine) -> None:
    with freeze_time(T0) as clock:
        h = health(tmp_path, **{"system.cache_seconds": 5})
        first = h.sample()
        machine.mem = 100.0
        clock.tick(4.5)
        again = h.sample()
        clock.tick(0.5)
        later = h.sample()
    assert (again.score, again.detail) == (55.0, "cpu 25%, mem 40%, disk 70%")
    assert first == again
    # (90 + 0 + 30) / 3 = 40; 0.3 * 40 + 0.7 * 55 = 12 + 38.5 = 50.5
    assert later.score == pytest.approx(50.5, abs=1e-9)


def test_system_dimension_of_a_medium_call_is_the_measured_health(workspace: Path, machine: Machine) -> None:
    """Through Guard.decide: ``frobnicate`` (medium) weighs the machine as measured."""
    from guard import Guard

    with freeze_time(T0):
        g = Guard(workspace, {"fusion.mode": "seed", "memory.backend": "history"})
        rec = g.decide("bash", {"command": "frobnicate"})
        g.close()
    assert rec.components["system"] == 55.0
    assert rec.layer("fusion").data["dimensions"]["system"]["note"] == "cpu 25%, mem 40%, disk 70%"


def test_a_full_machine_scores_0(tmp_path: Path, machine: Machine) -> None:
    machine.load, machine.mem, machine.disk = (8.0, 0.0, 0.0), 100.0, {"/": 100.0}
    with freeze_time(T0):
        assert health(tmp_path).sample().score == 0.0  # (0 + 0 + 0) / 3


def test_unmeasurable_machine_is_the_prior_in_guard_mode(workspace: Path, machine: Machine) -> None:
    from guard import Guard

    machine.broken = RuntimeError("no /proc")
    with freeze_time(T0):
        for mode, expected in (("guard", 55.0), ("seed", 50.0)):  # medium prior 55; seed: the neutral 50
            g = Guard(workspace / mode, {"fusion.mode": mode, "memory.backend": "history"})
            rec = g.decide("bash", {"command": "frobnicate"})
            g.close()
            assert rec.components["system"] == expected
            assert "system" in rec.unavailable


def test_seed_mode_measures_the_machine_for_reads_too(workspace: Path, machine: Machine) -> None:
    from guard import Guard

    with freeze_time(T0):
        seed = Guard(workspace / "s", {"fusion.mode": "seed", "memory.backend": "history"})
        assert seed.decide("bash", {"command": "ls"}).components["system"] == 55.0
        seed.close()
        assert machine.disk_asked == ["/"]
        g = Guard(workspace / "g", {"memory.backend": "history"})
        rec = g.decide("bash", {"command": "ls"})
        g.close()
    assert machine.disk_asked == ["/"]  # guard mode does not measure for a safe read
    assert rec.layer("fusion").data["dimensions"]["system"]["note"] == "system: not weighed for low-risk calls"
