"""Peak memory of an HTTP ingest: a ~200 MB body POSTed to /api/ingest/requests and to
/api/ingest/agent-events, each in a child process of its own (bench/measured.py), the
body read from a file as a WSGI server would stream it (never held by the client side).

`python -m bench http_bodies`; FLEETSCOPE_BENCH_BODY_MB changes the size. Beside each
figure: the same child answering an empty body, which is what the process holds before
any body (Django, the warehouse, the token encodings).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

BODY_MB = int(os.environ.get("FLEETSCOPE_BENCH_BODY_MB", "200"))
ROOT = Path(__file__).resolve().parent.parent


def _write_requests(path: Path, size: int) -> int:
    """Per-request records of ~4 KB (a prompt and a completion of English-like text)."""
    words = "the agent reads the failing test and edits the parser so the build passes again "
    n = 0
    with path.open("wb") as out:
        while out.tell() < size:
            record = {
                "ts": 1772359200 + n,
                "request_id": f"bench-{n}",
                "model": "gpt-4o",
                "language": "en",
                "prompt": f"{n} " + words * 36,
                "completion": f"{n} " + words * 12,
                "usage": {"prompt_tokens": 520, "completion_tokens": 170},
            }
            out.write(json.dumps(record).encode() + b"\n")
            n += 1
    return n


def _write_events(path: Path, size: int) -> int:
    """Agent events of ~200 bytes, half of them without an id."""
    n = 0
    with path.open("wb") as out:
        while out.tell() < size:
            event = {
                "ts": 1768384800 + n * 0.05,
                "run": f"bench-{n % 3}",
                "agent": f"w-{n % 600}",
                "event": "tool_call",
                "tool": "bash",
                "ok": n % 7 != 0,
                "attrs": {"cmd": f"pytest -q tests/test_{n % 97}.py"},
            }
            if n % 2:
                event["id"] = f"e{n}"
            out.write(json.dumps(event).encode() + b"\n")
            n += 1
    return n


def _post(body: Path, path: str) -> None:
    """The child: a fresh data dir, a user with a token, one POST through the WSGI app."""
    data_dir = tempfile.mkdtemp(prefix="fleetscope-bench-body-")
    os.environ["FLEETSCOPE_DATA_DIR"] = data_dir
    os.environ["DJANGO_SETTINGS_MODULE"] = "dashboard.settings"
    import django

    django.setup()
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.core.wsgi import get_wsgi_application

    import warehouse
    from dashboard.models import ApiToken
    from lib.access import Scope

    call_command("migrate", verbosity=0, interactive=False)
    warehouse.migrate()
    _, token = ApiToken.issue(User.objects.create_superuser("bench"), "bench", scope=Scope.ADMIN)
    application = get_wsgi_application()
    status: list[str] = []
    with body.open("rb") as stream:
        environ = {
            "REQUEST_METHOD": "POST",
            "PATH_INFO": path,
            "SERVER_NAME": "127.0.0.1",
            "SERVER_PORT": "8000",
            "HTTP_HOST": "127.0.0.1",
            "CONTENT_TYPE": "application/x-ndjson",
            "CONTENT_LENGTH": str(body.stat().st_size),
            "HTTP_AUTHORIZATION": f"Bearer {token}",
            "wsgi.input": stream,
            "wsgi.url_scheme": "http",
            "wsgi.errors": sys.stderr,
        }

        def start_response(line: str, headers: object, exc_info: object = None) -> object:
            status.append(line)
            return None

        answer = b"".join(application(environ, start_response))  # type: ignore[arg-type]
    print(status[0], answer.decode()[:200], flush=True)


def run() -> None:
    from bench import measured

    folder = Path(tempfile.mkdtemp(prefix="fleetscope-bench-bodies-"))
    empty = folder / "empty.jsonl"
    empty.write_bytes(b"")
    requests_body, events_body = folder / "requests.jsonl", folder / "events.jsonl"
    records = _write_requests(requests_body, BODY_MB << 20)
    events = _write_events(events_body, BODY_MB << 20)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    script = str(Path(__file__).resolve())
    for path, body, count in (
        ("/api/ingest/requests", requests_body, f"{records:,} records"),
        ("/api/ingest/agent-events", events_body, f"{events:,} events"),
    ):
        idle = measured.run([sys.executable, script, str(empty), path], env=env, cwd=ROOT)
        done = measured.run([sys.executable, script, str(body), path], env=env, cwd=ROOT)
        size_mb = body.stat().st_size / (1 << 20)
        print(f"   POST {path}: {size_mb:.0f} MiB ({count}): {done.stdout.decode().strip()}")
        print(
            f"   peak RSS {done.peak_mib:.0f} MiB (an empty body: {idle.peak_mib:.0f} MiB), "
            f"{done.seconds:.1f} s",
            flush=True,
        )


if __name__ == "__main__":
    _post(Path(sys.argv[1]), sys.argv[2])
