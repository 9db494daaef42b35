"""The one exception the git side raises; its message says what the user should do."""


class WorkspaceError(Exception):
    """The repository cannot be used (or a git operation failed); the message says how to fix it."""


class UnsafeRestore(WorkspaceError):
    """Undo/rewind/resume would overwrite changes the session did not make (`paths`)."""

    def __init__(self, paths: list[str], checkpoint: int, action: str = "undo") -> None:
        self.paths = list(paths)
        self.checkpoint = checkpoint
        shown = ", ".join(self.paths[:20]) + (f" and {len(self.paths) - 20} more"
                                               if len(self.paths) > 20 else "")
        super().__init__(
            f"{action} would overwrite changes made outside the session since step {checkpoint}: "
            f"{shown}. Keep them and go on, or {action} anyway with force (they are saved in a "
            "before-undo ref first)."
        )
