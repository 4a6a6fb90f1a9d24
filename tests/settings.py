"""Settings for the test suite: the product's settings over a throwaway data dir.

pytest-django imports this before any conftest, so every path points away from ./var.
"""

import os
import tempfile

os.environ["FLEETSCOPE_DATA_DIR"] = tempfile.mkdtemp(prefix="fleetscope-test-")
os.environ.setdefault("FLEETSCOPE_SECRET_KEY", "test-secret-key-not-for-production-use-0123456789")

from dashboard.settings import *  # noqa: F403

STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # noqa: F405
FLEETSCOPE_ALLOW_PRIVATE_WEBHOOKS = True  # loopback receivers; access tests turn it off
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast logins in tests
# Pages render without a collectstatic: the plain storage names files as the finders find
# them (tests/dashboard/test_staticfiles.py collects once to check the production storage).
STORAGES = {
    **STORAGES,  # noqa: F405
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
