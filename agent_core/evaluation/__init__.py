"""`navtui eval`: adapters run on the user's own tasks (`run`), their resolved rates compared in
pairs (`stats`)."""

from agent_core.evaluation.run import EvalError, Evaluation, PairResult, load_tasks
from agent_core.evaluation.stats import Paired, compare

__all__ = ["EvalError", "Evaluation", "Paired", "PairResult", "compare", "load_tasks"]
