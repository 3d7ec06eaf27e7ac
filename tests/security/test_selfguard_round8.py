"""Archives unpacked onto a host's hook settings, round 8: the unpackers and renames round 7 left.

Round 7 read the members of ``tar -x`` and ``unzip`` archives at decision time. These unpacked the
same archives without it, and were allowed (G184) or asked (G126) whatever they held:

- ``tar --transform``/``--xform`` (sed expressions that rename members: ``s,^,.claude/,`` puts a
  bare ``settings.json`` on the project's hook settings), now followed
  (:mod:`guard.static.facts.renames`); an expression guard does not read exactly (``\\U``, a scope
  flag) asks (G126) instead of being assumed harmless;
- ``python -m zipfile -e`` and ``python -m tarfile -e`` (tarfile keeps absolute names), Python code
  that unpacks (``tarfile.open(p).extractall()``, ``with zipfile.ZipFile(p) as z: z.extractall()``,
  ``shutil.unpack_archive(p)``), ``7z x``,
  ``jar x`` (a zip), ``cpio -i -F``/``-I`` (the ``newc`` and ``odc`` formats, read by guard),
  ``pax -r -f`` with its ``-s /old/new/`` rewrites (the first that matches);
- only the members a ``tar -x`` names are looked at (``tar -xf x.tar src/``: blocked before whatever
  else the archive held), as literal names or prefixes (GNU tar) or shell patterns (bsdtar);
- an archive the call copies before it unpacks it (``cp x.tar y.tar && tar -xf y.tar``, ``mv``, ``cat x.tar >
  y.tar``, a folder copied with it in) is the file it copies; one the call makes otherwise (``curl -o``,
  Python writing it, ``tar -c``) holds what is not on disk yet: asked (G126) instead of reading the stale one;
- a patch (``git apply``, ``git am``, ``patch``, from a file or stdin; unified and git diffs, ``rename
  to``, Codex's ``*** Add File:``) has the names it changes read the same way
  (:mod:`guard.static.facts.patches`): ``git apply x.diff`` that edits ``.claude/settings.json`` blocks;
- an archive read from stdin: redirected from a file (``tar -x < x.tar``, ``cpio -idm < x.cpio``,
  ``pax -r < x.tar``) or printed whole by ``cat``/``zcat``/``gzip -dc`` into the pipe (the file a
  stream is the content of travels with it: ``Flow.file``).

And two false answers on the way: ``tar -xOf x.tar …`` and ``7z x -so`` print members, they do not
write them (``tar -xOf hooks.tar .claude/settings.json`` blocked as a write of the settings file);
``gzip -dc x.gz`` read ``-d`` as unzip's folder option (``gzip -dc ~/.x.gz`` asked as a write in the
home; ``gzip -d x.gz``, which does write ``x``, was read-only).

A member that lands on ``.claude/settings*.json``, ``~/.claude/settings.json`` or guard's workspace
now blocks (G156). Near-misses keep their answers: renames that move the settings file away, or
leave a bare ``settings.json``; junking unpackers (``7z e``); ordinary members; pax's first matching
``-s`` winning over a later one. Archives are built by the tests (tarfile, zipfile, cpio headers
written byte by byte), never by running an archiver; every command is data, decided through
``Guard.decide`` and ``guard hook claude-code`` with a fake HOME.
"""

from __future__ import annotations

import io
import re
import tarfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from guard.core import Guard
from guard.model import AUTO_ALLOW, BLOCK, REQUEST_CONFIRM
from guard.static.facts import archives, renames
from tests.security.archive_files import tar, zip_of
from tests.security.conftest import decide, hook_answer


def _newc(names: list[str], folders: tuple[str, ...] = ()) -> bytes:
    """A cpio archive in the ``newc`` format (``cpio -H newc``), written from the format's layout:
    "070701", thirteen 8-digit hex fields, the name (NUL-ended, padded so header and name fill whole
    4-byte words), the data (padded likewise), and a ``TRAILER!!!`` entry."""
    out = b""
    entries = [(n, 0o040755, b"") for n in folders] + [(n, 0o100644, b"{}") for n in names]
    for name, mode, data in [*entries, ("TRAILER!!!", 0, b"")]:
        raw = name.encode() + b"\0"
        fields = [1, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(raw), 0]
        record = b"070701" + b"".join(b"%08X" % f for f in fields) + raw
        record += b"\0" * (-len(record) % 4) + data + b"\0" * (-len(data) % 4)
        out += record
    return out


def _odc(names: list[str]) -> bytes:
    """A cpio archive in the ``odc`` format (``cpio -H odc``): "070707", octal fields of 6 digits
    (dev, ino, mode, uid, gid, nlink, rdev), 11 (mtime), 6 (name size), 11 (file size), then the name
    and the data, unpadded."""
    out = b""
    for name, data in [*((n, b"{}") for n in names), ("TRAILER!!!", b"")]:
        raw = name.encode() + b"\0"
        mode = 0o100644 if data else 0
        head = b"070707" + b"".join(b"%06o" % v for v in (0, 1, mode, 0, 0, 1, 0)) + b"%011o" % 0
        out += head + b"%06o" % len(raw) + b"%011o" % len(data) + raw + data
    return out


PATCHES = {  # patch files written by the tests (never applied)
    "hooks.diff": (
        "diff --git a/.claude/settings.json b/.claude/settings.json\n--- a/.claude/settings.json\n"
        '+++ b/.claude/settings.json\n@@ -1 +1 @@\n-{}\n+{"disableAllHooks": true}\n'
    ),
    "plain.diff": "diff --git a/src/app.py b/src/app.py\n--- a/src/app.py\n+++ b/src/app.py\n@@ -1 +1 @@\n-a\n+b\n",
    "rename.diff": (
        "diff --git a/x.json b/.claude/settings.local.json\nsimilarity index 100%\n"
        "rename from x.json\nrename to .claude/settings.local.json\n"
    ),
    "codex.patch": "*** Begin Patch\n*** Add File: .claude/settings.json\n+{}\n*** End Patch\n",
    "bare.diff": "--- settings.json\n+++ settings.json\n@@ -1 +1 @@\n-a\n+b\n",
}


def make_archives(proj: Path, home: Path) -> None:
    """The archives the cases below unpack, in ``proj``."""
    tar(proj / "hooks.tar", ["src/app.py", ".claude/settings.json"])
    tar(proj / "flat.tar", ["settings.json", "app.py"])
    tar(proj / "pkg.tar", ["pkg/settings.json"])
    tar(proj / "abs.tar", [str(home / ".claude" / "settings.json")])
    tar(proj / "plain.tar", ["src/app.py", "README.md"])
    tar(proj / "hooks.tgz", [".claude/settings.json"], "w:gz")
    zip_of(proj / "hooks.zip", ["src/app.py", ".claude/settings.json"])
    zip_of(proj / "plain.zip", ["src/app.py"])
    zip_of(proj / "hooks.jar", ["META-INF/MANIFEST.MF", ".claude/settings.json"])
    zip_of(proj / "plain.jar", ["META-INF/MANIFEST.MF", "a/B.class"])
    (proj / "hooks.cpio").write_bytes(_newc(["src/app.py", ".claude/settings.json"], folders=(".claude",)))
    (proj / "hooks.odc").write_bytes(_odc(["src/app.py", ".claude/settings.local.json"]))
    (proj / "abs.cpio").write_bytes(_newc([str(home / ".claude" / "settings.json")]))
    (proj / "plain.cpio").write_bytes(_newc(["src/app.py"]))
    for name, text in PATCHES.items():
        (proj / name).write_text(text)


@pytest.fixture(scope="module")
def archived(fake_home: Path) -> Path:
    make_archives(fake_home / "proj", fake_home)
    return fake_home / "proj"


BLOCKED = [
    "tar --transform 's,^,.claude/,' -xf flat.tar",
    "tar -xf flat.tar --xform=s,^,.claude/,",
    "tar -xf pkg.tar --transform 's/^pkg/.claude/'",
    "tar -xf pkg.tar --transform 's/^\\(pkg\\)\\//.claude\\//'",  # (a group, escaped delimiters)
    "tar -xf pkg.tar --transform 's/^p[[:alpha:]]\\+/.claude/'",  # (a class, GNU's \\+)
    "tar -xf pkg.tar --transform 's/(pkg|lib)/.claude/x'",  # (extended, tar's x flag)
    "tar -xf hooks.tar --transform 's,^src/,lib/,'",  # (the rename leaves the settings file where it was)
    "tar -xf pkg.tar --strip-components=1 --transform 's,^,.claude/,'",
    "tar -xf flat.tar --transform 's,^,x/,;s,^x/,.claude/,'",  # (every expression in turn)
    "python3 -m zipfile -e hooks.zip .",
    "python3 -m zipfile -e hooks.zip out",  # (out/.claude/settings.json: a project's settings by name)
    "python -m tarfile -e hooks.tar",
    "python3 -m tarfile -e abs.tar /tmp/out",  # (tarfile keeps an absolute name: ~/.claude/settings.json)
    "7z x hooks.zip",
    "7z x hooks.zip -o$HOME",
    "jar xf hooks.jar",
    "jar --extract --file=hooks.jar",
    "cpio -idm -F hooks.cpio",
    "cpio -i -F hooks.odc",  # (.claude/settings.local.json)
    "cpio -i --no-absolute-filenames -I hooks.cpio",
    "cpio -i -F abs.cpio",  # (cpio restores the absolute name by default)
    "pax -r -f hooks.tar",
    "pax -r -f flat.tar -s ',^,.claude/,'",
    "pax -r -f abs.tar",
    "python3 -c \"import tarfile; tarfile.open('hooks.tar').extractall()\"",
    "python3 -c \"import tarfile; tarfile.open('abs.tar').extractall('/tmp/x')\"",  # (absolute kept)
    "python3 -c \"import tarfile as T; T.open(name='hooks.tar').extractall()\"",
    "python3 -c \"from zipfile import ZipFile; ZipFile('hooks.zip').extractall('out')\"",
    "python3 -c \"import tarfile\nwith tarfile.open('hooks.tar') as t:\n    t.extractall()\"",
    "python3 -c \"import tarfile\nt = tarfile.open('hooks.tar')\nt.extractall(path='x')\"",
    "python3 - <<'PY'\nimport zipfile\nwith zipfile.ZipFile('hooks.zip') as z:\n    z.extractall('out')\nPY",
    "python3 -c \"import shutil; shutil.unpack_archive('hooks.tar')\"",
    "python3 -c \"import shutil; shutil.unpack_archive(filename='hooks.zip', extract_dir='out')\"",
    "tar -x < hooks.tar",
    "tar -xf - < hooks.tar",
    "tar -xzf - -C ~ < hooks.tgz",
    "cat hooks.tar | tar -x",
    "zcat hooks.tgz | tar -x",
    "gzip -dc hooks.tgz | tar -xf -",
    "cpio -idm --no-absolute-filenames < hooks.cpio",
    "cat hooks.cpio | cpio -i --no-absolute-filenames",
    "pax -r < hooks.tar",
    "tar -xf hooks.tar .claude",  # (the members named: the folder holding the settings file)
    "tar -xf hooks.tar '*.json'",  # (a pattern, as bsdtar reads it)
    "tar -xf hooks.tar src .claude/settings.json",
    "tar -xf hooks.tar -T list.txt",  # (the names in a file: all of them, for all guard knows)
    # a copy made by the call is the file it copies (it is not on disk yet when the call is decided)
    "cp hooks.tar a.tar && tar -xf a.tar",
    "mv hooks.tar a.tar && tar -xf a.tar",
    "cat hooks.tar > a.tar; tar -xf a.tar",
    "cp hooks.tar a.tar; cp a.tar b.tar; tar -xf b.tar",
    "cp hooks.tar a.tar && tar -x < a.tar",
    "mkdir -p d && cp hooks.tar d/ && tar -xf d/hooks.tar",
    "cp -r . /tmp/copy && tar -xf /tmp/copy/hooks.tar",
    # patches, read when the call is decided
    "git apply hooks.diff",
    "git apply rename.diff",  # (git's ``rename to`` has no ``b/``)
    "git am hooks.diff",
    "git am < hooks.diff",
    "cat hooks.diff | git apply",
    "git apply codex.patch",  # (Codex's patch format)
    "git apply -p2 hooks.diff",  # (the name whole counts too: the stricter reading)
    "patch -p1 < hooks.diff",
    "patch -p1 -i hooks.diff",
    "patch -d .claude < bare.diff",  # (GNU patch with no -p may take the bare name)
    "cp hooks.diff /tmp/p.diff && git apply /tmp/p.diff",
]
KEPT = {  # names that land elsewhere, ordinary members, or a rename not read: the answer without them
    "tar --transform 's,^\\.claude,claude,' -xf hooks.tar": AUTO_ALLOW,  # (claude/settings.json)
    "tar --transform 's,^,lib/,' -xf flat.tar": AUTO_ALLOW,  # (lib/settings.json)
    "tar --transform 's,^,x/,' -xf plain.tar": AUTO_ALLOW,
    "tar -xf flat.tar": AUTO_ALLOW,
    "tar --transform 's/x/\\U&/' -xf plain.tar": REQUEST_CONFIRM,  # (a case conversion: G126)
    "tar --transform 's,a,b,r' -xf plain.tar": REQUEST_CONFIRM,  # (a scope flag: G126)
    "python3 -m zipfile -e plain.zip out": AUTO_ALLOW,
    "python3 -m tarfile -e plain.tar out": AUTO_ALLOW,
    "7z x plain.zip": AUTO_ALLOW,
    "7z e hooks.zip": AUTO_ALLOW,  # (folders junked: a bare settings.json)
    "jar xf plain.jar": AUTO_ALLOW,
    "cpio -i --no-absolute-filenames -F plain.cpio": AUTO_ALLOW,
    "cpio -idm -F plain.cpio": REQUEST_CONFIRM,  # (absolute names restored: G126, as before)
    "pax -r -f plain.tar -s ',^/,,'": AUTO_ALLOW,
    "pax -r -f flat.tar -s ',^,claude/,'": AUTO_ALLOW,
    "pax -r -f flat.tar -s ',^,claude/,' -s ',^,.claude/,'": AUTO_ALLOW,  # (pax: the first match is the last)
    "pax -r -f flat.tar -s 'bad'": REQUEST_CONFIRM,  # (not an expression: G126)
    "python3 -c \"import tarfile; tarfile.open('plain.tar').extractall()\"": AUTO_ALLOW,
    "python3 -c \"import zipfile; zipfile.ZipFile('plain.zip').extractall('out')\"": AUTO_ALLOW,
    "python3 -c \"import tarfile\nwith tarfile.open('plain.tar') as t:\n    t.extractall()\"": AUTO_ALLOW,
    # (the name bound again to an ordinary archive before it is unpacked)
    "python3 -c \"import tarfile\nt = tarfile.open('hooks.tar')\nt = tarfile.open('plain.tar')\nt.extractall()\"": AUTO_ALLOW,
    "python3 -c \"import shutil; shutil.unpack_archive('plain.tar', 'out')\"": AUTO_ALLOW,
    "tar -x < plain.tar": AUTO_ALLOW,
    "cat plain.tar | tar -x": AUTO_ALLOW,
    "cat -n hooks.tar | tar -x": AUTO_ALLOW,  # (not the archive's bytes: what tar reads is unknown, as before)
    "cat plain.tar hooks.tar | tar -x": AUTO_ALLOW,  # (two files: no one archive, as before)
    "cpio -i --no-absolute-filenames < plain.cpio": AUTO_ALLOW,
    "tar -xOf hooks.tar .claude/settings.json > member.json": AUTO_ALLOW,  # (printed, not written)
    "tar -xf hooks.tar --to-stdout": AUTO_ALLOW,
    "7z x -so hooks.zip > out.bin": AUTO_ALLOW,
    "tar -xf hooks.tar src": AUTO_ALLOW,  # (only src/ is unpacked: it holds no settings file)
    "tar -xf hooks.tar ./src/app.py": AUTO_ALLOW,
    "tar -xf hooks.tar 'src/*'": AUTO_ALLOW,
    "tar -xf hooks.tar s": AUTO_ALLOW,  # (a name, not a prefix of src/)
    "cp plain.tar a.tar && tar -xf a.tar": AUTO_ALLOW,
    "cp -r . /tmp/copy && tar -xf /tmp/copy/plain.tar": AUTO_ALLOW,
    # an archive the call makes some other way holds what is not on disk yet: asked (G126)
    "python3 -c \"open('n.tar', 'wb').write(b'x')\" && tar -xf n.tar": REQUEST_CONFIRM,
    "tar -cf x.tar src && tar -xf x.tar -C /tmp/t": REQUEST_CONFIRM,  # (made from src/: not followed)
    "cat plain.tar >> a.tar; tar -xf a.tar": REQUEST_CONFIRM,  # (appended to: more than the file it copies)
    "tar -xf plain.tar; python3 -c \"open('plain.tar', 'wb').write(b'x')\"": AUTO_ALLOW,  # (unpacked first)
    "mkdir d && tar -xf d/x.tar": AUTO_ALLOW,  # (a folder made empty: nothing in it to unpack)
    "git apply plain.diff": AUTO_ALLOW,
    "git apply --check hooks.diff": AUTO_ALLOW,  # (checked, not applied)
    "git apply --stat hooks.diff": AUTO_ALLOW,
    "patch -p1 < plain.diff": AUTO_ALLOW,
    "patch < bare.diff": AUTO_ALLOW,  # (a bare settings.json in the project)
    "git apply missing.diff": AUTO_ALLOW,  # (not there: git fails, as before)
    "printf x > n.diff && git apply n.diff": REQUEST_CONFIRM,  # (made by the call: G126)
    'cp "$SRC" b.tar && tar -xf b.tar': AUTO_ALLOW,  # (a runtime source: not read, and no loop looking for it)
}


@pytest.mark.parametrize(
    ("command", "answer", "rule"),
    [
        ("gzip -dc data.gz > data.txt", AUTO_ALLOW, "G184"),
        ("gzip -dc ~/notes.gz", AUTO_ALLOW, "G180"),  # (read, not a write in the home: asked before)
        ("gzip -d data.gz", AUTO_ALLOW, "G184"),  # (writes data: a project file, not read-only)
        ("gzip -d ~/notes.gz", REQUEST_CONFIRM, "G185"),  # (writes ~/notes)
    ],
)
def test_gzip_d_is_decompress_not_a_folder(
    home_guard: Guard, archived: Path, command: str, answer: str, rule: str
) -> None:
    decision, rules = decide(home_guard, command, archived)
    assert (decision, rule in rules) == (answer, True), (command, rules)


def test_cat_through_a_pipe_to_a_shell_still_reads_a_script_from_a_pipe(home_guard: Guard, archived: Path) -> None:
    """The file a stream came from does not make the pipe look empty: ``cat x.sh | bash`` asks (G194),
    ``bash < x.sh`` runs a script from a file (G181), as before."""
    assert "G194" in decide(home_guard, "cat x.sh | bash", archived)[1]
    assert "G181" in decide(home_guard, "bash < x.sh", archived)[1]


@pytest.mark.parametrize(
    ("command", "answer"),
    [
        # another project named "guard": its files land in guard's own ``guard`` folder, or its program
        # over guard's on the PATH, as ``pip uninstall guard`` (blocked already) takes them away
        ("pip install guard", BLOCK),
        ("pip3 install 'guard[extra]>=1'", BLOCK),
        ("uv pip install guard", BLOCK),
        ("pipx install guard", BLOCK),
        ("uv tool install guard", BLOCK),
        ("pip install guardrails", REQUEST_CONFIRM),  # (another name: an ordinary install)
        ("pip install guard-preflight", REQUEST_CONFIRM),  # (guard itself, already there: a no-op)
        ("uv add guard", REQUEST_CONFIRM),  # (a project dependency, in the project's environment)
        ("pip show guard", AUTO_ALLOW),
    ],
)
def test_installing_the_other_project_named_guard_blocks(
    home_guard: Guard, archived: Path, command: str, answer: str
) -> None:
    decision, rules = decide(home_guard, command, archived)
    assert (decision, "G418" in rules) == (answer, answer == BLOCK), (command, rules)


@pytest.mark.parametrize("command", BLOCKED)
def test_an_unpacked_member_landing_on_a_protected_file_blocks(home_guard: Guard, archived: Path, command: str) -> None:
    decision, rules = decide(home_guard, command, archived)
    assert (decision, "G156" in rules) == (BLOCK, True), (command, rules)


@pytest.mark.parametrize(("command", "answer"), KEPT.items())
def test_names_landing_elsewhere_keep_their_answer(
    home_guard: Guard, archived: Path, command: str, answer: str
) -> None:
    decision, rules = decide(home_guard, command, archived)
    assert decision == answer and "G156" not in rules, (command, rules)
    assert ("G126" in rules) == (answer == REQUEST_CONFIRM), (command, rules)


@pytest.mark.parametrize(
    ("command", "answer"),
    [
        ("tar --transform 's,^,.claude/,' -xf flat.tar", "deny"),
        ("cpio -idm -F hooks.cpio", "deny"),
        ("cat hooks.tar | tar -x", "deny"),
        ("git apply hooks.diff", "deny"),
        ("git apply plain.diff", "allow"),
        ("tar -xOf hooks.tar .claude/settings.json > member.json", "allow"),
        ("tar --transform 's,^,lib/,' -xf flat.tar", "allow"),
        ("tar --transform 's/x/\\U&/' -xf plain.tar", "ask"),
    ],
)
def test_the_claude_code_hook_follows_renames_and_other_unpackers(tmp_path: Path, command: str, answer: str) -> None:
    (tmp_path / "proj").mkdir()
    make_archives(tmp_path / "proj", tmp_path)
    decision, reason = hook_answer(tmp_path, command)
    assert decision == answer, (command, reason)
    assert ("G156" in reason) == (answer == "deny"), reason


# -- the readers, on their own ------------------------------------------------------------------
def test_cpio_members_are_read_in_both_formats_folders_left_out(tmp_path: Path) -> None:
    (tmp_path / "a.cpio").write_bytes(_newc(["x/y.txt", "z"], folders=("x",)))
    (tmp_path / "b.cpio").write_bytes(_odc(["p/q", "r"]))
    assert archives.members(str(tmp_path / "a.cpio")) == ("x/y.txt", "z")
    assert archives.members(str(tmp_path / "b.cpio")) == ("p/q", "r")


def test_a_cpio_archive_cut_short_is_not_read(tmp_path: Path) -> None:
    whole = _newc(["a/b", ".claude/settings.json"])
    (tmp_path / "cut.cpio").write_bytes(whole[: len(whole) - 130])  # (the trailer and part of a member gone)
    assert archives.members(str(tmp_path / "cut.cpio")) is None


def test_an_archive_that_unpacks_past_the_cap_is_not_read(tmp_path: Path) -> None:
    """A small compressed tar can hold gigabytes: what is read is capped after decompression
    (``archives.MAX_BYTES``), so such a one is not read (the folder's answer stands), and a zip whose
    end record declares more entries than ``MAX_MEMBERS`` is not parsed at all."""
    zeros = b"\0" * (archives.MAX_BYTES + (1 << 20))
    with tarfile.open(tmp_path / "bomb.tgz", "w:gz") as archive:
        info = tarfile.TarInfo("pad.bin")
        info.size = len(zeros)
        archive.addfile(info, io.BytesIO(zeros))
    assert (tmp_path / "bomb.tgz").stat().st_size < 1 << 20  # (it is small on disk)
    assert archives.members(str(tmp_path / "bomb.tgz")) is None
    zip_of(tmp_path / "many.zip", [f"f{i}" for i in range(archives.MAX_MEMBERS + 1)])
    assert archives.members(str(tmp_path / "many.zip")) is None
    zip_of(tmp_path / "enough.zip", [f"f{i}" for i in range(50)])
    assert archives.members(str(tmp_path / "enough.zip")) == tuple(f"f{i}" for i in range(50))


def test_archives_not_read_in_the_decisions_time_are_read_again_later(tmp_path: Path) -> None:
    """The archives one decision reads share one deadline; one it had no time for is not read (the
    folder's answer stands for that call) and not remembered as unreadable."""
    tar(tmp_path / "late.tar", [".claude/settings.json"])
    assert archives.members(str(tmp_path / "late.tar"), until=0.0) is None  # (a deadline long gone)
    assert archives.members(str(tmp_path / "late.tar")) == (".claude/settings.json",)


@pytest.mark.parametrize("mode", ["w:gz", "w:bz2", "w:xz"])
def test_compressed_tars_are_read_by_guards_own_decompression(tmp_path: Path, mode: str) -> None:
    tar(tmp_path / "x.tar", ["a/b.txt", ".claude/settings.json"], mode)
    assert archives.members(str(tmp_path / "x.tar")) == ("a/b.txt", ".claude/settings.json")


@given(st.binary(max_size=600))
def test_any_patch_text_gives_names_and_never_raises(data: bytes) -> None:
    from guard.static.facts import patches

    names = patches._names(b"diff --git " + data + b"\n+++ " + data + b"\nrename to " + data)
    assert all(isinstance(n, str) and n for n in names)


def test_patch_names_are_read_from_every_header_kind() -> None:
    from guard.static.facts import patches

    text = (
        'diff --git "a/x y" "b/x y"\n--- a/p.py\t2026-01-01\n+++ b/p.py\nIndex: svn/f.c\n'
        "copy to c/d.txt\n*** Update File: u.py\n*** Move to: m.py\n--- /dev/null\n"
    )
    assert patches._names(text.encode()) == ("a/x y", "b/x y", "a/p.py", "b/p.py", "svn/f.c", "c/d.txt", "u.py", "m.py")


@given(st.binary(max_size=400))
@settings(max_examples=200, deadline=None)
def test_any_bytes_after_a_cpio_magic_are_read_or_refused_never_raised(
    tmp_path_factory: pytest.TempPathFactory, data: bytes
) -> None:
    path = tmp_path_factory.mktemp("cpio") / "x.cpio"
    path.write_bytes(b"070701" + data)
    out = archives.members(str(path))
    assert out is None or all(isinstance(n, str) for n in out)


# worked by hand from sed's rules (not by running sed): expression, name, renamed
RENAMED = [
    ("s,^,.claude/,", "settings.json", ".claude/settings.json"),
    ("s/a/b/", "aaa", "baa"),
    ("s/a/b/g", "aaa", "bbb"),
    ("s/a/b/2", "aaa", "aba"),
    ("s/a/b/2g", "aaaa", "abbb"),
    ("s/\\(x\\)\\(y\\)/\\2\\1/", "xy", "yx"),
    ("s/.*/&.bak/", "f", "f.bak"),
    ("s/\\&/and/", "a&b", "aandb"),
    ("s/x/[&]/", "axb", "a[x]b"),
    ("s/A/b/i", "a", "b"),
    ("s/a*/X/", "*", "X*"),  # (an empty match at the start)
    ("s/*a/X/", "*a", "X"),  # (a leading star is a plain character)
    ("s/^*/X/", "*a", "Xa"),
    ("s/a\\{2\\}/X/", "aaa", "Xa"),
    ("s/a{2}/X/", "a{2}", "X"),  # (braces plain in a basic expression)
    ("s/a+/X/", "a+", "X"),  # (so is +)
    ("s/a\\+/X/", "aaa", "X"),
    ("s/(a|b)+/X/x", "abba", "X"),
    ("s/[[:digit:]]\\+/N/g", "a12b3", "aNbN"),
    ("s,[^/]*/,top/,", "dir/file", "top/file"),
    ("s/\\./_/g", "a.b.c", "a_b_c"),
    ("s,/,,", "/etc/x", "etc/x"),
    ("s/$/.x/", "f", "f.x"),
    ("s/a$b/X/", "a$b", "X"),  # (a dollar not at the end is a plain character)
    ("s,x,y,;s,y,z,", "x", "z"),
]


@pytest.mark.parametrize(("expression", "name", "renamed"), RENAMED)
def test_sed_expressions_rename_as_sed_does(expression: str, name: str, renamed: str) -> None:
    renamer = renames.parse([expression])
    assert renamer is not None and renamer.rename(name) == renamed


@pytest.mark.parametrize(
    "expression", ["s/x/\\U&/", "s/x/\\L&/", "s/x/y/r", "s/x/y/H", "s/x/\\2/", "s/x", "y/a/b/", "", "s/[[=a=]]/b/"]
)
def test_expressions_not_read_exactly_are_refused(expression: str) -> None:
    assert renames.parse([expression]) is None


_LITERAL = st.text(alphabet="abcXYZ019_-", min_size=1, max_size=6)


@given(_LITERAL, _LITERAL, st.text(alphabet="abcXYZ019_-./", max_size=20), st.booleans())
def test_a_literal_expression_renames_as_str_replace(old: str, new: str, name: str, every: bool) -> None:
    renamer = renames.parse([f"s/{old}/{new}/{'g' if every else ''}"])
    assert renamer is not None
    assert renamer.rename(name) == name.replace(old, new, -1 if every else 1)


@given(st.text(max_size=40), st.text(max_size=40))
def test_any_expression_is_parsed_or_refused_and_never_raises(expression: str, name: str) -> None:
    renamer = renames.parse([expression])
    if renamer is not None:
        assert isinstance(renamer.rename(name), str)


def test_a_literal_rename_matches_a_plain_python_substitution() -> None:
    """The oracle above, once for a dotted name where a regular expression would differ: ``.`` escaped."""
    renamer = renames.parse(["s/a\\.b/c/"])
    assert renamer is not None and renamer.rename("a.b axb") == re.sub(r"a\.b", "c", "a.b axb", count=1)
