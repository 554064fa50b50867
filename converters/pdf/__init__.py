"""PDF sources: the converter (:mod:`.converter`) and the readers it assembles.

pypdf owns the file's structure (:mod:`.meta`, :mod:`.outline`, :mod:`.glyphs`);
PDFium reads page text (:mod:`.text`, with :mod:`.segments`, :mod:`.bidi`,
:mod:`.page_tables` and :mod:`.links`); :mod:`.layout`, :mod:`.tables` and
:mod:`.markdown` recover lines, tables and headings from where the text sits.
"""
