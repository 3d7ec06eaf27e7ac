"""What the interpreter folder (:mod:`guard.static.reading.fold`) yields: each call's :class:`Effect`, the
environment mappings code builds for a child (:class:`EnvMap`), and the bounds every reader keeps."""

from __future__ import annotations

import posixpath

import attrs

MAX_CODE = 32768
MAX_VALUE = 4096
MAX_EFFECTS = 64
Value = str | tuple[str, ...] | None


@attrs.frozen
class Effect:
    """``kind`` is ``script`` (a shell command line), ``argv`` (a program and its words), ``delete``
    (``recursive`` or not), ``write``, ``extract`` (an archive unpacked into a folder), ``copy`` or
    ``move`` (``value`` is ``(source, dest)``, dest ``""`` when it did not fold), ``kill`` (``value``
    is ``(signal, pid)``), ``code`` (more code in the same language), ``import`` (a module imported
    by a call, Python only) or ``environ`` (``os.environ[k] = v``, ``del os.environ[k]``: see ``env``
    and ``unset``); ``value`` None means guard could not fold the argument. An ``extract`` whose
    archive folds names it in ``source`` (``tarfile.open("x.tar").extractall()``), with
    ``recursive`` standing for "absolute member names are kept" (tarfile, shutil; not zipfile)."""

    kind: str
    value: Value
    call: str
    recursive: bool = False
    # ``environ`` (the code's own environment, for the commands it starts after) and a command started
    # with ``env={…}``: variables set (None: to a value not worked out) and taken away
    env: tuple[tuple[str, str | None], ...] = ()
    unset: tuple[str, ...] = ()
    source: str = ""


@attrs.frozen
class EnvMap:
    """An environment mapping Python or Node code builds for a child (``env=``, ``{env: …}``): the
    variables set (None: to a value not worked out), those taken away, and whether the rest of the
    caller's environment is in it."""

    pairs: tuple[tuple[str, str | None], ...] = ()
    gone: tuple[str, ...] = ()
    inherits: bool = False

    def set(self, pairs: tuple[tuple[str, str | None], ...]) -> EnvMap:
        keys = {k for k, _ in pairs}
        kept = tuple(p for p in self.pairs if p[0] not in keys)
        return attrs.evolve(self, pairs=kept + pairs, gone=tuple(k for k in self.gone if k not in keys))

    def drop(self, keys: tuple[str, ...]) -> EnvMap:
        pairs = tuple(p for p in self.pairs if p[0] not in keys)
        return attrs.evolve(self, pairs=pairs, gone=(*self.gone, *(k for k in keys if self.inherits)))

    def spread(self, base: EnvMap) -> EnvMap:
        """``{...base, …these}``: ``base``'s variables under these."""
        return EnvMap(base.pairs, base.gone, base.inherits or self.inherits).set(self.pairs)

    def for_child(self) -> tuple[tuple[tuple[str, str | None], ...], tuple[str, ...]]:
        """What a command started with this mapping sees set and taken away: a mapping that does not
        inherit the caller's environment leaves guard's workspace out unless it names it."""
        replaced = not self.inherits and all(k != "GUARD_HOME" for k, _ in self.pairs)
        return self.pairs, (*self.gone, *(("GUARD_HOME",) if replaced else ()))


INHERITED = EnvMap(inherits=True)
EMPTY_ENV = EnvMap()


def short(value: Value) -> Value:
    if isinstance(value, str):
        return value if len(value) <= MAX_VALUE else None
    if isinstance(value, tuple):
        return value if sum(len(v) for v in value) <= MAX_VALUE else None
    return None


def home_path(text: str, home: str) -> str:
    return home + text[1:] if text == "~" or text.startswith("~/") else text


_HOME_ENV = frozenset({"HOME", "USERPROFILE"})


def env_value(key: Value, home: str) -> str | None:
    """An environment variable's value as far as it is known: the home, or (``GUARD_HOME``) a guard
    workspace, which the resolver protects wherever the person keeps theirs (``~/.guard`` always is)."""
    if key in _HOME_ENV:
        return home
    return posixpath.join(home, ".guard") if key == "GUARD_HOME" else None
