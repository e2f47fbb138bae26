"""One error hierarchy (deniable.errors): every error class of the project derives from DeniableError,
and each front end maps it in one place — the web app to a 400 naming the field, the command line to
one ``Error:`` line."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from deniable.errors import DeniableError, FieldError

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = {"client": "deniable.client", "estimators": "deniable.estimators", "server": "deniable.server"}
# Exceptions that are not refusals of input, with the reason they stay outside the hierarchy.
OUTSIDE = {
    "SubmitError": "the Python client's transport failure (client/submit.py), raised to the caller's code",
    "Refused": "an internal signal of the submission route, turned into a response where it is raised",
    "LocalFallback": "an internal signal of the rate limiter's storage",
    "RateLimited": "a werkzeug HTTPException (429), answered by Flask's own mechanism",
    "_BodyRefused": "the server's request reader stopping a body it will not pass on (answered there)",
}


def error_classes():
    for folder, package in PACKAGES.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in tree.body:
                if isinstance(node, ast.ClassDef) and any(
                        isinstance(b, (ast.Name, ast.Attribute)) and
                        (getattr(b, "id", None) or getattr(b, "attr", "")).endswith(("Error", "Exception", "Mismatch",
                                                                                      "Available", "Refused"))
                        for b in node.bases):
                    module = ".".join([package, *path.relative_to(ROOT / folder).with_suffix("").parts])
                    yield module.removesuffix(".__init__"), node.name


def test_every_error_class_derives_from_deniable_error():
    found = list(error_classes())
    assert len(found) >= 20
    for module, name in found:
        if name in OUTSIDE:
            continue
        cls = getattr(importlib.import_module(module), name)
        assert issubclass(cls, DeniableError), f"{module}.{name}"
        assert issubclass(cls, ValueError), f"{module}.{name}: callers catching ValueError keep working"


def test_field_errors_carry_their_field():
    from deniable.client.designs import warner
    from deniable.server.survey.definition import DefinitionError, parse_definition

    with pytest.raises(FieldError) as caught:
        warner(0.5)
    assert caught.value.field == "p"
    with pytest.raises(DefinitionError) as caught:
        parse_definition({"slug": "s", "title": "T", "questions": [{"id": "q", "text": "Q", "options": ["a", "b"],
                                                                     "epsilon": -1}]})
    assert caught.value.field == "questions[0].epsilon" and isinstance(caught.value, FieldError)


def test_the_web_app_answers_an_unanswered_refusal_with_a_400_naming_the_field(app):
    def refuse():
        raise FieldError("must be at most 20, got 99", "epsilon")

    app.add_url_rule("/api/v1/test-refusal", "test_refusal_api", refuse)
    app.add_url_rule("/test-refusal", "test_refusal_page", refuse)
    client = app.test_client()
    response = client.get("/api/v1/test-refusal")
    assert response.status_code == 400
    assert response.get_json() == {"error": "must be at most 20, got 99", "field": "epsilon"}
    page = client.get("/test-refusal")
    assert page.status_code == 400 and "must be at most 20, got 99" in page.get_data(as_text=True)


def test_the_command_line_answers_an_unanswered_refusal_with_one_line():
    from deniable.server.cli import Group

    group = Group()

    @group.command()
    def refuse():
        raise FieldError("--margin: must be below 0.5, got 0.7", "--margin")

    result = CliRunner().invoke(group, ["refuse"])
    assert result.exit_code == 1 and result.output == "Error: --margin: must be below 0.5, got 0.7\n"
    assert isinstance(group, click.Group)
