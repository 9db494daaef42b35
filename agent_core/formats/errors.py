"""The one exception every dialect parser raises."""

from __future__ import annotations


class ParseError(Exception):
    """A model turn that cannot be turned into an action.

    `str(error)` is written for the model: what was wrong, then a short correct example in
    `dialect`. The session shows it to the model as the next observation.
    """

    def __init__(self, message: str, dialect: str, example: str = "") -> None:
        self.dialect = dialect
        self.problem = message
        self.example = example
        text = message if not example else f"{message}\nA correct reply looks like this:\n{example}"
        super().__init__(text)
