"""gunicorn configuration for running the gateway directly under gunicorn (e.g. from systemd):

    gunicorn -c python:gateway.gunicorn_conf gateway.app:app_factory

Reads ``PWC_MCP_HOST``, ``PORT`` and ``PWC_MCP_GATEWAY_PROCESSES`` (default 1). For
more than one process set ``PROMETHEUS_MULTIPROC_DIR`` to an empty directory so
``/metrics`` sums all processes (``pwc-mcp gateway --processes N`` does this itself).
"""

from __future__ import annotations

import os

from gateway.serving import WORKER_CLASS, bind_address, child_exit

bind = bind_address(os.environ.get("PWC_MCP_HOST") or "127.0.0.1", int(os.environ.get("PORT") or 7860))
workers = int(os.environ.get("PWC_MCP_GATEWAY_PROCESSES") or 1)
worker_class = WORKER_CLASS
accesslog = None  # access lines would carry addresses and paths
graceful_timeout = 35
timeout = 60

__all__ = ["accesslog", "bind", "child_exit", "graceful_timeout", "timeout", "worker_class", "workers"]
