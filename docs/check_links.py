"""Check every internal link of a built HTML site: the file exists, and so does the anchor.

    python docs/check_links.py docs/_build/html

Reads each ``*.html`` file under the directory with :mod:`html.parser`, collects the
``href`` and ``src`` of its elements and the ``id`` (and ``<a name>``) of its anchors, and
reports every internal reference whose file is missing or, for a ``#fragment`` into an
HTML page, whose anchor that page does not define. External URLs (any scheme, or ``//``)
are skipped: the build is offline, and Sphinx's ``-n -W`` already fails on broken
cross-references, so this catches what it cannot see (theme templates, raw HTML, copied
images, gallery downloads). Exits with status 1 when something is broken.
"""

from __future__ import annotations

import argparse
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

#: Attributes that hold a URL the browser loads or follows.
URL_ATTRIBUTES = {"href", "src"}


class _PageParser(HTMLParser):
    """The anchors a page defines and the URLs it references."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.urls: list[tuple[int, str]] = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if value is None:
                continue
            if name == "id" or (tag == "a" and name == "name"):
                self.ids.add(value)
            elif name in URL_ATTRIBUTES:
                self.urls.append((self.getpos()[0], value))
            elif name == "srcset":
                # "a.png 1x, b.png 2x": each candidate is a URL before its descriptor.
                for candidate in value.split(","):
                    if candidate.strip():
                        self.urls.append((self.getpos()[0], candidate.split()[0]))

    handle_startendtag = handle_starttag


def _is_external(url: str) -> bool:
    parts = urlsplit(url)
    return bool(parts.scheme) or url.startswith("//")


def check_site(root) -> list[str]:
    """Every broken internal link under ``root``, as ``"page:line: url (why)"`` strings.

    Parameters
    ----------
    root : str or path-like
        The built HTML directory (Sphinx's ``-b html`` output).

    Returns
    -------
    problems : list of str
        Empty when every internal ``href`` and ``src`` resolves.
    """
    root = Path(root).resolve()
    pages: dict[Path, _PageParser] = {}
    for page in sorted(root.rglob("*.html")):
        if page.relative_to(root).parts[0] == "_static":
            continue  # the theme's assets (its HTML templates among them), not pages
        parser = _PageParser()
        parser.feed(page.read_text(encoding="utf-8", errors="replace"))
        parser.close()
        pages[page] = parser

    problems = []
    for page, parser in pages.items():
        where = page.relative_to(root)
        for line, url in parser.urls:
            if not url or _is_external(url):
                continue
            parts = urlsplit(url)
            target = page if not parts.path else (page.parent / unquote(parts.path)).resolve()
            if parts.path.endswith("/") or target.is_dir():
                target = target / "index.html"
            if not target.is_relative_to(root):
                problems.append(f"{where}:{line}: {url} (outside the site)")
                continue
            if not target.is_file():
                problems.append(f"{where}:{line}: {url} (no such file)")
                continue
            fragment = unquote(parts.fragment)
            if not fragment or target not in pages:
                continue  # no anchor asked for, or not a page (an image, a theme asset)
            if fragment not in pages[target].ids:
                problems.append(f"{where}:{line}: {url} (no anchor #{fragment} in "
                                f"{target.relative_to(root)})")
    return problems


def main(argv=None) -> int:
    """Check the site given on the command line; print the problems, return 1 if any."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site", help="the built HTML directory, e.g. docs/_build/html")
    args = parser.parse_args(argv)
    root = Path(args.site)
    if not (root / "index.html").is_file():
        print(f"check_links: {root} has no index.html: build the site first", file=sys.stderr)
        return 1
    problems = check_site(root)
    n_pages = sum(1 for p in root.rglob("*.html") if p.relative_to(root).parts[0] != "_static")
    for problem in problems:
        print(problem)
    print(f"check_links: {n_pages} pages, {len(problems)} broken internal link(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
