"""foldscope.engine package."""
