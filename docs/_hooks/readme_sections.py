"""mkdocs hook: pages take their guide text from the README, so the two never drift apart.

A line ``<!-- readme: Title -->`` in a page is replaced by the README section ``## Title``
(without its heading); ``<!-- readme: Title / Name -->`` by the paragraph of that section that
starts with ``**Name.**``, up to the next such paragraph; ``<!-- readme: intro -->`` by the text
between the README's title and its first section. Links written for the README (``docs/x.md``,
``docs/images/...``) are rewritten for pages inside docs/, and links to other repository
files become plain text. A marker naming nothing raises, so ``mkdocs build --strict`` fails.
"""
from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"
_MARKER = re.compile(r"^<!-- readme: (.+?) -->$", re.M)
_REPO_LINK = re.compile(r"\[([^\]]+)\]\((?!https?://|#|docs/)([^)]+)\)")


def _sections(text: str) -> dict[str, str]:
    parts = re.split(r"^## (.+)$", text, flags=re.M)
    out = {"intro": parts[0].split("\n", 1)[1] if "\n" in parts[0] else ""}
    for title, body in zip(parts[1::2], parts[2::2]):
        out[title.strip()] = body
    return out


def _paragraph(body: str, name: str) -> str:
    lines = body.splitlines()
    start = next((k for k, ln in enumerate(lines) if ln.startswith(f"**{name}.**")), None)
    if start is None:
        raise KeyError(name)
    end = next((k for k in range(start + 1, len(lines)) if lines[k].startswith("**")), len(lines))
    return "\n".join(lines[start:end])


def _for_docs(text: str) -> str:
    text = text.replace("](docs/", "](")
    return _REPO_LINK.sub(lambda m: m.group(1), text)      # LICENSE, benchmarks/... are not pages


def readme_part(spec: str) -> str:
    sections = _sections(README.read_text(encoding="utf-8"))
    title, _, name = (s.strip() for s in spec.partition("/"))
    if title not in sections:
        raise ValueError(f"README.md has no section '## {title}' (pages ask for it with <!-- readme: {spec} -->)")
    body = sections[title]
    if name:
        try:
            body = _paragraph(body, name)
        except KeyError:
            raise ValueError(f"README.md section '## {title}' has no paragraph starting with **{name}.**") from None
    return _for_docs(body.strip("\n"))


def on_page_markdown(markdown: str, **_kwargs) -> str:
    return _MARKER.sub(lambda m: readme_part(m.group(1)), markdown)
