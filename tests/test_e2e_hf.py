"""A session on the real loading path: tiny Qwen3 + LoRA through the factory and the hf backend.

The random model writes nonsense, which is the point here: its turn is counted with the model's
own tokenizer, streamed, and its unparseable text becomes a format error, not a crash.
"""

from __future__ import annotations

from agent_core import prompts
from agent_core.backends.factory import BackendConfig, create_backend
from agent_core.events import FormatError, TokenStreamed, UsageReported
from agent_core.executor import Executor
from agent_core.policy import AutoPolicy
from agent_core.session import Session, SessionConfig
from agent_core.workspace import Workspace


def test_tiny_model_turn_is_counted_streamed_and_recovered(git_repo, tiny_model_dir, tiny_adapter_dir):
    backend = create_backend(BackendConfig(model=str(tiny_model_dir), adapter=str(tiny_adapter_dir)))
    config = SessionConfig(dialect="toolcall", context_window=4096, max_new_tokens=12, max_format_errors=2)
    session = Session(
        workspace=Workspace.open(git_repo), executor=Executor(git_repo), backend=backend,
        issue="average() is off by one", config=config,
    )
    events: list = []
    session.subscribe(events.append)
    try:
        finished = session.run(AutoPolicy())
    finally:
        session.close()

    assert finished.reason == "format_errors"
    usages = [e for e in events if isinstance(e, UsageReported)]
    first_prompt = prompts.build_prompt("toolcall", "average() is off by one", [], max_new_tokens=12)
    assert usages[0].context_tokens == backend.count_tokens(first_prompt)
    assert usages[0].context_limit == 4096
    assert 0 < usages[0].usage.new_tokens <= 12
    assert usages[1].context_tokens > usages[0].context_tokens  # the parse error was sent back
    errors = [e for e in events if isinstance(e, FormatError)]
    streamed = "".join(e.text for e in events if isinstance(e, TokenStreamed))
    assert [e.index for e in errors] == [1, 1]  # a format error does not use up a step
    assert errors[0].raw + errors[1].raw == streamed
