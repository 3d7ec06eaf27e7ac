"""System health 0-100 from psutil: the mean of ``100-cpu%``, ``100-mem%``, ``100-disk%``.

Samples are cached for ``system.cache_seconds`` and, in guard mode, smoothed with an EWMA
so one CPU spike does not flip a decision. ``GUARD_SYSTEM_HEALTH`` (``system.health``)
pins the value for CI and reproducible runs.
"""

from __future__ import annotations

import threading
import time

import attrs

from guard.config import Config


@attrs.frozen
class SystemSample:
    score: float
    available: bool = True
    detail: str = ""


class SystemHealth:
    def __init__(self, config: Config) -> None:
        self._pinned = config.get("system.health")
        self._ttl = float(config.get("system.cache_seconds"))
        self._alpha = 1.0 if config.get("fusion.mode") == "seed" else float(config.get("system.smoothing"))
        self._disk = str(config.get("system.disk_path"))
        self._lock = threading.Lock()
        self._value: float | None = None
        self._at = -1e18
        self._primed = False
        # the sample of the value held (frozen: every call shares it while it holds; the fused
        # score asks on every call that is not low-risk). Set before ``_at``: a reader that
        # sees the new time sees the new sample.
        self._sample: SystemSample | None = None

    def sample(self) -> SystemSample:
        if self._pinned is not None:
            pinned = self._sample
            if pinned is None:
                pinned = self._sample = SystemSample(float(self._pinned), detail="pinned by system.health")
            return pinned
        now = time.monotonic()
        if now - self._at < self._ttl and (held := self._sample) is not None:
            return held
        with self._lock:
            if now - self._at < self._ttl and (held := self._sample) is not None:
                return held
            try:
                raw, detail = self._measure()
            except Exception as exc:  # psutil can fail in containers; never fatal
                return SystemSample(50.0, available=False, detail=f"system: unavailable ({exc})")
            value = raw if self._value is None else self._alpha * raw + (1 - self._alpha) * self._value
            sample = SystemSample(value, detail=detail)
            self._value, self._sample = value, sample
            self._at = now
            return sample

    def _measure(self) -> tuple[float, str]:
        import psutil

        if not self._primed:
            # The first cpu_percent(None) has no interval to compare with; use the load average.
            psutil.cpu_percent(None)
            self._primed = True
            load1 = psutil.getloadavg()[0] if hasattr(psutil, "getloadavg") else 0.0
            cpu = min(100.0, 100.0 * load1 / max(1, psutil.cpu_count() or 1))
        else:
            cpu = psutil.cpu_percent(None)
        mem = psutil.virtual_memory().percent
        try:
            disk = psutil.disk_usage(self._disk).percent
        except OSError:
            disk = 0.0
        score = ((100 - cpu) + (100 - mem) + (100 - disk)) / 3
        return max(0.0, min(100.0, score)), f"cpu {cpu:.0f}%, mem {mem:.0f}%, disk {disk:.0f}%"
