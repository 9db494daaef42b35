"""Git plumbing behind `agent_core.workspace`: running git, reading/moving HEAD, rewriting the tree."""
