"""The chaos campaign: thousands of learning events through the whole stack while it is broken.

Clients send statements ("keep my meetings after HH:MM") for many users, retrying every failed
call with the same request id and deliberately resending some. Meanwhile, at random moments, a
fault: SIGKILL of relay, worker, memory (retrieval), memory-ingest, serving or policy (then restart); a
hard restart of nats-server; PostgreSQL restarted in immediate mode; the worker↔memory-ingest link cut
by a TCP proxy.
Then the stack settles and the campaign checks what must hold:

- input set = output set: every committed event is processed exactly once, or dead-lettered with
  its reason and then replayed and processed;
- 0 duplicate memories, at most one active memory per (user, intent);
- for every user, the active memory of the intent is the owner's latest statement (commit time);
- the outbox is drained and the durable consumer has settled.

`python -m tests.chaos.campaign --events 5000` (`make chaos`) prints the table; a short profile
runs in the test suite (tests/chaos/test_chaos.py). The stack has its own embedded PostgreSQL and
nats-server, since the campaign restarts them.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import grpc
import psycopg

from services.cli.stack import Stack
from services.cli.stack_spec import StackSpec
from services.common.gen.memloop.v1 import learning_event_pb2 as lpb
from services.common.gen.memloop.v1 import serving_service_pb2 as spb
from services.common.gen.memloop.v1 import serving_service_pb2_grpc as spb_grpc
from services.common.grpc_client import sync_channel
from services.common.nats_connect import connect_nats
from services.common.nats_urls import one_shot_options
from services.worker.adapters.dead_letters import DeadLetterQueue
from services.worker.adapters.jetstream import StreamNames
from tests.chaos.proxy import CuttingProxy

TENANT = "acme"
INTENT = "meeting_time_window"
_OWNER_VERDICT = (
    "mx.acme.example; dkim=pass header.d=acme.example header.s=mail; spf=pass smtp.mailfrom=acme.example;"
    " dmarc=pass header.from=acme.example"
)
RETRY_CODES = frozenset(
    {
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.DEADLINE_EXCEEDED,
        grpc.StatusCode.INTERNAL,
        grpc.StatusCode.UNKNOWN,
        grpc.StatusCode.ABORTED,
        grpc.StatusCode.CANCELLED,
        grpc.StatusCode.RESOURCE_EXHAUSTED,
    }
)
# "memory" is the replica's retrieval process, "memory-ingest" its ingestion process (the worker's peer);
# "serving-loop" is serving's process for the loop's calls (the worker's content reads, deletions)
FAULTS = (
    "relay",
    "worker",
    "memory",
    "memory-ingest",
    "serving",
    "serving-loop",
    "policy",
    "nats",
    "postgres",
    "cut",
)
FAST = {
    "MEMLOOP_WORKER_ACK_WAIT_SECONDS": "6",
    "MEMLOOP_WORKER_MAX_DELIVER": "8",
    "MEMLOOP_WORKER_BACKOFF_INITIAL_SECONDS": "0.2",
    "MEMLOOP_WORKER_BACKOFF_MAX_SECONDS": "2",
    "MEMLOOP_WORKER_DEAD_LETTER_AGE_SECONDS": "20",
    "MEMLOOP_WORKER_RPC_TIMEOUT_SECONDS": "5",
    "MEMLOOP_WORKER_METRICS_POLL_SECONDS": "1",
    "MEMLOOP_RELAY_POLL_SECONDS": "0.5",
    "MEMLOOP_DRAIN_SECONDS": "1",
    "MEMLOOP_INDEX_POLL_SECONDS": "1",
}


@dataclass(frozen=True)
class Profile:
    events: int
    users: int
    clients: int
    fault_gap: tuple[float, float]
    resend_share: float = 0.05


@dataclass
class Statement:
    user: str
    text: str
    request_id: str
    event_id: str = ""
    commit_time: datetime | None = None


@dataclass
class Report:
    """Everything the table shows; `holds` says whether every promise held."""

    events: int = 0
    committed: int = 0
    retries: int = 0
    resends: int = 0
    resend_mismatches: int = 0
    faults: Counter[str] = field(default_factory=Counter)
    unexpected_exits: Counter[str] = field(default_factory=Counter)
    processed: int = 0
    dead_lettered: Counter[str] = field(default_factory=Counter)
    replayed: int = 0
    missing: int = 0
    double_applied: int = 0
    duplicate_memories: int = 0
    multiple_active: int = 0
    stale_winners: int = 0
    outbox_unpublished: int = -1
    consumer_pending: int = -1
    consumer_ack_pending: int = -1
    seconds: float = 0.0

    @property
    def holds(self) -> bool:
        return (
            self.missing == 0
            and self.double_applied == 0
            and self.duplicate_memories == 0
            and self.multiple_active == 0
            and self.stale_winners == 0
            and self.resend_mismatches == 0
            and self.outbox_unpublished == 0
            and self.consumer_pending == 0
            and self.consumer_ack_pending == 0
            and self.committed == self.processed
            and not self.unexpected_exits
        )

    def table(self) -> str:
        rows = [
            ("events sent (distinct requests)", self.events),
            ("committed events (input set)", self.committed),
            ("client retries (same request id)", self.retries),
            ("deliberate resends (same request id)", self.resends),
            ("resends answered with another event", self.resend_mismatches),
            ("faults injected", ", ".join(f"{k} {v}" for k, v in sorted(self.faults.items())) or "0"),
            (
                "processes that died on their own",
                ", ".join(f"{k} {v}" for k, v in sorted(self.unexpected_exits.items())) or "0",
            ),
            ("dead-lettered (reason)", ", ".join(f"{k} {v}" for k, v in sorted(self.dead_lettered.items())) or "0"),
            ("replayed from the dead-letter stream", self.replayed),
            ("processed exactly once (output set)", self.processed),
            ("input set = output set", "yes" if self.missing == 0 and self.committed == self.processed else "NO"),
            ("committed but never processed", self.missing),
            ("events applied twice", self.double_applied),
            ("duplicate memories", self.duplicate_memories),
            ("intents with more than one active memory", self.multiple_active),
            ("stale winners (active ≠ owner's latest statement)", self.stale_winners),
            ("outbox rows unpublished at the end", self.outbox_unpublished),
            ("consumer pending / ack pending at the end", f"{self.consumer_pending} / {self.consumer_ack_pending}"),
            ("wall time, s", f"{self.seconds:.0f}"),
        ]
        return "\n".join(["| chaos | result |", "|---|---:|", *(f"| {k} | {v} |" for k, v in rows)])


class Campaign:
    def __init__(self, data_dir: Path, profile: Profile, seed: int) -> None:
        self.profile = profile
        self.random = random.Random(seed)
        self.report = Report(events=profile.events)
        self.stack = Stack(StackSpec(data_dir=data_dir, embedder="hashing", extra_env=FAST))
        self.proxy: CuttingProxy | None = None
        self.statements: list[Statement] = []
        self._lock = threading.Lock()
        self._sending = threading.Event()
        self._faulting = threading.Lock()

    # --- the run ----------------------------------------------------------------------------------

    def run(self) -> Report:
        started = time.monotonic()
        self.stack.start()
        try:
            self._route_worker_through_proxy()
            self._sending.set()
            chaos = threading.Thread(target=self._inject_faults, name="chaos-faults", daemon=True)
            chaos.start()
            senders = [
                threading.Thread(target=self._send_all, args=(client,), name=f"chaos-client-{client}")
                for client in range(self.profile.clients)
            ]
            for sender in senders:
                sender.start()
            for sender in senders:
                sender.join()
            self._sending.clear()
            chaos.join()
            self._settle_and_replay()
            self._check()
        finally:
            if self.proxy is not None:
                self.proxy.stop()
            self.stack.stop()
        self.report.seconds = time.monotonic() - started
        return self.report

    def _route_worker_through_proxy(self) -> None:
        # the worker calls the replica's ingestion process: that is the link to cut
        memory = self.stack.services[self.stack.ingest_name("memory")]
        self.proxy = CuttingProxy("127.0.0.1", memory.grpc_port).start()
        self.stack.services["worker"].process.kill()
        self.stack.restart("worker", extra_env={"MEMLOOP_MEMORY_TARGET": self.proxy.target})

    # --- clients -----------------------------------------------------------------------------------

    def _send_all(self, client: int) -> None:
        users = [f"user{u}" for u in range(self.profile.users) if u % self.profile.clients == client]
        share = self.profile.events // self.profile.clients + (
            1 if client < self.profile.events % self.profile.clients else 0
        )
        rng = random.Random(self.random.random())
        channel = sync_channel(self.stack.services["serving"].target, self._token(), self.stack.tls_files("operator"))
        stub = spb_grpc.ServingServiceStub(channel)
        try:
            for i in range(share):
                user = users[i % len(users)]
                hour, minute = rng.randint(7, 11), rng.choice(("00", "30"))
                text = f"Please keep my meetings after {hour:02d}:{minute} - mornings are for focus work."
                statement = Statement(user, text, request_id=f"chaos-{client}-{i}-{rng.getrandbits(40):x}")
                answer = self._send(stub, statement)
                statement.event_id = answer.event_id
                statement.commit_time = answer.commit_time.ToDatetime(tzinfo=UTC)
                with self._lock:
                    self.statements.append(statement)
                if rng.random() < self.profile.resend_share:
                    again = self._send(stub, statement)
                    with self._lock:
                        self.report.resends += 1
                        self.report.resend_mismatches += int(again.event_id != statement.event_id)
        finally:
            channel.close()

    def _send(self, stub: Any, statement: Statement) -> spb.HandleRequestResponse:
        request = spb.HandleRequestRequest(
            request_id=statement.request_id,
            tenant=TENANT,
            user=statement.user,
            thread=f"thread-{statement.user}",
            route="assistant.instruction",
            content=spb.EmailContent(
                from_address=f"{statement.user}@acme.example",
                to_address="assistant@acme.example",
                subject="Scheduling",
                body=statement.text,
            ),
            reply="Noted.",
            owner_address=f"{statement.user}@acme.example",
            # The owner's own mail, as the mail system verified it: without a passing verdict serving
            # would (rightly) treat a mail claiming the owner's address as external.
            sender_authentication=lpb.SenderAuthentication(authentication_results=_OWNER_VERDICT),
        )
        delay = 0.2
        deadline = time.monotonic() + 600
        while True:
            try:
                answer: spb.HandleRequestResponse = stub.HandleRequest(request, timeout=10)
                return answer
            except grpc.RpcError as error:
                if error.code() not in RETRY_CODES or time.monotonic() > deadline:
                    raise
                with self._lock:
                    self.report.retries += 1
                time.sleep(delay)
                delay = min(delay * 2, 2.0)

    def _token(self) -> str:
        return self.stack.token(TENANT, roles=("writer", "reader"), subject="chaos-client")

    # --- faults ------------------------------------------------------------------------------------

    def _inject_faults(self) -> None:
        """Faults at random moments, drawn from a shuffled deck so every kind happens each round.

        Runs while clients send and, after that, until every kind has happened at least once (the
        worker is still draining the backlog then, so late faults still hit events in flight).
        """
        low, high = self.profile.fault_gap
        deck: list[str] = []
        while self._sending.is_set() or len(self.report.faults) < len(FAULTS):
            time.sleep(self.random.uniform(low, high))
            self._revive_the_dead()
            if not deck:
                deck = self.random.sample(FAULTS, len(FAULTS))
            fault = deck.pop()
            with self._faulting:
                self._inject(fault)
            with self._lock:
                self.report.faults[fault] += 1

    def _revive_the_dead(self) -> None:
        """A process that exited without being killed is a finding: count it, then restart it."""
        with self._faulting:
            for name, handle in self.stack.services.items():
                if not handle.process.is_running:
                    print(f"chaos: {name} died on its own:\n{handle.process.log_text()[-2000:]}", file=sys.stderr)
                    self.report.unexpected_exits[name] += 1
                    self.stack.restart(name)

    def _inject(self, fault: str) -> None:
        if fault == "cut":
            assert self.proxy is not None
            self.proxy.cut()
        elif fault == "nats":
            nats_server = self.stack.embedded_nats
            assert nats_server is not None
            nats_server.kill()
            nats_server.start()
        elif fault == "postgres":
            postgres = self.stack.embedded_postgres
            assert postgres is not None
            postgres.restart_immediate()
        else:
            self.stack.services[fault].process.kill()
            self.stack.restart(fault)

    # --- settling and checking ---------------------------------------------------------------------

    def _settle_and_replay(self, stall: float = 180.0) -> None:
        """Wait while the backlog drains; give up only after `stall` seconds without any progress."""
        committed = {s.event_id for s in self.statements}
        deadline, progress = time.monotonic() + stall, -1
        while time.monotonic() < deadline:
            self._revive_the_dead()
            processed = self._processed_ids()
            dead = {e for e, _ in self._dead_letters()}
            if committed <= processed | dead and self._outbox_unpublished() == 0 and self._consumer_settled():
                break
            if len(processed) > progress:
                deadline, progress = time.monotonic() + stall, len(processed)
            time.sleep(1.0)
        letters = self._dead_letters()
        for _, reason in letters:
            self.report.dead_lettered[reason] += 1
        if letters:
            self.report.replayed = asyncio.run(self._replay_all())
            deadline = time.monotonic() + stall
            while time.monotonic() < deadline and not committed <= self._processed_ids():
                time.sleep(1.0)
            while time.monotonic() < deadline and not self._consumer_settled():
                time.sleep(0.5)

    def _check(self) -> None:
        committed = {s.event_id for s in self.statements}
        processed = self._processed_ids()
        self.report.committed = len(committed)
        self.report.processed = len(committed & processed)
        self.report.missing = len(committed - processed)
        with self._memory_db() as conn:
            self.report.double_applied = _scalar(
                conn,
                "SELECT count(*) FROM (SELECT event_id FROM audit_events WHERE action = 'event.processed'"
                " GROUP BY event_id HAVING count(*) > 1) d",
            )
            self.report.duplicate_memories = _scalar(
                conn,
                "SELECT count(*) FROM (SELECT user_id, candidate_key FROM memories WHERE status = 'active'"
                " AND candidate_key <> '' GROUP BY 1, 2 HAVING count(*) > 1) d",
            )
            self.report.multiple_active = _scalar(
                conn,
                "SELECT count(*) FROM (SELECT user_id, intent_key FROM memories WHERE status = 'active'"
                " AND intent_key <> '' GROUP BY 1, 2 HAVING count(*) > 1) d",
            )
            active = {
                str(r[0]): str(r[1])
                for r in conn.execute(
                    "SELECT user_id, text FROM memories WHERE status = 'active' AND intent_key = %s", (INTENT,)
                ).fetchall()
            }
        latest: dict[str, Statement] = {}
        for statement in self.statements:
            best = latest.get(statement.user)
            assert statement.commit_time is not None
            if best is None or (statement.commit_time, statement.event_id) > (best.commit_time, best.event_id):
                latest[statement.user] = statement
        self.report.stale_winners = sum(1 for user, s in latest.items() if active.get(user) != s.text)
        self.report.outbox_unpublished = self._outbox_unpublished()
        pending, ack_pending = asyncio.run(self._consumer_counts())
        self.report.consumer_pending, self.report.consumer_ack_pending = pending, ack_pending

    def _processed_ids(self) -> set[str]:
        try:
            with self._memory_db() as conn:
                return {str(r[0]) for r in conn.execute("SELECT event_id FROM processed_events").fetchall()}
        except psycopg.Error:
            return set()

    def _outbox_unpublished(self) -> int:
        try:
            with psycopg.connect(_libpq(self.stack.serving_db_url), autocommit=True) as conn:
                return _scalar(conn, "SELECT count(*) FROM outbox WHERE published_at IS NULL")
        except psycopg.Error:
            return -1

    def _memory_db(self) -> psycopg.Connection[Any]:
        return psycopg.connect(_libpq(self.stack.memory_db_url), autocommit=True)

    def _consumer_settled(self) -> bool:
        try:
            pending, ack_pending = asyncio.run(self._consumer_counts())
        except Exception:
            return False
        return pending == 0 and ack_pending == 0

    async def _consumer_counts(self) -> tuple[int, int]:
        client = await self._nats_admin()
        try:
            info = await client.jetstream().consumer_info(self.stack.spec.learning_stream, "memloop-worker")
            return int(info.num_pending), int(info.num_ack_pending)
        finally:
            await client.close()

    def _dead_letters(self) -> list[tuple[str, str]]:
        try:
            return asyncio.run(self._list_dead_letters())
        except Exception:
            return []

    async def _list_dead_letters(self) -> list[tuple[str, str]]:
        client = await self._nats_admin()
        try:
            queue = DeadLetterQueue(client.jetstream(), self._streams())
            return [(e.event_id, e.reason) for e in await queue.list()]
        finally:
            await client.close()

    async def _replay_all(self) -> int:
        client = await self._nats_admin()
        try:
            queue = DeadLetterQueue(client.jetstream(), self._streams())
            entries = await queue.list()
            for entry in entries:
                await queue.replay(entry)
            return len(entries)
        finally:
            await client.close()

    async def _nats_admin(self) -> Any:
        """A short-lived client of the stack's NATS as its admin (with the operator's certificate under TLS)."""
        access = self.stack.nats_access("admin").connect_options()
        return await connect_nats(**one_shot_options(self.stack.nats_server_url), **access, connect_timeout=3)

    def _streams(self) -> StreamNames:
        return StreamNames(prefix=self.stack.spec.subject_prefix, learning_stream=self.stack.spec.learning_stream)


def _scalar(conn: psycopg.Connection[Any], sql: str) -> int:
    row = conn.execute(sql).fetchone()
    return int(row[0]) if row else 0


def _libpq(url: str) -> str:
    return url.replace("postgresql+psycopg://", "postgresql://", 1)


def run_campaign(events: int, *, seed: int = 14, data_dir: Path | None = None) -> Report:
    profile = Profile(
        events=events,
        users=max(10, events // 50),
        clients=6,
        fault_gap=(1.5, 4.0) if events <= 1000 else (2.0, 6.0),
    )
    with tempfile.TemporaryDirectory(prefix="memloop-chaos-") as tmp:
        return Campaign(data_dir or Path(tmp) / "stack", profile, seed).run()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.chaos.campaign", description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=14)
    parser.add_argument("--report", default="", help="also write the table to this file")
    parser.add_argument("--data-dir", default="", help="keep the stack's data and logs here (default: a temp dir)")
    args = parser.parse_args(argv)
    report = run_campaign(args.events, seed=args.seed, data_dir=Path(args.data_dir) if args.data_dir else None)
    table = report.table()
    print(table)
    if args.report:
        Path(args.report).write_text(table + "\n")
    return 0 if report.holds else 1


if __name__ == "__main__":
    sys.exit(main())
