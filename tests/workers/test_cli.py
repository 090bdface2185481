"""`pwc-mcp worker` (`workers.cli.main`): help, and one clear line with exit 2 on a configuration error.

A worker process answering calls and draining on SIGTERM: ``test_worker.py`` (in process) and
``tests/fault/test_worker_drain.py`` (a real process in a cluster).
"""

from __future__ import annotations

import pytest

from workers.cli import main


def test_help_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"], environ={}) == 0
    assert capsys.readouterr().out.startswith("usage: pwc-mcp worker")


@pytest.mark.parametrize(("environ", "named"), [
    ({"PWC_MCP_CURSOR_KEY_CURRENT": "k" * 32}, "PWC_MCP_REDIS_URL"),
    ({"PWC_MCP_CURSOR_KEY_CURRENT": "k" * 32, "PWC_MCP_REDIS_URL": "redis://127.0.0.1:1/0",
      "PWC_MCP_WORKER_DRAIN_S": "0"}, "PWC_MCP_WORKER_DRAIN_S"),
    ({"PWC_MCP_REDIS_URL": "redis://127.0.0.1:1/0"}, "PWC_MCP_CURSOR_KEY_CURRENT"),
])
def test_a_configuration_error_is_one_line_and_exit_2(environ: dict[str, str], named: str,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    assert main([], environ=environ) == 2
    err = capsys.readouterr().err
    assert err.startswith("pwc-mcp worker: ") and named in err and err.count("\n") == 1, err
    assert "Traceback" not in err
