"""The text the encoder sees for a tool: its name, description and parameters."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from ._permissions import _CAMEL
from ._rubric import is_missing

__all__ = ["PARAMETERS_TEXT_TEMPLATE", "TOOL_TEXT_TEMPLATE", "brief_text", "format_parameters"]

#: The text the encoder sees for a tool without parameters.
TOOL_TEXT_TEMPLATE = "{name}: {description}"

#: The text the encoder sees for a tool with parameters: the parameter names and
#: descriptions follow the description, because a ``password`` or ``sql`` parameter is a risk
#: signal that the description may not mention. ``{parameters}`` is
#: :func:`format_parameters` of the tool's parameters.
PARAMETERS_TEXT_TEMPLATE = "{name}: {description} Parameters: {parameters}"

#: Where a text splits into sentences, and the shortest part that counts as one.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_MIN_SENTENCE = 16
#: The most sentences of one query that are encoded (a query's length is bounded; this bounds
#: the encodings one query can ask for).
MAX_SENTENCES = 16
#: What separates the words of a tool's name once camelCase is split ("get-weibo_trending").
_NAME_SEPARATORS = re.compile(r"[\W_]+")

MSG_BAD_PARAMETERS = ("Tool {name!r}: parameters must be a sequence of (name, description) string "
                      "pairs, got {value!r}.")
MSG_BAD_TEMPLATE = ("text_template must be a format string using {{name}}, {{description}} and "
                    "{{parameters}}, or a callable (name, description, parameters) -> str; "
                    "formatting tool {name!r} failed: {error}")
MSG_BAD_TEXT = "Tool {name!r}: text_template gave {value!r}; it must give a non-empty string."


def format_parameters(parameters) -> str:
    """The parameters part of a tool's text: ``"path (File to read); head"``.

    Parameters
    ----------
    parameters : sequence of (str, str)
        ``(name, description)`` pairs; an empty description shows the name alone.

    Returns
    -------
    text : str

    Examples
    --------
    >>> from skriskrank import format_parameters
    >>> format_parameters([("path", "File to read"), ("head", "")])
    'path (File to read); head'
    """
    return "; ".join(f"{n} ({d})" if d else n for n, d in parameters)


def sentences(text: str) -> list[str]:
    """The sentences of a text (the first 16 of at least 16 characters; the text if it has one).

    What ``FrozenEmbedder``'s ``sentence_weight`` scores a query by.
    """
    parts = [p.strip() for p in _SENTENCE_END.split(text)]
    parts = [p for p in parts if len(p) >= _MIN_SENTENCE][:MAX_SENTENCES]
    return parts if len(parts) > 1 else [text]


def _first_sentence(text: str) -> str:
    # A short first sentence ("Rename a tag.") is kept and joined to the next ones until the
    # part has _MIN_SENTENCE characters, so a bare heading ("Purpose: 1.") does not stand
    # alone, and what the tool does is never skipped for a later sentence.
    kept = []
    for part in _SENTENCE_END.split(text.strip()):
        if part.strip():
            kept.append(part.strip())
        if len(" ".join(kept)) >= _MIN_SENTENCE:
            break
    return " ".join(kept)


def brief_text(name: str, description: str, parameters) -> str:
    """A tool's brief text: its name's words, its description's first sentence, its parameters.

    What ``FrozenEmbedder(tool_text="brief")`` encodes, and so what the pretrained pipeline
    ranks by: on real MCP tasks it ranks better than the whole text, whose later sentences
    (formats, examples, caveats) and parameter descriptions blur what a tool is for
    (``benchmarks/results/real_mcp.md``). The parameters' names stay: a ``repo`` or ``sql``
    says what a tool works on.

    Parameters
    ----------
    name : str
        The tool's name; camelCase, snake_case and kebab-case are split into words. A
        server's namespace before ``__`` (``github__search``, as the gateway and
        :func:`load_tools`'s callers name a tool that two servers share) is left out: the
        server graph, not the text, ties a tool to its server.
    description : str
        The tool's description; only its first sentence is kept, with the next ones while
        it is shorter than 16 characters (so "Rename a tag." is kept, and a heading such as
        "Purpose: 1." is kept with the sentence after it).
    parameters : sequence of (str, str)
        ``(name, description)`` pairs; only the names are kept.

    Returns
    -------
    text : str

    Examples
    --------
    >>> from skriskrank import brief_text
    >>> brief_text("weibo__get-weibo_trendingTopics", "List trending topics on Weibo. Results are "
    ...            "cached for five minutes; see the docs.", [("limit", "How many")])
    'get weibo trending Topics: List trending topics on Weibo. Parameters: limit'
    """
    own = name.split("__", 1)[-1]
    words = _NAME_SEPARATORS.sub(" ", _CAMEL.sub(" ", own)).strip() or name
    text = f"{words}: {_first_sentence(description)}"
    return f"{text} Parameters: {', '.join(n for n, _ in parameters)}" if parameters else text


def tool_texts(registry, which: str = "full") -> list[str]:
    """The text of each tool of ``registry`` that ``FrozenEmbedder(tool_text=which)`` encodes.

    ``"full"`` is :attr:`ToolRegistry.texts`, ``"brief"`` :func:`brief_text` of each tool.
    """
    if which == "full":
        return list(registry.texts)
    return [brief_text(*tool) for tool in zip(registry.names, registry.descriptions,
                                              registry.parameters, strict=True)]


def _check_parameters(name: str, params) -> tuple[tuple[str, str], ...]:
    if is_missing(params):
        return ()
    if isinstance(params, (str, bytes)) or not isinstance(params, Iterable):
        raise ValueError(MSG_BAD_PARAMETERS.format(name=name, value=params))
    if isinstance(params, Mapping):
        # {name: description}; iterating it would give the names alone.
        params = params.items()
    out = []
    for pair in params:
        if isinstance(pair, str):
            pair = (pair, "")
        try:
            pname, pdesc = pair
        except (TypeError, ValueError):
            raise ValueError(MSG_BAD_PARAMETERS.format(name=name, value=params)) from None
        pdesc = "" if pdesc is None else pdesc
        if not isinstance(pname, str) or not pname.strip() or not isinstance(pdesc, str):
            raise ValueError(MSG_BAD_PARAMETERS.format(name=name, value=params))
        out.append((pname, " ".join(pdesc.split())))
    return tuple(out)


def _render_text(template, name: str, desc: str, params) -> str:
    if template is None:
        template = PARAMETERS_TEXT_TEMPLATE if params else TOOL_TEXT_TEMPLATE
    try:
        if callable(template):
            text = template(name, desc, params)
        else:
            text = template.format(name=name, description=desc,
                                   parameters=format_parameters(params))
    except (KeyError, IndexError, ValueError, TypeError, AttributeError) as err:
        raise ValueError(MSG_BAD_TEMPLATE.format(name=name, error=err)) from None
    if not isinstance(text, str) or not text.strip():
        raise ValueError(MSG_BAD_TEXT.format(name=name, value=text))
    return text
