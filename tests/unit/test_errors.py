"""One error hierarchy (deniable.errors): each front end maps it in one place — the web app to a 400
naming the field, the command line to one ``Error:`` line.  That every exception class of the project
derives from DeniableError is tests/unit/test_error_family.py's."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from deniable.errors import FieldError


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
