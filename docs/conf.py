"""Sphinx configuration: the documentation site, built offline from docs/ (``tests/docs``).

Build it with ``sphinx-build -W --keep-going -b html docs build/docs`` after
``pip install -e '.[docs]'``; the tests build it the same way, warnings as errors.
"""

from importlib.metadata import version as _version

project = "deniable"
author = "the deniable authors"
copyright = "the deniable authors"  # noqa: A001 (Sphinx's name)
release = _version("deniable")
version = release

extensions = [
    "myst_parser",  # the pages are markdown
    "sphinx.ext.autodoc",  # the API reference, from the docstrings
    "numpydoc",  # which are numpydoc
    "sphinx_click",  # the command reference, from the commands' --help
]

source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["_build"]

# Offline: no intersphinx, nothing fetched; headings get anchors so pages link to sections.
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]

autodoc_member_order = "bysource"
autodoc_typehints = "none"  # the numpydoc Parameters sections say the types
numpydoc_show_class_members = False  # no autosummary tables (and their toctree warnings)
numpydoc_class_members_toctree = False

html_theme = "alabaster"
html_title = "deniable"
html_theme_options = {
    "description": "Surveys for sensitive questions under local differential privacy",
    "page_width": "1160px",
    "sidebar_width": "300px",
}
html_static_path: list[str] = []
smartquotes = False  # `--db` stays two hyphens in the generated command help
highlight_language = "none"  # a fence without a language is program output, not Python

# numpydoc's References sections list the works a docstring draws on, not all of them cited
# inline; an uncited one is not an error.
suppress_warnings = ["ref.citation"]


def _module_sections_as_rubrics(app, what, name, obj, options, lines):
    """Show a module docstring's section titles ("References", "The construction") as rubrics.

    Parsed into the API pages, a module docstring's sections would become sections of the page:
    two modules with "References" would clash, and the page's contents list would fill with them.
    """
    if what != "module":
        return
    for i in range(len(lines) - 1):
        title, rule = lines[i], lines[i + 1]
        underlined = len(rule) >= 3 and len(set(rule)) == 1 and rule[0] in "-="
        if underlined and title.strip() and not title.startswith(" ") and (i == 0 or not lines[i - 1].strip()):
            lines[i], lines[i + 1] = f".. rubric:: {title}", ""


def _help_directive():
    from sphinx_click.ext import ClickDirective

    class CommandHelp(ClickDirective):
        """sphinx-click's page for one command, without its own title: the heading above names it."""

        def run(self):
            (section,) = super().run()
            return section.children[1:]

    return CommandHelp


def setup(app):
    app.connect("autodoc-process-docstring", _module_sections_as_rubrics, priority=400)
    app.add_directive("deniable-help", _help_directive())
