"""Lightweight markup sources: reStructuredText, Org mode and AsciiDoc.

Each is read into Markdown (headings, lists, fenced code with its language,
tables, links), and the shared Markdown path derives the other formats.
"""
