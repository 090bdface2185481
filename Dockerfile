# pwc-mcp as an image (README.md "Deploy with compose"). Classic-builder syntax only, so
# `docker build`, `podman build` and `buildah` all build it; uv comes from PyPI.
#
# Default command (scripts/container-start): with PWC_API_URL unset, `pwc-mcp demo` (the
# bundled sample catalog + the server, offline, ephemeral cursor key with a warning);
# with PWC_API_URL set, `pwc-mcp serve` (PWC_MCP_CURSOR_KEY_CURRENT required; with
# PWC_MCP_REDIS_URL, a gateway and PWC_MCP_WORKERS workers). Any other command runs as given.
ARG BASE=python:3.12-slim
FROM ${BASE}

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    MPLCONFIGDIR=/tmp/matplotlib \
    UV_COMPILE_BYTECODE=1 \
    UV_LINK_MODE=copy \
    UV_NO_CACHE=1 \
    UV_PYTHON_DOWNLOADS=never \
    UV_PROJECT_ENVIRONMENT=/app/.venv \
    PATH=/app/.venv/bin:$PATH

RUN python3 -m pip install --no-cache-dir --disable-pip-version-check uv \
    && useradd --uid 10001 --user-group --home-dir /nonexistent --no-create-home \
       --shell /usr/sbin/nologin pwc

WORKDIR /app
# Dependencies first: a source change (README included) rebuilds only the layers below.
COPY pyproject.toml uv.lock ./
RUN uv sync --frozen --no-dev --no-install-project
COPY . .
RUN uv sync --frozen --no-dev \
    && python3 -m compileall -q pwc pwc_mcp_core gateway workers catalog metric_rules paper_passages web_serving \
    && install -d -o pwc -g pwc -m 0750 /data

ENV PWC_MCP_HOST=0.0.0.0 \
    PORT=7860
USER pwc
EXPOSE 7860
# /health is 200 only when the catalog (and, with Redis, a worker) answers.
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python3", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:' + os.environ.get('PORT', '7860') + '/health', timeout=4)"]
CMD ["/app/scripts/container-start"]
