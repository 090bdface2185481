"""The Redis wire protocol between gateways (producers) and workers (consumers).

A tool call travels as one entry of the calls Stream (consumer group
``workers``): fields ``rid`` (request id, unique in its gateway process), ``reply``
(the reply list of the gateway process that waits for it) and ``call``
(``Call.to_json()``), and optionally ``lease`` and ``dl`` (`Job`); the enqueue
scripts name the fields (``entry.lua``), the gateway sends the values. A worker
reads entries with XREADGROUP, runs them, pushes
its reply (`pwc_mcp_core.cluster.replies`, the one reply format) onto the reply list (with a TTL, so replies nobody collects
vanish), then XACKs and XDELs the entry, all in one script (``finish.lua``), and sends its
next XREADGROUP in the same write (`finish_and_read_sync`). An entry whose worker dies stays in the
group's pending list; a live worker that sees the owner's heartbeat gone
claims it (XCLAIM) and runs it again inside its deadline. Tools are read-only
and idempotent, and the gateway resolves each request id once, so a second
reply is dropped: the client gets exactly one answer.

Liveness: each worker ZADDs its id into ``redis_keys.workers_set()`` with the
current time (ms) every beat; a worker is live when its score is newer than
``redis_keys.HEARTBEAT_TTL_S``.

The gateway's per-call paths (`enqueue`, `admit_and_enqueue`, `wait_replies_then`) take a
:class:`~pwc_mcp_core.cluster.redis_pipe.RedisPipe` (the reply wait one of its own: it blocks);
a worker's consumer threads (`read_jobs_sync`, `finish_and_read_sync`, `finish_sync`) each a
:class:`~pwc_mcp_core.cluster.redis_pipe.SyncPipe`; the rest a ``redis.asyncio.Redis`` created
with ``decode_responses=False``. The async functions raise
`~pwc_mcp_core.cluster.errors.StoreUnavailable` for any Redis failure (the sync ones,
a worker's, redis-py's errors).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import time
import weakref
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import TypeAlias

from redis.asyncio import Redis
from redis.exceptions import NoScriptError, RedisError, ResponseError

from pwc_mcp_core.cluster import redis_keys, scripts
from pwc_mcp_core.cluster.admission import AdmissionScript, Decision, Lease, decision_from_code
from pwc_mcp_core.cluster.errors import StoreUnavailable, store_errors
from pwc_mcp_core.cluster.liveness import STALL_S
from pwc_mcp_core.cluster.redis_pipe import RedisPipe, Reply, ScriptRunner, SyncPipe, int_reply
from pwc_mcp_core.cluster.replies import Replied, decode_reply, encode_reply

__all__ = [
    "ADMITTED_BACKLOG_FULL",
    "GROUP",
    "Job",
    "Liveness",
    "QueueFull",
    "admit_and_enqueue",
    "backlog",
    "claim_orphans",
    "claim_stranded",
    "consumer_name",
    "count_admission",
    "enqueue",
    "ensure_group",
    "entry_exists",
    "finish_and_read_sync",
    "finish_sync",
    "forget_worker",
    "heartbeat",
    "live_workers",
    "live_workers_at",
    "read_jobs_sync",
    "recover_previous",
    "release_lease",
    "reply_commands",
    "wait_replies_then",
    "worker_of",
]

logger = logging.getLogger(__name__)

GROUP = "workers"

Command: TypeAlias = tuple[str | bytes | int | float, ...]
"""One Redis command with its arguments, as `RedisPipe.execute_many` sends it."""
StreamEntry: TypeAlias = tuple[bytes, dict[bytes, bytes] | None]
"""One Stream entry: its id and its fields (None or empty once deleted while pending)."""
# admit_enqueue.lua's reply when the call was admitted (and counted) but the backlog is full.
ADMITTED_BACKLOG_FULL = 501

_FINISH_SOURCE = scripts.load("finish")
_FINISH_SHA = hashlib.sha1(_FINISH_SOURCE.encode("utf-8")).hexdigest()

# One script runner per pipe and script; concurrent calls share the pipe's writes.
_SCRIPTS: weakref.WeakKeyDictionary[RedisPipe, dict[str, ScriptRunner]] = weakref.WeakKeyDictionary()


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
        redis_deadline: the call deadline on Redis's clock (unix seconds), when the gateway
            knew its offset to it; a worker converts it to its own clock.
    """

    entry_id: bytes
    rid: str
    reply_key: str
    call_json: str
    lease: tuple[str, str] | None = None
    redis_deadline: float | None = None


@store_errors
async def ensure_group(redis: Redis) -> None:
    """Create the Stream and its consumer group if they do not exist yet (idempotent)."""
    try:
        await redis.xgroup_create(redis_keys.calls_stream(), GROUP, id="0", mkstream=True)
    except ResponseError as exc:
        if "BUSYGROUP" not in str(exc):
            raise


@store_errors
async def enqueue(pipe: RedisPipe, *, rid: str, reply_key: str, call_json: bytes | str, max_backlog: int,
                  lease: tuple[str, str] | None = None, redis_deadline: float | None = None) -> str:
    """Append one call to the Stream, atomically refusing when the backlog is full.

    ``lease`` (``(lease_id, client_hash)``) hands the call's concurrency lease to the
    worker, which releases it in the same round trip as its reply. ``redis_deadline``: see `Job`.

    Returns:
        the new entry's id.

    Raises:
        QueueFull: ``max_backlog`` entries are already queued or running.
        StoreUnavailable: Redis is unreachable or refused the script (callers map it).
    """
    fields = _entry_fields(rid, reply_key, call_json, lease, redis_deadline)
    added = await _script(pipe, "enqueue")([redis_keys.calls_stream()], [max_backlog, *fields])
    if not added:
        raise QueueFull(f"{max_backlog} calls are already queued")
    return added.decode() if isinstance(added, bytes) else str(added)


@store_errors
async def admit_and_enqueue(pipe: RedisPipe, *, admission_keys: Sequence[str], admission_args: Sequence[str | int],
                            rid: str, reply_key: str, call_json: bytes | str, max_backlog: int,
                            lease: tuple[str, str], redis_deadline: float | None = None) -> tuple[int, str | None]:
    """Admit a call against the limits and append it to the Stream in one atomic step.

    ``admission_keys``/``admission_args`` are ``admission.lua``'s KEYS and first eight
    ARGV (built by the gateway's limiter); the call always takes concurrency leases, and
    ``lease`` (``(lease_id, client_hash)``, the same lease id) travels with the entry so
    the worker gives it back with its reply.

    Returns:
        ``(code, entry id)``: code 0 when admitted and queued (with the new entry's id);
        ``ADMITTED_BACKLOG_FULL`` when admitted (counted) but not queued; otherwise the
        admission refusal code (``admission.lua``); the id is None unless queued.

    Raises:
        StoreUnavailable: Redis is unreachable or refused the script (callers map it).
    """
    fields = _entry_fields(rid, reply_key, call_json, lease, redis_deadline)
    code = await _script(pipe, "admit_enqueue")([*admission_keys, redis_keys.calls_stream()],
                                                 [*admission_args, max_backlog, *fields])
    if isinstance(code, bytes):
        return 0, code.decode()
    return int_reply(code), None


def _entry_fields(rid: str, reply_key: str, call_json: bytes | str, lease: tuple[str, str] | None,
                  redis_deadline: float | None = None) -> tuple[bytes | str, ...]:
    """The entry's values in ``entry.lua``'s order (rid, reply, call, lease, dl; "" for none):
    the script names the fields, so the EVALSHA carries no field names."""
    return (rid, reply_key, call_json, "" if lease is None else f"{lease[0]}:{lease[1]}",
            "" if redis_deadline is None else f"{redis_deadline:.3f}")


def _script(pipe: RedisPipe, name: str) -> ScriptRunner:
    per_pipe = _SCRIPTS.get(pipe)
    if per_pipe is None:
        per_pipe = _SCRIPTS[pipe] = {}
    script = per_pipe.get(name)
    if script is None:
        script = per_pipe[name] = ScriptRunner(pipe, scripts.load(name))
    return script


def read_jobs_sync(pipe: SyncPipe, *, consumer: str, count: int, block_ms: int) -> list[Job]:
    """Read up to ``count`` new entries for ``consumer``, blocking at most ``block_ms``.

    For a worker's consumer thread, over a `SyncPipe` of its own (the command blocks its
    connection). Malformed entries are acknowledged and deleted, so they cannot stall
    every worker in turn.

    Raises:
        redis.exceptions.RedisError: Redis is unreachable or refused the command.
    """
    (response,) = pipe.execute_many([_read_command(consumer, count, block_ms)])
    return _jobs_read(pipe, response)


def _read_command(consumer: str, count: int, block_ms: int) -> Command:
    return ("XREADGROUP", "GROUP", GROUP, consumer, "COUNT", count, "BLOCK", block_ms,
            "STREAMS", redis_keys.calls_stream(), ">")


def _jobs_read(pipe: SyncPipe, response: Reply | Exception) -> list[Job]:
    """The jobs of an ``XREADGROUP`` reply; malformed entries are acknowledged and deleted."""
    if isinstance(response, Exception):
        raise response
    jobs, drop = _parse(_stream_entries(response))
    if drop:
        pipe.execute_many(drop)
    return jobs


def finish_sync(pipe: SyncPipe, job: Job, reply: Replied | None) -> None:
    """Finish ``job`` in one command (`reply_commands`); ``reply`` None acknowledges it without a
    reply (its caller is gone). A worker that dies before it leaves the entry pending; it is
    run again, and the gateway drops a second reply.

    Raises:
        redis.exceptions.RedisError: Redis is unreachable (or refused a command).
    """
    _finished(pipe, job, reply, pipe.execute_many(reply_commands(job, reply))[0], raise_refused=True)


def finish_and_read_sync(pipe: SyncPipe, job: Job, reply: Replied | None, *, consumer: str, count: int,
                         block_ms: int) -> tuple[bool, list[Job]]:
    """`finish_sync` and `read_jobs_sync` in one write: the consumer thread's next read goes
    out with its reply, so a call costs a worker one round trip instead of two.

    Returns:
        ``(finished, jobs)``: whether the finishing command succeeded (when not, the
        caller finishes ``job`` again with `finish_sync`: it is idempotent), and
        the entries the read got, which are this consumer's to run whatever ``finished`` says.
        A refused read gives no jobs (the next plain read reports it).

    Raises:
        redis.exceptions.RedisError: Redis is unreachable: neither step is known to have
            happened (finish again; an entry the read may have taken stays pending here).
    """
    finish, read = pipe.execute_many([*reply_commands(job, reply), _read_command(consumer, count, block_ms)])
    try:
        jobs = _jobs_read(pipe, read)
    except ResponseError:
        jobs = []
    try:  # the jobs read are this thread's now: a failed finish must not lose them
        finished = _finished(pipe, job, reply, finish, raise_refused=False)
    except RedisError:
        finished = False
    return finished, jobs


def _finished(pipe: SyncPipe, job: Job, reply: Replied | None, result: Reply | Exception, *,
              raise_refused: bool) -> bool:
    """Whether ``finish.lua`` ran; when Redis had forgotten it (a restart), it runs it by source
    at once (EVAL, which also caches it). A refusal raises with ``raise_refused``, else is False."""
    if isinstance(result, NoScriptError):
        (result,) = pipe.execute_many([reply_commands(job, reply, by_source=True)[0]])
    if isinstance(result, Exception):
        if raise_refused:
            raise result
        return False
    return True


def reply_commands(job: Job, reply: Replied | None, *, by_source: bool = False) -> list[Command]:
    """The command that finishes ``job`` (``finish.lua``, one step): push its reply
    (`replies.encode_reply`; None: none) with its TTL, give back a handed-over lease,
    acknowledge and delete the entry. ``by_source``: EVAL instead of EVALSHA."""
    keys: tuple[str, ...] = (redis_keys.calls_stream(), job.reply_key)
    lease_id = ""
    if job.lease is not None:
        lease_id, client_hash = job.lease
        keys += (redis_keys.concurrency_client(client_hash), redis_keys.concurrency_global())
    item = b"" if reply is None else encode_reply(job.rid, reply)
    head = ("EVAL", _FINISH_SOURCE) if by_source else ("EVALSHA", _FINISH_SHA)
    return [(*head, len(keys), *keys, GROUP, job.entry_id, item, redis_keys.REPLY_TTL_S, lease_id)]


def _stream_entries(response: Reply) -> list[StreamEntry]:
    """The entries of an ``XREADGROUP`` reply (``[[stream, [[id, [field, value, ...]], ...]]]``).

    A field or value that is not a string is left out, so its entry is dropped as malformed.
    """
    entries: list[StreamEntry] = []
    for stream in response if isinstance(response, list) else []:
        items = stream[1] if isinstance(stream, list) and len(stream) == 2 else None
        for item in items if isinstance(items, list) else []:
            if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], bytes)):
                continue
            flat = item[1]
            fields = {key: value for key, value in zip(flat[::2], flat[1::2], strict=False)
                      if isinstance(key, bytes) and isinstance(value, bytes)} if isinstance(flat, list) else {}
            entries.append((item[0], fields or None))
    return entries


def _parse(entries: list[StreamEntry]) -> tuple[list[Job], list[Command]]:
    """Split Stream entries into jobs and the commands that acknowledge and delete the
    malformed ones (missing or non-text fields); logs how many there were.

    Nothing this project writes is malformed, but a stray or corrupted entry must not
    kill every worker that reads it (it would stay pending and be reclaimed forever).
    """
    jobs: list[Job] = []
    malformed: list[bytes] = []
    for entry_id, fields in entries:
        if not fields:  # deleted while pending
            continue
        try:
            lease = fields[b"lease"].decode("ascii").split(":", 1) if b"lease" in fields else None
            jobs.append(Job(entry_id=entry_id, rid=fields[b"rid"].decode("ascii"),
                            reply_key=fields[b"reply"].decode("ascii"), call_json=fields[b"call"].decode("utf-8"),
                            lease=(lease[0], lease[1]) if lease is not None else None,
                            redis_deadline=float(fields[b"dl"]) if b"dl" in fields else None))
        except (KeyError, UnicodeDecodeError, IndexError, AttributeError, ValueError):
            malformed.append(entry_id)
    if not malformed:
        return jobs, []
    logger.warning("dropped malformed queue entries count=%d", len(malformed))
    return jobs, [("XACK", redis_keys.calls_stream(), GROUP, *malformed), ("XDEL", redis_keys.calls_stream(), *malformed)]


async def _claimed_jobs(redis: Redis, entries: list[StreamEntry]) -> list[Job]:
    """The well-formed jobs among claimed ``entries``; malformed ones are acknowledged and deleted."""
    jobs, drop = _parse(entries)
    if drop:
        async with redis.pipeline(transaction=True) as pipe:
            for command in drop:
                pipe.execute_command(*command)
            await pipe.execute()
    return jobs


def wait_replies_then(pipe: RedisPipe, reply_key: str, *, timeout_s: float,
                      then: Callable[[list[tuple[str, Replied]] | StoreUnavailable], None], batch: int = 256) -> None:
    """Wait for up to ``batch`` replies from ``reply_key``; ``then`` gets them as ``(rid, outcome)``
    (`replies.decode_reply`), oldest first, or ``[]`` when none came within ``timeout_s``, or the
    `StoreUnavailable` that failed the wait. ``then`` runs where the pipe reads the reply
    (`RedisPipe.submit`: no task in between) and must not raise; a malformed item is dropped and logged.

    One round trip returns everything already waiting (``BLMPOP``, Redis 7.0 or newer),
    so a busy gateway does not pay a round trip per reply. ``pipe`` must carry nothing else:
    the command blocks it.

    Raises:
        StoreConnectionLost: ``pipe`` is closed (``then`` is not called).
    """
    def popped(reply: Reply | StoreUnavailable) -> None:
        then(reply if isinstance(reply, StoreUnavailable) else _popped_replies(reply))

    pipe.submit(_blmpop(reply_key, timeout_s, batch), popped)


def _blmpop(reply_key: str, timeout_s: float, batch: int) -> Command:
    return ("BLMPOP", timeout_s, 1, reply_key, "RIGHT", "COUNT", batch)


def _popped_replies(popped: Reply) -> list[tuple[str, Replied]]:
    """The decoded replies of a ``BLMPOP`` reply (``[key, [item, ...]]``; nil after its timeout)."""
    if not isinstance(popped, list) or len(popped) != 2 or not isinstance(popped[1], list):
        return []  # None: nothing within timeout_s
    decoded: list[tuple[str, Replied]] = []
    for raw in popped[1]:
        try:
            decoded.append(decode_reply(raw if isinstance(raw, bytes) else b""))
        except (ValueError, UnicodeDecodeError):
            logger.warning("dropped a malformed reply")
    return decoded


@store_errors
async def count_admission(pipe: RedisPipe, script: AdmissionScript) -> Decision:
    """Count a call that will not be queued against the limits (``admit.lua`` without a lease),
    so a refusal still wins over the reason it was not queued."""
    code = await _script(pipe, "admit")(script.keys, [*script.args, "0"])
    return decision_from_code(int_reply(code), None)


async def release_lease(pipe: RedisPipe, lease: Lease) -> None:
    """Give back a lease no worker released (idempotent; a late worker release is harmless).
    Never raises: on a Redis failure the lease lapses after its TTL."""
    with contextlib.suppress(StoreUnavailable):
        await _script(pipe, "release")([redis_keys.concurrency_client(lease.client_hash),
                                         redis_keys.concurrency_global()], [lease.lease_id])


def consumer_name(worker_id: str, incarnation: str) -> str:
    """The consumer name of one start of worker ``worker_id`` (``<id>#<incarnation>``).

    Unique per process start, so a worker restarted under the same id (systemd's
    ``%H-%i``) never shares a pending list with the process it replaces; the new process
    claims its predecessors' entries at start (`recover_previous`).
    """
    return f"{worker_id}#{incarnation}"


def worker_of(consumer: str) -> str:
    """The worker id of a consumer name (the name itself for a pre-incarnation name)."""
    return consumer.split("#", 1)[0]


@store_errors
async def heartbeat(redis: Redis, consumer: str, threads: int = 0) -> int:
    """Record that ``consumer`` (running ``threads`` calls at once) is alive, by Redis's
    clock; prune hour-old entries.

    Returns:
        Redis's time, unix ms (callers derive their clock offset from it).
    """
    script = redis.register_script(scripts.load("heartbeat"))
    return int(await script(keys=[redis_keys.workers_set(), redis_keys.worker_threads()], args=[consumer, 3_600_000, threads]))


@store_errors
async def forget_worker(redis: Redis, consumer: str) -> None:
    """Deregister a consumer that is shutting down cleanly."""
    async with redis.pipeline(transaction=False) as pipe:
        pipe.zrem(redis_keys.workers_set(), consumer)
        pipe.hdel(redis_keys.worker_threads(), consumer)
        await pipe.execute()


@dataclass(frozen=True, slots=True)
class Liveness:
    """One liveness judgement: Redis's time (unix ms), the live consumers, their threads summed,
    and how many consumers are registered at all (live or silent; 0 when Redis lost its data
    or no worker ever started, while dead workers stay registered for an hour)."""

    redis_ms: int
    consumers: list[str]
    threads: int
    registered: int = 0


@store_errors
async def live_workers_at(redis: Redis, *, grace_s: float = 0.0) -> Liveness:
    """The consumers whose heartbeat is at most ``HEARTBEAT_TTL_S + grace_s`` old, judged by
    Redis's own clock (worker hosts' clocks do not matter), with Redis's time and their threads."""
    window_ms = int((redis_keys.HEARTBEAT_TTL_S + max(0.0, grace_s)) * 1000)
    script = redis.register_script(scripts.load("live_workers"))
    reply = await script(keys=[redis_keys.workers_set(), redis_keys.worker_threads()], args=[window_ms])
    return Liveness(redis_ms=int(reply[0]), threads=int(reply[1]), registered=int(reply[2]),
                    consumers=[m.decode() if isinstance(m, bytes) else str(m) for m in reply[3:]])


@store_errors
async def live_workers(redis: Redis, *, grace_s: float = 0.0) -> list[str]:
    """Consumers with a fresh heartbeat (see `live_workers_at`)."""
    return (await live_workers_at(redis, grace_s=grace_s)).consumers


@store_errors
async def entry_exists(redis: Redis, entry_ids: Sequence[str]) -> list[bool]:
    """For each Stream entry id, whether the calls Stream still holds it (one pipeline)."""
    async with redis.pipeline(transaction=False) as pipe:
        for entry_id in entry_ids:
            pipe.xrange(redis_keys.calls_stream(), min=entry_id, max=entry_id, count=1)
        found = await pipe.execute()
    return [bool(rows) for rows in found]


@store_errors
async def backlog(redis: Redis) -> tuple[int, int]:
    """``(waiting, running)``: calls no worker has read yet, and calls a worker is running."""
    length = await redis.xlen(redis_keys.calls_stream())
    try:
        pending = (await redis.xpending(redis_keys.calls_stream(), GROUP))["pending"]
    except ResponseError:  # no group yet
        pending = 0
    return max(0, length - pending), pending


@store_errors
async def claim_orphans(redis: Redis, *, consumer: str, count: int, grace_s: float = 0.0) -> list[Job]:
    """Claim up to ``count`` pending entries whose consumer is no longer live, for ``consumer``.

    A consumer counts as dead when it is absent from the live set (window widened by
    ``grace_s`` after a Redis stall); its entries are XCLAIMed whatever their idle time (a
    dead worker will never ack), and the dead consumer is removed from the group once it
    owns nothing. If judging liveness itself took ``liveness.STALL_S`` or more, Redis
    stalled meanwhile and the judgement is stale: nothing is claimed.
    """
    started = time.monotonic()
    live = set(await live_workers(redis, grace_s=grace_s))
    if time.monotonic() - started >= STALL_S:
        return []
    live.add(consumer)
    claimed: list[Job] = []
    for info in await redis.xinfo_consumers(redis_keys.calls_stream(), GROUP):
        name = info["name"].decode() if isinstance(info["name"], bytes) else info["name"]
        if name in live:
            continue
        if info.get("pending", 0):
            if count - len(claimed) <= 0:
                continue
            claimed.extend(await _claim_all(redis, name, consumer, count - len(claimed)))
        else:
            await redis.xgroup_delconsumer(redis_keys.calls_stream(), GROUP, name)
    return claimed


@store_errors
async def claim_stranded(redis: Redis, *, consumer: str, held: Collection[bytes], count: int,
                         min_idle_ms: int) -> list[Job]:
    """Claim up to ``count`` entries pending for ``consumer`` itself that none of its threads holds.

    A read whose reply was lost on the way (the connection failed after Redis delivered the
    entry) leaves the entry pending under a live consumer, where no dead-worker claim finds it.
    ``held`` is every entry id the worker's threads hold (read, handed over or running);
    ``min_idle_ms`` covers the moment between a read's delivery and its thread noting the entry.
    Running a call twice is harmless: tools are read-only and the gateway takes the first reply.
    """
    return await _claim_all(redis, consumer, consumer, count, min_idle_ms=min_idle_ms, skip=held)


@store_errors
async def recover_previous(redis: Redis, *, consumer: str) -> list[Job]:
    """At start: claim every entry still pending for an earlier start of the same worker id,
    then remove those consumers and their heartbeats.

    Only one process runs under a worker id at a time (systemd's ``%H-%i``), so an earlier
    incarnation's entries are known orphans even while its heartbeat is still fresh.
    """
    worker_id = worker_of(consumer)
    claimed: list[Job] = []
    for info in await redis.xinfo_consumers(redis_keys.calls_stream(), GROUP):
        name = info["name"].decode() if isinstance(info["name"], bytes) else info["name"]
        if name == consumer or worker_of(name) != worker_id:
            continue
        if info.get("pending", 0):
            claimed.extend(await _claim_all(redis, name, consumer, 10_000))
        await redis.xgroup_delconsumer(redis_keys.calls_stream(), GROUP, name)
        await forget_worker(redis, name)
    return claimed


async def _claim_all(redis: Redis, owner: str, consumer: str, count: int, *, min_idle_ms: int = 0,
                     skip: Collection[bytes] = ()) -> list[Job]:
    """Claim for ``consumer`` up to ``count`` of ``owner``'s pending entries idle ``min_idle_ms`` or
    more, leaving out the ids in ``skip``."""
    pending = await redis.xpending_range(redis_keys.calls_stream(), GROUP, min="-", max="+", count=count + len(skip),
                                         consumername=owner, idle=min_idle_ms or None)
    ids = [item["message_id"] for item in pending if item["message_id"] not in skip][:count]
    if not ids:
        return []
    entries = await redis.xclaim(redis_keys.calls_stream(), GROUP, consumer, min_idle_time=min_idle_ms,
                                 message_ids=ids)
    return await _claimed_jobs(redis, entries)
