"""Token counting at ingest vs a bare `encode_ordinary_batch`, side by side, and the whole
`ingest requests` path with its time split (parse, count, detect, load).

Issue 4's target: counting during ingest at no less than 0.8x the throughput of a bare
`encode_ordinary_batch` call on the same texts with the same encoding. Texts are request
prompts built from the shipped parallel set (24 languages) and this repository's own
Python source (code is what coding agents send), about 4 MB in all.
"""

from __future__ import annotations

import io
import random
import statistics
import tempfile
import time
from pathlib import Path

import orjson
import tiktoken

from analytics import warehouse
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
ROOT = Path(__file__).resolve().parent.parent


def build_prompts(target_bytes: int = TARGET_BYTES, seed: int = 4) -> list[str]:
    rng = random.Random(seed)
    sentences = [text for _, _, text in shipped_texts()]
    by_language: dict[str, list[str]] = {}
    for _, language, text in shipped_texts():
        by_language.setdefault(language, []).append(text)
    code = [
        path.read_text(encoding="utf-8")
        for path in sorted(ROOT.glob("analytics/**/*.py")) + sorted(ROOT.glob("ingest/**/*.py"))
    ]
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


def compare_counting(prompts: list[str]) -> list[tuple[str, float, float, float]]:
    """(encoding, bare MB/s, ingest-counting MB/s, ratio) per configured encoding.

    The machine is shared, so runs are paired: each round times both, in alternating
    order, and the ratio reported is the median of the rounds' ratios (the throughputs are
    the medians of each side's runs)."""
    megabytes = sum(len(p.encode()) for p in prompts) / 1e6
    # Ingest counts prompts and completions in one call; these records have no completion.
    with_completions: list[str | None] = [*prompts, *([None] * len(prompts))]
    results = []
    for name in configured_encodings():
        enc = get_encoding(name)
        enc.encode_ordinary_batch(prompts[:100], num_threads=COUNT_THREADS)  # warm up

        def bare(enc: tiktoken.Encoding = enc) -> float:
            started = time.perf_counter()
            enc.encode_ordinary_batch(prompts, num_threads=COUNT_THREADS)
            return time.perf_counter() - started

        def ours(name: str = name) -> float:
            started = time.perf_counter()
            count_tokens(with_completions, name)
            return time.perf_counter() - started

        bare_runs, ours_runs, ratios = [], [], []
        for round_no in range(ROUNDS):
            if round_no % 2:
                ours_s, bare_s = ours(), bare()
            else:
                bare_s, ours_s = bare(), ours()
            bare_runs.append(bare_s)
            ours_runs.append(ours_s)
            ratios.append(bare_s / ours_s)
        results.append(
            (
                name,
                megabytes / statistics.median(bare_runs),
                megabytes / statistics.median(ours_runs),
                statistics.median(ratios),
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
    print(f"   {len(prompts)} prompts, {megabytes:.1f} MB of UTF-8, {COUNT_THREADS} threads")
    print(
        f"   token counting, {ROUNDS} paired rounds: bare encode_ordinary_batch vs ingest's "
        "count_tokens (median ratio)"
    )
    for name, bare, ours, ratio in compare_counting(prompts):
        verdict = "ok" if ratio >= TARGET_RATIO else "BELOW TARGET"
        print(
            f"   {name:<12} bare {bare:6.2f} MB/s   ingest {ours:6.2f} MB/s   "
            f"ratio {ratio:.2f} (target >= {TARGET_RATIO}) {verdict}"
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
