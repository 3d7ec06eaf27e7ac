"""Facts: where a word points and what is there, from the text and from the disk.

``paths`` (a word resolved against the working directory and sorted into a tier), ``places`` (the
tables behind it: system roots, credential stores, persistence points …), ``ondisk`` (where a write
really lands, symbolic links followed at decision time), ``inodes`` (guard's protected files by
``(st_dev, st_ino)``), ``landmines`` (files that run later: scripts, build files, package hooks, CI
jobs, notebooks), ``hosts`` (where a URL leads: its host, loopback, cloud metadata, and the secrets
that must not be sent there).

Facts judge nothing and record nothing: no :class:`~guard.static.scan.Scan`, no rule beyond a
:class:`~guard.model.Risk` returned. They may import :mod:`guard.static.reading`, never ``scan``,
``families`` or ``shell``.
"""
