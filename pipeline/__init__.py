"""gristmill's pipeline: recipe, Beam graph, readers, writers, runners."""


def gristmill_version() -> str:
    """The installed gristmill version ("unknown" when run from a bare source tree)."""
    try:
        from importlib.metadata import version

        return version("gristmill")
    except Exception:
        return "unknown"
