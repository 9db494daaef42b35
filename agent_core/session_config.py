"""What a session is set up with (`SessionConfig`) and how a new one is named."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone

__all__ = ["AUTO_PROMPT_DIALECT", "SessionConfig", "new_session_id"]

# The prompt shape used while the dialect is still "auto" (before the first parseable reply).
AUTO_PROMPT_DIALECT = "toolcall"


@dataclass
class SessionConfig:
    dialect: str  # text | toolcall | xml, or auto: detected from the first parseable reply
    context_window: int = 16_384  # tokens the prompt + generation must fit in
    max_new_tokens: int = 1024
    max_steps: int = 50  # executed + rejected proposals
    max_time: float | None = None  # wall-clock seconds for the whole session
    command_timeout: float = 120.0
    max_format_errors: int = 3  # consecutive unparseable turns before stopping
    max_stuck: int | None = None  # stuck turns (agent_core.stuck) before stopping; None: never
    path_alias: str = "/testbed"
    backend_info: dict = field(default_factory=dict)  # shown and logged; never API keys
    prompt_profile: str | None = None  # a profile name or file; None: the dialect's default
    submit_review: bool = False  # the first submit gets the profile's review message, if any
    sandbox: str = ""  # where bash runs (Executor.where), set by the Session; shown and logged
    keep_pycache: bool = False  # the patch keeps bytecode no ignore rule covers (patch_scope)


def new_session_id() -> str:
    """Sortable and unique: UTC time plus a short random suffix."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    return f"{stamp}-{uuid.uuid4().hex[:6]}"
