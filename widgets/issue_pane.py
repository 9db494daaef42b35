"""The issue being worked on, as collapsible Markdown."""

from __future__ import annotations

from textual.widgets import Collapsible, Markdown

from agent_core.sanitize import visible
from widgets._css import css_beside
from widgets.plain_text import plain


def issue_title(issue: str, width: int = 60) -> str:
    """A one-line title for the issue: its first non-empty line, without Markdown heading marks."""
    for line in issue.splitlines():
        line = plain(line.strip().lstrip("#").strip())
        if line:
            return line if len(line) <= width else line[: width - 1] + "…"
    return "(empty issue)"


class IssuePane(Collapsible):
    """Shows the issue text; collapsed it takes one line."""

    DEFAULT_CSS = css_beside(__file__)

    def __init__(self, issue: str, *, collapsed: bool = True, id: str | None = None) -> None:
        super().__init__(
            Markdown(visible(issue), classes="issue-text"),
            title=f"Issue: {visible(issue_title(issue))}",
            collapsed=collapsed,
            id=id,
        )
        self.issue = issue

    def set_issue(self, issue: str) -> None:
        """Show another issue (e.g. the one of a resumed session)."""
        self.issue = issue
        self.title = f"Issue: {visible(issue_title(issue))}"
        self.query_one(Markdown).update(visible(issue))
