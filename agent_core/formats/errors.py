"""The one exception every dialect parser raises."""

from __future__ import annotations


class ParseError(Exception):
    """A model turn that cannot be turned into an action.

    `str(error)` is written for the model: what was wrong, then `example`: a complete reply in
    `dialect` and its tools (`agent_core.formats.examples`), never a shape with placeholders a
    model could copy as it is. A session shows the model `problem` with an example built from
    its own prompt profile instead (`agent_core.prompts.format_parse_error`).
    """

    def __init__(self, message: str, dialect: str, example: str = "") -> None:
        self.dialect = dialect
        self.problem = message
        self.example = example
        super().__init__(message if not example else f"{message}\n{example}")
