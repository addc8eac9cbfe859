"""README.md and the docs site (docs/, mkdocs.yml) stay true and navigable.

Every python block of every page runs (tests/doc_blocks.py, on whatever device exists: PoCL in CI)
and prints what the page shows; every relative link and #anchor resolves; every PYGPGPU_*
variable the packages read is on the environment page; the generated "what a kernel accepts"
page matches the builtin rows; the README stays a first screen. ``mkdocs build --strict`` itself
runs in CI (.ci/run). And ``help(kernel)`` is a real manual."""
from __future__ import annotations

import os
import pydoc
import re
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
README = ROOT / "README.md"
PAGES = [README] + sorted(DOCS.glob("*.md"))
# the packages' READMEs are their index pages: their code must run too
CODE_PAGES = PAGES + sorted(ROOT.glob("packages/*/README.md"))

sys.path.insert(0, str(Path(__file__).parent))
import doc_blocks  # noqa: E402


def _rel(page: Path) -> str:
    return str(page.relative_to(ROOT))


# ---- every example runs ------------------------------------------------------------------------

@pytest.mark.parametrize("page", [p for p in CODE_PAGES if any(b.lang == "python" for b in doc_blocks.blocks(p.read_text()))],
                         ids=_rel)
def test_every_python_block_runs_and_prints_what_the_page_shows(page):
    run = subprocess.run([sys.executable, str(ROOT / "tests" / "doc_blocks.py"), str(page)],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-4000:]


def test_doc_runner_catches_a_wrong_output_and_an_error(tmp_path):
    here = os.getcwd()
    page = tmp_path / "page.md"
    page.write_text("```python\nprint(1 + 1)\n```\n\n```text\n3\n```\n")
    assert doc_blocks.run_page(page) == 1
    page.write_text("```python\nprint(1 + 1)\n```\n\n```text\n2\n```\n")
    assert doc_blocks.run_page(page) == 0
    page.write_text("```python\nraise ValueError('shown')\n```\n")
    assert doc_blocks.run_page(page) == 1
    page.write_text("<!-- no-run: shows an error -->\n```python\nraise ValueError('shown')\n```\n")
    assert doc_blocks.run_page(page) == 0
    assert os.getcwd() == here and not any("docblocks-" in p for p in sys.path)


def test_doc_runner_refuses_deprecated_pygpgpu_spellings(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("```python\nfrom pygpgpu import int8\n```\n")       # the vector, deprecated at the top level
    assert doc_blocks.run_page(page) == 1
    page.write_text("```python\nfrom pygpgpu.vec import int8\n```\n")
    assert doc_blocks.run_page(page) == 0


def test_doc_runner_writes_files_and_shares_one_namespace(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("<!-- file: data.txt -->\n```text\nhello\n```\n\n```python\nx = open('data.txt').read()\n```\n\n"
                    "Then:\n\n```python\nprint(x.strip())\n```\n\n```text\nhello\n```\n")
    found = doc_blocks.blocks(page.read_text())
    assert [b.file for b in found] == ["data.txt", None, None, None]
    assert found[2].output == "hello\n" and found[1].output is None
    assert doc_blocks.run_page(page) == 0


def test_blocks_that_do_not_run_are_few_and_say_why():
    every = [(_rel(p), b) for p in CODE_PAGES for b in doc_blocks.blocks(p.read_text()) if b.lang == "python"]
    assert all(b.no_run.strip() for _, b in every if b.no_run is not None)
    # other frameworks' code beside ours (docs/coming-from.md) is shown, not run; of our own, few
    skipped = [(page, b.line, b.no_run) for page, b in every if b.no_run is not None and "pygpgpu" in b.body]
    ran = sum(1 for p in CODE_PAGES for b in doc_blocks.blocks(p.read_text()) if b.lang == "python" and b.no_run is None)
    assert len(skipped) <= 8 and len(skipped) * 5 <= ran, skipped


@pytest.mark.parametrize("readme", [README, ROOT / "packages" / "pygpgpu" / "README.md"], ids=_rel)
def test_the_readme_first_example_shows_its_output(readme):
    first = next(b for b in doc_blocks.blocks(readme.read_text()) if b.lang == "python")
    assert first.no_run is None and first.output and first.output.strip()
    assert '"cuda' not in first.body           # runs on whatever device exists


# ---- the README is a first screen, the docs own the rest -----------------------------------------

def test_readme_is_short_and_links_into_the_docs():
    text = README.read_text()
    assert len(text) <= 12_000, len(text)
    for needle in ("make demo", "make test", "pygpgpu.numpy", "climport", "docs/tutorial.md"):
        assert needle in text, needle
    for command in re.findall(r"pip install[^\n`]*", text):
        if "--no-index" not in command:
            assert "-c requirements/constraints.txt" in command, command


def test_pages_own_their_text():
    for page in PAGES:
        assert "<!-- readme:" not in page.read_text(), page.name
    assert not (DOCS / "_hooks" / "readme_sections.py").exists()


def test_pages_use_headings_not_bold_lead_ins():
    for page in PAGES:
        text = _without_code(page.read_text())
        assert text.startswith("# "), page.name
        bold = [ln for ln in text.splitlines() if ln.startswith("**")]
        assert not bold, (page.name, bold[:3])


def test_no_paragraph_appears_twice():
    seen: dict[str, str] = {}
    for page in PAGES:
        for para in re.split(r"\n\s*\n", _without_code(page.read_text())):
            para = " ".join(para.split())
            if len(para) < 200 or para.startswith(("|", "<!--")):
                continue
            assert para not in seen, f"{page.name} repeats a paragraph of {seen[para]}: {para[:80]}..."
            seen[para] = page.name


def test_every_page_is_in_the_nav():
    nav = (ROOT / "mkdocs.yml").read_text()
    pages = {p.name for p in DOCS.glob("*.md")}
    listed = set(re.findall(r"(\S+\.md)$", nav, re.M))
    assert pages == listed, f"add to mkdocs.yml's nav: {sorted(pages - listed)}; listed but missing: {sorted(listed - pages)}"


# ---- links and anchors ------------------------------------------------------------------------

def _without_code(text: str) -> str:
    return re.sub(r"^( *)```.*?^\1```[ \t]*$", "", text, flags=re.M | re.S)


def _slug(heading: str) -> str:
    """The anchor mkdocs' toc extension gives a heading (its default slugify, after Markdown)."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)      # a link keeps its text
    text = text.replace("`", "")
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def _anchors(page: Path) -> set[str]:
    anchors: set[str] = set()
    for heading in re.findall(r"^#{1,6} +(.+?) *#*$", _without_code(page.read_text()), re.M):
        slug = base = _slug(heading)
        n = 0
        while slug in anchors:
            n += 1
            slug = f"{base}_{n}"
        anchors.add(slug)
    return anchors


_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?: \"[^\"]*\")?\)")


def _links(page: Path) -> list[str]:
    text = re.sub(r"`[^`\n]*`", "", _without_code(page.read_text()))
    return [t for t in _LINK.findall(text) if not re.match(r"[a-z]+:", t)]


@pytest.mark.parametrize("page", PAGES, ids=_rel)
def test_every_relative_link_and_anchor_resolves(page):
    broken = []
    for target in _links(page):
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            broken.append(f"{target}: no file {dest}")
            continue
        if page.parent == DOCS and path and DOCS not in dest.parents:
            broken.append(f"{target}: a docs page may link only inside docs/ (the site has nothing else)")
        if anchor and (dest.suffix != ".md" or anchor not in _anchors(dest)):
            broken.append(f"{target}: no heading with anchor #{anchor} in {dest.name}")
    assert not broken, broken


def test_the_link_check_sees_a_broken_anchor(tmp_path):
    page = tmp_path / "a.md"
    page.write_text("# A\n\n## Where `x` lives\n\n[ok](#where-x-lives) [bad](#nowhere) `[not](#a-link)`\n")
    assert _links(page) == ["#where-x-lives", "#nowhere"]
    assert _anchors(page) == {"a", "where-x-lives"}


# ---- generated and checked pages ----------------------------------------------------------------

def _variables_read_by_the_packages() -> set[str]:
    names: set[str] = set()
    for source in (ROOT / "packages").glob("*/src/**/*.py"):
        text = source.read_text(encoding="utf-8")
        names.update(re.findall(r"PYGPGPU_[A-Z0-9_]*[A-Z0-9]", text))
        if 'f"PYGPGPU_{backend.upper()}_"' in text:           # staging_settings(backend): per driver backend
            for suffix in set(re.findall(r'prefix \+ "([A-Z_]+)"', text)):
                names.update(f"PYGPGPU_{b}_{suffix}" for b in ("CUDA", "HIP"))
    return names


def test_every_environment_variable_is_on_the_environment_page():
    page = (DOCS / "environment.md").read_text()
    names = _variables_read_by_the_packages()
    assert len(names) >= 29, sorted(names)          # the scan itself still finds them
    missing = sorted(n for n in names if f"`{n}`" not in page)
    assert not missing, f"add these to docs/environment.md with their default and meaning: {missing}"
    for row in re.findall(r"^\| `(PYGPGPU_\w+)` \|(.*)$", page, re.M):
        default, meaning = (cell.strip() for cell in row[1].split("|")[:2])
        assert default and meaning, row[0]


def test_kernel_accepts_page_is_generated_from_the_builtin_rows():
    from pygpgpu_translate._builtins import BUILTINS

    sys.path.insert(0, str(ROOT / "scripts"))
    import kernel_accepts_page

    text = kernel_accepts_page.render()
    assert (DOCS / "kernel-accepts.md").read_text() == text, "run scripts/kernel_accepts_page.py"
    for name in BUILTINS:
        assert f"`{name}`" in text, name
    from pygpgpu_translate._frontend import REJECTED

    for node, (problem, hint) in REJECTED.items():
        if node.__name__ not in kernel_accepts_page._NEWER_PYTHONS:
            assert f"| {problem} | {hint} |" in text, problem


def test_api_reference_uses_public_paths():
    api = "\n".join(p.read_text() for p in sorted(DOCS.glob("api*.md")))
    targets = re.findall(r"^::: (\S+)", api, re.M)
    for public in ("pygpgpu.kernel", "pygpgpu.numpy", "pygpgpu.gpu", "pygpgpu.funcs", "pygpgpu.vec",
                   "pygpgpu.Device", "pygpgpu.Context", "pygpgpu.Program", "pygpgpu.Kernel", "pygpgpu.Buffer"):
        assert any(t == public or t.startswith(public + ".") for t in targets), public
    for hook in ("climport", "cuimport", "hipimport"):     # objects, described by hand
        assert f"`pygpgpu.{hook}`" in api, hook
    assert not [t for t in targets if not t.startswith("pygpgpu.") and t != "pygpgpu"], targets
    for internal in ("DiskCache", "cache_key", "log_build"):
        assert internal not in api, internal


def test_the_figures_exist_and_are_shown():
    shown = " ".join((DOCS / p).read_text() for p in ("tutorial.md", "launching.md", "architecture.md",
                                                      "performance.md"))
    for figure in ("launch-geometry.svg", "pipeline.svg", "performance.svg"):
        svg = (DOCS / "images" / figure).read_text()
        assert svg.lstrip().startswith("<svg") and svg.rstrip().endswith("</svg>"), figure
        assert f"images/{figure}" in shown, figure


def test_performance_chart_is_drawn_from_the_results():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import plot_results

    assert (DOCS / "images" / "performance.svg").read_text() == plot_results.render(), \
        "run benchmarks/plot_results.py"


# ---- docstrings ---------------------------------------------------------------------------------

def test_help_kernel_is_a_manual():
    from pygpgpu import kernel

    text = pydoc.render_doc(kernel, renderer=pydoc.plaintext)
    for needle in ("Calling forms", "saxpy[\"opencl\"]", ":param backend:", ":param default_float:",
                   ":param debug:", "inspect(", "launch domain"):
        assert needle in text, needle


def test_importing_pygpgpu_main_runs_nothing():
    """mkdocstrings imports every submodule of pygpgpu to document pygpgpu.gpu; pygpgpu.__main__
    then must not run the command line (it printed a usage error for mkdocs' own `build`)."""
    run = subprocess.run([sys.executable, "-c", "import sys; sys.argv = ['mkdocs', 'build']; import pygpgpu.__main__"],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and run.stderr == "" and run.stdout == "", run.stderr
