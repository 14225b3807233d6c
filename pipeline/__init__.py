"""gristmill pipeline: Beam composition, I/O, recipe, CLI, report."""
