"""The benchmarks' process group works on a fresh machine: it creates its folders, parents included
(issue 34 §4: ``bench/redis_floor.py`` failed when its Redis folder's parent did not exist yet)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import redis

from bench.cluster import ProcessGroup


@pytest.mark.skipif(shutil.which("redis-server") is None, reason="redis-server is not installed")
def test_a_process_group_starts_redis_under_a_folder_that_does_not_exist_yet(tmp_path: Path) -> None:
    log_dir = tmp_path / "not" / "there" / "yet"
    with ProcessGroup(log_dir) as group:
        url = group.start_redis()
        client = redis.Redis.from_url(url)
        assert client.ping() is True
        client.close()
    assert (log_dir / "redis").is_dir() and (log_dir / "redis.log").is_file()
