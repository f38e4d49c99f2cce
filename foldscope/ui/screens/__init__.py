"""Textual screens, one per module."""
