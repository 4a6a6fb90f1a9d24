"""The demo's real logs (ingest/demo.py's steps call these): the Claude Code and Codex
fixture transcripts shipped in ingest/demo_data/agent_logs/, and the Aero fleet's derived
history shipped as ingest/demo_data/aero_commits.csv.gz (provenance and licences in
ingest/demo_data/NOTICE.md). Each step copies its files into its demo folder and ingests
them through the ordinary pipelines, so a second load adds nothing.
"""

from __future__ import annotations

import shutil
from datetime import datetime
from pathlib import Path
from typing import IO

from ingest.pipelines.claude_code import run_claude_code
from ingest.pipelines.codex import run_codex
from ingest.pipelines.git import run_history_csv
from ingest.pipelines.loading import IngestSummary

DEMO_DATA = Path(__file__).resolve().parent / "demo_data"
HISTORY_FILE = "aero_commits.csv.gz"
HISTORY_RUN = "aero-demo"


def prepare_agent_logs(folder: Path, now: datetime) -> None:
    shutil.copytree(DEMO_DATA / "agent_logs", folder, dirs_exist_ok=True)
    shutil.copy(DEMO_DATA / "NOTICE.md", folder / "NOTICE.md")


def load_agent_logs(folder: Path, progress: IO[str] | None) -> IngestSummary:
    summary = run_claude_code([str(folder / "claude-code")], progress=progress)
    codex = run_codex([str(folder / "codex")], progress=progress)
    summary.add(codex)
    summary.files += codex.files
    return summary


def prepare_fleet_history(folder: Path, now: datetime) -> None:
    shutil.copy(DEMO_DATA / HISTORY_FILE, folder / HISTORY_FILE)


def load_fleet_history(folder: Path, progress: IO[str] | None) -> IngestSummary:
    return run_history_csv(folder / HISTORY_FILE, HISTORY_RUN)
