"""The wheel: build it, check it holds every file the code opens, install it (not editable) into a
fresh venv, and run the command from it.

The tests install the project editable, so a file left out of the wheel's package data (the
planner's templates were, and the builder answered 500 to every ``scripts/serve.sh`` user) passes
every other test.  Here the wheel must hold every file of the package folders (``.po`` and ``.pot``
sources aside), and every template, static file and card script the code or a template names.

Offline, like every test: the wheel is built with the installed setuptools (``--no-isolation``)
from a copy of the checkout's files (tracked and new, not ignored: what a clean clone has, without a
stale ``build/`` to slip files in), and the fresh venv gets the wheel alone (``--no-deps``) with this
environment's packages lent to it by a ``.pth`` line, so that nothing is downloaded; ``deniable``
itself comes from the wheel.  scripts/test_wheel.sh (CI) does the real install and opens every page.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
import tomllib
import venv
import zipfile
from pathlib import Path

import pytest
from jinja2 import meta

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
# folder of the checkout → its folder in the wheel: templates/ → deniable/server/templates/
IN_WHEEL = {folder: package.replace(".", "/")
            for package, folder in PYPROJECT["tool"]["setuptools"]["package-dir"].items()}
NOT_SHIPPED = (".po", ".pot")  # the translations' sources: the compiled .mo is what the app reads
STATIC_FOLDERS = {"static": "client/static", "dashboard.static": "server/web/dashboard/static"}  # url_for's endpoints
STATIC_URL = re.compile(r"""url_for\(\s*['"](static|dashboard\.static)['"],\s*filename=['"]([^'"]+)['"]""")
TEMPLATE_CALLS = {"render_template", "get_template", "get_template_attribute", "select_template"}

pytestmark = pytest.mark.slow


def run(args, **kwargs):
    result = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=300, **kwargs)
    assert result.returncode == 0, f"{args}\n{result.stdout}\n{result.stderr}"
    return result


def checkout_files(*folders: str) -> list[str]:
    """The checkout's files under ``folders`` that a clean clone would have: tracked or new, not ignored."""
    listed = run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", *folders], cwd=ROOT)
    return sorted(name for name in set(listed.stdout.split("\0")) if name and (ROOT / name).is_file())


def wheel_name(name: str) -> str:
    """Where the checkout's file ``name`` (``templates/survey.html``) is in the wheel."""
    folder, _, rest = name.partition("/")
    return f"{IN_WHEEL[folder]}/{rest}"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    source, out = tmp_path_factory.mktemp("source"), tmp_path_factory.mktemp("dist")
    for name in ["pyproject.toml", "README.md", *checkout_files(*IN_WHEEL)]:
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, source / name)
    run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", out, source])
    (path,) = out.glob("deniable-*.whl")
    return path


def test_wheel_contents(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert {name.split("/")[0] for name in names} == {"deniable", "deniable-0.1.0.dist-info"}
    assert any(n.startswith("deniable/server/templates/dashboard/") and n.endswith(".html") for n in names)
    assert {"deniable/client/static/rr.js", "deniable/server/web/dashboard/static/dashboard.css",
            "deniable/server/cli/__init__.py", "deniable/server/cli/analysis.py", "deniable/estimators/__init__.py",
            "deniable/client/randomizer.py"} <= set(names)
    assert not any(n.startswith(("deniable/tests/", "tests/", "scripts/")) for n in names)


def test_every_file_of_the_package_folders_is_in_the_wheel(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    files = [name for name in checkout_files(*IN_WHEEL) if not name.endswith(NOT_SHIPPED)]
    assert any(name.startswith("templates/dashboard/plan/") for name in files)  # the folders were read
    missing = [name for name in files if wheel_name(name) not in names]
    assert not missing, f"not in the wheel (add them to [tool.setuptools.package-data] in pyproject.toml): {missing}"


def referenced_files(app) -> set[str]:
    """Every file of the checkout the code or a template names (``templates/…``, ``client/static/…``):
    the templates of ``render_template`` & co. and of ``{% include/extends/import/from %}``, each
    question type's card, planner panel and card script, the string constants that are template paths
    (``"dashboard/plan/design.html"``), and the files of ``url_for('static'/'dashboard.static', filename=…)``."""
    templates = [p for p in (ROOT / "templates").rglob("*") if p.is_file() and p.suffix not in (".py", ".pyc")]
    python = [p for folder in IN_WHEEL for p in (ROOT / folder).rglob("*.py") if "__pycache__" not in p.parts]
    subfolders = {p.relative_to(ROOT / "templates").parts[0] for p in templates if p.parent != ROOT / "templates"}
    named = set()  # template names
    for path in templates:
        named |= set(meta.find_referenced_templates(app.jinja_env.parse(path.read_text(encoding="utf-8")))) - {None}
    for path in python:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
                    and getattr(node.func, "id", getattr(node.func, "attr", None)) in TEMPLATE_CALLS):
                named.add(node.args[0].value)
            elif (isinstance(node, ast.Constant) and isinstance(node.value, str)
                  and re.fullmatch(r"[\w-]+(/[\w.-]+)+\.(html|css)", node.value)
                  and node.value.split("/")[0] in subfolders):
                named.add(node.value)
    from deniable.server.survey import questions

    types = questions.all_types()
    files = {f"templates/{name}" for qtype in types for name in (qtype.card, qtype.plan_template) if name}
    files |= {f"client/static/{qtype.script}" for qtype in types if qtype.script}
    files |= {f"templates/{name}" for name in named}
    for path in [*templates, *python]:
        for endpoint, name in STATIC_URL.findall(path.read_text(encoding="utf-8")):
            files.add(f"{STATIC_FOLDERS[endpoint]}/{name}")
    return files


def test_every_file_the_code_names_is_in_the_wheel(wheel, app):
    names = set(zipfile.ZipFile(wheel).namelist())
    files = referenced_files(app)
    assert {"templates/dashboard/plan/_uninformative.html", "templates/dashboard/types.css",
            "templates/cards/list.html", "templates/dashboard/plan/design.html", "client/static/types/numeric.js",
            "server/web/dashboard/static/builder.js"} <= files  # the kinds of reference are all read
    missing = sorted(name for name in files if wheel_name(name) not in names)
    assert not missing, f"named by the code but not in the wheel: {missing}"


def test_installed_wheel_runs(wheel, tmp_path):
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    bin_dir = env_dir / ("Scripts" if os.name == "nt" else "bin")
    site = run([bin_dir / "python", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip()
    # The dependencies (and pip) from this environment, after the venv's own site-packages.
    lent = [p for p in sys.path if p.endswith("-packages")]
    Path(site, "zzz-lent-dependencies.pth").write_text("\n".join(lent) + "\n")
    run([bin_dir / "python", "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps",
         "--no-index", wheel])
    # Every file the install put into site-packages (its RECORD) is under `deniable/` or its metadata:
    # no top-level client/, server/, estimators/ or templates/ to collide with other distributions.
    listing = run([bin_dir / "python", "-c", "import importlib.metadata as m; "
                   "print('\\n'.join(str(f) for f in m.files('deniable')))"], cwd=tmp_path).stdout.split()
    tops = {name.split("/")[0] for name in listing if not name.startswith("..")}  # ../../../bin/deniable
    assert tops == {"deniable", "deniable-0.1.0.dist-info"}, tops
    deniable = bin_dir / "deniable"
    # Run outside the checkout so nothing is imported from the source tree.
    work = tmp_path / "work"
    work.mkdir()
    shutil.copy(ROOT / "examples" / "survey.json", work)
    shutil.copy(ROOT / "examples" / "truth.json", work)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    assert "estimate" in run([deniable, "--help"], cwd=work, env=env).stdout
    where = run([bin_dir / "python", "-c", "import deniable.server; print(deniable.server.__file__)"], cwd=work, env=env).stdout
    assert str(env_dir) in where
    run([deniable, "simulate", "survey.json", "--n", "2000", "--truth", "truth.json", "--seed", "1",
         "-o", "responses.csv"], cwd=work, env=env)
    out = run([deniable, "estimate", "survey.json", "responses.csv"], cwd=work, env=env).stdout
    assert "2,000 responses" in out and "method: exact" in out
    from deniable.client.embed import current  # every source of the embed is in the wheel: the same build

    assert f"deniable-embed-{current().version}.mjs" in run([deniable, "embed", "build", "-o", "embed"], cwd=work, env=env).stdout
