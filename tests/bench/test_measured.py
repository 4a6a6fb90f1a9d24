import resource
import subprocess
import sys

import pytest

from bench import measured


def test_a_command_reports_its_own_peak_not_the_benchmarks() -> None:
    held = bytearray(400 * 1024 * 1024)  # this process's peak is 400 MiB or more from here
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 >= 400
    done = measured.run([sys.executable, "-c", "x = bytearray(100 * 1024 * 1024); print('done')"])
    del held
    assert done.stdout == b"done\n"
    assert 100 <= done.peak_mib < 300
    assert done.seconds > 0 and done.cpu_seconds > 0


def test_a_failing_command_raises() -> None:
    with pytest.raises(subprocess.CalledProcessError):
        measured.run([sys.executable, "-c", "raise SystemExit(3)"])
