# syntax=docker/dockerfile:1
# docshelf: a folder of documents served as MCP resources (docs/deployment.md).
#
#   docker build -t docshelf .
#   docker run -d -p 127.0.0.1:8000:8000 -v "$PWD/docs:/shelf:ro" -v docshelf-data:/data docshelf
#
# The shelf is mounted read-only at /shelf (readable by uid 10001, the USER below), the
# index and converted representations live in the /data volume, and every setting is a
# DOCSHELF_* variable (docs/configuration.md): no config file, no flags to add.

# --- build: the docshelf distribution, installed into a venv that is copied below ---
FROM python:3.11-slim-bookworm AS build
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY pyproject.toml README.md ./
COPY app/ app/
COPY converters/ converters/
COPY storage/ storage/
COPY migrations/ migrations/
# The same install as the README's; the postgres extra is the scale-out path (DESIGN D10).
RUN python -m venv /opt/docshelf \
 && /opt/docshelf/bin/pip install ".[postgres]"

# --- runtime ---
FROM python:3.11-slim-bookworm
# libmagic1 for python-magic (file type detection); fonts for the PDF renderer's text:
# DejaVu (Latin, Greek, Cyrillic, basic Arabic, math), Noto Sans CJK (Chinese, Japanese,
# Korean; ~90 MB, only the glyphs a document uses are embedded), Noto Arabic UI (the
# Persian and Urdu letters DejaVu lacks). converters/render/fonts.py finds them by file name.
# Tesseract (Apache-2.0) reads scanned pages and pictures (docs/formats.md, OCR); add
# tesseract-ocr-LANG packages (and name them in the OCR languages setting) for others.
# Versions are not pinned: the Debian stable release is, and its security updates should land.
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends libmagic1 fonts-dejavu-core fonts-noto-cjk \
      fonts-noto-ui-core tesseract-ocr tesseract-ocr-eng \
 && rm -rf /var/lib/apt/lists/*
RUN groupadd --system --gid 10001 docshelf \
 && useradd --system --uid 10001 --gid docshelf --home-dir /data --no-create-home \
      --shell /usr/sbin/nologin docshelf \
 && mkdir -p /shelf /data \
 && chown docshelf:docshelf /data
COPY --from=build /opt/docshelf /opt/docshelf
COPY deploy/healthcheck.py /opt/docshelf/healthcheck.py

ENV PATH=/opt/docshelf/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    DOCSHELF_SHELVES=/shelf \
    DOCSHELF_DATA_DIR=/data \
    DOCSHELF_PORT=8000
# The MCP Registry checks that an image belongs to the server.json naming it by this label.
LABEL io.modelcontextprotocol.server.name="io.github.docshelf/docshelf"
VOLUME ["/data"]
EXPOSE 8000
WORKDIR /data
USER 10001:10001
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["python", "/opt/docshelf/healthcheck.py"]
CMD ["docshelf", "serve", "--host", "0.0.0.0"]
