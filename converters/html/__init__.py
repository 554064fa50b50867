"""HTML sources, and DOCX, which mammoth turns into HTML first.

:mod:`.markdown` turns a page into Markdown, which the Markdown model then reads;
:mod:`.text` is the visible text of an HTML fragment; :mod:`.docx` reads a Word
package into HTML and hands it to :func:`.converter.convert_html`.
"""
