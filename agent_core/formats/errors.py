"""The one exception every dialect parser raises."""

from __future__ import annotations

SHAPE_HEADER = "A reply has this shape (replace the CAPITALISED placeholders):"


class ParseError(Exception):
    """A model turn that cannot be turned into an action.

    `str(error)` is written for the model: what was wrong, then the *shape* of a correct reply in
    `dialect`, with placeholders rather than a runnable command (a model that copies it gets a
    format error, not a loop of the same command). The session shows it as the next observation.
    """

    def __init__(self, message: str, dialect: str, example: str = "") -> None:
        self.dialect = dialect
        self.problem = message
        self.example = example
        text = message if not example else f"{message}\n{SHAPE_HEADER}\n{example}"
        super().__init__(text)
