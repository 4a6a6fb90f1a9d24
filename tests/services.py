"""Throwaway servers for tests of the production settings: PostgreSQL, an S3 emulator
(moto) and Redis, each started on loopback from the machine's own binaries (installed by
scripts/ci-services.sh) and stopped afterwards. Nothing here reaches the network."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise RuntimeError(f"nothing listened on 127.0.0.1:{port} within {seconds} s")


def _postgres_bin(name: str) -> str:
    found = sorted(Path("/usr/lib/postgresql").glob(f"*/bin/{name}"))
    if not found:
        raise RuntimeError(f"PostgreSQL's {name} is missing: run scripts/ci-services.sh")
    return str(found[-1])


# dsn -> (command prefix, data folder, server options, log) of each running cluster.
_clusters: dict[str, tuple[list[str], Path, str, Path]] = {}


def stop_postgres(dsn: str) -> None:
    """Stop the cluster of `dsn` at once (as a crash would: `-m immediate`)."""
    as_user, data, _, _ = _clusters[dsn]
    subprocess.run(
        [*as_user, _postgres_bin("pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
        check=True,
        capture_output=True,
        timeout=60,
    )


def start_postgres(dsn: str) -> None:
    """Start the stopped cluster of `dsn` again, on the same port."""
    as_user, data, options, log = _clusters[dsn]
    start = ["-D", str(data), "-o", options, "-l", str(log), "-w", "start"]
    subprocess.run(
        [*as_user, _postgres_bin("pg_ctl"), *start],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        timeout=120,
    )


@contextmanager
def postgres() -> Iterator[str]:
    """A throwaway PostgreSQL cluster; yields a libpq DSN. As root, it runs as `postgres`
    (PostgreSQL refuses to run as root), in a folder that user can reach."""
    as_user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    folder = Path(tempfile.mkdtemp(prefix="fleetscope-pg-"))
    data = folder / "pgdata"
    data.mkdir()
    if as_user:
        shutil.chown(folder, "postgres")
        shutil.chown(data, "postgres")
    user = "postgres" if as_user else os.environ.get("USER", "postgres")
    subprocess.run(
        [*as_user, _postgres_bin("initdb"), "-D", str(data), "-U", user, "--auth=trust"],
        check=True,
        capture_output=True,
        timeout=120,
    )
    port = free_port()
    options = f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off"
    # The server's output goes to a log file: a pipe would stay open in the daemon and
    # keep pg_ctl's caller waiting for its end.
    log = folder / "server.log"
    subprocess.run(
        [
            *as_user,
            _postgres_bin("pg_ctl"),
            "-D",
            str(data),
            "-o",
            options,
            "-l",
            str(log),
            "-w",
            "start",
        ],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        timeout=60,
    )
    dsn = f"dbname=postgres host=127.0.0.1 port={port} user={user}"
    _clusters[dsn] = (as_user, data, options, log)
    try:
        yield dsn
    finally:
        _clusters.pop(dsn, None)
        subprocess.run(
            [*as_user, _postgres_bin("pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
            check=False,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=60,
        )
        shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def s3_emulator(bucket: str) -> Iterator[str]:
    """moto's S3 server on loopback with `bucket` created; yields its host:port."""
    port = free_port()
    server = Path(sys.executable).parent / "moto_server"
    process = subprocess.Popen(
        [str(server), "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port)
        request = urllib.request.Request(f"http://127.0.0.1:{port}/{bucket}", method="PUT")
        urllib.request.urlopen(request, timeout=10).close()  # noqa: S310 - loopback only
        yield f"127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=10)


def s3_keys(endpoint: str, bucket: str) -> list[str]:
    with urllib.request.urlopen(f"http://{endpoint}/{bucket}?list-type=2", timeout=10) as r:
        body = r.read().decode()
    return [part.split("</Key>")[0] for part in body.split("<Key>")[1:]]


@contextmanager
def redis_server(folder: Path) -> Iterator[str]:
    """redis-server on loopback; yields its redis:// URL (stop_redis and start_redis take
    it down and up again on the same port)."""
    binary = shutil.which("redis-server")
    if binary is None:
        raise RuntimeError("redis-server is missing: run scripts/ci-services.sh")
    port = free_port()
    argv = [binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(folder), "--save", ""]
    url = f"redis://127.0.0.1:{port}/0"
    _redis[url] = [argv, None]
    try:
        start_redis(url)
        yield url
    finally:
        stop_redis(url)
        _redis.pop(url, None)


# url -> [argv, the running process] of each Redis server.
_redis: dict[str, list[Any]] = {}


def start_redis(url: str) -> None:
    argv, _ = _redis[url]
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _redis[url][1] = process
    wait_for_port(int(url.rsplit(":", 1)[1].split("/")[0]))


def stop_redis(url: str) -> None:
    """Stop the Redis server of `url` at once (kill -9: what it held in memory is lost)."""
    process = _redis[url][1]
    if process is not None and process.poll() is None:
        process.kill()
        process.wait(timeout=10)
