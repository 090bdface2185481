"""A worker's reply outlasts a Redis outage: the call's deadline, not a retry count, ends
the reply attempts, and the acknowledgement is retried until Redis is back (issue 14 item 8).

Real redis-server (stopped and started on its port); the worker's finishing step is
driven directly on a thread, as a consumer thread runs it.
"""

from __future__ import annotations

import threading
import time

import redis

from pwc_mcp_core.cluster import queue, redis_keys
from pwc_mcp_core.cluster.redis_pipe import SyncPipe
from pwc_mcp_core.cluster.replies import encode_reply
from pwc_mcp_core.runtime.dispatch import Answer
from workers.settings import WorkerSettings
from workers.worker import Worker


class _NoRunner:
    threads = 1


def _worker(redis_url: str) -> Worker:
    settings = WorkerSettings.from_env({"PWC_MCP_REDIS_URL": redis_url, "PWC_MCP_CURSOR_KEY_CURRENT": "k" * 32,
                                        "PWC_MCP_WORKER_ID": "reply-test"})
    return Worker(settings, _NoRunner())  # type: ignore[arg-type]


def _job(client: redis.Redis) -> queue.Job:
    client.xgroup_create(redis_keys.calls_stream(), queue.GROUP, id="0", mkstream=True)
    entry = client.xadd(redis_keys.calls_stream(), {"rid": "r", "reply": redis_keys.reply_list("g"), "call": "{}"})
    client.xreadgroup(queue.GROUP, "reply-test#x", {redis_keys.calls_stream(): ">"})
    return queue.Job(entry_id=entry, rid="r", reply_key=redis_keys.reply_list("g"), call_json="{}")


def test_a_reply_is_retried_through_an_outage_and_delivered_before_the_deadline(redis_server, redis_url) -> None:
    client = redis.Redis.from_url(redis_url)
    job = _job(client)
    worker = _worker(redis_url)
    pipe = SyncPipe(redis_url, timeout_s=2)
    redis_server.stop()
    done = threading.Event()
    thread = threading.Thread(target=lambda: (worker._finish(pipe, job, Answer(b"body"), time.time() + 30), done.set()))
    thread.start()
    time.sleep(3)  # several backoff rounds against a dead server
    assert not done.is_set()
    redis_server.start()  # the stream is gone (no persistence), the reply still lands
    assert done.wait(10), "the reply was not retried until Redis returned"
    client = redis.Redis.from_url(redis_url)
    assert client.lpop(redis_keys.reply_list("g")) == encode_reply("r", Answer(b"body"))
    pipe.close()


def test_past_the_deadline_only_the_acknowledgement_is_retried(redis_server, redis_url) -> None:
    client = redis.Redis.from_url(redis_url)
    job = _job(client)
    worker = _worker(redis_url)
    pipe = SyncPipe(redis_url, timeout_s=2)
    redis_server.proc.send_signal(19)  # SIGSTOP: commands time out
    done = threading.Event()
    thread = threading.Thread(target=lambda: (worker._finish(pipe, job, Answer(b"late"), time.time() + 1), done.set()))
    thread.start()
    time.sleep(3)
    redis_server.proc.send_signal(18)  # SIGCONT
    assert done.wait(15)
    assert client.llen(redis_keys.reply_list("g")) <= 1  # a push sent before the deadline may land once
    assert client.xpending(redis_keys.calls_stream(), queue.GROUP)["pending"] == 0
    pipe.close()


def test_a_reply_brings_back_the_next_call_in_the_same_round_trip(redis_server, redis_url) -> None:
    client = redis.Redis.from_url(redis_url)
    job = _job(client)
    later = client.xadd(redis_keys.calls_stream(), {"rid": "s", "reply": redis_keys.reply_list("g"), "call": "{}"})
    worker = _worker(redis_url)
    pipe = SyncPipe(redis_url, timeout_s=2)
    worker.consumer = "reply-test#x"
    jobs = worker._finish(pipe, job, Answer(b"body"), time.time() + 30, read_next=True)
    assert [(next_job.entry_id, next_job.rid) for next_job in jobs] == [(later, "s")]
    assert client.lpop(redis_keys.reply_list("g")) == encode_reply("r", Answer(b"body"))
    assert client.xpending(redis_keys.calls_stream(), queue.GROUP)["pending"] == 1  # the next call, now read
    pipe.close()
