"""The production topology on loopback, started by the suite for itself: PostgreSQL (the
lake's catalog and Django's database), moto's S3 server (the lake's data), Redis (Celery's
broker), then as many gunicorn web servers and Celery workers as asked and one beat, each
a process of its own running the product as a user deploys it (README, Production).

Owns starting, killing (`kill -9`) and restarting those processes, and the environment
every Fleetscope process of the topology shares. Must not check any figure: the tests do.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import psycopg

from tests import services
from tests.production.s3_faults import FaultyS3, faulty_s3

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
LOGIN = ("ops", "ops-password-for-the-topology")


@dataclass
class Process:
    """One running program of the topology, restartable with the same command."""

    name: str
    argv: list[str]
    log: Path
    port: int | None = None
    popen: subprocess.Popen[bytes] | None = None
    kills: int = 0


@dataclass
class Topology:
    root: Path
    env: dict[str, str]
    catalog_dsn: str
    s3_endpoint: str
    cluster_dsn: str  # the PostgreSQL cluster's (both databases are on it)
    broker_url: str
    s3: FaultyS3 | None = None  # the proxy in front of S3, when asked for one
    processes: dict[str, Process] = field(default_factory=dict)
    read_token: str = ""
    ingest_token: str = ""

    # -- commands --------------------------------------------------------------------

    def manage(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        """`manage.py ARGS` in the topology's environment, run to its end."""
        return subprocess.run(
            [str(BIN / "python"), "manage.py", *args],
            cwd=REPO,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def spawn(self, name: str, *args: str) -> subprocess.Popen[bytes]:
        """`manage.py ARGS` started, not waited for (a writer a test may kill)."""
        log = self.root / "logs" / f"{name}.log"
        return subprocess.Popen(
            [str(BIN / "python"), "manage.py", *args],
            cwd=REPO,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=log.open("ab"),
        )

    # -- long-running programs -------------------------------------------------------

    def start(self, name: str, argv: list[str], port: int | None = None) -> Process:
        process = Process(name, argv, self.root / "logs" / f"{name}.log", port)
        self.processes[name] = process
        self._launch(process)
        return process

    def _launch(self, process: Process) -> None:
        process.popen = subprocess.Popen(
            process.argv,
            cwd=REPO,
            env=self.env,
            stdout=process.log.open("ab"),
            stderr=subprocess.STDOUT,
            start_new_session=True,  # a kill reaches its children (gunicorn's workers)
        )
        if process.port is not None:
            self.wait_until_serving(process)

    def wait_until_serving(self, process: Process, seconds: float = 90) -> None:
        deadline = time.monotonic() + seconds
        url = f"http://127.0.0.1:{process.port}/accounts/login/"
        while time.monotonic() < deadline:
            assert process.popen is not None
            if process.popen.poll() is not None:
                raise RuntimeError(f"{process.name} exited: {process.log.read_text()[-2000:]}")
            try:
                urllib.request.urlopen(url, timeout=2).close()
                return
            except (urllib.error.URLError, OSError):
                time.sleep(0.2)
        raise RuntimeError(f"{process.name} did not serve within {seconds} s")

    def kill(self, name: str) -> None:
        """kill -9 of the program and its children, as a crash or the OOM killer would."""
        process = self.processes[name]
        assert process.popen is not None
        try:
            os.killpg(process.popen.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.popen.wait(timeout=30)
        process.kills += 1

    def restart(self, name: str) -> None:
        self._launch(self.processes[name])

    def stop_postgres(self) -> None:
        """PostgreSQL (the lake's catalog and Django's database) stopped as a crash would."""
        services.stop_postgres(self.cluster_dsn)

    def start_postgres(self) -> None:
        services.start_postgres(self.cluster_dsn)

    def stop_redis(self) -> None:
        """Redis (Celery's broker) killed: the tasks queued in it are lost with it."""
        services.stop_redis(self.broker_url)

    def start_redis(self) -> None:
        services.start_redis(self.broker_url)

    def web_urls(self) -> list[str]:
        return [
            f"http://127.0.0.1:{p.port}"
            for p in self.processes.values()
            if p.name.startswith("web") and p.port is not None
        ]

    def stop(self) -> None:
        for process in self.processes.values():
            if process.popen is not None and process.popen.poll() is None:
                try:
                    os.killpg(process.popen.pid, signal.SIGTERM)
                    process.popen.wait(timeout=20)
                except (ProcessLookupError, subprocess.TimeoutExpired):
                    os.killpg(process.popen.pid, signal.SIGKILL)
                    process.popen.wait(timeout=20)


def _database(dsn: str, name: str) -> str:
    """A database of its own in the throwaway cluster; its libpq DSN."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')  # a name of ours, never a user's
    return dsn.replace("dbname=postgres", f"dbname={name}")


def _url(dsn: str) -> str:
    parts = dict(item.split("=", 1) for item in dsn.split())
    return f"postgres://{parts['user']}@{parts['host']}:{parts['port']}/{parts['dbname']}"


@contextmanager
def production(
    root: Path,
    *,
    webs: int = 2,
    workers: int = 2,
    beat: bool = True,
    extra_env: dict[str, str] | None = None,
    s3_faults: bool = False,
) -> Iterator[Topology]:
    """The topology under `root`, migrated, with an admin login and a read and an ingest
    token; stopped (and its servers' data thrown away) when the block ends."""
    (root / "logs").mkdir(parents=True, exist_ok=True)
    with ExitStack() as stack:
        dsn = stack.enter_context(services.postgres())
        s3 = stack.enter_context(services.s3_emulator("fleetscope"))
        proxy = stack.enter_context(faulty_s3(s3)) if s3_faults else None
        if proxy is not None:
            s3 = proxy.endpoint  # every process reaches S3 through it
        redis = stack.enter_context(services.redis_server(root))
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("FLEETSCOPE_", "DJANGO"))},
            "DJANGO_SETTINGS_MODULE": "dashboard.settings",
            "FLEETSCOPE_DATA_DIR": str(root / "data"),
            "FLEETSCOPE_SECRET_KEY": "topology-secret-key-not-for-production-0123456789",
            "DATABASE_URL": _url(_database(dsn, "fleetscope_web")),
            "FLEETSCOPE_WAREHOUSE": f"ducklake:postgres:{_database(dsn, 'fleetscope_lake')}",
            "FLEETSCOPE_WAREHOUSE_DATA": "s3://fleetscope/lake/",
            "FLEETSCOPE_S3_ENDPOINT": s3,
            "FLEETSCOPE_S3_KEY_ID": "testing",
            "FLEETSCOPE_S3_SECRET": "testing",
            "FLEETSCOPE_S3_USE_SSL": "false",
            "CELERY_BROKER_URL": redis,
            "FLEETSCOPE_DUCKDB_THREADS": "1",
            "FLEETSCOPE_DUCKDB_MEMORY_LIMIT": "1GB",
            **(extra_env or {}),
        }
        topology = Topology(root, env, env["FLEETSCOPE_WAREHOUSE"], s3, dsn, redis, proxy)
        stack.callback(topology.stop)
        for step in (
            ("migrate", "--noinput", "-v", "0"),
            ("collectstatic", "--noinput", "-v", "0"),
        ):
            done = topology.manage(*step)
            assert done.returncode == 0, done.stderr
        _log_in_and_tokens(topology)
        for n in range(1, webs + 1):
            port = services.free_port()
            topology.start(
                f"web{n}",
                [
                    str(BIN / "gunicorn"),
                    "dashboard.wsgi:application",
                    "--config",
                    "scripts/gunicorn.conf.py",
                    "--bind",
                    f"127.0.0.1:{port}",
                ],
                port=port,
            )
        for n in range(1, workers + 1):
            topology.start(
                f"worker{n}",
                [
                    str(BIN / "celery"),
                    "-A",
                    "dashboard",
                    "worker",
                    "-Q",
                    "celery,warehouse",
                    "--pool",
                    "solo",
                    "-n",
                    f"worker{n}@%h",
                    "--loglevel",
                    "INFO",
                ],
            )
        if beat:
            topology.start(
                "beat",
                [
                    str(BIN / "celery"),
                    "-A",
                    "dashboard",
                    "beat",
                    "--loglevel",
                    "INFO",
                    "--schedule",
                    str(root / "celerybeat-schedule"),
                ],
            )
        yield topology


def _log_in_and_tokens(topology: Topology) -> None:
    user, password = LOGIN
    made = topology.manage(
        "shell",
        "-c",
        "from django.contrib.auth import get_user_model as m; "
        f"m().objects.create_superuser({user!r}, 'ops@example.com', {password!r})",
    )
    assert made.returncode == 0, made.stderr
    for scope in ("read", "ingest"):
        token = topology.manage("create_api_token", user, "--scope", scope)
        assert token.returncode == 0, token.stderr
        setattr(topology, f"{scope}_token", token.stdout.strip().splitlines()[-1])


def summary_of(output: bytes) -> dict[str, object]:
    """The JSON line an ingest command ends with."""
    return dict(json.loads(output.decode().strip().splitlines()[-1]))
