"""``deniable embed``: the embeddable randomizer for surveys on other platforms (docs/embedding.md).

``build`` writes the built files (:mod:`deniable.client.embed`) to a folder and prints each one's
subresource-integrity hash; ``design`` prints a survey definition's design document, the one the
app publishes at ``GET /api/v1/surveys/SLUG``, for a page that passes it to the embed instead of
fetching it.
"""

from __future__ import annotations

from pathlib import Path

import click

from .common import echo_json, fail


@click.group("embed")
def embed() -> None:
    """The embeddable randomizer: a protected question inside another survey tool.

    \b
    Example:
        deniable embed build -o site/js
        deniable embed design examples/survey.json > design.json
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
    from deniable.server.survey.definition import (
        DefinitionError,
        design_fingerprint,
        load_definition,
    )
    from deniable.server.web.respondent.api import question_design

    try:
        survey = load_definition(survey_path)
    except DefinitionError as exc:
        fail(str(exc))
    echo_json({"slug": survey.slug, "title": survey.title, "description": survey.description,
               "design_fingerprint": design_fingerprint(survey),
               "questions": [question_design(q) for q in survey.questions]})


COMMANDS = (embed,)
