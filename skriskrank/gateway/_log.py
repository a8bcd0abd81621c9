"""The gateway's log: one JSON line per search and per call, appended to ``--log PATH``.

Each line holds the time, the session, the kind of event, what was asked (the query, or the
tool called), what the gateway answered (the tools returned with their levels and reasons, or
the decision: ``allowed``, ``refused``, ``confirmed`` or ``declined``, and why), the latency
and any error. Argument values stay out unless ``--log-arguments`` is given: they may hold
what the user would not want written down. ``skriskrank fit --log`` learns from these lines.
"""

from __future__ import annotations

import datetime
import json
import threading
from pathlib import Path

__all__ = ["EventLog"]


class EventLog:
    """Append-only JSON-lines log, safe to write from several threads.

    Parameters
    ----------
    path : str or path-like or None
        The file; ``None`` logs nothing.
    log_arguments : bool, default=False
        Write the arguments of each call.
    """

    def __init__(self, path, *, log_arguments=False):
        self.path, self.log_arguments = (None if path is None else Path(path)), log_arguments
        self._lock = threading.Lock()
        self._file = None if self.path is None else open(  # noqa: SIM115 - open for the run
            self.path, "a", encoding="utf-8", buffering=1)

    def write(self, event: str, session: str, **fields) -> None:
        """Append one event; ``arguments`` is dropped unless arguments are logged."""
        if self._file is None:
            return
        if not self.log_arguments:
            fields.pop("arguments", None)
        line = {"time": datetime.datetime.now(datetime.timezone.utc).isoformat(
            timespec="milliseconds"), "session": session, "event": event, **fields}
        text = json.dumps(line, ensure_ascii=True, default=str)
        with self._lock:
            self._file.write(text + "\n")

    def close(self) -> None:
        """Close the file."""
        if self._file is not None:
            self._file.close()
            self._file = None
