"""foldscope.cli package."""
