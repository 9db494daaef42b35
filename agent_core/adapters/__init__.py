"""A repository's adapter versions (`navtui adapters`): which exist, which is current (what
`--adapter current` loads), promotion and rollback (`registry`), and a merged export with the
vLLM line that serves an adapter unmerged (`export`)."""

from agent_core.adapters.registry import CURRENT, Registry, RegistryError, Version, update_manifest

__all__ = ["CURRENT", "Registry", "RegistryError", "Version", "update_manifest"]
