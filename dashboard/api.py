"""The NinjaAPI: gathers each app's router, maps domain errors to HTTP answers in one place
(how answers are rendered and ninja's own errors worded: dashboard/api_answers.py)."""

import logging
from typing import Any

from django.conf import settings
from django.db import InterfaceError as DatabaseInterfaceError
from django.db import OperationalError as DatabaseOperationalError
from django.http import HttpRequest, HttpResponse
from ninja import NinjaAPI, Schema, Swagger
from ninja.errors import ValidationError

import warehouse
from analytics.alerts.api import alerts_router, channels_router, rules_router, silences_router
from analytics.costs.api import costs_router, prices_router
from analytics.people.api import router as people_router
from analytics.runs.agent_api import router as agent_router
from analytics.runs.api import quarantine_router
from analytics.runs.api import router as runs_router
from analytics.runs.events_api import router as events_router
from analytics.runs.replay_api import router as replay_router
from analytics.serving.api import router as serving_router
from analytics.tokens.api import router as tokens_router
from dashboard.api_answers import (
    FiniteJSONRenderer,
    one_line,
    unexpected_detail,
    validation_detail,
)
from dashboard.auth import API_AUTH
from dashboard.login import docs_login_required
from ingest.api import router as ingest_router
from lib.errors import BodyTooLarge, ForbiddenError, NotFoundError, ParameterError

api = NinjaAPI(
    title="Fleetscope API",
    version="1",
    description="Agent-fleet and vLLM serving analytics. Authenticate with a session or "
    "`Authorization: Bearer <token>` (`manage.py create_api_token USER`).",
    auth=API_AUTH,
    urls_namespace="api",
    # Swagger UI from ninja's own static files (ninja is in INSTALLED_APPS); no validator
    # badge, which would call validator.swagger.io.
    docs=Swagger(settings={"validatorUrl": None}),
    # The docs and the schema name every endpoint: for a logged-in user or a token only.
    docs_decorator=docs_login_required,
    renderer=FiniteJSONRenderer(),
)


@api.exception_handler(NotFoundError)
def _not_found(request: HttpRequest, exc: NotFoundError) -> HttpResponse:
    return api.create_response(request, {"detail": one_line(str(exc))}, status=404)


@api.exception_handler(ForbiddenError)
def _forbidden(request: HttpRequest, exc: ForbiddenError) -> HttpResponse:
    return api.create_response(request, {"detail": one_line(str(exc))}, status=403)


@api.exception_handler(ParameterError)
def _bad_parameter(request: HttpRequest, exc: ParameterError) -> HttpResponse:
    return api.create_response(request, {"detail": one_line(str(exc))}, status=422)


@api.exception_handler(BodyTooLarge)
def _too_large(request: HttpRequest, exc: BodyTooLarge) -> HttpResponse:
    return api.create_response(request, {"detail": one_line(str(exc))}, status=413)


@api.exception_handler(ValidationError)
def _invalid(request: HttpRequest, exc: ValidationError) -> HttpResponse:
    return api.create_response(request, {"detail": validation_detail(exc)}, status=422)


RETRY_AFTER_SECONDS = "5"
logger = logging.getLogger(__name__)


@api.exception_handler(warehouse.WarehouseError)
def _warehouse_down(request: HttpRequest, exc: warehouse.WarehouseError) -> HttpResponse:
    answer = api.create_response(request, {"detail": one_line(str(exc))}, status=503)
    if not isinstance(exc, warehouse.NotMigrated):
        # Unreachable or broken for now (a catalog restarting, a handle reopened): a
        # client may try again; a warehouse never migrated waits for its operator.
        answer["Retry-After"] = RETRY_AFTER_SECONDS
    return answer


@api.exception_handler(DatabaseOperationalError)
@api.exception_handler(DatabaseInterfaceError)
def _web_database_down(request: HttpRequest, exc: Exception) -> HttpResponse:
    # Django's database (users, tokens, rules) out of reach: PostgreSQL restarting, the
    # network down. Django connects again on a later request; the client may try again.
    logger.warning("%s %s: the web database is unreachable: %s", request.method, request.path, exc)
    answer = api.create_response(
        request, {"detail": "the web database is unreachable; try again shortly"}, status=503
    )
    answer["Retry-After"] = RETRY_AFTER_SECONDS
    return answer


@api.exception_handler(Exception)
def _unexpected(request: HttpRequest, exc: Exception) -> HttpResponse:
    known = warehouse.lake.explain_unexpected(exc)
    if known is not None:  # a statement run on a cursor directly (a load's staging)
        return _warehouse_down(request, known)
    status, detail = unexpected_detail(request, exc)
    return api.create_response(request, {"detail": detail}, status=status)


class HealthOut(Schema):
    status: str
    warehouse: str
    schema_version: int
    debug: bool


@api.get("/health", auth=None, response=HealthOut, tags=["health"])
def health(request: HttpRequest) -> dict[str, Any]:
    """Liveness and warehouse reachability; the only endpoint without authentication."""
    try:
        version = warehouse.schema_version()
        state = "ok"
    except Exception as exc:  # health reports any failure instead of raising
        version, state = 0, f"error: {str(exc).splitlines()[0][:200]}"
    return {
        "status": "ok" if state == "ok" else "degraded",
        "warehouse": state,
        "schema_version": version,
        "debug": settings.DEBUG,
    }


# Before the runs router: /runs/{run}/replay, /events and /agents/{agent} are never
# read as a run's name.
api.add_router("/runs", agent_router, tags=["runs"])
api.add_router("/runs", replay_router, tags=["runs"])
api.add_router("/runs", events_router, tags=["runs"])
api.add_router("/runs", runs_router, tags=["runs"])
api.add_router("/quarantine", quarantine_router, tags=["runs"])
api.add_router("/ingest", ingest_router, tags=["ingest"])
api.add_router("/tokens", tokens_router, tags=["tokens"])
api.add_router("/serving", serving_router, tags=["serving"])
api.add_router("/costs", costs_router, tags=["costs"])
api.add_router("/prices", prices_router, tags=["costs"])
api.add_router("/alerts", alerts_router, tags=["alerts"])
api.add_router("/channels", channels_router, tags=["alerts"])
api.add_router("/alert-rules", rules_router, tags=["alerts"])
api.add_router("/silences", silences_router, tags=["alerts"])
api.add_router("/people", people_router, tags=["people"])
