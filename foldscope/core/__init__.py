"""foldscope.core package."""
