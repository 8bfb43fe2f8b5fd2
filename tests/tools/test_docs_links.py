"""The README and docs/ are the front door: every relative link in them resolves (files and
headings), and nothing in the repository points at files outside it."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from urllib.parse import unquote

import pytest

from tests.support import ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
# [text](target) outside code; images too. Targets with a scheme are not ours to check.
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*:", re.I)


def _prose(text: str) -> str:
    """The page without fenced code blocks and inline code, where brackets are not links."""
    text = re.sub(r"^(```|~~~).*?^\1", "", text, flags=re.M | re.S)
    return re.sub(r"`[^`\n]*`", "", text)


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"`([^`]*)`", r"\1", heading.strip()).lower()
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    text = re.sub(r"^(```|~~~).*?^\1", "", page.read_text(encoding="utf-8"), flags=re.M | re.S)
    return {_slug(m.group(1)) for m in re.finditer(r"^#{1,6}\s+(.+?)\s*#*\s*$", text, flags=re.M)}


def _links(page: Path) -> list[str]:
    return [m.group(1) for m in LINK.finditer(_prose(page.read_text(encoding="utf-8")))]


def test_the_pages_have_links_to_check() -> None:
    assert len(PAGES) > 10
    assert len(_links(ROOT / "README.md")) > 20


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page: Path) -> None:
    broken: list[str] = []
    for target in _links(page):
        if SCHEME.match(target):
            continue
        path_part, _, anchor = target.partition("#")
        dest = (page.parent / unquote(path_part)).resolve() if path_part else page
        if not dest.is_relative_to(ROOT):
            broken.append(f"{target} (points outside the repository)")
        elif not dest.exists():
            broken.append(f"{target} (no such file)")
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            broken.append(f"{target} (no heading #{anchor} in {dest.relative_to(ROOT)})")
    assert not broken, f"{page.relative_to(ROOT)}: " + "; ".join(broken)


def test_the_readme_is_a_front_door() -> None:
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 250


def test_nothing_points_outside_the_repository() -> None:
    """The design notes and shared files of the team live beside the repository, not in it:
    a user's checkout has none of them, so no tracked file may refer to them."""
    tracked = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.split(b"\0")
    offenders = []
    for name in filter(None, tracked):
        path = ROOT / name.decode()
        if path.suffix not in {".py", ".md", ".toml", ".properties", ".cfg", ".txt", ".sql", ""}:
            continue
        if path == Path(__file__) or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if re.search(r"\.\./shared/|DESIGN\.md", text):
            offenders.append(name.decode())
    assert not offenders, offenders
