"""The documentation site builds offline with warnings as errors, and keeps what the README had.

The site is Sphinx over ``docs/`` (markdown through myst-parser, the API reference from the
numpydoc docstrings, the command reference from ``--help`` through sphinx-click).  The README is
a short front page: its examples run, and its links point at pages and sections that exist.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
from click.testing import CliRunner

from deniable.server.cli import cli

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
README = ROOT / "README.md"

# Every section of the README as it was before the documentation site (commit 7ad577a): each
# one's text moved to a page of docs/, under the same heading.
OLD_README_SECTIONS = [
    "Quick start",
    "For respondents: the survey page",
    "JSON API",
    "For researchers: the dashboard",
    "Question types",
    "Running it for real",
    "Security and privacy model",
    "Command reference",
    "`deniable serve`",
    "`deniable import`",
    "`deniable export`",
    "`deniable create-researcher`",
    "`deniable invite`",
    "`deniable estimate`",
    "`deniable simulate`",
    "`deniable plan`",
    "`deniable audit`",
    "`deniable regress`",
    "Statistics",
    "Coverage, computed exactly",
    "Cross-tabs, by simulation",
    "Numeric questions, by simulation",
    "Regression on randomized answers",
    "Monitoring: live results you may watch every day",
    "Public results with central differential privacy",
    "Benchmarks",
    "Architecture",
    "Developing",
]


def headings(page: Path) -> list[str]:
    """The markdown headings of a page, outside code blocks."""
    found, fenced = [], False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and (match := re.match(r"#{1,6} (.+)", line)):
            found.append(match.group(1).strip())
    return found


def anchor(heading: str) -> str:
    """The anchor GitHub and myst-parser (``myst_heading_anchors``) give a heading."""
    text = unicodedata.normalize("NFKC", heading).lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def test_every_section_of_the_old_readme_is_a_heading_in_the_docs():
    present = {heading for page in DOCS.rglob("*.md") for heading in headings(page)}
    missing = [section for section in OLD_README_SECTIONS if section not in present]
    assert not missing, f"sections of the old README with no page in docs/: {missing}"


def test_the_readme_is_a_short_front_page():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 200, "the README is a front page: put documentation into the pages of docs/"
    for command in ("bash scripts/serve.sh", "bash scripts/test.sh"):
        assert command in lines


def test_the_readme_links_to_pages_and_sections_that_exist():
    links = re.findall(r"\]\(([^)\s]+)\)", README.read_text(encoding="utf-8"))
    local = [link for link in links if not re.match(r"[a-z]+:", link)]
    assert len(local) >= 10
    broken = []
    for link in local:
        path, _, fragment = link.partition("#")
        target = (ROOT / path).resolve()
        if not target.is_file():
            broken.append(link)
        elif fragment and fragment not in {anchor(h) for h in headings(target)}:
            broken.append(link)
    assert not broken, f"README links to nothing: {broken}"


def fenced(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", README.read_text(encoding="utf-8"), re.M | re.S)


def test_the_readme_python_example_runs():
    (example,) = fenced("python")
    assert len(example.strip().splitlines()) == 6
    result = subprocess.run([sys.executable, "-c", example], capture_output=True, text=True, cwd=ROOT,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert "EstimateResult(n=10000, k=2" in result.stdout


def test_the_readme_command_line_example_runs(tmp_path, monkeypatch):
    example = next(block for block in fenced("sh") if block.startswith("deniable "))
    lines = example.strip().splitlines()
    assert len(lines) == 6
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    monkeypatch.chdir(tmp_path)
    for line in lines:
        result = CliRunner().invoke(cli, shlex.split(line)[1:])
        assert result.exit_code == 0, f"{line}\n{result.output}"
    assert (tmp_path / "responses.csv").is_file() and (tmp_path / "deniable.db").is_file()


def test_the_site_uses_no_remote_inventory():
    conf: dict = {}
    exec(compile((DOCS / "conf.py").read_text(encoding="utf-8"), str(DOCS / "conf.py"), "exec"), conf)
    assert "sphinx.ext.intersphinx" not in conf["extensions"]
    assert not conf.get("intersphinx_mapping")


# Any request the build made would go to a proxy that is not there, fail, and warn.
OFFLINE = {**os.environ, "HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9",
           "http_proxy": "http://127.0.0.1:9", "https_proxy": "http://127.0.0.1:9", "NO_PROXY": "", "no_proxy": ""}


def build_site(out: Path) -> subprocess.CompletedProcess:
    """Build the site as its own command does: fresh, offline, every warning an error."""
    return subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-E", "-q", "-b", "html",
         "-d", str(out / "doctrees"), str(DOCS), str(out / "html")],
        capture_output=True, text=True, cwd=ROOT, timeout=600, env=OFFLINE,
    )


def undocumented_estimators(html: Path) -> list[str]:
    import deniable.estimators as estimators

    text = (html / "api" / "estimators.html").read_text(encoding="utf-8")
    documented = set(re.findall(r'id="deniable\.estimators\.(\w+)"', text))
    public = [name for name in estimators.__all__ if callable(getattr(estimators, name))]
    assert public
    return [name for name in public if name not in documented]


def options_missing_from_the_command_reference(html: Path) -> list[str]:
    text = (html / "cli.html").read_text(encoding="utf-8")
    return [f"deniable {name} {option}"
            for name, command in cli.commands.items()
            for param in command.params for option in param.opts
            if option.startswith("-") and f'id="cmdoption-deniable-{name}-{option.lstrip("-")}"' not in text]


# One test, so that the two workers of the test command do not both build the site.
@pytest.mark.slow  # building the site takes about ten seconds
def test_the_site_builds_offline_with_warnings_as_errors(tmp_path):
    result = build_site(tmp_path)
    assert result.returncode == 0, result.stderr
    assert not result.stderr.strip(), result.stderr
    html = tmp_path / "html"
    pages = {path.relative_to(html).as_posix() for path in html.rglob("*.html")}
    assert {page.relative_to(DOCS).with_suffix(".html").as_posix() for page in DOCS.rglob("*.md")} <= pages
    # the API reference documents every public estimator, from its docstring
    assert not undocumented_estimators(html), "add them to docs/api/estimators.md (or __all__)"
    # the command reference shows every option of every command, from its --help
    assert not options_missing_from_the_command_reference(html)
