"""The gateway's log: one JSON line per search, per call and per relayed question.

Appended to ``--log PATH``. Each line holds the time, the session, the kind of event, what
was asked (the query, or the tool called), what the gateway answered (the tools returned with
their levels and reasons, or the decision: ``allowed``, ``refused``, ``confirmed`` or
``declined``, and why), the latency and any error. A question a server asked the user
through the gateway (``elicit``) records the server and the user's answer (``accept``,
``decline`` or ``cancel``), never what the user wrote. Argument values stay out unless
``--log-arguments`` is given: they may hold what the user would not want written down.
``skriskrank fit --log`` learns from these lines.
"""

from __future__ import annotations

import datetime
import json
import threading
from pathlib import Path

__all__ = ["EventLog", "read_log"]


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


#: The longest log line read back (a search line lists k tools with their reasons).
MAX_LINE_CHARS = 1 << 20

MSG_LOG_LINE = "{path}, line {line}: {problem}"
MSG_LOG_EMPTY = ("{path} holds no search followed by a call of a tool of the catalogue "
                 "({searches} searches, {calls} allowed calls read): nothing to learn from.")


def read_log(path, registry):
    """Training queries from a gateway log: each search, with the tools called after it.

    A tool the agent called (allowed or confirmed) is relevant to the session's search
    before the call; the tools that search returned and the agent never called are its
    hard negatives when the reranker trains (they rank high and are not gold). A search
    followed by no call of a catalogue tool teaches nothing and is skipped, as are calls of
    tools the catalogue no longer holds.

    Parameters
    ----------
    path : str or path-like
        A log written by ``skriskrank gateway --log``.
    registry : ToolRegistry
        The catalogue the called tools must come from.

    Returns
    -------
    dataset : ToolRetrievalDataset
        ``queries`` and ``relevant`` to fit a pipeline on; ``query_ids`` are
        ``"line{n}"`` of each search.

    Raises
    ------
    ValueError
        Naming the file and line of a line that is not a JSON object, longer than
        1,048,576 characters, or a search whose query is not valid text; or if nothing can be
        learned from the log.
    """
    from ..datasets import ToolRetrievalDataset

    path = Path(path)
    open_search: dict[str, tuple[str, str, set]] = {}  # session -> (id, query, called)
    rows, searches, calls = [], 0, 0

    def close(session):
        qid, query, called = open_search.pop(session, (None, None, set()))
        if called:
            rows.append((qid, query, called))

    with path.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, start=1):
            event = _event(path, n, line)
            session = str(event.get("session"))
            if event.get("event") == "search":
                close(session)
                open_search[session] = (f"line{n}", event["query"], set())
                searches += 1
            elif (event.get("event") == "call" and event.get("decision") in
                  ("allowed", "confirmed") and session in open_search):
                calls += 1
                if isinstance(event.get("tool"), str) and event["tool"] in registry:
                    open_search[session][2].add(event["tool"])
    for session in list(open_search):
        close(session)
    if not rows:
        raise ValueError(MSG_LOG_EMPTY.format(path=path, searches=searches, calls=calls))
    ids, queries, relevant = zip(*rows, strict=True)
    return ToolRetrievalDataset("gateway log", "log", registry, queries, relevant,
                                query_ids=ids)


def _event(path, n: int, line: str) -> dict:
    """Line ``n`` of a log as an event (``{}`` for a blank line), a search's query checked."""
    from .._inputs import check_query

    def fail(problem):
        return ValueError(MSG_LOG_LINE.format(path=path, line=n, problem=problem))

    if len(line) > MAX_LINE_CHARS:
        raise fail(f"longer than {MAX_LINE_CHARS:,} characters")
    if not line.strip():
        return {}
    try:
        event = json.loads(line)
    except json.JSONDecodeError as err:
        raise fail(f"not JSON ({err.msg})") from None
    if not isinstance(event, dict):
        raise fail("not a JSON object")
    if event.get("event") == "search":
        try:
            event["query"] = check_query(event.get("query"), "the search's query")
        except ValueError as err:
            raise fail(str(err)) from None
    return event
