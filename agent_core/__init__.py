"""navtui's headless core: actions, dialects, backends, executor, git workspace and the session loop.

Nothing in this package imports Textual; the TUI and the headless runner are front ends over it.
"""

__version__ = "0.1.0"
