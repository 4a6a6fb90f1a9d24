"""Gunicorn's settings for `make run` (scripts/run.sh passes --bind): the embedded default
on a laptop. Production passes its own (README's Production: `--workers 4`).

One worker process, eight threads: a worker takes about 430 MB once every page has been
drawn on the demo (DuckDB, pyarrow, plotly, scipy, the three tokenizers), so each further
worker would add as much; the threads serve requests at once, DuckDB and the tokenizers
releasing the GIL while they work (bench/bench_footprint.py measures the whole stack).
"""

workers = 1
threads = 8
timeout = 120
# Under scripts/run.sh's stop deadline: it kills what is left 7 s after TERM.
graceful_timeout = 5
accesslog = "-"
errorlog = "-"
loglevel = "warning"


# GET /metrics sums every process's counts from PROMETHEUS_MULTIPROC_DIR
# (lib/process_metrics.py). The settings module sets that variable: imported here, in the
# master, before prometheus_client is, so the workers forked from it count into the folder.
def on_starting(server: object) -> None:
    from dashboard import settings
    from lib.process_metrics import remove_dead_processes

    remove_dead_processes(settings.FLEETSCOPE_METRICS_DIR)


def child_exit(server: object, worker: object) -> None:
    from lib.process_metrics import process_exited

    process_exited(worker.pid)  # type: ignore[attr-defined]
