"""The docs site's pages pull their guide text from README sections (docs/_hooks): every marker
must name an existing section, so renaming a README heading cannot silently empty a page.
``mkdocs build --strict`` itself runs in CI (.ci/run). And ``help(kernel)`` is a real manual."""
from __future__ import annotations

import importlib.util
import pydoc
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def _hook():
    spec = importlib.util.spec_from_file_location("readme_sections", DOCS / "_hooks" / "readme_sections.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("page", sorted(p.name for p in DOCS.glob("*.md")))
def test_every_readme_marker_resolves(page):
    hook = _hook()
    text = (DOCS / page).read_text()
    rendered = hook.on_page_markdown(text)
    assert "<!-- readme:" not in rendered
    for spec in re.findall(r"<!-- readme: (.+?) -->", text):
        assert len(hook.readme_part(spec).split()) > 20, spec   # a real section, not an empty one
    assert "](docs/" not in rendered and "](../" not in rendered


def test_a_marker_naming_nothing_fails_the_build():
    hook = _hook()
    with pytest.raises(ValueError, match="no section '## No such section'"):
        hook.on_page_markdown("<!-- readme: No such section -->")
    with pytest.raises(ValueError, match=r"no paragraph starting with \*\*Nope\.\*\*"):
        hook.on_page_markdown("<!-- readme: Writing kernels / Nope -->")


def test_every_page_is_in_the_nav():
    nav = (ROOT / "mkdocs.yml").read_text()
    pages = {p.name for p in DOCS.glob("*.md")}
    assert pages == set(re.findall(r"(\S+\.md)$", nav, re.M))


def test_help_kernel_is_a_manual():
    from pygpgpu import kernel

    text = pydoc.render_doc(kernel, renderer=pydoc.plaintext)
    for needle in ("Calling forms", "saxpy[\"opencl\"]", ":param backend:", ":param default_float:",
                   ":param debug:", "inspect(", "launch domain"):
        assert needle in text, needle
