"""What keeps `make run` light (bench/bench_footprint.py measures the whole stack): beat
and the worker start without the heavy modules (their tasks import them when they run,
and Celery's Django fixup skips the system checks that import every page), and the
footprint bench reads a process's memory from /proc."""

import os
import subprocess
import sys
from pathlib import Path

from bench import bench_footprint

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("duckdb", "pyarrow", "numpy", "scipy", "plotly", "py3langid")

# What `celery -A dashboard beat` imports before it runs: the app, Django, every task module.
CELERY_START = """
import sys
from dashboard.celery import app
app.loader.import_default_modules()
assert "ingest.tasks" in sys.modules and "analytics.tasks" in sys.modules
print(" ".join(m for m in sys.argv[1:] if m in sys.modules))
"""


def test_celery_starts_without_the_heavy_modules(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FLEETSCOPE_", "DJANGO_"))}
    env.pop("CELERY_SKIP_CHECKS", None)
    env.update(FLEETSCOPE_DATA_DIR=str(tmp_path), FLEETSCOPE_SECRET_KEY="footprint-test-" * 4)
    done = subprocess.run(
        [sys.executable, "-c", CELERY_START, *HEAVY],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""


def test_the_bench_reads_a_processs_rss_and_pss_from_proc() -> None:
    (me,) = bench_footprint.measure([os.getpid()])
    status = Path("/proc/self/status").read_text()
    rss_kb = int(status.split("VmRSS:")[1].split()[0])
    assert me.pid == os.getpid()
    assert "python" in me.command
    assert abs(me.rss_mb - rss_kb / 1024) < 16  # read a moment apart
    assert 0 < me.pss_mb <= me.rss_mb + 1


def test_gone_processes_are_left_out() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    assert bench_footprint.measure([child.pid]) == []
