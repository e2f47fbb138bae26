"""Cold start of ``deniable plan`` and ``deniable estimate`` against the import floor (issue 40).

    python scripts/bench_cold.py             # 3 runs of each, minima
    python scripts/bench_cold.py --runs 5

Every run is a new process with an empty cache directory (``XDG_CACHE_HOME``), run from a
temporary directory; the commands take turns run by run, so a busy machine slows them alike:

- the floor: ``python -c "import click, numpy, scipy.special"``;
- ``deniable plan --k 2 --margin 0.03``;
- ``deniable estimate examples/survey.json f.csv`` of a 50-row file made by ``deniable simulate
  examples/survey.json --n 50 --truth examples/truth.json --seed 1`` (made once, beforehand).

``deniable plan`` plans by the decided search (``plans(..., decided=True)``, issue 40); ``--decided``,
which used to add a row for it before the command used it, is accepted and changes nothing.

Each figure is the minimum wall time of ``--runs`` runs and, beside it, the minimum CPU time (user +
system) of the process, which a busy machine moves less; the ratios are to the floor's.  The load
average is printed: the machine is shared.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
DENIABLE = [PYTHON, "-c", "from deniable.server.cli import cli; cli(prog_name='deniable')"]


def timed(args: list[str], cwd: str) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of one fresh process with an empty cache directory."""
    env = {**os.environ, "XDG_CACHE_HOME": tempfile.mkdtemp(prefix="deniable-cold-")}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=cwd)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs of each command, the minimum kept (default 3)")
    parser.add_argument("--decided", action="store_true",
                        help="no effect: `deniable plan` plans by the decided search (kept for old command lines)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        responses = Path(tmp) / "f.csv"
        with open(responses, "w") as out:
            subprocess.run([*DENIABLE, "simulate", str(ROOT / "examples" / "survey.json"), "--n", "50",
                            "--truth", str(ROOT / "examples" / "truth.json"), "--seed", "1"],
                           check=True, stdout=out, stderr=subprocess.DEVNULL, cwd=tmp)
        commands = {
            'python -c "import click, numpy, scipy.special"': [PYTHON, "-c", "import click, numpy, scipy.special"],
            "deniable plan --k 2 --margin 0.03": [*DENIABLE, "plan", "--k", "2", "--margin", "0.03"],
            "deniable estimate examples/survey.json f.csv (50 rows)":
                [*DENIABLE, "estimate", str(ROOT / "examples" / "survey.json"), str(responses)],
        }
        times = {name: [] for name in commands}
        for _ in range(args.runs):
            for name, command in commands.items():
                times[name].append(timed(command, tmp))
    load = os.getloadavg()
    floor_wall = min(w for w, _ in times[next(iter(commands))])
    floor_cpu = min(c for _, c in times[next(iter(commands))])
    print(f"cold start, empty XDG_CACHE_HOME, minimum of {args.runs} runs taking turns; "
          f"{os.cpu_count()} CPUs, load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    print(f"| {'command':<56} | wall s | × floor | CPU s | × floor |")
    print(f"| {'-' * 56} | -----: | ------: | ----: | ------: |")
    for name in commands:
        wall = min(w for w, _ in times[name])
        cpu = min(c for _, c in times[name])
        print(f"| {name:<56} | {wall:6.2f} | {wall / floor_wall:6.2f}× | {cpu:5.2f} | {cpu / floor_cpu:6.2f}× |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
