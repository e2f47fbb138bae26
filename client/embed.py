"""The embeddable randomizer, built: one dependency-free file from the survey page's own sources.

:func:`build` joins the browser modules the embed needs — ``static/rr.js`` and ``static/designs.js``
(the samplers), ``static/keys.js`` (where a report is kept), ``static/embed/embed.js`` (mounting a
question, the SurveyJS question type) and each type's embed module (``static/embed/types/``: single
choice, designs, check all that apply, numeric, list experiment, two-group designs) — into two files with the same code: an ES module
(``deniable-embed.mjs``) and a classic script (``deniable-embed.js``, one function that sets the one
global ``DeniableEmbed``) for platforms that cannot load modules.  No Node, no bundler: each source
module becomes a function scope whose ``import { a, b as c } from "./x.js"`` lines read the names
from the earlier module's scope and whose ``export`` declarations are returned, so the embed runs
the very functions the survey page imports, and the shared test vectors run against the built file.

The version is the first 16 hex digits of the SHA-256 of both files' bytes: a build with any other
byte gets another version, so the bytes behind a published version never change.  Each file's
subresource-integrity hash is ``sha384-`` and the base64 of its SHA-384 digest (the form the
``integrity`` attribute takes).
"""

from __future__ import annotations

import base64
import hashlib
import posixpath
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from deniable.errors import DeniableError

STATIC = Path(__file__).resolve().parent / "static"
SOURCES = ("rr.js", "designs.js", "keys.js", "embed/embed.js",  # each after what it imports
           "embed/types/choice.js", "embed/types/design.js", "embed/types/multi.js",
           "embed/types/numeric.js", "embed/types/list.js", "types/two_group_draw.js", "embed/types/two_group.js")
NAME = "deniable-embed"
GLOBAL = "DeniableEmbed"

HEADER = """\
/*! deniable-embed {version}: the randomizer of deniable's survey page, to embed in another survey tool.
 *
 * Built by `deniable embed build` from deniable's own browser sources (rr.js, designs.js, keys.js,
 * embed/embed.js): the same samplers, run against the same shared test vectors.
 *
 * What holds: epsilon-local differential privacy against anyone who sees the REPORTS (the host
 * platform, its exports, the researcher).  The inputs holding the true answer belong to this file:
 * they have no name, nothing writes them to the host's data, nothing logs them.  The host gets only
 * {{report, design, epsilon}}.  A report is drawn once and kept in localStorage (the report, never the
 * answer), so a back button, a reload or a resumed session re-sends it instead of drawing again.  A
 * respondent-side crosswise question has no input for either true answer: the respondent's choice
 * (same or different) is the report, sent as is and not kept.  A two-group design's instruction is
 * drawn on the device and shown in words, never kept and never sent: the report is the group and the
 * answer clicked; CDM, SLD and UQTunknown are not epsilon-LDP (their epsilon is null).
 *
 * What does not hold: privacy at rest on the respondent's device (the stored report can be read
 * there), and anything about the metadata the host platform records (addresses, times, answer
 * order, timings, the other questions' answers): deniable cannot scrub it.
 *
 * Randomness: crypto.getRandomValues only; without it the file refuses to randomize.
 */
"""

_IMPORT = re.compile(r'^import \{([^}]*)\} from "((?:\.\.?/)+)([\w/]+\.js)";$')
_EXPORT = re.compile(r"^export (?:async )?(?:function\*? |const |let |class )(\w+)")


class EmbedBuildError(DeniableError, ValueError):
    """A source module uses a form of import or export the builder does not join."""


@dataclass(frozen=True)
class Embed:
    """The built files: ``module`` (ES module) and ``script`` (classic script) bytes, the ``version``."""

    module: bytes
    script: bytes
    version: str

    def files(self) -> dict[str, bytes]:
        """File name → bytes, as ``deniable embed build`` writes them."""
        return {f"{NAME}-{self.version}.mjs": self.module, f"{NAME}-{self.version}.js": self.script}


def integrity(data: bytes) -> str:
    """The subresource-integrity value of ``data``: ``sha384-`` + base64 of its SHA-384 digest."""
    return "sha384-" + base64.b64encode(hashlib.sha384(data).digest()).decode("ascii")


def _scope_name(source: str) -> str:
    return "__" + re.sub(r"\W", "_", source.removesuffix(".js"))


def _module(source: str, known: dict[str, str]) -> tuple[str, list[str]]:
    """One source module as a function scope returning its exports; ``known`` maps a source to its scope."""
    body, exports = [], []
    base = posixpath.dirname(source)
    for number, line in enumerate((STATIC / source).read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith("import "):
            match = _IMPORT.match(line)
            target = match and posixpath.normpath(posixpath.join(base, match.group(2) + match.group(3)))
            if not match or target not in known:
                raise EmbedBuildError(f"{source}:{number}: cannot join this import: {line.strip()[:80]}")
            names = [n.strip().replace(" as ", ": ") for n in match.group(1).split(",") if n.strip()]
            body.append(f"const {{ {', '.join(names)} }} = {known[target]};")
        elif line.startswith("export "):
            match = _EXPORT.match(line)
            if not match:
                raise EmbedBuildError(f"{source}:{number}: cannot join this export: {line.strip()[:80]}")
            exports.append(match.group(1))
            body.append(line[len("export "):])
        else:
            body.append(line)
    scope = _scope_name(source)
    text = (f"// ---- {source}\nconst {scope} = (() => {{\n\"use strict\";\n" + "\n".join(body)
            + f"\nreturn {{ {', '.join(exports)} }};\n}})();\n")
    return text, exports


@lru_cache(maxsize=1)
def _joined() -> tuple[str, tuple[str, ...]]:
    known: dict[str, str] = {}
    parts, names = [], []
    for source in SOURCES:
        text, exports = _module(source, known)
        known[source] = _scope_name(source)
        parts.append(text)
        if source != "keys.js":  # the storage keys stay inside
            names += [n for n in exports if n not in names]
    scopes = ", ".join(f"...{_scope_name(s)}" for s in SOURCES if s != "keys.js")
    parts.append(f"const {GLOBAL} = Object.freeze({{ {scopes} }});\n")
    return "".join(parts), tuple(names)


def build() -> Embed:
    """Build the embed from the sources as they are now (ES module, classic script, version)."""
    code, names = _joined()
    module = code + f"export const {{ {', '.join(names)} }} = {GLOBAL};\nexport default {GLOBAL};\n"
    script = f"(function () {{\n\"use strict\";\n{code}globalThis.{GLOBAL} = {GLOBAL};\n}})();\n"
    digest = hashlib.sha256((HEADER + module).encode() + b"\0" + (HEADER + script).encode()).hexdigest()
    version = digest[:16]
    header = HEADER.format(version=version)
    return Embed(module=(header + module).encode("utf-8"), script=(header + script).encode("utf-8"),
                 version=version)


@lru_cache(maxsize=1)
def current() -> Embed:
    """The embed of the installed sources, built once per process (what the app serves)."""
    return build()
