"""dedup package."""
