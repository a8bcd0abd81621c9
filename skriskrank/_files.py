"""Files written whole or not at all."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomically(path, write, *, suffix: str = ".tmp") -> None:
    """Write ``path`` through ``write(tmp)``, then move the whole file into place.

    ``tmp`` is a new file beside ``path`` (a hidden name ending in ``suffix``, readable by
    its owner only); ``os.replace`` puts it in ``path``'s place in one step, so a concurrent
    reader, or a process cut short, never finds half a file. ``tmp`` is removed if ``write``
    fails, and the error raised.

    Parameters
    ----------
    path : str or path-like
        The file to write; its directory must exist.
    write : callable
        Called with ``tmp`` (a str) and writes the whole content there.
    suffix : str, default=".tmp"
        The end of ``tmp``'s name, for writers that add their own when it is missing
        (``numpy.savez``: ``".npz"``).

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> path = Path(tempfile.mkdtemp()) / "levels.json"
    >>> write_atomically(path, lambda tmp: Path(tmp).write_text("{}"))
    >>> path.read_text(), [p.name for p in path.parent.iterdir()]
    ('{}', ['levels.json'])
    """
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=suffix)
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)  # gone after the replace; left by a failed write
