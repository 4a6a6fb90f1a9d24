"""Django settings for Fleetscope, read from environment variables (see README).

Owns configuration only; defaults are the embedded, nothing-to-start setup.
"""

import logging
import os
import secrets
from pathlib import Path

from kombu.transport import TRANSPORT_ALIASES

from dashboard.env import (
    read_bool,
    read_catalog_url,
    read_choice,
    read_data_path,
    read_database_url,
    read_int,
    read_list,
    read_networks,
    read_path,
    read_str,
    read_time_of_day,
    read_time_zone,
    read_url,
)
from lib.bounds import MAX_BODY_BYTES

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = read_path("FLEETSCOPE_DATA_DIR", BASE_DIR / "var")
DATA_DIR.mkdir(parents=True, exist_ok=True)
# Fleetscope's own figures (GET /metrics, lib/process_metrics.py): every process of this
# machine counts into memory-mapped files in this folder (prometheus_client's multiprocess
# mode). Set here, before anything imports prometheus_client, which reads it once.
FLEETSCOPE_METRICS_DIR = read_path("PROMETHEUS_MULTIPROC_DIR", DATA_DIR / "metrics")
FLEETSCOPE_METRICS_DIR.mkdir(parents=True, exist_ok=True)
os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(FLEETSCOPE_METRICS_DIR)


def _read_secret_key() -> str:
    """An explicit key wins; otherwise one is generated once and kept in the data dir."""
    explicit = read_str("FLEETSCOPE_SECRET_KEY", "")
    if explicit:
        return explicit
    key_file = DATA_DIR / "secret_key"
    if not key_file.exists():
        key_file.write_text(secrets.token_urlsafe(50))
        key_file.chmod(0o600)
    return key_file.read_text().strip()


SECRET_KEY = _read_secret_key()
DEBUG = read_bool("FLEETSCOPE_DEBUG", False)
ALLOWED_HOSTS = read_list("FLEETSCOPE_ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]"])
CSRF_TRUSTED_ORIGINS = read_list("FLEETSCOPE_CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    # Only for its templates and static files: /api/docs draws with the Swagger UI that
    # ships with django-ninja instead of a CDN's, so an offline install has its API docs.
    "ninja",
    "dashboard",
    "ingest",
    "analytics",
]

MIDDLEWARE = [
    # Outermost, so a request's duration covers every other layer (dashboard/request_metrics.py).
    "dashboard.request_metrics.RequestMetricsMiddleware",
    # First, so that every error under /api/ it sees, from any layer, is answered in JSON.
    "dashboard.api_answers.ApiErrorMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # Around the session and CSRF middleware, so it sees the cookies they set: Secure over
    # HTTPS; and the Content-Security-Policy on every answer (dashboard/security.py).
    "dashboard.security.SecurityHeadersMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # Who may see what (request.seen, request.role) and what a viewer may not post.
    "dashboard.access.AccessMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "dashboard.unmigrated.NotMigratedMiddleware",
]

# Django's own cap on a body read whole (request.body, forms) is the documented one, as
# the ingest endpoints' streamed bodies are: past it, 413 (dashboard/api_answers.py).
DATA_UPLOAD_MAX_MEMORY_SIZE = MAX_BODY_BYTES

ROOT_URLCONF = "dashboard.urls"
WSGI_APPLICATION = "dashboard.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "dashboard.navigation.navigation",
                "dashboard.preferences.display_preferences",
            ],
        },
    },
]

DATABASES = {
    "default": read_database_url(
        "DATABASE_URL", f"sqlite:///{DATA_DIR / 'fleetscope.sqlite3'}", conn_max_age=60
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Web, worker and beat share the file: WAL lets readers and one writer overlap;
    # IMMEDIATE transactions take the write lock up front and wait for it (timeout)
    # instead of failing with "database is locked" when two of them write at once.
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 30,
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

_VALIDATION = "django.contrib.auth.password_validation"
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": f"{_VALIDATION}.UserAttributeSimilarityValidator"},
    {"NAME": f"{_VALIDATION}.MinimumLengthValidator", "OPTIONS": {"min_length": 12}},
    {"NAME": f"{_VALIDATION}.CommonPasswordValidator"},
    {"NAME": f"{_VALIDATION}.NumericPasswordValidator"},
]
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/accounts/login/"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = DATA_DIR / "static"
# Each app's static/ folder (dashboard's, the admin's, ninja's Swagger UI); plotly.js is
# found in the installed plotly package by dashboard.staticfiles, never a CDN.
STATICFILES_FINDERS = [
    "django.contrib.staticfiles.finders.AppDirectoriesFinder",
    "dashboard.staticfiles.PlotlyFinder",
]
WHITENOISE_USE_FINDERS = True
# collectstatic (run by `make run`) writes every file under a content-hashed name with a
# gzip copy beside it; whitenoise serves those compressed and cached for a year
# (plotly.min.js: 4.8 MB, 1.4 MB gzipped). Pages name files with {% static %}, which
# reads the manifest: the test settings keep the plain storage so no collection is needed.
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}

# --- logins, sessions and cookies (dashboard/login.py, dashboard/security.py) ---
# This many failed logins for one account name, or FLEETSCOPE_LOGIN_MAX_ADDRESS_FAILURES
# from one client address, within FLEETSCOPE_LOGIN_LOCK_MINUTES refuse every login for
# it (the right password too) for that many minutes.
FLEETSCOPE_LOGIN_MAX_FAILURES = read_int("FLEETSCOPE_LOGIN_MAX_FAILURES", 5, minimum=1)
FLEETSCOPE_LOGIN_MAX_ADDRESS_FAILURES = read_int(
    "FLEETSCOPE_LOGIN_MAX_ADDRESS_FAILURES", 20, minimum=1
)
FLEETSCOPE_LOGIN_LOCK_MINUTES = read_int("FLEETSCOPE_LOGIN_LOCK_MINUTES", 15, minimum=1)
# Reverse proxies (addresses or CIDR networks) whose X-Forwarded-For names the client and
# whose X-Forwarded-Proto says whether it came over HTTPS; none: REMOTE_ADDR is the client.
FLEETSCOPE_TRUSTED_PROXIES = read_networks("FLEETSCOPE_TRUSTED_PROXIES", [])
if FLEETSCOPE_TRUSTED_PROXIES:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# Secure session and CSRF cookies on every answer, not only those served over HTTPS.
FLEETSCOPE_SECURE_COOKIES = read_bool("FLEETSCOPE_SECURE_COOKIES", False)
SESSION_COOKIE_AGE = read_int("FLEETSCOPE_SESSION_HOURS", 12, minimum=1) * 3600
SESSION_SAVE_EVERY_REQUEST = False  # a session ends SESSION_COOKIE_AGE after the login
SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = False  # the pages' fetch() calls read it for POSTs
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True

# --- warehouse (DuckLake) ---
FLEETSCOPE_WAREHOUSE = read_catalog_url(
    "FLEETSCOPE_WAREHOUSE", f"ducklake:sqlite:{DATA_DIR / 'warehouse.sqlite'}"
)
FLEETSCOPE_WAREHOUSE_DATA = read_data_path(
    "FLEETSCOPE_WAREHOUSE_DATA", str(DATA_DIR / "lake") + "/"
)
FLEETSCOPE_S3_ENDPOINT = read_str("FLEETSCOPE_S3_ENDPOINT", "")
FLEETSCOPE_S3_REGION = read_str("FLEETSCOPE_S3_REGION", "us-east-1")
FLEETSCOPE_S3_KEY_ID = read_str("FLEETSCOPE_S3_KEY_ID", read_str("AWS_ACCESS_KEY_ID", ""))
FLEETSCOPE_S3_SECRET = read_str("FLEETSCOPE_S3_SECRET", read_str("AWS_SECRET_ACCESS_KEY", ""))
FLEETSCOPE_S3_USE_SSL = read_bool("FLEETSCOPE_S3_USE_SSL", True)
# 0 = DuckDB's default (one thread per core).
FLEETSCOPE_DUCKDB_THREADS = read_int("FLEETSCOPE_DUCKDB_THREADS", 0, minimum=0)
FLEETSCOPE_DUCKDB_MEMORY_LIMIT = read_str("FLEETSCOPE_DUCKDB_MEMORY_LIMIT", "2GB")

# --- ingestion ---
# Folders the tail task reads agent-event JSONL from, on the beat schedule.
FLEETSCOPE_TAIL_AGENT_EVENTS = read_list("FLEETSCOPE_TAIL_AGENT_EVENTS", [])
FLEETSCOPE_TAIL_SECONDS = read_int("FLEETSCOPE_TAIL_SECONDS", 30, minimum=1)
# Claude Code projects folders (~/.claude/projects) and Codex sessions folders
# (~/.codex/sessions) the tail task reads live sessions from, on the same schedule.
FLEETSCOPE_TAIL_CLAUDE_CODE = read_list("FLEETSCOPE_TAIL_CLAUDE_CODE", [])
FLEETSCOPE_TAIL_CODEX = read_list("FLEETSCOPE_TAIL_CODEX", [])

# --- vLLM serving metrics ---
# How often the beat task looks for due scrape targets (each target has its own interval).
FLEETSCOPE_SCRAPE_SECONDS = read_int("FLEETSCOPE_SCRAPE_SECONDS", 15, minimum=1)
# OpenTelemetry in (docs/otlp.md): past this many MiB of acknowledged requests waiting in
# the spool, the receiver answers 503 with Retry-After; the loader drains it every
# FLEETSCOPE_OTLP_LOAD_SECONDS.
OTLP_SPOOL_MAX_MB = read_int("FLEETSCOPE_OTLP_SPOOL_MAX_MB", 512, minimum=1)
FLEETSCOPE_OTLP_LOAD_SECONDS = read_int("FLEETSCOPE_OTLP_LOAD_SECONDS", 2, minimum=1)
# Scrapes are spooled locally and loaded together this often: one load costs ~100 ms of
# CPU (DuckLake catalog work) whatever its size, so a minute of scrapes shares one.
FLEETSCOPE_SERVING_FLUSH_SECONDS = read_int("FLEETSCOPE_SERVING_FLUSH_SECONDS", 60, minimum=0)
# Raw samples are kept this long; per-minute rollups are kept for good.
FLEETSCOPE_SERVING_RAW_RETENTION_HOURS = read_int(
    "FLEETSCOPE_SERVING_RAW_RETENTION_HOURS", 48, minimum=1
)

# --- tokens ---
# Encodings every request and parallel text is counted under at load time.
FLEETSCOPE_TOKEN_ENCODINGS = read_list(
    "FLEETSCOPE_TOKEN_ENCODINGS", ["gpt2", "cl100k_base", "o200k_base"]
)
# ISO 639-1 codes the detector may answer; empty = every one it knows (about 100).
FLEETSCOPE_DETECT_LANGUAGES = read_list("FLEETSCOPE_DETECT_LANGUAGES", [])

# --- costs ---
# The daily cost report covers yesterday in this time zone and is sent from this local
# time on (HH:MM) to the recipients configured in the admin.
FLEETSCOPE_COST_REPORT_TZ = read_time_zone("FLEETSCOPE_COST_REPORT_TZ", "UTC")
FLEETSCOPE_COST_REPORT_TIME = read_time_of_day("FLEETSCOPE_COST_REPORT_TIME", "07:00")

# --- outbound webhooks ---
# Alert channels' webhook and Slack URLs must reach public addresses (checked when saved
# and, after DNS resolution, when sent: lib.http) unless this allows private ranges
# (loopback, RFC 1918, link-local...) for on-premise receivers and loopback tests.
FLEETSCOPE_ALLOW_PRIVATE_WEBHOOKS = read_bool("FLEETSCOPE_ALLOW_PRIVATE_WEBHOOKS", False)

# --- Celery ---
CELERY_BROKER_URL = read_url(
    "CELERY_BROKER_URL", "filesystem://", schemes=TRANSPORT_ALIASES, example="redis://host:6379/0"
)
CELERY_BROKER_DIR = DATA_DIR / "broker"
CELERY_RESULT_BACKEND = read_str("CELERY_RESULT_BACKEND", "") or None
CELERY_TIMEZONE = "UTC"
CELERY_TASK_ALWAYS_EAGER = read_bool("CELERY_TASK_ALWAYS_EAGER", False)

# --- e-mail ---
EMAIL_HOST = read_str("EMAIL_HOST", "")
if EMAIL_HOST:
    EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    EMAIL_PORT = read_int("EMAIL_PORT", 25, minimum=1, maximum=65535)
    EMAIL_HOST_USER = read_str("EMAIL_HOST_USER", "")
    EMAIL_HOST_PASSWORD = read_str("EMAIL_HOST_PASSWORD", "")
    EMAIL_USE_TLS = read_bool("EMAIL_USE_TLS", False)
else:
    EMAIL_BACKEND = "django.core.mail.backends.console.EmailBackend"
DEFAULT_FROM_EMAIL = read_str("DEFAULT_FROM_EMAIL", "fleetscope@localhost")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {
        "handlers": ["console"],
        "level": read_choice("FLEETSCOPE_LOG_LEVEL", "WARNING", logging.getLevelNamesMapping()),
    },
}
