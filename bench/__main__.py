"""Runs every bench/bench_<name>.py module's `run()` (or the named ones) and prints figures.

Each benchmark sets up its own throwaway data dir and warehouse; nothing touches ./var.
"""

import importlib
import os
import pkgutil
import sys
import tempfile
import time

import django


def main(argv: list[str]) -> int:
    data_dir = tempfile.mkdtemp(prefix="fleetscope-bench-")
    os.environ["FLEETSCOPE_DATA_DIR"] = data_dir
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dashboard.settings")
    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)
    names = argv or sorted(
        m.name.removeprefix("bench_")
        for m in pkgutil.iter_modules([os.path.dirname(__file__)])
        if m.name.startswith("bench_")
    )
    for name in names:
        module = importlib.import_module(f"bench.bench_{name}")
        print(f"== {name} ==", flush=True)
        started = time.monotonic()
        module.run()
        print(f"   ({time.monotonic() - started:.1f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
