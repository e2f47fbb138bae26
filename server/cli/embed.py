"""``deniable embed``: the embeddable randomizer for surveys on other platforms (docs/embedding.md).

``build`` writes the built files (:mod:`deniable.client.embed`) to a folder and prints each one's
subresource-integrity hash; ``design`` prints a survey definition's design document, the one the
app publishes at ``GET /api/v1/surveys/SLUG``, for a page that passes it to the embed instead of
fetching it; ``recipe`` prints the copy-paste snippets for SurveyJS, oTree, Qualtrics, LimeSurvey or
REDCap (:mod:`deniable.server.survey.recipes`; the dashboard's "Use in another survey tool" page shows
the same texts).
"""

from __future__ import annotations

from pathlib import Path

import click

from deniable.server.survey.readers import SOURCES

from .common import echo_json, fail, load_survey


@click.group("embed")
def embed() -> None:
    """The embeddable randomizer: a protected question inside another survey tool.

    \b
    Example:
        deniable embed build -o site/js
        deniable embed design examples/survey.json > design.json
        deniable embed recipe qualtrics examples/survey.json --src https://surveys.example.org
    """


@embed.command("build")
@click.option("-o", "--output", "folder", required=True, metavar="DIR",
              help="The folder to write deniable-embed-VERSION.mjs and .js to (made if missing).")
def build(folder) -> None:
    """Write the embed (ES module and classic script) and print each file's integrity hash.

    VERSION is the files' content hash: a build with other bytes has another version. Put the
    hash in the page's integrity attribute, so the survey runs these exact bytes.

    \b
    Example:
        deniable embed build -o site/js
    """
    from deniable.client.embed import build as build_embed
    from deniable.client.embed import integrity

    out = Path(folder)
    try:
        out.mkdir(parents=True, exist_ok=True)
        built = build_embed()
        for name, data in built.files().items():
            (out / name).write_bytes(data)
            click.echo(f"{out / name}  {integrity(data)}")
    except OSError as exc:
        fail(f"--output: cannot write to {folder}: {exc.strerror or exc}")


@embed.command("design")
@click.argument("survey_path", metavar="SURVEY.json")
def design(survey_path) -> None:
    """Print the design document of a survey definition (as GET /api/v1/surveys/SLUG publishes it).

    \b
    Example:
        deniable embed design examples/survey.json > design.json
    """
    echo_json(_design_document(load_survey(survey_path)))


def _design_document(survey) -> dict:
    """The design document of ``survey``, as ``GET /api/v1/surveys/SLUG`` publishes it."""
    from deniable.server.survey.recipes import design_document

    return design_document(survey)


@embed.command("recipe")
@click.argument("platform", type=click.Choice(tuple(SOURCES)))  # a recipe for each tool deniable reads
@click.argument("survey_path", metavar="SURVEY.json")
@click.option("--src", required=True, metavar="URL",
              help="Where the page loads the embed from: your deniable's address (it serves "
                   "/embed/VERSION/deniable-embed.js), or the URL of the deniable-embed-VERSION.js that "
                   "deniable embed build wrote.")
@click.option("--question", "qid", metavar="QID",
              help="Only this question (default: every protected question the embed can mount).")
def recipe(platform, survey_path, src, qid) -> None:
    """Print the copy-paste snippet of each protected question for PLATFORM, and the codebook.

    Each snippet loads the embed's classic script by its integrity hash, mounts the question and
    puts only the report (JSON: report, design, epsilon) into the platform's field: a SurveyJS
    question of type "deniable", an oTree player field set from a hidden input, a Qualtrics
    embedded-data field, a hidden LimeSurvey short-text question, or a REDCap @HIDDEN text field,
    named in the output.  `deniable estimate SURVEY.json EXPORT.csv --from PLATFORM` reads the
    platform's CSV export.

    \b
    Example:
        deniable embed recipe qualtrics examples/survey.json --src https://surveys.example.org
    """
    from deniable.client.embed import current, integrity
    from deniable.server.survey.recipes import embed_src
    from deniable.server.survey.recipes import recipe as make_recipe

    survey = load_survey(survey_path)
    built = current()
    src = embed_src(src, built.version)  # a PlatformExportError: one Error line (the deniable group's)
    click.echo(make_recipe(platform, survey, _design_document(survey), src=src, integrity=integrity(built.script),
                           version=built.version, qid=qid), nl=False)


COMMANDS = (embed,)
