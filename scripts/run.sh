#!/usr/bin/env bash
# `make run`: prepare the data dir (both databases migrated, static files collected, the
# demo runs and login loaded), then serve Fleetscope with a Celery worker and beat on the
# embedded broker until Ctrl-C, which stops all of them. The Makefile has already created
# .venv and installed the project.
#
# Extra services (a stand-in vLLM server, say) are started with `start NAME COMMAND...`
# in the marked section below: they are stopped with the rest, and their output goes to
# <data dir>/logs/NAME.log.
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=.venv/bin
PORT="${PORT:-8000}"
export FLEETSCOPE_DATA_DIR="${FLEETSCOPE_DATA_DIR:-$PWD/var}"
LOGS="$FLEETSCOPE_DATA_DIR/logs"
URL="http://127.0.0.1:$PORT/"
mkdir -p "$LOGS"

say() { printf '\033[1m%s\033[0m\n' "$*" >&2; }

say "Preparing $FLEETSCOPE_DATA_DIR"
"$BIN/python" manage.py migrate --noinput -v 0
"$BIN/python" manage.py migrate_warehouse
"$BIN/python" manage.py collectstatic --noinput -v 0
say "Loading the demo runs (only the first time writes and ingests anything)"
demo="$("$BIN/python" manage.py load_demo)"
printf '%s\n' "$demo" >&2
login="$(tail -n 1 <<<"$demo")"

names=()
pids=()
# start NAME COMMAND...: run a service in the background, its output in $LOGS/NAME.log;
# it is stopped with the others. Each runs in its own process group (setsid), so
# stopping it reaches its children too (gunicorn's workers, Celery's pool).
start() {
  local name="$1"
  shift
  setsid "$@" >>"$LOGS/$name.log" 2>&1 &
  names+=("$name")
  pids+=("$!")
}

# signal SIG: send SIG to every service's process group.
signal() {
  for pid in "${pids[@]}"; do kill "-$1" -- "-$pid" 2>/dev/null || true; done
}

stopping=0
stop() {
  [ "$stopping" = 1 ] && return
  stopping=1
  say "Stopping ${names[*]}"
  signal TERM
  # Celery finishes its current task on TERM and gunicorn its requests (within its
  # 10 s graceful timeout); give everyone 20 s, then insist.
  for _ in $(seq 40); do
    alive=0
    for pid in "${pids[@]}"; do kill -0 -- "-$pid" 2>/dev/null && alive=1; done
    [ "$alive" = 0 ] && break
    sleep 0.5
  done
  signal KILL
  wait 2>/dev/null || true
  say "Stopped."
}
trap stop EXIT
trap 'exit 130' INT TERM

start web "$BIN/gunicorn" dashboard.wsgi:application \
  --bind "127.0.0.1:$PORT" --workers 2 --threads 4 --timeout 120 --graceful-timeout 10 \
  --access-logfile - --error-logfile - --log-level warning
start worker "$BIN/celery" -A dashboard worker -Q celery,warehouse --concurrency 1 --loglevel INFO
start beat "$BIN/celery" -A dashboard beat --loglevel INFO \
  --schedule "$FLEETSCOPE_DATA_DIR/celerybeat-schedule"

# --- extra services: `start NAME COMMAND...` lines go here ---
# A stand-in vLLM server (continuous-batching simulation, two data-parallel engines, real
# V1 metric names), registered as a scrape target so the Serving pages move live.
STANDIN_VLLM_PORT="${STANDIN_VLLM_PORT:-8001}"
start standin-vllm "$BIN/python" -m ingest.standin_vllm --port "$STANDIN_VLLM_PORT" --engines 2
"$BIN/python" manage.py add_scrape_target "http://127.0.0.1:$STANDIN_VLLM_PORT/metrics" \
  --instance standin-vllm --label demo=true >/dev/null

for _ in $(seq 120); do
  if "$BIN/python" -c "import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=2)" \
    "${URL}accounts/login/" 2>/dev/null; then
    break
  fi
  for i in "${!pids[@]}"; do
    if ! kill -0 "${pids[$i]}" 2>/dev/null; then
      say "${names[$i]} exited during start-up; the end of $LOGS/${names[$i]}.log:"
      tail -n 20 "$LOGS/${names[$i]}.log" >&2
      exit 1
    fi
  done
  sleep 0.5
done

say ""
say "Fleetscope is running at $URL"
say "  $login"
say "  logs: $LOGS/{$(IFS=,; echo "${names[*]}")}.log; Ctrl-C stops everything"

# Until Ctrl-C, or until one of the services dies (then the rest are stopped too).
set +e
wait -n "${pids[@]}"
status=$?
for i in "${!pids[@]}"; do
  if ! kill -0 "${pids[$i]}" 2>/dev/null; then
    say "${names[$i]} exited (status $status); the end of $LOGS/${names[$i]}.log:"
    tail -n 20 "$LOGS/${names[$i]}.log" >&2
  fi
done
exit "$status"
