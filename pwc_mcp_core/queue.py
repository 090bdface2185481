"""The Redis wire protocol between gateways (producers) and workers (consumers).

A tool call travels as one entry of the calls Stream (consumer group
``workers``): fields ``rid`` (request id, 32 hex), ``reply`` (the reply list
of the gateway process that waits for it) and ``call`` (``Call.to_json()``).
A worker reads entries with XREADGROUP, runs them, pushes ``rid + "\\n" +
body`` onto the reply list (with a TTL, so replies nobody collects vanish),
then XACKs and XDELs the entry. An entry whose worker dies stays in the
group's pending list; a live worker that sees the owner's heartbeat gone
claims it (XCLAIM) and runs it again inside its deadline. Tools are read-only
and idempotent, and the gateway resolves each request id once, so a second
reply is dropped: the client gets exactly one answer.

Liveness: each worker ZADDs its id into ``keys.workers_set()`` with the
current time (ms) every beat; a worker is live when its score is newer than
``keys.HEARTBEAT_TTL_S``.

All functions take a ``redis.asyncio.Redis`` created with ``decode_responses=False``.
"""

from __future__ import annotations

import logging
import time
import weakref
from dataclasses import dataclass

from redis.asyncio import Redis
from redis.exceptions import ResponseError

from pwc_mcp_core import keys, scripts
from pwc_mcp_core.script_batch import IterationBatcher, ScriptBatcher

__all__ = [
    "GROUP",
    "backlog",
    "Job",
    "QueueFull",
    "ReplySender",
    "TOO_LARGE",
    "claim_orphans",
    "decode_reply",
    "encode_reply",
    "enqueue",
    "ensure_group",
    "forget_worker",
    "heartbeat",
    "live_workers",
    "read_jobs",
    "wait_replies",
]

logger = logging.getLogger(__name__)

GROUP = "workers"
# Sent by a worker instead of a body over the 2 MiB response bound, so the oversized
# body never crosses Redis; the gateway turns it into 503 ``response_too_large``.
TOO_LARGE = b"!response-too-large"

# One batcher per client: concurrent enqueues share one pipelined round trip.
_SCRIPTS: weakref.WeakKeyDictionary[Redis, ScriptBatcher] = weakref.WeakKeyDictionary()


class QueueFull(Exception):
    """The calls Stream already holds the configured maximum backlog."""


@dataclass(frozen=True, slots=True)
class Job:
    """One call read from the Stream by a worker.

    Attributes:
        entry_id: the Stream entry id (bytes, as Redis returns it).
        rid: the request id the reply is tagged with.
        reply_key: the gateway's reply list.
        call_json: the serialized ``Call``.
        lease: ``(lease_id, client_hash)`` of the concurrency lease the worker gives back
            with its reply, or None when the gateway keeps that job itself.
    """

    entry_id: bytes
    rid: str
    reply_key: str
    call_json: str
    lease: tuple[str, str] | None = None


def encode_reply(rid: str, body: bytes) -> bytes:
    """Tag a serialized response body with its request id (``rid\\nbody``)."""
    return rid.encode("ascii") + b"\n" + body


def decode_reply(raw: bytes) -> tuple[str, bytes]:
    """Split a reply into ``(rid, body)`` without parsing the body.

    Raises:
        ValueError: the reply has no request-id prefix.
    """
    rid, sep, body = raw.partition(b"\n")
    if not sep:
        raise ValueError("reply without a request id")
    return rid.decode("ascii"), body


async def ensure_group(redis: Redis) -> None:
    """Create the Stream and its consumer group if they do not exist yet (idempotent)."""
    try:
        await redis.xgroup_create(keys.calls_stream(), GROUP, id="0", mkstream=True)
    except ResponseError as exc:
        if "BUSYGROUP" not in str(exc):
            raise


async def enqueue(redis: Redis, *, rid: str, reply_key: str, call_json: str, max_backlog: int,
                  lease: tuple[str, str] | None = None) -> None:
    """Append one call to the Stream, atomically refusing when the backlog is full.

    ``lease`` (``(lease_id, client_hash)``) hands the call's concurrency lease to the
    worker, which releases it in the same round trip as its reply.

    Raises:
        QueueFull: ``max_backlog`` entries are already queued or running.
        redis.exceptions.RedisError: Redis is unreachable (callers map it).
    """
    fields = ["rid", rid, "reply", reply_key, "call", call_json]
    if lease is not None:
        fields += ["lease", f"{lease[0]}:{lease[1]}"]
    added = await _enqueue_script(redis)([keys.calls_stream()], [max_backlog, *fields])
    if not added:
        raise QueueFull(f"{max_backlog} calls are already queued")


def _enqueue_script(redis: Redis) -> ScriptBatcher:
    script = _SCRIPTS.get(redis)
    if script is None:
        script = _SCRIPTS[redis] = ScriptBatcher(redis, scripts.load("enqueue"))
    return script


async def read_jobs(redis: Redis, *, consumer: str, count: int, block_ms: int) -> list[Job]:
    """Read up to ``count`` new entries for ``consumer``, blocking at most ``block_ms``."""
    response = await redis.xreadgroup(GROUP, consumer, {keys.calls_stream(): ">"}, count=count, block=block_ms)
    return [job for _stream, entries in response or [] for job in await _jobs(redis, entries)]


def _parse(entries: list) -> tuple[list[Job], list[bytes]]:
    """Split Stream entries into jobs and the ids of malformed entries (missing or non-text fields)."""
    jobs: list[Job] = []
    malformed: list[bytes] = []
    for entry_id, fields in entries:
        if not fields:  # deleted while pending
            continue
        try:
            lease = fields[b"lease"].decode("ascii").split(":", 1) if b"lease" in fields else None
            jobs.append(Job(entry_id=entry_id, rid=fields[b"rid"].decode("ascii"),
                            reply_key=fields[b"reply"].decode("ascii"), call_json=fields[b"call"].decode("utf-8"),
                            lease=(lease[0], lease[1]) if lease is not None else None))
        except (KeyError, UnicodeDecodeError, IndexError):
            malformed.append(entry_id)
    return jobs, malformed


async def _jobs(redis: Redis, entries: list) -> list[Job]:
    """The well-formed jobs among ``entries``; malformed ones are acknowledged and deleted.

    Nothing this project writes is malformed, but a stray or corrupted entry must not
    kill every worker that reads it (it would stay pending and be reclaimed forever).
    """
    jobs, malformed = _parse(entries)
    if malformed:
        logger.warning("dropped malformed queue entries count=%d", len(malformed))
        async with redis.pipeline(transaction=True) as pipe:
            pipe.xack(keys.calls_stream(), GROUP, *malformed)
            pipe.xdel(keys.calls_stream(), *malformed)
            await pipe.execute()
    return jobs


class ReplySender(IterationBatcher[tuple[Job, "bytes | None"]]):
    """Finish jobs: push each reply (with its TTL), give back handed-over leases, remove the entries.

    ``await sender(job, body)`` completes one job; ``body`` None acknowledges it without
    a reply (its caller is gone). Jobs finished during one loop iteration share one
    pipelined round trip (2 commands per reply, plus one XACK and one XDEL for all).
    No transaction is needed: a worker that dies between the push and the XACK leaves
    the entry pending, it is run again, and the gateway drops the second reply.

    Raises (from ``__call__``): ``redis.exceptions.RedisError`` when Redis is unreachable.
    """

    def __init__(self, redis: Redis, *, max_batch: int = 256) -> None:
        super().__init__(max_batch=max_batch)
        self._redis = redis

    async def __call__(self, job: Job, body: bytes | None) -> None:
        await self.submit((job, body))

    async def _send(self, items: list[tuple[Job, bytes | None]]) -> list[None]:
        async with self._redis.pipeline(transaction=False) as pipe:
            for job, body in items:
                if body is not None:
                    pipe.lpush(job.reply_key, encode_reply(job.rid, body))
                    pipe.expire(job.reply_key, keys.REPLY_TTL_S)
                if job.lease is not None:  # idempotent: the gateway may release it too
                    lease_id, client_hash = job.lease
                    pipe.zrem(keys.concurrency_client(client_hash), lease_id)
                    pipe.zrem(keys.concurrency_global(), lease_id)
            entry_ids = [job.entry_id for job, _body in items]
            pipe.xack(keys.calls_stream(), GROUP, *entry_ids)
            pipe.xdel(keys.calls_stream(), *entry_ids)
            await pipe.execute()
        return [None] * len(items)


async def wait_replies(redis: Redis, reply_key: str, *, timeout_s: float, batch: int = 256) -> list[bytes]:
    """Up to ``batch`` replies from ``reply_key``, oldest first, waiting at most ``timeout_s`` for one.

    One round trip returns everything already waiting (``BLMPOP``, Redis 7.0 or newer),
    so a busy gateway does not pay a round trip per reply. ``[]`` on timeout.
    """
    popped = await redis.blmpop(timeout_s, 1, reply_key, direction="RIGHT", count=batch)
    return list(popped[1]) if popped else []


async def heartbeat(redis: Redis, worker_id: str) -> None:
    """Record that ``worker_id`` is alive now, and prune long-dead entries."""
    now_ms = int(time.time() * 1000)
    async with redis.pipeline(transaction=False) as pipe:
        pipe.zadd(keys.workers_set(), {worker_id: now_ms})
        pipe.zremrangebyscore(keys.workers_set(), 0, now_ms - 3_600_000)
        await pipe.execute()


async def forget_worker(redis: Redis, worker_id: str) -> None:
    """Deregister a worker that is shutting down cleanly."""
    await redis.zrem(keys.workers_set(), worker_id)


async def live_workers(redis: Redis) -> list[str]:
    """Ids of workers whose last heartbeat is newer than ``keys.HEARTBEAT_TTL_S``."""
    since_ms = int((time.time() - keys.HEARTBEAT_TTL_S) * 1000)
    members = await redis.zrangebyscore(keys.workers_set(), since_ms, "+inf")
    return [member.decode() for member in members]


async def backlog(redis: Redis) -> tuple[int, int]:
    """``(waiting, running)``: calls no worker has read yet, and calls a worker is running."""
    length = await redis.xlen(keys.calls_stream())
    try:
        pending = (await redis.xpending(keys.calls_stream(), GROUP))["pending"]
    except ResponseError:  # no group yet
        pending = 0
    return max(0, length - pending), pending


async def claim_orphans(redis: Redis, *, consumer: str, count: int) -> list[Job]:
    """Claim pending entries whose consumer is no longer live, for ``consumer`` to run again.

    A consumer counts as dead when it is absent from the live set; its entries
    are XCLAIMed whatever their idle time (a dead worker will never ack), and
    the dead consumer is removed from the group once it owns nothing.
    """
    live = set(await live_workers(redis))
    live.add(consumer)
    claimed: list[Job] = []
    for info in await redis.xinfo_consumers(keys.calls_stream(), GROUP):
        name = info["name"].decode() if isinstance(info["name"], bytes) else info["name"]
        if name in live:
            continue
        if info.get("pending", 0):
            pending = await redis.xpending_range(
                keys.calls_stream(), GROUP, min="-", max="+", count=count - len(claimed), consumername=name
            )
            ids = [item["message_id"] for item in pending]
            if ids:
                entries = await redis.xclaim(keys.calls_stream(), GROUP, consumer, min_idle_time=0, message_ids=ids)
                claimed.extend(await _jobs(redis, entries))
        else:
            await redis.xgroup_delconsumer(keys.calls_stream(), GROUP, name)
        if len(claimed) >= count:
            break
    return claimed
