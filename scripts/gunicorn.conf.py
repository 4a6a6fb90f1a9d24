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
