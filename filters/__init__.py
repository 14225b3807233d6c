"""filters package."""
