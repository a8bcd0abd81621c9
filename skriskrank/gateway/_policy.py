"""The gateway's policy: which calls reach a server, checked at call time.

Hiding a tool from a search is not a boundary: an agent that knows a name can call it. So
every call through the gateway passes these checks, in this order, and a refusal is a tool
error that says why and what to do:

1. ``--deny`` and ``--allow`` patterns (globs on ``server__tool`` or on the tool's own name);
2. the name must be a tool of the catalogue;
3. a tool whose definition changed since it was reviewed, or (without a review) since the
   gateway first listed it, is refused until a person reviews it (a "rug pull": the
   reviewed levels file holds each tool's SHA-256, the gateway the first one it saw);
4. ``--read-only``: only levels 1 and 2 run (unknown risk never does);
5. the arguments must satisfy the tool's ``inputSchema`` (a refusal names each problem's
   place and rule; for a tool whose words are withheld from the agent, without the schema's
   words);
6. a tool of level ``>= --confirm-level`` (default 3) runs only if a search of this session
   returned it: the task it was found for is the reason it may run;
7. ``--confirm``: a tool of level ``>= 4`` runs only after the user accepts it, asked through
   MCP elicitation (the question names the tool's poisoning flags); where the client cannot
   ask, or the user declines, it does not run.
"""

from __future__ import annotations

import dataclasses
import fnmatch

from .._poisoning import withheld
from .._rubric import UNKNOWN_RISK
from ._catalogue import SEPARATOR

__all__ = ["Policy"]

#: The level from which ``--confirm`` asks the user: irreversible actions and above.
CONFIRM_FROM = 4

MSG_DENIED = ("refused: {name} matches --deny {pattern!r}; this gateway's configuration does "
              "not allow it")
MSG_NOT_ALLOWED = ("refused: {name} matches no --allow pattern ({patterns}); this gateway's "
                   "configuration does not allow it")
MSG_UNKNOWN = "unknown tool {name!r}: call search_tools with your task to find the tools"
MSG_CHANGED = ("refused: the definition of {name} changed since {since}; a person must review it "
               "(skriskrank gateway --audit, then --labels) before it runs")
MSG_READ_ONLY = ("refused: {name} is risk level {level} and this gateway runs read-only (levels "
                 "1-2); ask the user to run it without --read-only")
MSG_ARGUMENTS = ("invalid arguments for {name}: {problems}; its inputSchema is in "
                 "search_tools' answer")
MSG_SEARCH_FIRST = ("refused: {name} is risk level {level} (>= {confirm_level}) and runs only "
                    "when a search for the task returned it: call search_tools with your task "
                    "first")
MSG_CANNOT_ASK = ("refused: {name} is risk level {level} and needs the user's confirmation, but "
                  "this client cannot ask the user (it does not support elicitation)")
MSG_DECLINED = "refused: the user did not confirm {name} ({action})"
MSG_CONFIRM = ("The agent wants to run {name} (server {server}, risk level {level}). Allow "
               "this call?")
#: Added to ``MSG_CONFIRM`` for a tool the scan flagged and no review cleared.
MSG_CONFIRM_FLAGGED = (" Beware: the tool is flagged {flags} (possible tool poisoning), and no "
                       "review has cleared it.")


def _level_text(level: int) -> str:
    return "unknown" if level == UNKNOWN_RISK else str(level)


@dataclasses.dataclass(frozen=True)
class Policy:
    """What the gateway lets through (see the module docstring for the order of the checks).

    Parameters
    ----------
    confirm_level : int, default=3
        Tools of this level or above run only if a search of the session returned them.
    confirm : bool, default=False
        Ask the user (MCP elicitation) before any call of a tool of level 4 or above.
    read_only : bool, default=False
        Only tools of levels 1 and 2 run.
    allow, deny : tuple of str, default=()
        Glob patterns on ``server__tool`` or the tool's name; ``deny`` wins, and with
        ``allow`` only matching tools run.
    """

    confirm_level: int = 3
    confirm: bool = False
    read_only: bool = False
    allow: tuple = ()
    deny: tuple = ()

    def refusal(self, name, catalogue, *, exposed, arguments=None):
        """Why a call is refused, or None; the confirmation question comes later."""
        entry = catalogue.entries.get(name)
        keys = (name,) if entry is None else (name, entry.tool_name,
                                              entry.server + SEPARATOR + entry.tool_name)
        for pattern in self.deny:
            if any(fnmatch.fnmatchcase(key, pattern) for key in keys):
                return MSG_DENIED.format(name=name, pattern=pattern)
        if self.allow and not any(fnmatch.fnmatchcase(key, pattern) for key in keys
                                  for pattern in self.allow):
            return MSG_NOT_ALLOWED.format(name=name, patterns=", ".join(self.allow))
        if entry is None:
            return MSG_UNKNOWN.format(name=name[:128])
        if entry.changed:
            return MSG_CHANGED.format(name=name, since=entry.changed)
        level = catalogue.level(name)
        if self.read_only and level > 2:
            return MSG_READ_ONLY.format(name=name, level=_level_text(level))
        if arguments is not None:
            # A tool whose words are withheld from the agent is not quoted by its errors.
            problems = entry.arguments.errors(arguments,
                                              rules=not withheld(catalogue.flags(name)))
            if problems:
                return MSG_ARGUMENTS.format(name=name, problems=problems)
        if level >= self.confirm_level and name not in exposed:
            return MSG_SEARCH_FIRST.format(name=name, level=_level_text(level),
                                           confirm_level=self.confirm_level)
        return None

    def needs_confirmation(self, level: int) -> bool:
        """Whether a call of a tool of ``level`` must be confirmed by the user first."""
        return self.confirm and level >= CONFIRM_FROM
