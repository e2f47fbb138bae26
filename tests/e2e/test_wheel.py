"""The wheel: build it, install it (not editable) into a fresh venv, and run the command from it.

Offline, like every test: the wheel is built with the installed setuptools (``--no-isolation``),
and the fresh venv gets the wheel alone (``--no-deps``) with this environment's packages lent to
it by a ``.pth`` line, so that nothing is downloaded; ``deniable`` itself comes from the wheel.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


def run(args, **kwargs):
    result = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=300, **kwargs)
    assert result.returncode == 0, f"{args}\n{result.stdout}\n{result.stderr}"
    return result


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", out, ROOT])
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
