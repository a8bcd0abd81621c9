"""The rubric's axes read from a tool's words: its action, reversibility, scope and sensitivity.

The rubric grades a tool by what it does, whether that can be undone, how much it touches and
how sensitive what it touches is; :data:`AXES` holds the words of each. :class:`RiskAuditor`
reads them as features from a tool's name (split ``snake_case``, ``kebab-case`` and
``camelCase``) and its whole text, and keeps a tool whose name destroys at level 3 or above.
"""

from __future__ import annotations

import numpy as np

from ._permissions import _words

__all__ = ["AXES", "rubric_axes", "states_destruction"]


def _forms(words: str) -> frozenset[str]:
    """Each word with its -s, -es, -d, -ed and -ing forms ("delete": "deletes", "deleting")."""
    out = set()
    for w in words.split():
        stem = w[:-1] if w.endswith("e") else w
        out |= {w, w + "s", w + "es", w + "d", w + "ed", stem + "ing"}
    return frozenset(out)


#: Words that place a tool on each axis of the rubric, by axis.
AXES: dict[str, frozenset[str]] = {
    # action
    "read": _forms("get list read search fetch find show view describe query lookup check "
                   "count retrieve inspect status info browse"),
    "create": _forms("create add new insert make generate register upload post open append"),
    "update": _forms("update edit modify set change rename move patch replace configure enable "
                     "disable assign merge commit push write save sync"),
    "delete": _forms("delete remove drop erase wipe purge destroy clear truncate uninstall "
                     "unlink revoke archive reset"),
    "execute": _forms("run execute exec eval invoke launch start stop restart kill terminate "
                      "deploy install build reboot shutdown scale apply trigger"),
    "send": _forms("send email mail publish notify message reply share tweet forward sms "
                   "broadcast invite"),
    "transfer": _forms("transfer pay payment charge refund withdraw deposit buy purchase order "
                       "wire trade checkout"),
    "grant": _forms("grant permission role authorize approve access policy acl privilege"),
    # reversibility
    "irreversible": frozenset("permanently permanent irreversible irreversibly force forced "
                              "cannot undone undo hard".split()),
    # scope
    "bulk": frozenset("all every bulk batch multiple entire whole recursive recursively many "
                      "mass".split()),
    "system": _forms("system server cluster database db root admin instance machine vm "
                     "account organization org project namespace repository repo"),
    # sensitivity
    "secrets": _forms("secret key token password credential certificate vault private "
                      "passphrase"),
    "personal": _forms("email phone address personal contact user customer patient medical "
                       "health profile"),
    "money": _forms("payment bank card invoice balance price wallet crypto money billing fund"),
    "infrastructure": _forms("server vm cluster container database dns firewall network "
                             "instance disk bucket volume node pod deployment"),
}

#: Verbs that, in a tool's name, state that it destroys something (in the imperative or third
#: person: ``check_file_deleted`` checks, it does not delete).
DESTRUCTIVE_VERBS = frozenset(
    form for verb in ("delete remove erase wipe drop destroy purge truncate uninstall unlink "
                      "kill terminate revoke overwrite").split()
    for form in (verb, verb + "s", verb + "es"))


def rubric_axes(names, texts) -> np.ndarray:
    """Which axes each tool's name and text (name, description and parameters) reach.

    An (n_tools, 2 * len(AXES)) float array: for each axis of :data:`AXES` in order, 1 where
    the name holds one of its words, then 1 where the text does; 0 otherwise.

    Examples
    --------
    >>> from skriskrank._axes import AXES, rubric_axes
    >>> A = rubric_axes(["deleteSecret"], ["deleteSecret: Remove a secret from the vault"])
    >>> sorted(k for k, hit in zip(AXES, A[0, ::2]) if hit)
    ['delete', 'secrets']
    """
    out = np.zeros((len(texts), 2 * len(AXES)))
    for i, (name, text) in enumerate(zip(names, texts, strict=True)):
        for column, words in enumerate((set(_words(name)), set(_words(text)))):
            out[i, column::2] = [bool(words & axis) for axis in AXES.values()]
    return out


def states_destruction(names) -> np.ndarray:
    """Whether each tool's name states that it destroys something (``delete_disk``), as bools.

    Examples
    --------
    >>> from skriskrank._axes import states_destruction
    >>> states_destruction(["uninstallRelease", "get_release", "remove-issue-link"]).tolist()
    [True, False, True]
    """
    return np.array([bool(set(_words(n)) & DESTRUCTIVE_VERBS) for n in names], dtype=bool)
