"""evaluate package."""
