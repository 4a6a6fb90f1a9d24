"""The figures Fleetscope's own processes count as they work, for `GET /metrics`
(dashboard/metrics.py): warehouse write conflicts (warehouse.retry_on_conflict) and the
web server's request durations (dashboard/request_metrics.py).

Owns the prometheus_client objects and the multiprocess folder's housekeeping. Every
gunicorn worker, Celery worker and `manage.py` command of a machine writes its counts to
memory-mapped files in PROMETHEUS_MULTIPROC_DIR (dashboard/settings.py sets it, under the
data dir by default, before prometheus_client is imported), so /metrics sums this
machine's processes. Must not read Django settings or collect anything: recording a figure
is one increment or one observe, nothing more.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from prometheus_client import Counter, Histogram, multiprocess, values

# prometheus_client picks its value class once, when first imported: a process that
# imported it before the settings set PROMETHEUS_MULTIPROC_DIR still counts into the folder.
if os.environ.get("PROMETHEUS_MULTIPROC_DIR") and values.ValueClass is values.MutexValue:
    values.ValueClass = values.MultiProcessValue()

WRITE_CONFLICTS = Counter(
    "fleetscope_warehouse_write_conflicts",
    "Warehouse writes that conflicted with another writer and were run again.",
)
WRITE_CONFLICTS_EXHAUSTED = Counter(
    "fleetscope_warehouse_write_conflicts_exhausted",
    "Warehouse writes that still conflicted after their last attempt (raised, nothing applied).",
)
WAREHOUSE_REOPENED = Counter(
    "fleetscope_warehouse_reopened",
    "Times a process dropped its warehouse handle after DuckDB broke (INTERNAL or FATAL) "
    "and opened a new one.",
)
HTTP_REQUEST_DURATION = Histogram(
    "fleetscope_http_request_duration_seconds",
    "Time from the request reaching Django to its answer, by route pattern, method and "
    "status class.",
    ["route", "method", "status"],
    # From a cached page to a slow report; DEFAULT_BUCKETS stop at 10 s.
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0),
)

# prometheus_client names its files <kind>_<pid>.db (gauge_livesum_<pid>.db and so on).
_PID_FILE = re.compile(r"^[a-z_]+_(\d+)\.db$")


def process_exited(pid: int) -> None:
    """gunicorn's child_exit hook: the worker's live gauges go (prometheus_client's
    mark_process_dead); its counters and histograms stay in the sum."""
    multiprocess.mark_process_dead(pid)


def remove_dead_processes(folder: Path) -> list[Path]:
    """The files of processes no longer running, removed (gunicorn's on_starting hook):
    prometheus_client asks for the folder to be emptied between runs, but the Celery
    workers of the machine write there too and keep their files while they run. A
    counter of a removed file starts again from zero, which Prometheus' rate() reads as
    a reset."""
    removed = []
    for path in folder.glob("*.db"):
        found = _PID_FILE.match(path.name)
        if found is None or _is_running(int(found.group(1))):
            continue
        path.unlink(missing_ok=True)
        removed.append(path)
    return removed


def _is_running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: running
        return True
    return True
