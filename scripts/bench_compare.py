"""Run the benchmarks of docs/benchmarks.md for two git revisions side by side and print a table of medians.

    python scripts/bench_compare.py                            # HEAD~1 against HEAD, 5 runs: ~9 min
    python scripts/bench_compare.py main WORKTREE --runs 3     # main against the uncommitted checkout
    python scripts/bench_compare.py HEAD~5 HEAD --only submissions,help
    python scripts/bench_compare.py HEAD~1 HEAD --only dashboard --dashboard-n 10000000
    python scripts/bench_compare.py HEAD HEAD --only submissions --fixed-body A   # fixed against diverse bodies
    python scripts/bench_compare.py HEAD WORKTREE --only wrk --runs 3    # under wrk, beside the two floors

A and B are any git revisions; ``WORKTREE`` means this checkout as it is, uncommitted changes
included, run with the interpreter that runs this script (the checkout's ``.venv``).  Each
revision is checked out with ``git worktree add --detach`` into a temporary folder, with a venv
of its own: ``pip install --no-deps -e`` of that worktree, plus a ``.pth`` file that lends it this
interpreter's site-packages for the dependencies; ``import deniable`` must resolve into the
worktree.  The worktrees and venvs are removed at the end, also after Ctrl-C.

The benchmarks run with each revision's code, one at a time, A and B alternately (A, B, A, B,
...) so that drift in the machine's speed hits both:

* ``submissions``: ``scripts/bench_load.py --seconds 5`` (submissions per second, p99 latency,
  the server's CPU per submission).  The load script is this checkout's (with ``loadgen.py``, copied
  before the first run) on both sides, whatever the revisions: both send the same bodies — a random
  answer per question per request, or with ``--fixed-body A``, ``B`` or ``both`` one fixed body on
  that side (``HEAD HEAD --fixed-body A``: what diverse answers cost the same code) — to the demo
  survey or ``--load-survey FILE``, and check conservation the same way (acknowledged = stored = in
  the answer patterns).  A revision whose code that script cannot import cannot be compared on
  submissions;
* ``wrk`` (only when asked for, ``--only wrk``): ``scripts/bench_wrk.py --rounds 1 --seconds
  10``, this checkout's (with ``floor_server.py``, ``loadgen.py`` and ``bench_load.py``) on both
  sides as for ``submissions``: in each run the bare handler and the plain one-row insert on the
  same gunicorn/gevent stack (the floors, rows ``floor:``) and then ``deniable serve``, each under
  ``wrk -t2 -c32`` with a random answer per question per request; deniable's rate, p99 and server
  CPU, and its ratio to each floor measured in that same run;
* ``dashboard``: ``scripts/bench_dashboard.py --n 1000000 --repeat 5`` (the median render of
  every page, and the time to store the responses; the two responses exports, which read every
  row, only with ``--row-exports``);
* ``estimate`` and ``help``: ``scripts/bench_offline.py`` (``deniable estimate`` on a CSV of
  ``--rows`` responses against a bare pyarrow read of it, ``deniable --help`` against
  ``python -c "import click"``, and the other rows of that script).

These last two are each revision's own scripts.  The scripts print JSON with ``--json``; a
revision from before that flag is read from its table.
The table gives, for each figure, the median over ``--runs`` runs of A and of B, and B/A; a figure
more than ``--threshold`` per cent worse in B (whether higher or lower is better) is flagged.
The floors (rows named ``floor:``) run the same code on both sides and show how much the machine
itself drifted.  Benchmark failures are reported below the table; the exit status is 0 unless
this script itself fails, or a load run lost acknowledged responses or failed its conservation
check (said in capitals below the table), whatever the figures.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

WORKTREE = "WORKTREE"
GROUPS = ("submissions", "dashboard", "estimate", "help", "wrk")
DEFAULT_GROUPS = ("submissions", "dashboard", "estimate", "help")  # wrk only with --only
REPO = Path(__file__).resolve().parent.parent


# ---------------------------------------------------------------------------------------------
# figures


@dataclass
class Figure:
    name: str
    fmt: str                     # format of the medians, e.g. "{:.2f}"
    higher_is_better: bool = False
    reference: bool = False      # a floor: the same code on both sides (machine drift)
    quantum: float = 0.0         # the rounding of a table the values were read from (0: JSON)
    a: list = field(default_factory=list)
    b: list = field(default_factory=list)


class Figures:
    """The figures in the order first seen, each with the values of A's and B's runs."""

    def __init__(self):
        self.by_name: dict[str, Figure] = {}
        self.rounded = False  # set while the figures read from a table (not JSON) are added
        self.patterns: dict[str, list[int]] = {}  # side → distinct answer patterns stored, per load run
        self.lost: list[str] = []  # load runs that failed their conservation check

    def add(self, side: str, name: str, value, fmt: str, *, higher_is_better=False, reference=False,
            quantum: float = 0.0):
        if value is None:
            return
        figure = self.by_name.setdefault(name, Figure(name, fmt, higher_is_better, reference))
        if self.rounded:
            figure.quantum = max(figure.quantum, quantum)
        (figure.a if side == "A" else figure.b).append(float(value))


# ---------------------------------------------------------------------------------------------
# each benchmark's output (JSON, or the table of a revision from before --json) → figures


def json_object(stdout: str) -> dict:
    """The JSON object a script printed last (other output may come before it)."""
    lines = stdout.splitlines()
    for start in reversed([i for i, line in enumerate(lines) if line.startswith("{")]):
        try:
            return json.loads("\n".join(lines[start:]))
        except json.JSONDecodeError:
            continue
    raise ValueError("no JSON object in the output")


def number(text: str) -> float | None:
    text = text.replace(",", "")
    return None if text in ("n/a", "nan") else float(text)


def parse_dashboard_table(stdout: str) -> dict:
    loaded = re.search(r"loaded in ([\d.,]+) s", stdout)
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("page") and "median ms" in line)
    pages = []
    for line in lines[start + 1:]:
        match = re.match(r"^(.*?)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d,]+)$", line)
        if match:
            pages.append({"page": match[1], "first_ms": float(match[2]), "median_ms": float(match[3]),
                          "max_ms": float(match[4]), "bytes": int(match[5].replace(",", ""))})
    return {"load_s": number(loaded[1]) if loaded else None, "pages": pages}


def parse_offline_table(stdout: str) -> dict:
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("command (A)"))
    results = []
    for line in lines[start + 1:]:
        # the floor's name begins with a letter: a label ending in a number ("--margin 0.03") stays whole
        match = re.match(r"^(.*?)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)  (\D.*)$", line)
        if match:
            results.append({"command": match[1], "a_s": float(match[2]), "b_s": float(match[3]),
                            "ratio": float(match[4]), "floor": match[5]})
    return {"results": results}


def load_figures(figures: Figures, side: str, data: dict) -> list[str]:
    figures.add(side, "submissions per second", data["per_second"], "{:.0f}", higher_is_better=True,
                quantum=1)
    figures.add(side, "submissions: p99 latency, ms", data["p99_ms"], "{:.1f}", quantum=0.1)
    figures.add(side, "submissions: server CPU per submission, µs", data.get("server_cpu_us_per_submission"),
                "{:.0f}", quantum=1)
    figures.patterns.setdefault(side, []).append(data["distinct_patterns"])
    notes = []
    if data.get("errors"):
        notes.append(f"{data['errors']} submissions failed")
    if not data["conservation_ok"]:
        figures.lost.append(f"{side}: {data['lost']:,} of {data['acknowledged']:,} acknowledged responses lost; "
                            + "; ".join(data["problems"][:3]))
    elif not data.get("database_ok", True):
        notes.append("database check FAILED: " + "; ".join(data.get("problems", [])[:3]))
    return notes


def wrk_figures(figures: Figures, side: str, data: dict) -> list[str]:
    figures.add(side, "wrk: deniable per second", data["per_second"], "{:.0f}", higher_is_better=True)
    figures.add(side, "wrk: deniable p99 latency, ms", data["p99_ms"], "{:.1f}")
    figures.add(side, "wrk: deniable server CPU per submission, µs", data.get("server_cpu_us_per_submission"), "{:.0f}")
    for kind, label in (("bare", "the bare handler"), ("insert", "the plain insert")):
        figures.add(side, f"wrk: deniable / {label}", data.get(f"ratio_to_{kind}"), "{:.2f}", higher_is_better=True)
    for kind, label in (("bare", "the bare handler"), ("insert", "the plain insert")):
        figures.add(side, f"floor: {label} per second (wrk)", data.get(f"{kind}_per_second"), "{:.0f}",
                    higher_is_better=True, reference=True)
    figures.add(side, "wrk: deniable's scrubs per second", data.get("scrubs_per_second"), "{:.1f}",
                higher_is_better=True)
    figures.patterns.setdefault(side, []).append(data["distinct_patterns"])
    notes = [f"wrk: {line}" for line in data.get("failures", [])]
    if not data["conservation_ok"]:
        figures.lost.append(f"{side} (wrk): {data['lost']:,} of {data['acknowledged']:,} acknowledged responses "
                            "lost; " + "; ".join(data["problems"][:3]))
    return notes


def dashboard_figures(figures: Figures, side: str, data: dict, n: int) -> list[str]:
    figures.add(side, f"dashboard: store {n:,} responses, s", data.get("load_s"), "{:.1f}", quantum=0.1)
    for page in data["pages"]:
        figures.add(side, f"dashboard: {page['page']}, ms", page["median_ms"], "{:.1f}", quantum=0.1)
    return []


def offline_key(command: str) -> str:
    """``estimate, CSV (191 MB)`` → ``estimate, CSV``: the sizes differ with --rows, not the figure."""
    return re.sub(r" \([^)]*\)$", "", command.strip())


def offline_figures(figures: Figures, side: str, data: dict, groups: set[str]) -> list[str]:
    rows = {offline_key(row["command"]): row for row in data["results"]}
    for key, row in rows.items():
        group = "estimate" if key.startswith("estimate") else "help"
        if group not in groups:
            continue
        figures.add(side, f"{key}, s", row["a_s"], "{:.3f}", quantum=0.01)
        if "--help" in key or group == "estimate":  # (plan's own work would only amplify the floor's noise)
            floor = "pyarrow read" if group == "estimate" else "import click"
            figures.add(side, f"{key} / {floor}", row["ratio"], "{:.2f}", quantum=0.01)
    if "estimate" in groups and "estimate, CSV" in rows:
        figures.add(side, "floor: pyarrow read + value_counts of the CSV, s", rows["estimate, CSV"]["b_s"],
                    "{:.3f}", reference=True, quantum=0.01)
    if "help" in groups and "deniable --help" in rows:
        figures.add(side, 'floor: python -c "import click", s', rows["deniable --help"]["b_s"], "{:.3f}",
                    reference=True, quantum=0.01)
    return []


# ---------------------------------------------------------------------------------------------
# revisions: worktrees and venvs


@dataclass
class Side:
    label: str        # "A" or "B"
    rev: str          # as given
    root: Path        # the checkout whose code and scripts run
    python: Path      # its interpreter
    describe: str     # short sha and subject, for the header


def git(*args: str, cwd: Path = REPO) -> str:
    result = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"git {' '.join(args)}: {result.stderr.strip()}")
    return result.stdout.strip()


def check_import(python: Path, root: Path) -> None:
    """``import deniable`` (and a mapped subpackage) must come from ``root``, not elsewhere."""
    result = subprocess.run(
        [str(python), "-c", "import deniable, deniable.server; print(deniable.__file__); "
                            "print(deniable.server.__file__)"],
        cwd=tempfile.gettempdir(), capture_output=True, text=True, env=child_env())
    files = result.stdout.split()
    if result.returncode != 0 or len(files) != 2 or not all(
            Path(f).resolve().is_relative_to(root.resolve()) for f in files):
        raise SystemExit(f"{python}: import deniable does not resolve into {root}: "
                         f"{result.stdout.strip()} {result.stderr.strip()[-500:]}")


def has_build_backend() -> bool:
    """Whether this interpreter has the setuptools that pyproject.toml's build-system asks for."""
    try:
        return int(importlib.metadata.version("setuptools").split(".")[0]) >= 77
    except importlib.metadata.PackageNotFoundError:
        return False


def dependency_paths() -> list[str]:
    """The site-packages folders this interpreter imports from (the dependencies, and pip).

    All of them, not only its own: it may be such a venv itself, lent its dependencies by a .pth.
    Listed as plain paths, their .pth files are not run: this checkout's editable install stays out.
    """
    return [path for path in dict.fromkeys(sys.path)
            if path and Path(path).name in ("site-packages", "dist-packages") and Path(path).is_dir()]


def prepare(label: str, rev: str, tmp: Path, made: list[Path]) -> Side:
    if rev == WORKTREE:
        head = git("log", "-1", "--format=%h")
        changed = len(git("status", "--porcelain").splitlines())
        python = Path(sys.executable)
        check_import(python, REPO)
        return Side(label, rev, REPO, python, f"this checkout (on {head}, {changed} changed paths)")
    found = subprocess.run(["git", "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"], cwd=REPO,
                           capture_output=True, text=True)
    if found.returncode != 0:
        raise SystemExit(f"{rev!r} is not a commit of {REPO} (or {WORKTREE} for this checkout)")
    sha = found.stdout.strip()
    describe = git("log", "-1", "--format=%h %s", sha)
    tree = tmp / f"{label}-worktree"
    git("worktree", "add", "--detach", "--quiet", str(tree), sha)
    made.append(tree)
    venv = tmp / f"{label}-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    # Runs after the editable install's own .pth (sorted by name): the worktree comes first.
    Path(site, "zzz-deniable-dependencies.pth").write_text("\n".join(dependency_paths()) + "\n")
    # Offline when this environment has the build backend (the test extra installs it).
    isolation = ["--no-build-isolation"] if has_build_backend() else []
    install = subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                              "--no-deps", *isolation, "-e", str(tree)], capture_output=True, text=True,
                             env=child_env())
    if install.returncode != 0:
        raise SystemExit(f"pip install -e {tree} ({rev}) failed:\n{install.stdout}{install.stderr}")
    check_import(python, tree)
    return Side(label, rev, tree, python, describe[:72])


def cleanup(made: list[Path], tmp: Path) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not leave worktrees behind
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    for tree in made:
        subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=REPO, capture_output=True)
    subprocess.run(["git", "worktree", "prune"], cwd=REPO, capture_output=True)
    shutil.rmtree(tmp, ignore_errors=True)


# ---------------------------------------------------------------------------------------------
# running


def child_env() -> dict:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)  # each side's own code only
    return env


def run_script(side: Side, script: str, args: list[str], path: Path | None = None) -> tuple[dict, list[str], bool]:
    """Run ``scripts/SCRIPT`` of the side's checkout (or the script at ``path``) with its interpreter.

    Returns its figures as a dict, notes (a failed status), and whether they were read from the
    printed table (a script from before ``--json``) rather than from JSON.
    """
    path = path or side.root / "scripts" / script
    if not path.exists():
        raise RuntimeError(f"scripts/{script} is not in {side.rev}")
    has_json = "--json" in path.read_text(encoding="utf-8")
    proc = subprocess.Popen([str(side.python), str(path), *args, *(["--json"] if has_json else [])],
                            cwd=side.root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=child_env())
    try:
        stdout, stderr = proc.communicate()
    except BaseException:
        # Ctrl-C reaches the child too; give it time to stop its server and remove its files.
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=40)
            except subprocess.TimeoutExpired:
                proc.kill()
        raise
    notes = [] if proc.returncode == 0 else [f"scripts/{script} exited with status {proc.returncode}"]
    try:
        if has_json:
            return json_object(stdout), notes, False
        parse = {"bench_dashboard.py": parse_dashboard_table, "bench_offline.py": parse_offline_table}[script]
        return parse(stdout), notes, True
    except (ValueError, StopIteration, IndexError, KeyError) as exc:
        tail = "\n".join((stderr or stdout).strip().splitlines()[-8:])
        raise RuntimeError(f"scripts/{script} gave no figures ({exc}), status {proc.returncode}:\n{tail}")


@dataclass
class Benchmark:
    name: str
    script: str                  # scripts/SCRIPT
    args: list[str]
    collect: object              # collect(figures, side, data) → notes
    path: Path | None = None     # the script to run on both sides (None: each side's own scripts/SCRIPT)
    side_args: dict = field(default_factory=dict)  # side label → arguments for that side only

    def describe(self) -> str:
        where = "this checkout's " if self.path else ""
        line = f"{self.name}: {where}scripts/{self.script} {' '.join(self.args)}"
        return line + "".join(f"; {label}: {' '.join(extra)}" for label, extra in sorted(self.side_args.items()))


LOAD_SCRIPTS = ("bench_load.py", "loadgen.py")
WRK_SCRIPTS = ("bench_wrk.py", "floor_server.py", "bench_load.py", "loadgen.py")


def benchmarks(args, tmp: Path) -> list[Benchmark]:
    """The selected groups' benchmarks; the load script is copied from this checkout into ``tmp``."""
    chosen = []
    if "submissions" in args.only:
        scripts = tmp / "load-scripts"
        scripts.mkdir()
        for name in LOAD_SCRIPTS:  # a copy: edits to this checkout while the runs go on change nothing
            shutil.copy2(REPO / "scripts" / name, scripts / name)
        load_args = ["--seconds", f"{args.load_seconds:g}"]
        if args.load_survey:
            load_args += ["--survey", str(Path(args.load_survey).resolve())]
        fixed = {"A": ["A"], "B": ["B"], "both": ["A", "B"], None: []}[args.fixed_body]
        chosen.append(Benchmark("submissions", "bench_load.py", load_args, load_figures, scripts / "bench_load.py",
                                {label: ["--fixed-body"] for label in fixed}))
    if "wrk" in args.only:
        scripts = tmp / "wrk-scripts"
        scripts.mkdir()
        for name in WRK_SCRIPTS:
            shutil.copy2(REPO / "scripts" / name, scripts / name)
        wrk_args = ["--rounds", "1", "--seconds", f"{args.wrk_seconds:d}"]
        if args.load_survey:
            wrk_args += ["--survey", str(Path(args.load_survey).resolve())]
        chosen.append(Benchmark("wrk", "bench_wrk.py", wrk_args, wrk_figures, scripts / "bench_wrk.py"))
    if "dashboard" in args.only:
        chosen.append(Benchmark("dashboard", "bench_dashboard.py",
                                ["--n", str(args.dashboard_n), "--repeat", str(args.dashboard_repeat),
                                 *([] if args.row_exports else ["--no-row-exports"])],
                                lambda figures, side, data: dashboard_figures(figures, side, data, args.dashboard_n)))
    offline = {"estimate", "help"} & args.only
    if offline:
        # Without the estimate rows, a small file: only the start-up rows are kept.
        rows = args.rows if "estimate" in offline else 1000
        name = ", ".join(g for g in GROUPS if g in offline)
        chosen.append(Benchmark(name, "bench_offline.py", ["--rows", str(rows), "--pairs", str(args.offline_pairs)],
                                lambda figures, side, data: offline_figures(figures, side, data, offline)))
    return chosen


# ---------------------------------------------------------------------------------------------
# the table


def table(figures: Figures, threshold: float) -> list[str]:
    rows = [("figure", "A median", "B median", "B/A", "flag")]
    for figure in figures.by_name.values():
        a = statistics.median(figure.a) if figure.a else None
        b = statistics.median(figure.b) if figure.b else None
        ratio = b / a if a and b is not None else None
        flag = ""
        if ratio is not None and abs(b - a) > figure.quantum:  # (not within a table's rounding)
            # per cent worse in B: a drop where higher is better, a rise where lower is
            worse = 100 * ((1 - ratio) if figure.higher_is_better else (ratio - 1))
            if figure.reference:
                if abs(ratio - 1) > threshold / 100:
                    flag = f"floor moved {100 * (ratio - 1):+.0f} %"
            elif worse > threshold:
                flag = f"worse by {worse:.0f} %" if round(worse) > threshold else f"worse by {worse:.1f} %"
        rows.append((figure.name + (" (higher is better)" if figure.higher_is_better else ""),
                     figure.fmt.format(a) if a is not None else "n/a",
                     figure.fmt.format(b) if b is not None else "n/a",
                     f"{ratio:.2f}" if ratio is not None else "n/a", flag))
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    right = (False, True, True, True, False)
    out = []
    for n, row in enumerate(rows):
        cells = [cell.rjust(w) if r else cell.ljust(w) for cell, w, r in zip(row, widths, right)]
        out.append("| " + " | ".join(cells) + " |")
        if n == 0:
            out.append("| " + " | ".join("-" * (w - 1) + (":" if r else "-")
                                         for w, r in zip(widths, right)) + " |")
    return out


def size(text: str) -> int:
    """10000000, 10_000_000, 1e7 or 10^7."""
    text = text.replace("_", "").replace(",", "")
    if "^" in text:
        base, power = text.split("^")
        return int(base) ** int(power)
    return int(float(text))


def interrupted(signum, frame):
    raise KeyboardInterrupt


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a", nargs="?", default="HEAD~1", help="revision A (default HEAD~1)")
    parser.add_argument("b", nargs="?", default="HEAD",
                        help=f"revision B (default HEAD; {WORKTREE}: this checkout as it is)")
    parser.add_argument("--runs", type=int, default=5, help="runs of each benchmark per revision (default 5)")
    parser.add_argument("--only", default=",".join(DEFAULT_GROUPS),
                        help=f"comma-separated benchmarks among {','.join(GROUPS)} (default "
                             f"{','.join(DEFAULT_GROUPS)})")
    parser.add_argument("--rows", type=size, default=1_000_000,
                        help="responses in the CSV that deniable estimate reads (default 10^6)")
    parser.add_argument("--dashboard-n", type=size, default=1_000_000,
                        help="stored responses for the dashboard benchmark (default 10^6; 10^7 works, "
                             "about 9 minutes a run)")
    parser.add_argument("--dashboard-repeat", type=int, default=5,
                        help="renders of each page after the first, per run (default 5)")
    parser.add_argument("--row-exports", action="store_true",
                        help="also time the two responses exports that read every row (~3 s each at 10^6)")
    parser.add_argument("--load-seconds", type=float, default=5.0, help="load per run (default 5 s)")
    parser.add_argument("--wrk-seconds", type=int, default=10, help="wrk's run per server (default 10 s)")
    parser.add_argument("--load-survey", metavar="FILE",
                        help="the survey definition the load runs submit to (default: the demo survey)")
    parser.add_argument("--fixed-body", choices=("A", "B", "both"),
                        help="the load runs of this side send one fixed body with every request instead of a "
                             "random answer per question per request")
    parser.add_argument("--offline-pairs", type=int, default=1,
                        help="alternating pairs inside each bench_offline.py run (default 1)")
    parser.add_argument("--threshold", type=float, default=10.0,
                        help="flag figures more than this many per cent worse in B (default 10)")
    args = parser.parse_args()
    args.only = {name.strip() for name in args.only.split(",") if name.strip()}
    if not args.only or args.only - set(GROUPS):
        unknown = ",".join(sorted(args.only - set(GROUPS)))
        parser.error(f"--only takes some of {','.join(GROUPS)}, not {unknown or 'nothing'}")
    if args.runs < 1:
        parser.error("--runs must be at least 1")

    signal.signal(signal.SIGTERM, interrupted)  # cleans up like Ctrl-C
    load_before = os.getloadavg()[0]
    started = time.monotonic()
    tmp = Path(tempfile.mkdtemp(prefix="deniable-bench-compare-"))
    made: list[Path] = []
    figures, notes, from_tables = Figures(), [], {}
    try:
        print(f"setting up A = {args.a} and B = {args.b} in {tmp}", file=sys.stderr)
        sides = [prepare("A", args.a, tmp, made), prepare("B", args.b, tmp, made)]
        chosen = benchmarks(args, tmp)
        total, done = len(chosen) * args.runs * 2, 0
        for bench in chosen:
            for run in range(args.runs):
                for side in sides:
                    done += 1
                    print(f"[{done}/{total}] {bench.name}: {side.label} ({side.rev}) run {run + 1}/{args.runs} "
                          f"… ", end="", file=sys.stderr, flush=True)
                    begun = time.monotonic()
                    try:
                        data, warnings, figures.rounded = run_script(
                            side, bench.script, bench.args + bench.side_args.get(side.label, []), bench.path)
                        if figures.rounded:
                            from_tables.setdefault(side.label, set()).add(bench.script)
                        warnings += bench.collect(figures, side.label, data)
                    except RuntimeError as exc:
                        warnings = [f"failed: {exc}"]
                    print(f"{time.monotonic() - begun:.0f} s", file=sys.stderr, flush=True)
                    notes += [f"{bench.name}, {side.label} run {run + 1}: {w}" for w in warnings]
    except KeyboardInterrupt:
        print("\ninterrupted; removing the worktrees", file=sys.stderr)
        return 130
    finally:
        cleanup(made, tmp)

    print(f"deniable benchmark comparison — {os.cpu_count()} CPUs, Python {platform.python_version()}, "
          f"load average {load_before:.1f} at the start and {os.getloadavg()[0]:.1f} at the end; "
          f"median of {args.runs} run{'s' * (args.runs > 1)} each, A and B alternating; "
          f"{(time.monotonic() - started) / 60:.1f} min in all")
    for side in sides:
        print(f"{side.label} = {side.rev}: {side.describe}")
    for bench in chosen:
        print(bench.describe())
    if figures.patterns:
        print("submissions: distinct answer patterns stored per run, " + "; ".join(
            f"{label}: {', '.join(f'{n:,}' for n in values)}" for label, values in sorted(figures.patterns.items())))
    print()
    for line in table(figures, args.threshold):
        print(line)
    if from_tables:
        which = "; ".join(f"{label}: {', '.join(sorted(scripts))}"
                          for label, scripts in sorted(from_tables.items()))
        notes.append("scripts from before --json, figures read from their printed tables (differences within "
                     f"their rounding are not flagged): {which}")
    if notes:
        print()
        for note in notes:
            print(note)
    if figures.lost:
        print()
        for line in figures.lost:
            print(f"RESPONSES LOST OR MISCOUNTED in a load run, {line}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
