"""What ``tr`` and ``rev`` print of stdin guard knows: the text a pipeline spells.

``echo 'fr- zr' | tr 'a-z' 'n-za-m'`` or ``echo 'fr- mr' | rev`` spell a command out of
harmless-looking words; the reader hands the spelled text on (``SPELLED``) so whatever runs
it is judged on it. ``None`` means a form guard does not model: the output is then opaque.
"""

from __future__ import annotations


def rev(text: str) -> str:
    return "\n".join(line[::-1] for line in text.split("\n"))


_TR_CLASSES = {
    "lower": "abcdefghijklmnopqrstuvwxyz",
    "upper": "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
    "digit": "0123456789",
    "space": " \t\n\r\f\v",
    "blank": " \t",
}
_TR_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "f": "\f", "v": "\v", "-": "-"}


def _tr_set(spec: str) -> str | None:
    """``a-z``, ``[:upper:]``, ``\\n`` expanded to the characters they stand for (``None``: a form guard does not read)."""
    out: list[str] = []
    i = 0
    while i < len(spec):
        if spec.startswith("[:", i):
            end = spec.find(":]", i)
            cls = _TR_CLASSES.get(spec[i + 2 : end]) if end > 0 else None
            if cls is None:
                return None
            out.append(cls)
            i = end + 2
            continue
        c = spec[i]
        if c == "\\" and i + 1 < len(spec):
            c = _TR_ESCAPES.get(spec[i + 1], spec[i + 1])
            i += 1
        elif c == "[" and "*" in spec[i:]:
            return None  # ``[x*n]`` repeats
        if i + 2 < len(spec) and spec[i + 1] == "-":
            low, high = ord(c), ord(spec[i + 2])
            if high < low:
                return None
            out.append("".join(chr(o) for o in range(low, high + 1)))
            i += 3
            continue
        out.append(c)
        i += 1
    return "".join(out)


def tr(args: tuple[str, ...], text: str) -> str | None:
    """What ``tr SET1 SET2`` or ``tr -d SET`` makes of ``text`` (``None``: options guard does not model)."""
    flags = [a for a in args if a.startswith("-") and len(a) > 1]
    sets = [_tr_set(a) for a in args if not (a.startswith("-") and len(a) > 1)]
    if any(s is None for s in sets) or any(f not in ("-d", "--delete") for f in flags):
        return None
    if flags:
        return "".join(ch for ch in text if ch not in sets[0]) if len(sets) == 1 and sets[0] else None
    if len(sets) != 2 or not sets[1]:
        return None
    src, dst = sets
    dst = (dst or "") + (dst or "")[-1:] * max(0, len(src or "") - len(dst or ""))
    table = {ord(a): b for a, b in zip(src or "", dst[: len(src or "")], strict=True)}
    return text.translate(table)
