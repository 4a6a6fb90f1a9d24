"""Pages. Views never write SQL: they call analytics.queries and render templates."""

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render


@login_required
def runs_list(request: HttpRequest) -> HttpResponse:
    return render(request, "dashboard/runs.html", {})


@login_required
def run_detail(request: HttpRequest, run: str) -> HttpResponse:
    return render(request, "dashboard/run.html", {"run": run})
