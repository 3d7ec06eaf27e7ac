"""What a patch file changes: the paths it names, read cheaply and boundedly at decision time.

``git apply x.diff``, ``git am x.mbox`` and ``patch -p1 < x.diff`` say nothing of what they change;
the patch does. :func:`paths` reads its names: a unified diff's ``--- ``/``+++ `` lines and git's
``diff --git``, ``rename``/``copy`` headers, Subversion's ``Index:``, and the ``*** Add/Update/Delete
File:``/``*** Move to:`` lines of Codex's patch format. A patch larger than :data:`MAX_BYTES`, or one
that cannot be read, is None: the caller keeps the answer it gives without the names, so reading
can only refuse more, never allow more. Names are cached by ``(path, size, mtime_ns)``.

    >>> _names(b"--- a/x.py\\n+++ b/x.py\\n@@ -1 +1 @@\\n")
    ('a/x.py', 'b/x.py')
"""

from __future__ import annotations

from guard.static.facts.filecache import FileCache

MAX_BYTES = 8 << 20
_cache: FileCache[tuple[str, ...]] = FileCache(64)
_HEADS = (b"--- ", b"+++ ", b"Index: ")
_GIT_HEADS = (b"rename from ", b"rename to ", b"copy from ", b"copy to ")
_CODEX_HEADS = (b"*** Add File: ", b"*** Update File: ", b"*** Delete File: ", b"*** Move to: ")


def paths(path: str) -> tuple[str, ...] | None:
    """The names ``path``'s patch changes, as written (prefixes such as ``a/`` kept); None when not read."""
    return _cache.get(path, lambda st: _read(path) if st.st_size <= MAX_BYTES else None)


def _read(path: str) -> tuple[str, ...] | None:
    try:
        with open(path, "rb") as f:
            return _names(f.read(MAX_BYTES + 1))
    except OSError:
        return None


def _names(data: bytes) -> tuple[str, ...]:
    found: dict[str, None] = {}
    for raw in data.splitlines():
        line = raw.rstrip(b"\r")
        if line.startswith(b"diff --git "):
            for each in _two_names(line[len(b"diff --git ") :]):
                if each and each != "/dev/null":
                    found[each] = None
            continue
        head = next((h for h in (*_HEADS, *_GIT_HEADS, *_CODEX_HEADS) if line.startswith(h)), None)
        if head is None:
            continue
        name = line[len(head) :]
        if head in (b"--- ", b"+++ "):
            name = name.split(b"\t", 1)[0]  # (a timestamp may follow a tab)
        text = _unquoted(name.decode("utf-8", "surrogateescape").strip())
        if text and text != "/dev/null":
            found[text] = None
    return tuple(found)


def _two_names(rest: bytes) -> list[str]:
    """``a/x b/x`` (or quoted, ``"a/x y" "b/x y"``): the two names of a ``diff --git`` line."""
    text = rest.decode("utf-8", "surrogateescape").strip()
    if text.startswith('"'):
        end = text.find('"', 1)
        return [_unquoted(text[: end + 1]), _unquoted(text[end + 1 :].strip())] if end > 0 else []
    half = len(text) // 2  # ``a/NAME b/NAME``: the same name twice, when it is not renamed
    if text[half : half + 1] == " ":
        return [text[:half], text[half + 1 :]]
    return text.split(" ", 1)


def _unquoted(name: str) -> str:
    """git's C-style quoting of a name with unusual characters (``"a/x\\ty"``), taken off."""
    if len(name) >= 2 and name[0] == name[-1] == '"':
        body = name[1:-1]
        try:
            return body.encode("latin-1", "backslashreplace").decode("unicode_escape").encode("latin-1").decode("utf-8")
        except (UnicodeError, ValueError):
            return body
    return name
