"""The one exception the git side raises; its message says what the user should do."""


class WorkspaceError(Exception):
    """The repository cannot be used (or a git operation failed); the message says how to fix it."""
