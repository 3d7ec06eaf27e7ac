"""The methods attrs writes for guard's records, compiled once and kept in the workspace.

Each record class (``guard.model``'s, the stores', the layers', the hosts': ~45 on the way to one
decision) makes attrs write the source of its ``__init__``, ``__repr__``, ``__eq__``, ``__hash__``
… and ``compile()`` it: ~100 snippets, ~10 ms of a hook process that decides one call and exits.
``guard hook`` keeps the compiled code objects in ``<workspace>/.guard-attrs-code`` (marshal, the
format of Python's own ``.pyc``), each under the exact file name and source attrs wrote. A snippet
attrs writes differently (another attrs, a record that changed) is not found, is compiled as
before, and the file is rewritten, so a stale entry is never used. The file's first line names the
format, the Python version and the compile flags, and carries a CRC of the rest: a file
of another version, truncated or corrupted is ignored whole (and replaced), never half-read.

One literal differs from process to process: a hashable record's ``__hash__`` starts from
``hash("<attrs generated hash CLASS>")``, and string hashes are salted per process. The key holds
the source with that literal (recomputed here exactly as attrs computes it) written as ``SALT``;
the entry keeps the value it was compiled with, and a hit in another process gets its code with
that one constant of ``__hash__`` replaced by this process's value: the code attrs would compile.

    cache = CodeCache.open(workspace)   # before attrs is imported
    ...                                 # import and decide
    cache.save()                        # after the answer is out
"""

from __future__ import annotations

import binascii
import marshal
import os
import sys
from types import CodeType

TYPE_CHECKING = False  # (the hook pays for typing through attrs anyway, but says what it uses)
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

NAME = ".guard-attrs-code"
FORMAT = b"guard-attrs-code/1"
MAX_ENTRIES = 4096  # past this the file restarts from one run's snippets (records renamed over time)
_SIGNATURE = ("script", "globs", "locs", "filename")  # attr._make._compile_and_eval's, attrs 23.1-26.1
MAX_BYTES = 16 << 20  # a larger file is not this cache's (one run's snippets: ~0.2 MB)


def _future_flags(function: Callable[..., Any]) -> int:
    """The ``from __future__`` flags ``function``'s module compiles with: what its own ``compile()``
    calls inherit, so a cached snippet is the code attrs would have compiled."""
    import __future__

    mask = 0
    for feature in __future__.all_feature_names:
        mask |= getattr(__future__, feature).compiler_flag
    return function.__code__.co_flags & mask


def _tag(flags: int) -> bytes:
    """What besides the source decides the compiled code: the Python and the compile flags. (Not
    the attrs version: the same source compiles to the same code, and ``attr.__version__`` costs a
    hook ~30 ms of importlib.metadata.)"""
    return f"py{sys.hexversion:x}-{sys.implementation.cache_tag}-f{flags:x}".encode()


Entry = tuple[CodeType, int | None]  # the code, and the hash salt it was compiled with


def salt_of(filename: str) -> int | None:
    """The ``__hash__`` literal attrs writes into the snippet named ``filename``
    (``<attrs generated methods guard.model.ToolCall>``), as attrs computes it."""
    prefix = "<attrs generated "
    if not (filename.startswith(prefix) and filename.endswith(">")):
        return None
    _, _, name = filename[len(prefix) : -1].partition(" ")
    return hash(f"{prefix}hash {name}>") if name else None


def key_of(filename: str, script: str) -> tuple[tuple[str, str], int | None]:
    """The cache key of one snippet (its salt literal written ``SALT``) and that salt."""
    salt = salt_of(filename)
    if salt is not None:
        needle = f" {salt},\n"
        if script.count(needle) == 1:
            return (filename, script.replace(needle, " SALT,\n")), salt
    return (filename, script), None


def resalt(code: CodeType, old: int, new: int) -> CodeType:
    """``code`` with the salt constant of its ``__hash__`` (at any depth) changed from ``old`` to ``new``."""
    consts = tuple(
        resalt(c, old, new)
        if isinstance(c, CodeType)
        else new
        if code.co_name == "__hash__" and type(c) is int and c == old
        else c
        for c in code.co_consts
    )
    return code.replace(co_consts=consts)


def compile_and_eval_unset(*_: object) -> None:
    raise RuntimeError("the attrs code cache is not installed")


def read(path: str, tag: bytes) -> dict[tuple[str, str], Entry]:
    """The cached snippets, or none when the file is missing, of another version, or damaged."""
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_BYTES + 1)
    except OSError:
        return {}
    if len(raw) > MAX_BYTES:
        return {}
    first, _, body = raw.partition(b"\n")
    parts = first.split(b" ")
    if len(parts) != 3 or parts[0] != FORMAT or parts[1] != tag:
        return {}
    try:
        if int(parts[2], 16) != binascii.crc32(body):
            return {}
        table = marshal.loads(body)
    except (ValueError, EOFError, TypeError):
        return {}
    if not isinstance(table, dict):
        return {}
    return {
        key: entry
        for key, entry in table.items()
        if isinstance(key, tuple)
        and len(key) == 2
        and all(isinstance(k, str) for k in key)
        and isinstance(entry, tuple)
        and len(entry) == 2
        and isinstance(entry[0], CodeType)
        and entry[0].co_filename == key[0]
        and (entry[1] is None or type(entry[1]) is int)
    }


class CodeCache:
    """attrs' ``_compile_and_eval`` for one process, answering from the file and learning new snippets."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.tag, self.flags = b"", 0
        self.codes: dict[tuple[str, str], Entry] = {}
        self.used: set[tuple[str, str]] = set()
        self.added = 0
        self.installed = False
        self.original: Callable[..., None] = compile_and_eval_unset

    @classmethod
    def open(cls, workspace: str) -> CodeCache:
        """The workspace's cache, put into attrs as soon as attrs can take it: now if attrs is
        loaded, else once ``attr._make`` has run (``_AttrsReady``), so that the record classes
        attrs itself makes on import (its validators, ~30 snippets) are answered too."""
        cache = cls(os.path.join(workspace, NAME))
        make = sys.modules.get("attr._make")
        if make is not None:
            cache.install(make)
        else:
            sys.meta_path.insert(0, _AttrsReady(cache))
        return cache

    def install(self, make: Any) -> None:
        """Read the file and stand in for ``make._compile_and_eval``; nothing when this attrs has none."""
        original: Any = getattr(make, "_compile_and_eval", None)
        code = getattr(original, "__code__", None)
        if self.installed or code is None:
            return
        if code.co_varnames[: code.co_argcount] != _SIGNATURE:  # another attrs' private helper: leave it be
            return
        self.original = original
        self.flags = _future_flags(original)
        self.tag = _tag(self.flags)
        self.codes = read(self.path, self.tag)
        make._compile_and_eval = self.compile_and_eval
        self.installed = True

    def compile_and_eval(
        self,
        script: str,
        globs: dict[str, Any] | None,
        locs: Mapping[str, object] | None = None,
        filename: str = "",
    ) -> None:
        try:
            key, salt = key_of(filename, script)
            entry = self.codes.get(key)
            if entry is None:
                code = compile(script, filename, "exec", flags=self.flags, dont_inherit=True)
            else:
                code, compiled_with = entry
                if salt is not None and compiled_with is not None and compiled_with != salt:
                    code = resalt(code, compiled_with, salt)
        except Exception:  # the cache's own step failed: attrs compiles as it always does
            self.original(script, globs, locs, filename)
            return
        self.used.add(key)
        if entry is None:
            self.codes[key] = (code, salt)
            self.added += 1
        eval(code, globs, locs)  # attrs' own generated source, evaluated as attrs evaluates it

    def save(self) -> None:
        """Write the file when this run compiled something new (``guard.atomic``, 0600); a workspace that
        cannot take it only means the next hook compiles again."""
        if not (self.installed and self.added) or not os.path.isdir(os.path.dirname(self.path)):
            return
        codes = self.codes
        if len(codes) > MAX_ENTRIES:
            codes = {key: codes[key] for key in self.used}
        from pathlib import Path

        from guard.atomic import write_atomic  # (loaded by the decision already)

        body = marshal.dumps(codes)
        data = b"%s %s %08x\n%s" % (FORMAT, self.tag, binascii.crc32(body), body)
        try:
            write_atomic(Path(self.path), data, mode=0o600, keep_mode=False, fsync=False)
        except OSError:  # a cache: the next hook compiles again
            pass


class _AttrsReady:
    """A ``sys.meta_path`` entry that finds nothing: at the first import of an ``attr``/``attrs``
    module once ``attr._make`` has defined ``_compile_and_eval``, it installs the cache and leaves."""

    def __init__(self, cache: CodeCache) -> None:
        self.cache = cache

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name.startswith("attr"):
            make = sys.modules.get("attr._make")
            if make is not None and hasattr(make, "_compile_and_eval"):
                if self in sys.meta_path:
                    sys.meta_path.remove(self)
                try:
                    self.cache.install(make)
                except Exception:  # no cache: attrs compiles as usual, the import goes on
                    pass
        return None
