"""Token counting at ingest vs a bare `encode_ordinary_batch`, side by side, and the whole
`ingest requests` path with its time split (parse, count, detect, load).

Issue 4's target: counting during ingest at no less than 0.8x the throughput of a bare
`encode_ordinary_batch` call on the same texts with the same encoding. Texts are request
prompts built from the shipped parallel set (24 languages) and the standard library's
Python source (code is what coding agents send), about 4 MB in all.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import inspect
import io
import json
import os
import random
import statistics
import tempfile
import textwrap
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import orjson
import tiktoken

import warehouse
from analytics.tokens.counting import COUNT_THREADS, count_tokens
from analytics.tokens.languages import detect_languages
from analytics.tokens.shipped import shipped_texts
from analytics.tokens.vocabularies import configured_encodings, get_encoding
from ingest.parsers.requests import parse_lines
from ingest.pipelines.line_files import split_lines
from ingest.pipelines.requests import prepare_batch, run_requests
from ingest.sources import files

TARGET_BYTES = 4 << 20
ROUNDS = 8
TARGET_RATIO = 0.8


def build_prompts(target_bytes: int = TARGET_BYTES, seed: int = 4) -> list[str]:
    rng = random.Random(seed)
    sentences = [text for _, _, text in shipped_texts()]
    by_language: dict[str, list[str]] = {}
    for _, language, text in shipped_texts():
        by_language.setdefault(language, []).append(text)
    # Fixed code samples (the standard library's), so the corpus does not drift as this
    # repository grows.
    code = [inspect.getsource(module) for module in (argparse, csv, dataclasses, json, textwrap)]
    prompts, size = [], 0
    while size < target_bytes:
        if rng.random() < 0.3:
            source = rng.choice(code)
            start = rng.randrange(max(1, len(source) - 4000))
            prompt = source[start : start + rng.randint(500, 4000)]
        else:
            language = rng.choice(sorted(by_language))
            prompt = " ".join(rng.choices(by_language[language], k=rng.randint(2, 30)))
        if not prompt:
            prompt = rng.choice(sentences)
        prompts.append(prompt)
        size += len(prompt.encode())
    return prompts


@dataclass(frozen=True)
class Comparison:
    encoding: str
    bare_mb_s: float  # wall clock, median run
    ingest_mb_s: float
    wall_ratio: float  # median over rounds of bare time / ingest time
    cpu_ratio: float  # the same with the process's CPU time (all threads)


def _timed(work: Callable[[], object]) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    work()
    return time.perf_counter() - wall, time.process_time() - cpu


def compare_counting(prompts: list[str]) -> list[Comparison]:
    """Bare `encode_ordinary_batch` vs ingest's `count_tokens`, per configured encoding.

    The machine is shared, so runs are paired: each round times both, in alternating
    order, and ratios are medians over rounds. CPU time (all threads of this process) is
    reported beside wall time: other processes' load moves it far less."""
    megabytes = sum(len(p.encode()) for p in prompts) / 1e6
    # Ingest counts prompts and completions in one call; these records have no completion.
    with_completions: list[str | None] = [*prompts, *([None] * len(prompts))]
    results = []
    for name in configured_encodings():
        enc = get_encoding(name)
        enc.encode_ordinary_batch(prompts[:100], num_threads=COUNT_THREADS)  # warm up

        def bare(enc: tiktoken.Encoding = enc) -> object:
            return enc.encode_ordinary_batch(prompts, num_threads=COUNT_THREADS)

        def ours(name: str = name) -> object:
            return count_tokens(with_completions, name)

        bare_wall, ours_wall, wall_ratios, cpu_ratios = [], [], [], []
        for round_no in range(ROUNDS):
            if round_no % 2:
                ours_t, bare_t = _timed(ours), _timed(bare)
            else:
                bare_t, ours_t = _timed(bare), _timed(ours)
            bare_wall.append(bare_t[0])
            ours_wall.append(ours_t[0])
            wall_ratios.append(bare_t[0] / ours_t[0])
            cpu_ratios.append(bare_t[1] / ours_t[1])
        results.append(
            Comparison(
                name,
                megabytes / statistics.median(bare_wall),
                megabytes / statistics.median(ours_wall),
                statistics.median(wall_ratios),
                statistics.median(cpu_ratios),
            )
        )
    return results


def measure_ingest(prompts: list[str]) -> dict[str, float]:
    """The whole `ingest requests` path over a JSONL file of these prompts."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "requests.jsonl"
        with open(path, "wb") as handle:
            for i, prompt in enumerate(prompts):
                record = {"ts": 1772359200 + i, "request_id": f"bench-{i}", "prompt": prompt}
                handle.write(orjson.dumps(record) + b"\n")
        size_mb = path.stat().st_size / 1e6
        # The counting and detection split, on the same batches the pipeline reads.
        count_s = detect_s = parse_s = 0.0
        line_no = 0
        for chunk in files.read_chunks(files.describe(path), 0):
            started = time.perf_counter()
            lines = split_lines(chunk, line_no)
            line_no += len(lines)
            parsed = parse_lines(lines)
            parse_s += time.perf_counter() - started
            stats = prepare_batch(parsed.records, str(path), configured_encodings()).stats
            count_s += stats["count_seconds"]
            detect_s += stats["detect_seconds"]
        started = time.perf_counter()
        summary = run_requests([str(path)], progress=io.StringIO())
        total_s = time.perf_counter() - started
    return {
        "records": float(summary.accepted),
        "file_mb": size_mb,
        "total_s": total_s,
        "parse_s": parse_s,
        "count_s": count_s,
        "detect_s": detect_s,
    }


def run() -> None:
    warehouse.migrate()  # the runner migrates Django's database only
    prompts = build_prompts()
    megabytes = sum(len(p.encode()) for p in prompts) / 1e6
    print(
        f"   {len(prompts)} prompts, {megabytes:.1f} MB of UTF-8, {COUNT_THREADS} threads, "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    )
    print(
        f"   token counting, {ROUNDS} paired rounds: bare encode_ordinary_batch vs ingest's "
        "count_tokens (median ratio)"
    )
    for c in compare_counting(prompts):
        verdict = "ok" if min(c.wall_ratio, c.cpu_ratio) >= TARGET_RATIO else "BELOW TARGET"
        print(
            f"   {c.encoding:<12} bare {c.bare_mb_s:6.2f} MB/s   ingest {c.ingest_mb_s:6.2f} MB/s"
            f"   ratio {c.wall_ratio:.2f} wall, {c.cpu_ratio:.2f} CPU"
            f" (target >= {TARGET_RATIO}) {verdict}"
        )
    sample = prompts[:2000]
    started = time.perf_counter()
    detect_languages(sample)
    print(f"   language detection: {len(sample) / (time.perf_counter() - started):,.0f} prompts/s")
    ingest = measure_ingest(prompts)
    print(
        f"   ingest requests: {ingest['records']:,.0f} records, {ingest['file_mb']:.1f} MB in "
        f"{ingest['total_s']:.2f} s = {ingest['file_mb'] / ingest['total_s']:.2f} MB/s, "
        f"{ingest['records'] / ingest['total_s']:,.0f} records/s"
    )
    print(
        f"   of which parse {ingest['parse_s']:.2f} s, count "
        f"({len(configured_encodings())} encodings) {ingest['count_s']:.2f} s, "
        f"detect {ingest['detect_s']:.2f} s (split timed on a second pass of the same batches)"
    )
