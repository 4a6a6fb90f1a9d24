#!/usr/bin/env bash
# `make run`: prepare the data dir (both databases migrated, static files collected, the
# demo runs and login loaded), then serve Fleetscope with a Celery worker and beat on the
# embedded broker until Ctrl-C, which stops all of them. The Makefile has already created
# .venv and installed the project. `scripts/run.sh --no-demo` skips the demo load (the
# suite's tests of stopping start the stack that way).
#
# Stopping: any INT, TERM or HUP (Ctrl-C, a TERM to the script or to its process group, a
# closed terminal), in any number and order, stops every service within 10 s; a signal
# while stopping kills what is left at once. Each service runs in a process group of its
# own and is signalled as one.
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
DEMO=1
for arg in "$@"; do
  case "$arg" in
    --no-demo) DEMO=0 ;;
    *)
      printf 'usage: scripts/run.sh [--no-demo]\n' >&2
      exit 2
      ;;
  esac
done
mkdir -p "$LOGS"

say() { printf '\033[1m%s\033[0m\n' "$*" >&2; }

names=()
pids=()
step=""    # the pid of the preparation step running now (stopped like the services)
exiting=0  # a signal or an exit has started the shutdown
stopped=0  # stop() has started
force=0    # a signal arrived while stopping: kill what is left now

# on_signal STATUS: the first signal exits, and the EXIT trap stops everything; a later one
# only tells the running stop() to kill at once. It never exits a second time: an `exit`
# inside the EXIT trap ends the script there, leaving the services running.
on_signal() {
  if [ "$exiting" = 1 ]; then
    force=1
    return
  fi
  exiting=1
  exit "$1"
}
trap 'on_signal 130' INT
trap 'on_signal 143' TERM
trap 'on_signal 129' HUP

# prepare COMMAND...: a preparation step, run in the background and waited for: bash runs
# a trap only once its foreground command has ended, but interrupts `wait` at once, so a
# signal to the script alone is not held up by a migration; stop() ends the step too.
prepare() {
  "$@" &
  step=$!
  wait "$step"
  step=""
}

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

# signal SIG: send SIG to every service's process group, and to the preparation step.
signal() {
  local pid
  for pid in "${pids[@]}"; do kill "-$1" -- "-$pid" 2>/dev/null || true; done
  if [ -n "$step" ]; then kill "-$1" "$step" 2>/dev/null || true; fi
}

# alive: whether any service's process group, or the preparation step, has a process left.
alive() {
  local pid
  for pid in "${pids[@]}"; do kill -0 -- "-$pid" 2>/dev/null && return 0; done
  if [ -n "$step" ] && kill -0 "$step" 2>/dev/null; then return 0; fi
  return 1
}

# Celery finishes its current task on TERM and gunicorn its requests (its graceful timeout
# is 5 s): what is left after 7 s, or at a further signal, is killed, so that everything
# is gone within 10 s of the first signal.
STOP_TICKS=14 # of 0.5 s
stop() {
  exiting=1
  [ "$stopped" = 1 ] && return
  stopped=1
  set +e
  [ "${#pids[@]}" -gt 0 ] && say "Stopping ${names[*]}"
  signal TERM
  local tick
  for ((tick = 0; tick < STOP_TICKS; tick++)); do
    alive || break
    [ "$force" = 1 ] && break
    sleep 0.5
  done
  signal KILL
  for ((tick = 0; tick < 20; tick++)); do
    alive || break
    sleep 0.1
  done
  wait 2>/dev/null
  say "Stopped."
}
trap stop EXIT

say "Preparing $FLEETSCOPE_DATA_DIR"
prepare "$BIN/python" manage.py migrate --noinput -v 0 # Django's database, then the warehouse
prepare "$BIN/python" manage.py collectstatic --noinput -v 0
login="no demo loaded (--no-demo)"
if [ "$DEMO" = 1 ]; then
  say "Loading the demo runs (only the first time writes and ingests anything)"
  prepare "$BIN/python" manage.py load_demo >"$LOGS/load_demo.out"
  cat "$LOGS/load_demo.out" >&2
  login="$(tail -n 1 "$LOGS/load_demo.out")"
fi

# Light on a laptop (under 1 GiB in all on the demo: `python -m bench footprint`): one
# gunicorn worker with threads (scripts/gunicorn.conf.py), and Celery's solo pool, which
# runs tasks in the worker process itself instead of a forked child of the same size.
start web "$BIN/gunicorn" dashboard.wsgi:application \
  --config scripts/gunicorn.conf.py --bind "127.0.0.1:$PORT"
start worker "$BIN/celery" -A dashboard worker -Q celery,warehouse --pool solo --loglevel INFO
start beat "$BIN/celery" -A dashboard beat --loglevel INFO \
  --schedule "$FLEETSCOPE_DATA_DIR/celerybeat-schedule"

# --- extra services: `start NAME COMMAND...` lines go here ---
# A stand-in vLLM server (continuous-batching simulation, two data-parallel engines, real
# V1 metric names), registered as a scrape target so the Serving pages move live.
STANDIN_VLLM_PORT="${STANDIN_VLLM_PORT:-8001}"
start standin-vllm "$BIN/python" -m ingest.standin_vllm --port "$STANDIN_VLLM_PORT" --engines 2
prepare "$BIN/python" manage.py add_scrape_target "http://127.0.0.1:$STANDIN_VLLM_PORT/metrics" \
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

# Until a signal, or until one of the services dies (then the rest are stopped too).
set +e
wait -n "${pids[@]}"
status=$?
[ "$exiting" = 1 ] && exit "$status" # a signal interrupted the wait: its trap is exiting
for i in "${!pids[@]}"; do
  if ! kill -0 "${pids[$i]}" 2>/dev/null; then
    say "${names[$i]} exited (status $status); the end of $LOGS/${names[$i]}.log:"
    tail -n 20 "$LOGS/${names[$i]}.log" >&2
  fi
done
exit "$status"
