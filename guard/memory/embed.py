"""Call text → unit vector, so "operations like this one" can be found by cosine similarity.

The default :class:`HashingEmbedder` is signed feature hashing: no model, no download,
≈10 µs a call, the same vector in every process (``zlib.crc32``, never the salted
``hash()``). Its features are chosen for shell commands and paths:

- ``t=<tool>``: the canonical tool kind (the prefix of a signature, ``bash:``);
- ``h=<program>`` and ``s=<program> <subcommand>`` (shell commands only): the program each
  command segment runs (``sudo``/``env`` wrappers and ``VAR=value`` prefixes skipped), the
  first one weighted most, so ``npm test`` and ``npm publish`` stay apart;
- unigrams and bigrams of the lower-cased tokens; single-dash flag clusters also per letter
  (``-rf`` ≈ ``-fr`` ≈ ``-r -f``);
- path shape, weighted heavily so a lexically close but dangerous variant lands far away:
  ``p=root`` (``/``), ``p=home`` (``~``, ``$HOME``, ``/home/…``, ``/root``), ``p=sys`` (``/etc``,
  ``/usr``, ``/dev``…), ``p=temp`` (``/tmp``…), ``p=abs``, ``p=rel``, ``p=parent`` (``..``),
  plus directory names and the file extension at low weight.

``cos("rm -rf /tmp/build", "rm -rf /tmp/build2") ≈ 0.9`` while ``cos("rm -rf /tmp/build",
"rm -rf /") ≈ 0.5``.

A model-based embedder is optional and never required: anything with ``name``, ``dim`` and
``embed(text)`` works, and :class:`CallableEmbedder` adapts a plain function (for example an
ONNX MiniLM the application loads itself) with normalisation and caching. Rows record the
embedder's ``name``; memory compares only vectors of the same embedder.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable, Iterator, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Protocol
from zlib import crc32

from guard import lazyre

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Vector = npt.NDArray[np.float32]

Sparse = list[tuple[int, float]]  # a vector's nonzero (position, float32 value) pairs, ascending

_SEGMENT = lazyre.compile(r"\|\||&&|[|;&\n]|\$\(|`")
_TOKEN = lazyre.compile(r"[^\s'\"`|;&<>()]+")
_ASSIGN = lazyre.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_WORD = lazyre.compile(r"^[a-z][a-z0-9_:.-]*$")
_COMMAND_KINDS = frozenset({"bash", ""})
_WRAPPERS = frozenset({"sudo", "doas", "env", "time", "nice", "nohup", "command", "exec", "xargs", "timeout", "then"})
_SYSTEM_DIRS = frozenset(
    {
        "etc",
        "usr",
        "bin",
        "sbin",
        "boot",
        "dev",
        "sys",
        "proc",
        "lib",
        "lib64",
        "opt",
        "var",
        "srv",
        "System",
        "Library",
    }
)
_TEMP_PREFIXES = ("/tmp", "/var/tmp", "/dev/shm", "/private/tmp")
_HOME_PREFIXES = ("~", "$home", "${home}", "/home/", "/root", "/users/")

# Feature weights. Path shape dominates so ``rm -rf /`` is far from ``rm -rf ./build``.
_W_TOOL = 1.0
_W_HEAD_FIRST = 2.5
_W_HEAD = 1.5
_W_SUB = 0.8  # of the head's weight: ``npm test`` and ``npm publish`` must not look alike
_W_UNIGRAM = 1.0
_W_BIGRAM = 0.7
_W_FLAG = 0.7
_W_ROOT = 3.0
_W_SHAPE = 2.0
_W_SHAPE_DETAIL = 1.5
_W_DIR = 0.5
_W_EXT = 0.5


class Embedder(Protocol):
    """``name`` identifies the scheme and its version (stored with every row); ``dim`` is fixed."""

    name: str
    dim: int

    def embed(self, text: str) -> Vector:
        """A float32 vector of length ``dim`` with unit L2 norm (read-only; do not modify)."""
        ...


class HashingEmbedder:
    """Signed feature hashing of a call signature (``bash:rm -rf build``).

    >>> e = HashingEmbedder(dim=64)
    >>> v = e.embed("bash:git status")
    >>> v.shape, round(float(v @ v), 3)
    ((64,), 1.0)
    """

    VERSION = 1

    def __init__(self, dim: int = 256, cache_size: int = 10_000) -> None:
        if dim < 8:
            raise ValueError(f"dim must be >= 8, got {dim}")
        self.dim = dim
        self.name = f"hashing-v{self.VERSION}"
        self._zero = array("f", bytes(4 * dim))
        self._cached = lru_cache(maxsize=cache_size)(self._embed)

    def embed(self, text: str) -> Vector:
        return self._cached(text)

    def features(self, text: str) -> list[tuple[str, float]]:
        """The weighted features of ``text`` (for explanations and tests)."""
        return _features(text)

    def sparse(self, text: str) -> Sparse:
        """The nonzero values of ``embed(text)`` (the same float32 numbers), computed without numpy:
        what the published snapshot's reader searches with. Not cached (≈10 µs)."""
        acc = array("f", self._zero)  # a plain array: item updates cost a tenth of numpy's
        dim = self.dim
        touched: set[int] = set()
        for feature, weight in _features(text):
            h = crc32(feature.encode("utf-8", "surrogatepass"))
            # Bucket from the top byte then the low bits, sign from bit 16: independent bits.
            k = ((h >> 24) | (h & 0xFFFF) << 8) % dim
            acc[k] += -weight if h & 0x10000 else weight
            touched.add(k)
        return _unit([(k, acc[k]) for k in sorted(touched)])

    def _embed(self, text: str) -> Vector:
        return _dense(self.sparse(text), self.dim)


class CallableEmbedder:
    """Adapt ``fn(text) -> sequence of floats`` (e.g. a local ONNX model) to :class:`Embedder`.

    The vector is checked for length, converted to float32, L2-normalised and LRU-cached by text.
    guard never downloads or imports a model itself; the application passes the function in:

        memory = LanceMemory(uri, config, embedder=CallableEmbedder("minilm-onnx-v1", 384, my_fn))
    """

    def __init__(self, name: str, dim: int, fn: Callable[[str], Sequence[float] | Vector], cache_size: int = 10_000):
        self.name = name
        self.dim = dim
        self._fn = fn
        self._cached = lru_cache(maxsize=cache_size)(self._embed)

    def embed(self, text: str) -> Vector:
        return self._cached(text)

    def _embed(self, text: str) -> Vector:
        import numpy as np

        vec = np.asarray(self._fn(text), dtype=np.float32).reshape(-1)
        if vec.shape[0] != self.dim:
            raise ValueError(f"embedder {self.name!r} returned {vec.shape[0]} values, expected {self.dim}")
        if not np.all(np.isfinite(vec)):
            raise ValueError(f"embedder {self.name!r} returned a non-finite value")
        return _dense(_unit(list(enumerate(vec.tolist()))), self.dim)


def sparse_of(embedder: Embedder, text: str) -> Sparse:
    """``embedder``'s vector of ``text`` as nonzero pairs: without numpy where the embedder can
    (:meth:`HashingEmbedder.sparse`), else from its dense vector."""
    sparse = getattr(embedder, "sparse", None)
    if sparse is not None:
        out: Sparse = sparse(text)
        return out
    return [(k, v) for k, v in enumerate(embedder.embed(text).tolist()) if v]


def _unit(values: Sparse) -> Sparse:
    """The L2-normalised float32 values (zeros dropped). The norm is the correctly rounded float64
    one, its inverse rounded to float32, and each value times it rounded to float32, which is what
    numpy's float32 product gives; so every process, with or without numpy, gets the same bits."""
    norm = math.sqrt(math.fsum(v * v for _, v in values))
    if norm == 0.0:  # signed features can cancel out exactly; a fixed direction keeps the vector a unit one
        return [(0, 1.0)]
    scale = array("f", [1.0 / norm])[0]
    scaled = array("f", [v * scale for _, v in values])
    return [(k, v) for (k, _), v in zip(values, scaled, strict=True) if v]


def _dense(values: Sparse, dim: int) -> Vector:
    """A new, read-only float32 vector of ``dim`` holding ``values``."""
    import numpy as np

    out = np.zeros(dim, np.float32)
    for k, v in values:
        out[k] = v
    out.flags.writeable = False
    return out


def _features(text: str) -> list[tuple[str, float]]:
    kind, sep, body = text.partition(":")
    if not sep or not kind.replace("_", "").isalnum():
        kind, body = "", text
    out = [("t=" + kind, _W_TOOL)]
    add = out.append
    head_weight = _W_HEAD_FIRST if kind in _COMMAND_KINDS else 0.0
    for segment in _SEGMENT.split(body.lower()):
        tokens = _TOKEN.findall(segment)
        if not tokens:
            continue
        if head_weight:
            head, sub = _head(tokens)
            if head:
                add(("h=" + head, head_weight))
                if sub:
                    add(("s=" + head + " " + sub, head_weight * _W_SUB))
                head_weight = _W_HEAD
        previous = ""
        for token in tokens:
            add(("u=" + token, _W_UNIGRAM))
            if previous:
                add(("b=" + previous + " " + token, _W_BIGRAM))
            previous = token
            first = token[0]
            if first == "-":
                if len(token) > 1 and token[1] != "-" and token[1:].isalpha():
                    out.extend(("f=" + letter, _W_FLAG) for letter in set(token[1:]))
            elif "/" in token or first in "~.$" or "=/" in token:
                out.extend(_path_shape(token))
    return out


def _head(tokens: list[str]) -> tuple[str, str]:
    """The program a segment runs and its subcommand (``git push`` → ``("git", "push")``)."""
    for i, token in enumerate(tokens):
        if token[0] == "-" or token in _WRAPPERS or ("=" in token and _ASSIGN.match(token)):
            continue
        sub = ""
        for after in tokens[i + 1 : i + 3]:
            if after[0] != "-":
                sub = after if _WORD.match(after) else ""
                break
        return token.rsplit("/", 1)[-1], sub
    return "", ""


def _path_shape(token: str) -> Iterator[tuple[str, float]]:
    if "=" in token and not token.startswith(("/", "~", ".")):
        token = token.split("=", 1)[1]  # --output=/etc/x, of=/dev/sda
    if not token or "://" in token:
        return
    if token.startswith(_HOME_PREFIXES):
        parts = [p for p in token.split("/")[1:] if p]
        if token.startswith(("/home/", "/users/")):
            parts = parts[2:]
        elif token.startswith("/root"):
            parts = parts[1:]
        yield "p=home", _W_SHAPE
        if parts:
            yield "p=home/" + parts[0], _W_SHAPE_DETAIL
        return
    if token.startswith("/"):
        if token.strip("/*.") == "":
            yield "p=root", _W_ROOT
            return
        if token.startswith(_TEMP_PREFIXES):
            yield "p=temp", _W_SHAPE
        else:
            top = token.split("/", 2)[1]
            if top in _SYSTEM_DIRS or top.capitalize() in _SYSTEM_DIRS:
                yield "p=sys", _W_SHAPE
                yield "p=sys/" + top, _W_SHAPE_DETAIL
            else:
                yield "p=abs", _W_SHAPE
    elif "/" in token or token.startswith("."):
        yield "p=rel", _W_SHAPE
    else:
        return
    parts = [p for p in token.split("/") if p]
    if ".." in parts:
        yield "p=parent", _W_SHAPE_DETAIL
    for part in parts[:-1]:
        if part not in (".", ".."):
            yield "d=" + part, _W_DIR
    last = parts[-1] if parts else ""
    stem, dot, ext = last.rpartition(".")
    if dot and stem and ext and len(ext) <= 8:
        yield "ext=" + ext, _W_EXT
