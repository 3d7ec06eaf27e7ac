"""Adapters between guard and the outside world: the seed's call shapes and agent hosts' hooks.

Adapters hold no decision logic; they translate and call ``guard``.
"""
