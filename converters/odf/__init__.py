"""OpenDocument text (.odt) and presentations (.odp), read from the package's XML.

:mod:`.package` opens the ZIP within bounds and parses its parts safely,
:mod:`.text` turns ODF text into Markdown (shared by both formats), and
:mod:`.odt` and :mod:`.odp` are the converters.
"""
