"""Permission categories: the paper's five high-risk kinds of access, read from a tool's words."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping

__all__ = ["DEFAULT_PERMISSION_KEYWORDS", "PERMISSION_CATEGORIES", "derive_permissions"]

#: The paper's five high-risk permission categories.
PERMISSION_CATEGORIES = ("shell_execution", "file_write", "network_access", "credential_handling",
                         "code_execution")

#: Keyword rules: a category applies when one of its keywords occurs as a whole word (or a
#: run of whole words, for multi-word keywords) in the tool's name or description. Names are
#: split on ``_``, ``-``, ``.`` and camelCase first, so ``runCode`` and ``run_code`` both read
#: as ``run code``.
#:
#: Tuned on the UltraTool and Seal-Tools registries: bare words that mostly name something
#: else there are only used inside phrases. ``command`` is mostly "command the robot",
#: ``request`` a repair or refund request, ``network`` a neural or supply-chain network,
#: ``token`` a crypto token, ``compile`` compiling a report, ``fetch`` a data look-up,
#: ``writing`` a writing prompt, ``deleted`` a check that something was deleted, ``socket``
#: a power socket and ``wifi`` a hotel amenity.
DEFAULT_PERMISSION_KEYWORDS: Mapping[str, tuple[str, ...]] = {
    "shell_execution": (
        "shell", "bash", "zsh", "powershell", "terminal", "command line", "cli", "sudo",
        "subprocess", "cmd", "shell command", "shell commands", "system command",
        "system commands", "run command", "run commands", "run a command",
        "execute command", "execute commands", "execute a command"),
    "file_write": (
        "delete", "deletes", "deleting", "deletion", "overwrite", "overwrites", "overwriting",
        "write", "writes", "file write", "write file", "write to file", "remove file",
        "remove files", "rename file", "move file", "move files", "save file", "create file",
        "modify file", "edit file", "format disk", "rm"),
    "network_access": (
        "upload", "uploads", "uploading", "download", "downloading",
        "http", "https", "http request", "api request", "web request", "api call",
        "webhook", "curl", "wget", "url", "urls", "ftp", "ssh", "websocket", "web socket",
        "network traffic", "network interface", "network settings", "network configuration",
        "network connection", "vpn", "dns", "remote server"),
    "credential_handling": (
        "password", "passwords", "oauth", "credential", "credentials",
        "api key", "api keys", "secret", "secrets", "login", "logging into", "log into",
        "sign in", "authenticate", "authentication", "private key", "2fa", "otp", "pin",
        "access token", "access tokens", "session token", "auth token", "api token",
        "bearer token", "refresh token", "secure token"),
    "code_execution": (
        "eval", "exec", "execute", "executes", "executing", "code execution",
        "run code", "run script", "run scripts", "run a script", "execute script",
        "execute code", "interpreter", "compile code", "compile source code", "compiler",
        "python code", "javascript code", "sql query", "deploy", "deploys"),
}

MSG_BAD_KEYWORDS = ("permission_keywords has unknown categories {cats}; expected a subset of "
                    "{allowed}.")
MSG_BAD_PERMISSION = ("Tool {name!r}: unknown permission category {perm!r}; expected one of "
                      "{allowed}.")

# camelCase boundaries: lower -> Upper ("deleteFile"), digit -> Capitalised word ("md5Hash"),
# and the end of an acronym ("HTTPRequest").
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])|(?<=[0-9])(?=[A-Z][a-z])|(?<=[A-Z])(?=[A-Z][a-z])")
# A second reading for what the acronym rule gets wrong: "OAuthHelper" as "OAuth Helper"
# (not "O Auth Helper") and "setup2FA" as "setup 2FA".
_CAMEL_SOFT = re.compile(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Za-z])(?=[0-9])")
_WORD = re.compile(r"[a-z0-9]+")


def _words(text: str) -> list[str]:
    """Lower-cased words, with camelCase and snake_case names split into their parts."""
    return _WORD.findall(_CAMEL.sub(" ", text).lower())


def _match_text(text: str) -> str:
    """Space-padded words of ``text`` for whole-word substring tests.

    Both camelCase readings are kept, after a separator that no phrase can span, so a keyword
    matches when either reading has it.
    """
    soft = _WORD.findall(_CAMEL_SOFT.sub(" ", text).lower())
    return f" {' '.join(_words(text))} \x00 {' '.join(soft)} "


def _compile_keywords(keywords: Mapping[str, Iterable[str]] | None) -> dict[str, list[str]]:
    if keywords is None:
        keywords = DEFAULT_PERMISSION_KEYWORDS
    unknown = sorted(set(keywords) - set(PERMISSION_CATEGORIES))
    if unknown:
        raise ValueError(MSG_BAD_KEYWORDS.format(cats=unknown,
                                                 allowed=list(PERMISSION_CATEGORIES)))
    # A bare string would otherwise be read as one keyword per character.
    return _compiled(tuple((cat, (kws,) if isinstance(kws, str) else tuple(kws))
                           for cat, kws in keywords.items()))


@functools.lru_cache(maxsize=8)
def _compiled(keywords: tuple) -> dict[str, list[str]]:
    # Cached by value: every registry compiles the same (default) keywords, 119 of them,
    # which took most of the time of making a one-tool registry. Callers only read it.
    # Padding with spaces makes a substring test a whole-word (or whole-phrase) test.
    return {cat: [f" {' '.join(_words(kw))} " for kw in kws if _words(kw)]
            for cat, kws in keywords}


def derive_permissions(name: str, description: str,
                       keywords: Mapping[str, Iterable[str]] | None = None) -> frozenset[str]:
    """Derive a tool's high-risk permission categories from its name and description.

    Matching is on whole words after splitting camelCase and snake_case, so ``"curl"`` does
    not hit ``"url"`` and ``"execute"`` does not hit ``"executed"``.

    Parameters
    ----------
    name : str
        The tool name, for example ``"run_shell_command"`` or ``"deleteFile"``.
    description : str
        The tool description.
    keywords : mapping of str to iterable of str, default=None
        Category -> keywords. ``None`` uses :data:`DEFAULT_PERMISSION_KEYWORDS`. Categories
        absent from the mapping are never derived.

    Returns
    -------
    permissions : frozenset of str
        The matching categories, a subset of :data:`PERMISSION_CATEGORIES`.

    Examples
    --------
    >>> sorted(derive_permissions("run_shell_command", "Runs a bash command"))
    ['shell_execution']
    >>> sorted(derive_permissions("get_url_title", "Read a page title"))
    ['network_access']
    >>> sorted(derive_permissions("curlicue_font", "Returns the curlicue font"))
    []
    """
    return _derive(_match_text(f"{name} {description}"), _compile_keywords(keywords))


def _derive(text: str, compiled: dict[str, list[str]]) -> frozenset[str]:
    return frozenset(cat for cat, phrases in compiled.items() if any(p in text for p in phrases))
