"""foldscope.ui package."""
