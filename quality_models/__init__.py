"""quality_models package."""
