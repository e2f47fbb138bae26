"""R's survey package, run for real, as the reference for design-based estimates.

``tests/unit/test_weights.py`` (the estimators) and ``tests/cli/test_weights_cli.py`` (``deniable
estimate --weights``) compare against it.  R and ``r-cran-survey`` are installed by the test
command (scripts/test.sh); a missing R fails, it does not skip.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np

# svymean and svyciprop(method = "beta") of each named 0/1 or numeric column, under
# svydesign(ids = ~CLUSTER, strata = ~STRATUM, weights = ~W, nest = TRUE): one line per number,
# four per column (mean, SE, interval's ends: Korn and Graubard's for a 0/1 column, else the t
# interval with the design's degrees of freedom).  An empty
# cell (NA) leaves the row out as a domain does (na.rm = TRUE: the design keeps its clusters).
SVYMEAN_SCRIPT = r"""
suppressMessages(library(survey))
args <- commandArgs(trailingOnly = TRUE)
d <- read.csv(args[1], stringsAsFactors = FALSE)
ids <- if (args[2] == "") ~1 else as.formula(paste0("~", args[2]))
strata <- if (args[3] == "") NULL else as.formula(paste0("~", args[3]))
des <- svydesign(ids = ids, strata = strata, weights = as.formula(paste0("~", args[4])), nest = TRUE, data = d)
out <- c()
for (v in args[-(1:4)]) {
  f <- as.formula(paste0("~", v))
  m <- svymean(f, des, na.rm = TRUE)
  ci <- c(NA, NA)
  if (all(d[[v]] %in% c(0, 1, NA))) {
    ci <- attr(svyciprop(f, des, method = "beta", level = 0.95, na.rm = TRUE), "ci")
  } else {
    ci <- confint(m, df = degf(des), level = 0.95)
  }
  out <- c(out, coef(m)[[1]], SE(m)[[1]], ci[[1]], ci[[2]])
}
cat(sprintf("%.15g", out), sep = "\n")
"""

# The estimators' three-option check (tests/unit/test_weights.py), with an optional fpc.
R_SCRIPT = r"""
suppressMessages(library(survey))
args <- commandArgs(trailingOnly = TRUE)
d <- read.csv(args[1])
fpc <- if (args[2] == "fpc") ~N else NULL
des <- svydesign(ids = ~cluster, strata = ~stratum, weights = ~w, fpc = fpc, data = d)
out <- list()
for (j in sort(unique(d$y))) {
  d[[paste0("y", j)]] <- as.numeric(d$y == j)
}
des <- update(des, y0 = as.numeric(y == 0), y1 = as.numeric(y == 1), y2 = as.numeric(y == 2))
for (j in 0:2) {
  f <- as.formula(paste0("~y", j))
  m <- svymean(f, des)
  ci <- svyciprop(f, des, method = "beta", level = 0.95)
  out[[j + 1]] <- c(coef(m)[[1]], SE(m)[[1]], attr(ci, "ci")[[1]], attr(ci, "ci")[[2]])
}
cat(sprintf("%.15g", unlist(out)), sep = "\n")
"""


# deniable's Korn–Graubard interval (estimators/weights.py): svyciprop(method = "beta")'s recipe —
# survey:::svyciprop's own lines — on the smaller of degf(design) and the weights' Satterthwaite
# degrees of freedom ν = (Σ_c a_c T_c²)²/Σ_c a_c² T_c⁴, computed here from R's design object:
# T_c each cluster's total weight (weights(design), 0 outside a domain; rows whose variable is NA
# left out as svymean's na.rm leaves them out), a_c = (1 − f_h) n_h/(n_h − 1) with n_h the design's
# clusters in c's stratum (fpc$sampsize) and f_h = n_h/N_h (fpc$popsize, when given).
KG_WEIGHTS_DF = r"""
kg_ci <- function(f, design, level = 0.95, ...) {
  m <- svymean(f, design, ...)
  keep <- !is.na(design$variables[[all.vars(f)[1]]])
  w <- ifelse(keep, weights(design), 0)
  psu <- paste(design$strata[, 1], design$cluster[, 1], sep = "\r")
  n_h <- design$fpc$sampsize[, 1]
  a <- n_h / (n_h - 1)
  if (!is.null(design$fpc$popsize)) a <- a * (1 - n_h / design$fpc$popsize[, 1])
  total <- tapply(w, psu, sum)
  s <- tapply(a, psu, function(x) x[1])[names(total)] * total^2
  df <- min(degf(design), sum(s)^2 / sum(s^2))
  rval <- coef(m)[1]
  n.eff <- coef(m) * (1 - coef(m)) / vcov(m)
  alpha <- 1 - level
  n.eff <- n.eff * (qt(alpha / 2, nrow(design) - 1) / qt(alpha / 2, df))^2
  c(qbeta(alpha / 2, n.eff * rval, n.eff * (1 - rval) + 1), qbeta(1 - alpha / 2, n.eff * rval + 1, n.eff * (1 - rval)))
}
"""


def weights_df(script_text: str) -> str:
    """``script_text`` with each ``svyciprop(method = "beta")`` replaced by :data:`KG_WEIGHTS_DF`'s
    ``kg_ci`` (deniable's interval on the weights' degrees of freedom); svyby's by a ``kg_ci`` of each
    group's ``subset`` (the rows svyby's own subsetting keeps)."""
    replaced = script_text.replace('attr(svyciprop(f, des, method = "beta", level = 0.95, na.rm = TRUE), "ci")',
                                   "kg_ci(f, des, na.rm = TRUE)") \
        .replace('ci <- svyciprop(f, des, method = "beta", level = 0.95)\n  out[[j + 1]] <- c(coef(m)[[1]], SE(m)[[1]], '
                 'attr(ci, "ci")[[1]], attr(ci, "ci")[[2]])',
                 'ci <- kg_ci(f, des)\n  out[[j + 1]] <- c(coef(m)[[1]], SE(m)[[1]], ci[[1]], ci[[2]])') \
        .replace('  if (binary) ci <- svyby(f, ~g, des, svyciprop, method = "beta", vartype = "ci", na.rm = TRUE)\n', "") \
        .replace('ends <- c(ci[level, "ci_l"], ci[level, "ci_u"])', "ends <- kg_ci(f, subset(des, g == level), na.rm = TRUE)")
    assert "svyciprop" not in replaced and "kg_ci" in replaced
    return replaced.replace("suppressMessages(library(survey))\n", "suppressMessages(library(survey))\n" + KG_WEIGHTS_DF, 1)


def rscript() -> str:
    found = shutil.which("Rscript")
    assert found, "R is not installed: bash scripts/test.sh installs r-base-core and r-cran-survey"
    return found


def _run(script_text: str, tmp_path: Path, *args: str) -> list[float]:
    script = tmp_path / "s.R"
    script.write_text(script_text)
    done = subprocess.run([rscript(), str(script), *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return [float("nan") if v == "NA" else float(v) for v in done.stdout.split()]


def _cell(value) -> str:
    if isinstance(value, (float, np.floating)) and np.isnan(value):
        return ""
    return repr(float(value)) if isinstance(value, (float, np.floating)) else str(value)


def write_csv(path: Path, columns: dict) -> Path:
    """A plain CSV of equal-length columns (floats written exactly, with repr)."""
    names = list(columns)
    with open(path, "w") as fh:
        fh.write(",".join(names) + "\n")
        for row in zip(*(columns[n] for n in names)):
            fh.write(",".join(_cell(v) for v in row) + "\n")
    return path


def svymean(tmp_path: Path, columns: dict, variables: list[str], *, weights: str, strata: str = "",
            cluster: str = "", kg_weights_df: bool = False) -> np.ndarray:
    """R's ``svymean`` of each of ``variables`` with its interval (``svyciprop(method = "beta")`` for a
    0/1 column, else ``confint(df = degf(design))``): rows (mean, SE, ci_low, ci_high)."""
    path = write_csv(tmp_path / "design.csv", columns)
    script = weights_df(SVYMEAN_SCRIPT) if kg_weights_df else SVYMEAN_SCRIPT
    values = _run(script, tmp_path, str(path), cluster, strata, weights, *variables)
    return np.array(values).reshape(len(variables), 4)


def sample(seed: int, n_strata: int = 3):
    """A stratified cluster sample with unequal weights and a 3-option answer."""
    rng = np.random.default_rng(seed)
    rows = []
    for h in range(n_strata):
        for c in range(int(rng.integers(3, 7))):
            size = int(rng.integers(4, 15))
            level = rng.dirichlet([2, 2, 2])
            for _ in range(size):
                rows.append((h, f"{h}-{c}", float(rng.gamma(2.0, 50.0)), int(rng.choice(3, p=level)), 40 + 10 * h))
    stratum, cluster, w, y, big_n = (np.array(v) for v in zip(*rows))
    return stratum, cluster, w, y, big_n


def r_survey(tmp_path, stratum, cluster, w, y, big_n, fpc: bool, kg_weights_df: bool = False) -> np.ndarray:
    """R's numbers for :func:`sample`'s three options: rows (mean, SE, ci_low, ci_high)."""
    path = write_csv(tmp_path / "d.csv", {"stratum": stratum, "cluster": cluster, "w": w, "y": y, "N": big_n})
    script = weights_df(R_SCRIPT) if kg_weights_df else R_SCRIPT
    return np.array(_run(script, tmp_path, str(path), "fpc" if fpc else "none")).reshape(3, 4)


# svyglm(y ~ x1 + x2, family = quasibinomial()) under the design, its IRLS run to 1e-14 (glm stops at
# 1e-8, where its information matrix is a step behind): the coefficients, then their SEs.
SVYGLM_SCRIPT = r"""
suppressMessages(library(survey))
args <- commandArgs(trailingOnly = TRUE)
d <- read.csv(args[1], stringsAsFactors = FALSE)
des <- svydesign(ids = ~c, strata = ~s, weights = ~w, nest = TRUE, data = d)
g <- svyglm(y ~ x1 + x2, design = des, family = quasibinomial(), control = glm.control(epsilon = 1e-14, maxit = 100))
cat(sprintf("%.15g", c(coef(g), sqrt(diag(vcov(g))))), sep = "\n")
"""


def svyglm(tmp_path: Path, columns: dict) -> tuple[np.ndarray, np.ndarray]:
    """R's ``svyglm(y ~ x1 + x2, family = quasibinomial())`` on columns y, x1, x2, s, c, w: the
    coefficients and their standard errors."""
    path = write_csv(tmp_path / "glm.csv", columns)
    values = np.array(_run(SVYGLM_SCRIPT, tmp_path, str(path)))
    return values[:3], values[3:]


# rake() of an equal-probability sample (svydesign(ids = ~1, weights = ~w)) to population totals
# (MARGINS.csv: var, level, freq; the margins in file order), IPF run to 1e-13 of the total (R's
# default stops at a difference of one unit of weight), then as SVYMEAN_SCRIPT: svymean and
# svyciprop(method = "beta") of each 0/1 column (na.rm = TRUE: a domain), the t interval of any
# other; and last the raked weights.
# The raking of ``des`` to the margins ``m`` (MARGINS.csv read: var, level, freq), IPF run to 1e-13.
RAKE_TO_MARGINS = r"""
vars <- unique(m$var)
sample.margins <- lapply(vars, function(v) as.formula(paste0("~", v)))
population.margins <- lapply(vars, function(v) {
  s <- m[m$var == v, ]
  p <- data.frame(s$level, s$freq)
  names(p) <- c(v, "Freq")
  p
})
des <- rake(des, sample.margins, population.margins, control = list(maxit = 1000, epsilon = 1e-13))
"""
RAKE_SCRIPT = r"""
suppressMessages(library(survey))
args <- commandArgs(trailingOnly = TRUE)
d <- read.csv(args[1], stringsAsFactors = FALSE)
m <- read.csv(args[2], stringsAsFactors = FALSE)
des <- svydesign(ids = ~1, weights = ~w, data = d)
""" + RAKE_TO_MARGINS + r"""out <- c()
for (v in args[-(1:2)]) {
  f <- as.formula(paste0("~", v))
  mm <- svymean(f, des, na.rm = TRUE)
  if (all(d[[v]] %in% c(0, 1, NA))) {
    ci <- attr(svyciprop(f, des, method = "beta", level = 0.95, na.rm = TRUE), "ci")
  } else {
    ci <- confint(mm, df = degf(des), level = 0.95)
  }
  out <- c(out, coef(mm)[[1]], SE(mm)[[1]], ci[[1]], ci[[2]])
}
cat(sprintf("%.15g", c(out, weights(des))), sep = "\n")
"""


def margins_csv(path: Path, margins: dict, *, keep_zero: bool = False) -> Path:
    """The MARGINS.csv the raking scripts read (var, level, freq) of ``margins`` (variable →
    population total of each code 0, 1, …; in order); levels of total 0 left out unless ``keep_zero``."""
    rows = {"var": [], "level": [], "freq": []}
    for name, totals in margins.items():
        for level, total in enumerate(totals):
            if keep_zero or total > 0:
                rows["var"].append(name)
                rows["level"].append(level)
                rows["freq"].append(float(total))
    return write_csv(path, rows)


def rake_svymean(tmp_path: Path, columns: dict, margins: dict, variables: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """R's ``rake()`` of the rows (``columns`` with an all-ones ``w`` and the raking variables as
    integer codes) to ``margins`` (variable → population total of each code 0, 1, …; in order), then
    ``svymean`` / ``svyciprop(method = "beta")`` of each of ``variables``: rows (mean, SE, ci_low,
    ci_high), and the raked weights."""
    path = write_csv(tmp_path / "rake.csv", columns)
    margins_path = margins_csv(tmp_path / "margins.csv", margins)
    values = np.array(_run(RAKE_SCRIPT, tmp_path, str(path), str(margins_path), *variables))
    return values[:4 * len(variables)].reshape(len(variables), 4), values[4 * len(variables):]


# Domain estimates (tests/cli/test_weights_domains.py): under svydesign(ids = ~CLUSTER, strata =
# ~STRATUM, weights = ~W, nest = TRUE), for each named column: svyby(~v, ~GROUP, design, svymean,
# na.rm = TRUE) (the estimate and its SE), and the interval svyby(…, svyciprop, method = "beta",
# vartype = "ci") for a 0/1 column, else confint(svymean(~v, subset(design, GROUP == g)), df =
# degf(subset(…))); one line per number: group label, then (mean, SE, ci_low, ci_high).
SVYBY_SCRIPT = r"""
suppressMessages(library(survey))
args <- commandArgs(trailingOnly = TRUE)
d <- read.csv(args[1], stringsAsFactors = FALSE, colClasses = c(g = "character"))
des <- svydesign(ids = as.formula(paste0("~", args[2])), strata = as.formula(paste0("~", args[3])),
                 weights = as.formula(paste0("~", args[4])), nest = TRUE, data = d)
for (v in args[-(1:4)]) {
  f <- as.formula(paste0("~", v))
  m <- svyby(f, ~g, des, svymean, na.rm = TRUE)
  binary <- all(d[[v]] %in% c(0, 1, NA))
  if (binary) ci <- svyby(f, ~g, des, svyciprop, method = "beta", vartype = "ci", na.rm = TRUE)
  for (level in rownames(m)) {
    if (binary) {
      ends <- c(ci[level, "ci_l"], ci[level, "ci_u"])
    } else {
      sub <- subset(des, g == level)
      ends <- confint(svymean(f, sub, na.rm = TRUE), df = degf(sub))
    }
    cat(v, level, sprintf("%.15g", c(m[level, v], m[level, "se"], ends[[1]], ends[[2]])), sep = "\t")
    cat("\n")
  }
}
"""

# svyratio(~NUM, ~DEN, design, na.rm = TRUE) of each NUM:DEN pair: the ratio, its SE and
# confint(df = degf(design)), one line per number.
SVYRATIO_SCRIPT = r"""
suppressMessages(library(survey))
args <- commandArgs(trailingOnly = TRUE)
d <- read.csv(args[1], stringsAsFactors = FALSE)
des <- svydesign(ids = as.formula(paste0("~", args[2])), strata = as.formula(paste0("~", args[3])),
                 weights = as.formula(paste0("~", args[4])), nest = TRUE, data = d)
out <- c()
for (pair in args[-(1:4)]) {
  parts <- strsplit(pair, ":")[[1]]
  r <- svyratio(as.formula(paste0("~", parts[1])), as.formula(paste0("~", parts[2])), des, na.rm = TRUE)
  ci <- confint(r, df = degf(des))
  out <- c(out, coef(r)[[1]], SE(r)[[1]], ci[[1]], ci[[2]])
}
cat(sprintf("%.15g", out), sep = "\n")
"""


def svyby(tmp_path: Path, columns: dict, variables: list[str], *, weights: str, strata: str,
          cluster: str, kg_weights_df: bool = False) -> dict:
    """R's domain estimates by the column ``g`` (text labels): ``{(variable, group label): (mean, SE,
    ci_low, ci_high)}`` (:data:`SVYBY_SCRIPT`)."""
    path = write_csv(tmp_path / "domains.csv", columns)
    script = tmp_path / "by.R"
    script.write_text(weights_df(SVYBY_SCRIPT) if kg_weights_df else SVYBY_SCRIPT)
    done = subprocess.run([rscript(), str(script), str(path), cluster, strata, weights, *variables],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    out = {}
    for line in done.stdout.splitlines():
        variable, group, *numbers = line.split("\t")
        out[variable, group] = tuple(float("nan") if v == "NA" else float(v) for v in numbers)
    return out


def svyratio(tmp_path: Path, columns: dict, pairs: list[tuple[str, str]], *, weights: str, strata: str,
             cluster: str) -> np.ndarray:
    """R's ``svyratio`` of each (numerator, denominator) pair: rows (ratio, SE, ci_low, ci_high)."""
    path = write_csv(tmp_path / "ratios.csv", columns)
    values = _run(SVYRATIO_SCRIPT, tmp_path, str(path), cluster, strata, weights, *(f"{a}:{b}" for a, b in pairs))
    return np.array(values).reshape(len(pairs), 4)


# A list experiment's prevalence under the design: svyby(~s, ~arm, design, svymean, covmat = TRUE)
# of the count's unbiased score s, then svycontrast(…, c(-1, 1)) (treatment − control) with its SE
# and the t interval on degf(design); then each arm's mean and SE.
SVYCONTRAST_SCRIPT = r"""
suppressMessages(library(survey))
args <- commandArgs(trailingOnly = TRUE)
d <- read.csv(args[1], stringsAsFactors = FALSE)
des <- svydesign(ids = ~c, strata = ~s, weights = ~w, nest = TRUE, data = d)
b <- svyby(~score, ~arm, des, svymean, covmat = TRUE, na.rm = TRUE)
ctr <- svycontrast(b, c(-1, 1))
half <- qt(0.975, degf(des)) * SE(ctr)[[1]]
cat(sprintf("%.15g", c(coef(ctr)[[1]], SE(ctr)[[1]], coef(ctr)[[1]] - half, coef(ctr)[[1]] + half,
                       coef(b), SE(b))), sep = "\n")
"""


def svycontrast_arms(tmp_path: Path, columns: dict) -> np.ndarray:
    """R's treatment − control difference of the arms' means of ``score`` (columns score, arm, s, c,
    w): (difference, SE, ci_low, ci_high, control mean, treatment mean, control SE, treatment SE)."""
    path = write_csv(tmp_path / "arms.csv", columns)
    return np.array(_run(SVYCONTRAST_SCRIPT, tmp_path, str(path)))


# RAKE_SCRIPT on a weighted, stratified, clustered design: rake(svydesign(ids = ~CLUSTER, strata =
# ~STRATUM, weights = ~w, nest = TRUE), …) — raking starts from the sampling weights, and svymean's
# variance calibrates the influence values, then takes the strata and clusters; svyciprop's
# interval the design's degrees of freedom.  Then the raked weights.
RAKE_DESIGN_SCRIPT = RAKE_SCRIPT.replace(
    'des <- svydesign(ids = ~1, weights = ~w, data = d)',
    'des <- svydesign(ids = as.formula(paste0("~", args[3])), strata = as.formula(paste0("~", args[4])), '
    'weights = ~w, nest = TRUE, data = d)').replace("args[-(1:2)]", "args[-(1:4)]")


def rake_design_svymean(tmp_path: Path, columns: dict, margins: dict, variables: list[str], *, strata: str,
                        cluster: str, kg_weights_df: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """:func:`rake_svymean` of a design with sampling weights ``w``, strata and clusters."""
    assert RAKE_DESIGN_SCRIPT.count("args[-(1:4)]") == 1 and "args[3]" in RAKE_DESIGN_SCRIPT
    path = write_csv(tmp_path / "rake.csv", columns)
    margins_path = margins_csv(tmp_path / "margins.csv", margins)
    script = weights_df(RAKE_DESIGN_SCRIPT) if kg_weights_df else RAKE_DESIGN_SCRIPT
    values = np.array(_run(script, tmp_path, str(path), str(margins_path), cluster, strata, *variables))
    return values[:4 * len(variables)].reshape(len(variables), 4), values[4 * len(variables):]


# deniable regress --rake with --weights (tests/cli/test_regress_rake_weights.py,
# tests/unit/test_raked_design_regression.py): rake(svydesign(ids = ~CLUSTER, strata = ~STRATUM,
# weights = ~w, fpc = ~FPC, nest = TRUE), …) to the margins (RAKE_TO_MARGINS; an empty argument: no
# clusters, strata or fpc), then by the mode argument:
#   glm FORMULA   svyglm(FORMULA, family = quasibinomial()), IRLS to 1e-14: the coefficients, their
#                 SEs, then the raked weights;
#   weights       the raked weights;
#   total S1 S2 … vcov(svytotal(~S1 + S2 + …)) of those columns (a pseudo-likelihood's scores: the
#                 middle of its sandwich, calibrated by R's own svyrecvar), column by column.
RAKE_DESIGN_GLM_SCRIPT = r"""
suppressMessages(library(survey))
args <- commandArgs(trailingOnly = TRUE)
d <- read.csv(args[1], stringsAsFactors = FALSE)
m <- read.csv(args[2], stringsAsFactors = FALSE)
ids <- if (args[3] == "") ~1 else as.formula(paste0("~", args[3]))
strata <- if (args[4] == "") NULL else as.formula(paste0("~", args[4]))
fpc <- if (args[5] == "") NULL else as.formula(paste0("~", args[5]))
des <- svydesign(ids = ids, strata = strata, weights = ~w, fpc = fpc, nest = TRUE, data = d)
""" + RAKE_TO_MARGINS + r"""if (args[6] == "glm") {
  g <- svyglm(as.formula(args[7]), design = des, family = quasibinomial(),
              control = glm.control(epsilon = 1e-14, maxit = 100))
  out <- c(coef(g), sqrt(diag(vcov(g))), weights(des))
} else if (args[6] == "weights") {
  out <- weights(des)
} else {
  out <- as.vector(vcov(svytotal(as.formula(paste0("~", paste(args[-(1:6)], collapse = " + "))), des)))
}
cat(sprintf("%.15g", out), sep = "\n")
"""


def _rake_design(tmp_path: Path, columns: dict, margins: dict, cluster: str, strata: str, fpc: str,
                 *mode: str) -> np.ndarray:
    path = write_csv(tmp_path / "rake_glm.csv", columns)
    margins_path = margins_csv(tmp_path / "rake_glm_margins.csv", margins)
    return np.array(_run(RAKE_DESIGN_GLM_SCRIPT, tmp_path, str(path), str(margins_path), cluster, strata, fpc,
                         *mode))


def rake_design_svyglm(tmp_path: Path, columns: dict, margins: dict, formula: str, *, cluster: str = "",
                       strata: str = "", fpc: str = "") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """R's ``svyglm(formula, design = rake(svydesign(ids = ~cluster, strata = ~strata, weights = ~w,
    fpc = ~fpc, nest = TRUE), …), family = quasibinomial())`` (``columns`` with ``w`` and the raking
    variables as integer codes; ``margins``: variable → population total of each code 0, 1, …):
    the coefficients, their standard errors and the raked weights."""
    values = _rake_design(tmp_path, columns, margins, cluster, strata, fpc, "glm", formula)
    p = (values.size - len(columns["w"])) // 2
    return values[:p], values[p:2 * p], values[2 * p:]


def rake_design_weights(tmp_path: Path, columns: dict, margins: dict, *, cluster: str = "", strata: str = "",
                        fpc: str = "") -> np.ndarray:
    """The weights of R's ``rake()`` of the design (as :func:`rake_design_svyglm`'s)."""
    return _rake_design(tmp_path, columns, margins, cluster, strata, fpc, "weights")


def rake_design_total_vcov(tmp_path: Path, columns: dict, margins: dict, scores: list[str], *, cluster: str = "",
                           strata: str = "", fpc: str = "") -> np.ndarray:
    """``vcov(svytotal(~s1 + s2 + …))`` of the ``scores`` columns on R's ``rake()``d design (P × P)."""
    values = _rake_design(tmp_path, columns, margins, cluster, strata, fpc, "total", *scores)
    return values.reshape(len(scores), len(scores))
