r"""Rules for text that comes from outside: queries, tool names and descriptions.

Queries, catalogues and MCP requests are untrusted input (``docs/security.md``). Each is
checked where it enters, with these rules, so that nothing downstream sees a text it cannot
encode, display or answer with:

- every text is valid Unicode: a lone surrogate (what undecodable bytes become on a command
  line, or a ``\ud800`` escape in JSON) is refused, since it cannot be written back out;
- a query is at most :data:`MAX_QUERY_LENGTH` characters, and an error about it never
  repeats it;
- a tool name is printable: no control, format (zero-width, bidirectional override), line
  separator or surrogate character, so ``read\u202eelif`` cannot display as ``readfile``;
  :data:`MCP_TOOL_NAME` is the stricter charset of MCP, OpenAI and Anthropic tool names;
- a description loses its invisible characters (format and control characters other than
  white space), and the tool is flagged ``"injection"``: hidden text is how instructions
  to the model are smuggled past a person reading the catalogue;
- a tool's ``inputSchema`` (written by its server) and the arguments of a call (written by
  the agent) meet in :class:`ArgumentSchema`, where no pattern can make a check hang and no
  ``$ref`` is fetched.
"""

from __future__ import annotations

import itertools
import json
import re
import unicodedata

__all__ = ["MAX_ARGUMENT_DEPTH", "MAX_QUERY_LENGTH", "MCP_TOOL_NAME", "ArgumentSchema",
           "check_query", "check_tool_name",
           "strip_invisible"]

#: Longest query accepted, in characters. The encoder reads the first 128 word pieces (about
#: 500 characters of English) of each query, or of each sentence with ``sentence_weight``;
#: the cap leaves room for long tasks and bounds the work and memory a request can ask for.
MAX_QUERY_LENGTH = 4096

#: Tool names of MCP (and OpenAI and Anthropic): letters, digits, ``_``, ``-`` and ``.``,
#: 1 to 128 characters.
MCP_TOOL_NAME = re.compile(r"[A-Za-z0-9_.\-]{1,128}")

#: Deepest nesting of a call's arguments (objects and arrays) that is checked: validation
#: recurses through them, and no tool's arguments need more.
MAX_ARGUMENT_DEPTH = 64

MSG_NOT_TEXT = "{what} must be a non-empty string, got {type}."
MSG_TOO_LONG = "{what} is {n:,} characters long; at most {limit:,} are accepted."
MSG_INVALID_UNICODE = ("{what} is not valid Unicode: character {pos} is a lone surrogate "
                       "(undecodable bytes?).")
MSG_BAD_SCHEMA = "not a valid JSON Schema: {error}"
MSG_TOO_DEEP = "arguments: nested more than {limit} levels deep"
MSG_ARGUMENT_UNICODE = ("arguments: a name is not valid Unicode (a lone surrogate at "
                        "character {pos})")
MSG_SLOW_PATTERN = "{place}: its pattern {pattern} backtracks too long to be checked"
MSG_BAD_NAME_CHAR = ("{what} holds an invisible or control character (U+{code:04X}) at position "
                     "{pos}; tool names must be printable.")

# Unicode general categories never shown as text: controls, format characters (zero-width,
# bidirectional overrides, the BOM), line and paragraph separators, surrogates, unassigned.
_HIDDEN = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"})


def _check_unicode(text: str, what: str) -> None:
    """Refuse a lone surrogate, naming ``what`` and its position (fast path: it encodes)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as err:
        raise ValueError(MSG_INVALID_UNICODE.format(what=what, pos=err.start)) from None


def check_query(value, what: str = "the query", limit: int = MAX_QUERY_LENGTH) -> str:
    """``value`` if it is a non-empty, valid Unicode string of at most ``limit`` characters.

    Otherwise a ValueError names ``what`` and the problem, never repeating the text.

    Examples
    --------
    >>> from skriskrank._inputs import check_query
    >>> check_query("delete the old logs")
    'delete the old logs'
    >>> check_query("x" * 5000)
    Traceback (most recent call last):
    ...
    ValueError: the query is 5,000 characters long; at most 4,096 are accepted.
    """
    if not isinstance(value, str) or not value.strip():
        kind = "an empty string" if isinstance(value, str) else type(value).__name__
        raise ValueError(MSG_NOT_TEXT.format(what=what, type=kind))
    if len(value) > limit:
        raise ValueError(MSG_TOO_LONG.format(what=what, n=len(value), limit=limit))
    _check_unicode(value, what)
    return value


def check_tool_name(name: str, what: str) -> str:
    """``name`` if it is valid Unicode and printable; see the module docstring."""
    _check_unicode(name, what)
    for pos, char in enumerate(name):
        if unicodedata.category(char) in _HIDDEN:
            raise ValueError(MSG_BAD_NAME_CHAR.format(what=what, code=ord(char), pos=pos))
    return name


def printable(text: str) -> bool:
    """Whether every character of ``text`` other than white space is printable.

    ``str.isprintable`` alone is False for any newline, which most descriptions have.
    """
    return "".join(text.split()).isprintable()


def strip_invisible(text: str, what: str) -> tuple[str, bool]:
    """``(text without its invisible characters, whether any were removed)``.

    White space (tabs, newlines) is kept; a lone surrogate is refused, naming ``what``.
    """
    _check_unicode(text, what)
    if printable(text):  # the common case, in C
        return text, False
    kept = "".join(c for c in text if c.isspace() or unicodedata.category(c) not in _HIDDEN)
    return kept, kept != text


class ArgumentSchema:
    """A tool's ``inputSchema``, compiled once, and what a call's arguments break of it.

    The schema comes from a server and the arguments from an agent, so neither can make a
    check hang or reach the network: ``jsonschema_rs`` runs patterns on a linear-time engine
    (look-around and back-references on a backtracking one with a step limit, which fails
    the check instead of hanging), resolves a ``$ref`` within the schema only, and checks
    ``format`` not at all, as the 2019-09 and 2020-12 drafts specify by default (the server
    does). Arguments nested deeper than :data:`MAX_ARGUMENT_DEPTH` are refused unchecked.

    Parameters
    ----------
    schema : dict
        A JSON Schema. Its ``$schema`` names the draft; 2020-12 when it names none the
        validator knows.

    Raises
    ------
    ValueError
        If ``schema`` is not a valid JSON Schema (a pattern that does not compile, a type
        that does not exist, a ``$ref`` to anything outside it).

    Examples
    --------
    >>> from skriskrank._inputs import ArgumentSchema
    >>> schema = ArgumentSchema({"type": "object", "required": ["path"],
    ...                          "properties": {"path": {"type": "string", "maxLength": 8}}})
    >>> schema.errors({"path": "notes.txt"})
    "path: fails 'maxLength' (8)"
    >>> schema.errors({"path": "a.txt"})
    ''
    """

    def __init__(self, schema):
        import jsonschema_rs

        try:
            self._validator = jsonschema_rs.validator_cls_for(schema)(
                schema, validate_formats=False, offline=True)
        except jsonschema_rs.ValidationError as err:
            raise ValueError(MSG_BAD_SCHEMA.format(error=str(err).splitlines()[0])) from None
        self.schema = schema

    def errors(self, instance, limit: int = 10, *, rules: bool = True) -> str:
        """What ``instance`` breaks of the schema, in one line, or ``""``.

        At most ``limit`` problems are named, each by its place and rule, never its value:
        the library's own messages would repeat a 100 KB argument, or a lone surrogate,
        which cannot be written back. With ``rules=False`` a rule is named by its keyword
        alone, without the schema's words (an ``enum``'s values, say): for a tool whose
        words are withheld from the agent.
        """
        if _deeper_than(instance, MAX_ARGUMENT_DEPTH):
            return MSG_TOO_DEEP.format(limit=MAX_ARGUMENT_DEPTH)
        try:
            return "; ".join(self._describe(error, rules) for error in
                             itertools.islice(self._validator.iter_errors(instance), limit))
        except UnicodeEncodeError as err:  # a lone surrogate in a key: it has no UTF-8
            return MSG_ARGUMENT_UNICODE.format(pos=err.start)

    def _describe(self, error, rules=True) -> str:
        place = "/".join(map(str, error.instance_path))[:200] or "arguments"
        if not rules:
            return f"{place}: fails {error.schema_path[-1]!r}"
        rule = self.schema
        for step in error.schema_path:  # the keyword's value, where the path leads to it
            try:
                rule = rule[step]
            except (KeyError, IndexError, TypeError):
                return f"{place}: fails {error.schema_path[-1]!r}"
        shown = json.dumps(rule, ensure_ascii=True)[:80]
        if type(error.kind).__name__ == "BacktrackLimitExceeded":
            return MSG_SLOW_PATTERN.format(place=place, pattern=shown)
        return f"{place}: fails {error.schema_path[-1]!r} ({shown})"


def _deeper_than(value, limit: int) -> bool:
    """Whether ``value`` nests objects and arrays more than ``limit`` levels deep."""
    level, depth = [value], 0
    while True:
        containers = [v for v in level if isinstance(v, (dict, list))]
        if not containers:
            return False
        depth += 1
        if depth > limit:
            return True
        level = [child for v in containers for child in (v.values() if isinstance(v, dict)
                                                         else v)]
