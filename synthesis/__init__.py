"""synthesis package."""
