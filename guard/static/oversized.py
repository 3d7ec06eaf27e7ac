"""A glance at a command too large to read in full: only what is plainly critical.

Over ``static.max_command_bytes`` a call is never judged in full (rule G198 asks instead), but
``rm -rf ~`` padded with 100 KB of junk should still block, and finding it is cheap: the text is
cut at line ends, ``;``, ``&&`` and ``||`` (quotes ignored: a wrong cut only loses a piece), and
each piece that looks able to do critical harm is judged on its own, cut to its first few KB,
the most dangerous-looking pieces first, all within the decision's budget. Only critical
findings are kept; the rest of the verdict is G198's request_confirm. The same glance serves a
text within the size limit that holds too many shell operators to parse in time (G420).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from guard import lazyre
from guard.model import Risk
from guard.static.rules.catalog import CATALOG

if TYPE_CHECKING:
    from guard.static.scan import Interpreter

MAX_OPERATORS = 16_000  # tree-sitter-bash takes ≈ 2 µs per operator and ≈ 20 µs per pipe: ≈ 35 ms at this count
_OPERATORS = "|&;$\"'()`<>{}"
MAX_PIECES = 512
PIECE_CHARS = 2048
_CUT = lazyre.compile(r"\r?\n|;|&&|\|\|")
# Commands and shapes that can be critical on their own: worth a real look.
_SHAPE = lazyre.compile(
    r"\b(?:rm|rmdir|mv|dd|mkfs|shred|wipefs|fdisk|sfdisk|parted|chmod|chown|find|git|truncate|srm|"
    r"curl|wget|fetch|nc|ncat|socat|eval|source|base64|xxd|openssl|sudo|doas|su|xargs|"
    r"sh|bash|zsh|dash|ksh|python\d?|perl|ruby|node|php|crontab|systemctl|kill|pkill|killall|shutdown|reboot)\b"
    r"|:\s*\(\s*\)|/dev/(?:tcp|udp|sd|nvme|disk|hd)"
)
# Targets that make a shape critical: the root, a home, system folders, credentials, devices.
_TARGET = lazyre.compile(
    r"(?:^|[\s=\"'])(?:/|~|\$\{?HOME\b|/(?:etc|usr|bin|boot|var|lib|dev|sys|home|root)\b|\.ssh|\.aws|\.gnupg)"
    r"|\|\s*(?:sudo\s+)?(?:ba|z|da|k)?sh\b|-(?:\w*[rRf]\w*)\b"
)


def operators(text: str) -> int:
    """A count of shell operators in ``text``, a pipe for eight: what parsing it costs.

    The grammar is C and cannot be interrupted, so a text that would take longer to parse than a
    decision may is not parsed at all (``a | a | …`` 16,000 times is 64 KB and a second of parsing)."""
    if len(text) < 8192:
        return 0
    return sum(text.count(c) for c in _OPERATORS) + 7 * text.count("|")


def glance(engine: Interpreter, text: str) -> None:
    """Judge the pieces of ``text`` that may be critical; keep their critical hits in the scan."""
    scan = engine.scan
    if len(text) > 2 * _EDGE:  # a huge text: its head and its tail (where padding hides a command)
        text = text[:_EDGE] + "\n" + text[-_EDGE:]
    seen: set[str] = set()
    pieces: list[tuple[bool, int, str]] = []
    for i, piece in enumerate(_CUT.split(text)):
        if not i % 256 and scan.budget.expired():
            break  # judge what was gathered rather than nothing
        piece = piece.strip()
        if len(piece) > PIECE_CHARS:
            cut = piece.rfind(" ", 0, PIECE_CHARS)
            piece = piece[: cut if cut > 0 else PIECE_CHARS]
        if not piece or piece in seen or not _SHAPE.search(piece):
            continue
        seen.add(piece)
        pieces.append((_TARGET.search(piece) is None, i, piece))
    pieces.sort()  # pieces with a dangerous target first, then in order
    for _plain, _i, piece in pieces[:MAX_PIECES]:
        scan.hits.extend(h for h in engine.isolated(piece) if CATALOG[h.rule_id].risk is Risk.CRITICAL)


_EDGE = 256 * 1024
