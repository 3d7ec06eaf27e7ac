"""``blake2b``, the keyed short digest guard uses for redaction, session ids and signatures.

The same function as ``hashlib.blake2b`` (hashlib never hands blake2 to OpenSSL), taken from the
C module itself: ``import hashlib`` first loads OpenSSL's ``_hashlib``, ~2 ms of every hook
process's start for digests it never asks OpenSSL for.
"""

from __future__ import annotations

try:
    from _blake2 import blake2b
except ImportError:  # an interpreter without the C module: hashlib's, whatever it is
    from hashlib import blake2b

__all__ = ["blake2b"]
