"""The text the encoder sees for a tool: its name, description and parameters."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ._rubric import is_missing

__all__ = ["PARAMETERS_TEXT_TEMPLATE", "TOOL_TEXT_TEMPLATE", "format_parameters"]

#: The text the encoder sees for a tool without parameters.
TOOL_TEXT_TEMPLATE = "{name}: {description}"

#: The text the encoder sees for a tool with parameters: the parameter names and
#: descriptions follow the description, because a ``password`` or ``sql`` parameter is a risk
#: signal that the description may not mention. ``{parameters}`` is
#: :func:`format_parameters` of the tool's parameters.
PARAMETERS_TEXT_TEMPLATE = "{name}: {description} Parameters: {parameters}"

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
