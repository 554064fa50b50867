"""Markdown sources, and the Markdown model every text-based converter derives from.

:mod:`.model` parses Markdown into sections, links, tables and plain text (HTML,
DOCX, plain text and the renderer all go through it); :mod:`.converter` is the
source converter; :mod:`.frontmatter` and :mod:`.mdx` prepare what it is given.
"""
