"""One atomic writer (guard.atomic): exact modes, kept modes where asked, whole content, no temp file left."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from guard.atomic import replacing, write_atomic, write_private_atomic


@pytest.fixture
def umask() -> Iterator[None]:
    """A permissive umask for the test, so an exact mode is the writer's doing, not the umask's."""
    old = os.umask(0o002)
    try:
        yield
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return path.stat().st_mode & 0o777


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


class TestModes:
    @pytest.mark.parametrize("mode", [0o600, 0o644, 0o640])
    def test_a_new_file_gets_exactly_the_mode_asked(self, tmp_path: Path, umask: None, mode: int) -> None:
        path = tmp_path / "f.json"
        write_atomic(path, "{}", mode=mode, keep_mode=False, fsync=False)
        assert _mode(path) == mode

    def test_a_strict_umask_does_not_narrow_a_host_file(self, tmp_path: Path) -> None:
        """A host's new settings file is 0644 even under umask 077 (the host may run as another reader)."""
        old = os.umask(0o077)
        try:
            write_atomic(tmp_path / "settings.json", "{}", mode=0o644, keep_mode=True, fsync=True)
        finally:
            os.umask(old)
        assert _mode(tmp_path / "settings.json") == 0o644

    def test_keep_mode_keeps_an_existing_files_bits(self, tmp_path: Path) -> None:
        path = tmp_path / "guard.toml"
        path.write_text("old\n")
        path.chmod(0o640)
        write_atomic(path, "new\n", mode=0o600, keep_mode=True, fsync=True)
        assert _mode(path) == 0o640 and path.read_text() == "new\n"

    def test_private_state_is_0600_whatever_it_was(self, tmp_path: Path) -> None:
        """guard's own state does not inherit a widened mode: keep_mode=False resets it."""
        path = tmp_path / ".guard-state.json"
        path.write_text("{}")
        path.chmod(0o644)
        write_private_atomic(path, '{"v": 1}')
        assert _mode(path) == 0o600 and json.loads(path.read_text()) == {"v": 1}


class TestNothingLeftOnError:
    def test_an_error_in_the_block_leaves_the_old_file_and_no_temp(self, tmp_path: Path) -> None:
        path = tmp_path / "snapshot.bin"
        path.write_bytes(b"old")
        with pytest.raises(RuntimeError), replacing(path, mode=0o600, keep_mode=False, fsync=False) as f:
            f.write(b"half of the new")
            raise RuntimeError("the writer failed half-way")
        assert path.read_bytes() == b"old"
        assert _leftovers(tmp_path) == []

    def test_a_rename_that_fails_leaves_no_temp(self, tmp_path: Path) -> None:
        target = tmp_path / "taken"
        target.mkdir()
        (target / "inside").write_text("x")
        with pytest.raises(OSError):
            write_atomic(target, "text", mode=0o600, keep_mode=False, fsync=False)
        assert _leftovers(tmp_path) == [] and (target / "inside").read_text() == "x"

    def test_a_full_disk_keeps_the_old_content_whole(self, tmp_path: Path) -> None:
        """The file-size limit (EFBIG, as a full disk's ENOSPC) stops the write: old file whole, no temp."""
        path = tmp_path / "state.json"
        path.write_text('{"old": true}')
        code = f"""
import resource, signal, sys
from pathlib import Path
from guard.atomic import write_atomic
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
try:
    write_atomic(Path({str(path)!r}), "x" * 100_000, mode=0o600, keep_mode=False, fsync=True)
except OSError as exc:
    print(exc.strerror)
    sys.exit(0)
sys.exit(1)
"""
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
        assert proc.returncode == 0, proc.stderr
        assert "too large" in proc.stdout.lower()
        assert path.read_text() == '{"old": true}'
        assert _leftovers(tmp_path) == []

    def test_private_state_logs_instead_of_raising(self, tmp_path: Path) -> None:
        """write_private_atomic never raises into a decision: a missing folder is only a warning."""
        write_private_atomic(tmp_path / "gone" / "state.json", "{}")
        assert not (tmp_path / "gone").exists()


def test_a_reader_sees_the_old_file_or_the_new_never_a_mix(tmp_path: Path) -> None:
    path = tmp_path / "doc.json"
    old, new = json.dumps({"v": "a" * 200_000}), json.dumps({"v": "b" * 300_000})
    write_atomic(path, old, mode=0o600, keep_mode=False, fsync=False)
    seen: set[str] = set()
    done = threading.Event()

    def read() -> None:
        while not done.is_set():
            seen.add(path.read_text())

    reader = threading.Thread(target=read)
    reader.start()
    try:
        for i in range(40):
            write_atomic(path, new if i % 2 else old, mode=0o600, keep_mode=False, fsync=False)
    finally:
        done.set()
        reader.join()
    assert seen <= {old, new} and seen
    assert _leftovers(tmp_path) == []
