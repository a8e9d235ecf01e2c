"""Every `make bench-*` entry point runs at its smallest sizes and prints only finite, non-zero figures.

A figure of 0, ``inf`` or ``nan`` is a failed benchmark (../shared/docs/benchmarks.md), and a benchmark that
crashes or quietly reports nothing is found only when someone needs its figures. So each ``bench-*`` target
runs here as the Makefile runs it (its recipe, with this interpreter for ``$(PY)``), with the environment
variables that make it smallest (``SMOKES``), and every ``BENCH {json}`` line it prints must have a finite
value, min and max above zero, and the figures it promises must all be there. Speed is not checked: that is
what the benchmarks themselves are for. A difference of two timings (``…_overhead_ms_…``: full - raw of one
build) must be finite and non-zero, not positive: at one build on a shared machine its sign is noise.

The benchmarks create and drop their databases (``quire_bench``…) on a PostgreSQL server of this module's
own (``BENCH_DATABASE_URL``, unless one is set already), never on the checkout's: a benchmark someone runs
meanwhile keeps its database. About 3.5 minutes on the 2-core development machine.
"""

import json
import math
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MAKEFILE = ROOT / "Makefile"
TIMEOUT_SECONDS = 300  # per benchmark; a default-sized run of the slowest takes several minutes
# Agents stop once their acquire long-poll returns: 2 s instead of 20 s saves up to 18 s per agents() exit. A
# smoke run checks that every figure is printed, not its value: no warm-up round first (bench-author's is a
# third of its run).
COMMON = {"BENCH_ACQUIRE_WAIT": "2", "BENCH_WARMUP": "0"}
DIFFERENCE = re.compile(r"_overhead_ms_")


def _both(*stems: str) -> tuple[str, ...]:
    return tuple(f"{stem}_{document}" for stem in stems for document in ("demo", "20_pages"))


BUILD_FIGURES = ("raw_ms_p50", "full_ms_p50", "overhead_ms_p50", "full_vs_raw_ratio")
ROUNDTRIP = tuple(
    f"collab_roundtrip_ms_{stat}_editors_{editors}{kind}"
    for editors in (2, 10, 50)
    for stat in ("p50", "p99")
    for kind in ("", "_same_process", "_cross_process")
)


@dataclass(frozen=True)
class Smoke:
    env: dict[str, str]  # the smallest sizes
    figures: tuple[str, ...]  # what the benchmark promises: at least these must be printed


SMOKES = {
    "bench-submit": Smoke(
        {"BENCH_N": "2", "BENCH_REPS": "1"},
        ("submit_per_s_http_20_files", "submit_ms_p50_http_20_files", "capture_ms_p50_1000_files_50mb",
         "fence_hold_ms_p50", "fence_hold_ms_p99", "sha256sum_ms_p50_1000_files_50mb", "capture_vs_sha256sum_ratio"),
    ),
    "bench-queue": Smoke(
        {"BENCH_N": "20", "BENCH_REPS": "1", "BENCH_DEPTHS": "100,1000", "BENCH_PICKUPS": "20"},
        ("drain_jobs_per_s_service_1_process", "drain_jobs_per_s_service_2_processes",
         "drain_jobs_per_s_http_1_agent", "drain_jobs_per_s_http_2_agents", "drain_cpu_ms_per_job_http_1_agent",
         "drain_cpu_ms_per_job_http_2_agents", "pickup_ms_p50", "pickup_ms_p95", "pickup_ms_p99",
         "claim_ms_p50_depth_100", "claim_ms_p50_depth_1000", "claim_latency_ratio_depth_1000_vs_100",
         # the peer, in the same run (its virtual environment is made on the first run: pip, from PyPI)
         "procrastinate_drain_jobs_per_s_2_processes_concurrency_1",
         "procrastinate_drain_jobs_per_s_2_processes_concurrency_4", "procrastinate_pickup_ms_p50",
         "drain_service_ratio_vs_procrastinate", "drain_http_ratio_vs_procrastinate",
         "pickup_p50_ratio_vs_procrastinate"),
    ),
    "bench-latex": Smoke(
        {"BENCH_N": "1", "BENCH_REPS": "1"},
        (*(f"latex_{name}" for name in _both(*BUILD_FIGURES)), "reuse_hit_ms_p50",
         *(f"typst_{name}" for name in _both(*BUILD_FIGURES)),
         *(f"latex_{name}" for name in _both("phase_ms_p50_claimed_to_first_output")),
         *(f"typst_{name}" for name in _both("phase_ms_p50_claimed_to_first_output")),
         "cancel_latency_ms_p50", "cancel_latency_ms_p99"),
    ),
    "bench-load": Smoke(
        {"BENCH_SECONDS": "1", "BENCH_REPS": "1", "BENCH_START_RATE": "2", "BENCH_MAX_RATE": "3"},
        ("load_sustained_jobs_per_s", *(f"load_e2e_ms_p99_at_{pct}pct" for pct in (10, 25, 50, 75, 100))),
    ),
    "bench-library": Smoke(
        {"BENCH_N": "5", "BENCH_REPS": "1", "BENCH_SEARCH_DOCUMENTS": "10"},
        ("library_accept_versions_per_s_distinct", "library_accept_versions_per_s_contended",
         "library_accept_conflict_rate_contended", "outbox_publish_events_per_s_notify",
         "outbox_pending_age_ms_p99_notify", "library_ingest_ms_100_pages", "library_index_ms_100_pages",
         "library_search_ms_p50_1000_pages", "library_search_ms_p99_1000_pages",
         *(("outbox_publish_events_per_s_amqp", "outbox_pending_age_ms_p99_amqp") if os.environ.get("AMQP_URL")
           else ())),
    ),
    "bench-office": Smoke(
        {"BENCH_N": "1", "BENCH_REPS": "1"},
        (*(f"office_{name}_{kind}" for kind in ("docx", "pptx") for name in ("cold_ms_p50", "warm_ms_p50",
                                                                              "warm_cold_ratio")),
         "office_cache_hit_ms_p50", "office_throughput_docs_per_s", "office_behind_abandoned_ms_p50",
         "office_slot_start_ms_p50", "office_behind_abandoned_start_ratio"),
    ),
    "bench-pptx": Smoke(
        {"BENCH_REPS": "1", "BENCH_CORPUS": "1"},
        ("pptx_import_ms_p50_20_slides", "typst_export_ms_p50_20_pages",
         *(("pptx_import_faithful_ms_p50_20_slides", "pptx_import_editable_ms_p50_corpus",
            "pptx_import_faithful_ms_p50_corpus", "soffice_pdf_ms_p50_corpus", "pptx_import_editable_vs_soffice_ratio",
            "pptx_import_likeness_ssim_median", "pptx_import_likeness_ssim_worst", "typst_export_ms_p50_corpus",
            "impress_pdf_import_ms_p50_corpus",
            *(f"{side}_{name}" for side in ("typst_export", "impress_pdf_import")
              for name in ("editable_words_ratio", "editable_words_ratio_worst", "likeness_ssim_median",
                           "likeness_ssim_worst")))
           if shutil.which("soffice") else ())),
    ),
    "bench-collab": Smoke(
        {"BENCH_N": "20", "BENCH_REPS": "1"},
        (*ROUNDTRIP, "collab_accepted_updates_per_s", "collab_capture_fence_hold_ms_p50_editors_10",
         "collab_capture_fence_hold_ms_p99_editors_10", "collab_capture_fence_hold_ms_p50_editors_0",
         "collab_capture_fence_hold_ms_p99_editors_0"),
    ),
    "bench-admin": Smoke(
        {"BENCH_N": "2000", "BENCH_REPS": "1", "BENCH_REQUESTS": "3", "BENCH_DAYS": "2", "BENCH_BUSY_MINUTE": "200"},
        (*(f"{page}_ms_{stat}" for stat in ("p50", "p99")
           for page in ("admin_overview", "admin_overview_live", "admin_job_list", "admin_job_list_unfiltered")),
         *(f"admin_charts_ms_{stat}_{window}" for window in ("1h", "24h", "7d") for stat in ("p50", "p99")),
         "rollup_busy_minute_ms"),
    ),
    "bench-history": Smoke(
        {"BENCH_N": "1000", "BENCH_REPS": "1"},
        ("history_listing_ms_p50", "history_listing_ms_p99", "history_diff_ms_p50", "history_diff_ms_p99",
         "history_diff_json_ms_p50", "history_diff_json_ms_p99",
         "history_restore_ms", "document_open_ms_with_history", "document_open_ms_compacted",
         "document_open_with_history_vs_compacted_ratio", "history_storage_bytes_per_10k_keystrokes",
         "compacted_storage_bytes_per_10k_keystrokes", "history_vs_compacted_storage_ratio"),
    ),
    "bench-author": Smoke(
        {"BENCH_N": "1", "BENCH_REPS": "1", "BENCH_KEYSTROKES": "5"},
        ("author_typst_preview_ms_p50", "author_typst_preview_ms_p99", "author_quire_warm_ms_p50",
         "author_quire_clean_ms_p50", "author_latexmk_clean_ms_p50", "author_latexmk_kept_ms_p50",
         "author_pdflatex_pass_ms_p50", "author_warm_vs_latexmk_kept_ratio", "author_warm_vs_pdflatex_pass_ratio",
         "author_clean_vs_warm_ratio", "author_ctrl_enter_to_pdf_ms_p50", "author_ctrl_enter_to_pdf_ms_p99"),
    ),
    "bench-project": Smoke(
        {"BENCH_FILES": "20", "BENCH_MB": "1", "BENCH_REPS": "1", "BENCH_N": "2", "BENCH_PDF_MB": "1",
         "BENCH_BUILDS": "1", "BENCH_MEMBERS": "2"},
        ("zip_in_ms_20_files_1mb", "unzip_ms_20_files_1mb", "zip_in_vs_unzip_ratio", "zip_out_ms_20_files_1mb",
         "zip_ms_20_files_1mb", "zip_out_vs_zip_ratio", "output_pdf_ms_p50_1mb", "output_pdf_ms_p99_1mb",
         "static_pdf_ms_p50_1mb", "output_pdf_vs_static_ratio", "pane_refresh_ms_p50_members_2",
         "pane_refresh_ms_p99_members_2"),
    ),
    "bench-cluster": Smoke(
        {"BENCH_N": "100", "BENCH_REPS": "1", "BENCH_PICKUPS": "5", "BENCH_BUILDS": "1", "BENCH_BACKLOG": "400"},
        ("drain_jobs_per_s_single", "drain_jobs_per_s_cluster", "drain_cluster_vs_single_ratio",
         "pickup_ms_p50_single", "pickup_ms_p50_cluster", "pickup_p50_cluster_vs_single_ratio",
         "recovery_s_core_replica_killed", "latex_overhead_ms_p50_demo_single", "latex_overhead_ms_p50_demo_cluster"),
    ),
}  # fmt: skip
NEEDS_ROOT = {"bench-cluster"}  # network namespaces
SPREAD_OVER_WORKERS = True  # each benchmark is minutes long: under pytest-xdist they run side by side
# A capacity figure (the highest rate the server sustains) is 0 on a machine the other tests keep busy: these
# run in make test's exclusive tier, alone.
NEEDS_THE_MACHINE = {"bench-collab"}


def bench_recipes() -> dict[str, str]:
    """Each ``bench-<name>`` target of the Makefile and its (one) recipe line."""
    recipes: dict[str, str] = {}
    target = None
    for line in MAKEFILE.read_text().splitlines():
        if match := re.match(r"^(bench-[\w-]+)\s*:", line):
            target = match[1]
        elif target and line.startswith("\t"):
            recipes[target] = recipes.get(target, "") + line.strip()
        elif line.strip():
            target = None
    return recipes


def test_every_bench_target_has_a_smoke_run():
    assert sorted(bench_recipes()) == sorted(SMOKES), "a bench-* target without a smoke run here, or the reverse"


@pytest.fixture(scope="module")
def bench_database_url():
    """An admin URL of a PostgreSQL server of this module's own, started here and stopped afterwards."""
    if url := os.environ.get("BENCH_DATABASE_URL"):
        yield url
        return
    from config.embedded_db import ensure_running, stop

    root = Path(tempfile.mkdtemp(prefix="quire-bench-smoke-"))
    root.chmod(0o755)  # run as root, the server runs as a user of its own, which must reach its data directory
    try:
        server = ensure_running(root)
        yield f"postgresql://postgres@/postgres?host={server.socket_dir}"
    finally:
        stop(root / "pgdata")
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def bench_template(bench_database_url):
    """A database migrated once that each benchmark's database is copied from (``BENCH_TEMPLATE_DATABASE``),
    one per pytest-xdist worker: a server given by ``BENCH_DATABASE_URL`` is shared by all of them."""
    from scripts.bench.harness import database_dropped, migrated_template

    name = f"quire_bench_template_{os.environ.get('PYTEST_XDIST_WORKER', 'main')}"
    migrated_template(bench_database_url, name)
    yield name
    database_dropped(bench_database_url, name)


def _command(recipe: str) -> list[str]:
    if not recipe.startswith("$(PY) "):
        pytest.fail(f"cannot run the recipe {recipe!r}: this test knows only `$(PY) …` recipes")
    return [sys.executable, *shlex.split(recipe.removeprefix("$(PY) "))]


def _environment(smoke: Smoke, database_url: str, template: str) -> dict[str, str]:
    """This environment without any BENCH_* sizes of its own, plus the smoke run's and the private server."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("BENCH_")}
    private = {"BENCH_DATABASE_URL": database_url, "BENCH_TEMPLATE_DATABASE": template}
    return {**env, **COMMON, **smoke.env, **private, "PYTHONUNBUFFERED": "1"}


def bench_lines(stdout: str) -> list[dict]:
    return [json.loads(line.removeprefix("BENCH ")) for line in stdout.splitlines() if line.startswith("BENCH ")]


def bad_figures(lines: list[dict]) -> list[str]:
    """What is wrong with these BENCH lines: a missing field, or a value, min or max that is not finite and > 0
    (not finite and non-zero, for a difference)."""
    problems = []
    for line in lines:
        missing = {"figure", "value", "unit", "n", "reps", "min", "max", "config"} - set(line)
        if missing:
            problems.append(f"{line.get('figure')}: no {', '.join(sorted(missing))}")
            continue
        lowest = -math.inf if DIFFERENCE.search(line["figure"]) else 0
        for key in ("value", "min", "max"):
            number = line[key]
            if not isinstance(number, int | float) or not math.isfinite(number) or number == 0 or number < lowest:
                problems.append(f"{line['figure']}: {key} {number!r}")
    return problems


def test_a_zero_infinite_or_missing_figure_is_bad_and_a_difference_may_be_negative():
    figures = {
        "good_ms_p50": 1.5,
        "zero_ms_p50": 0,
        "negative_ms_p50": -3,
        "latex_overhead_ms_p50_demo": -3,
        "latex_overhead_ms_p50_zero": 0,
        "infinite_ms_p50": math.inf,
        "nan_ms_p50": math.nan,
    }
    fields = {"unit": "ms", "n": 1, "reps": 1, "config": ""}
    stdout = "\n".join(
        "BENCH " + json.dumps({"figure": figure, "value": value, "min": value, "max": value, **fields})
        for figure, value in figures.items()
    )
    lines = [*bench_lines(stdout + "\nnot a figure"), {"figure": "incomplete_ms_p50", "value": 1.0}]

    bad = {problem.split(":")[0] for problem in bad_figures(lines)}

    assert bad == {
        "zero_ms_p50",
        "negative_ms_p50",
        "latex_overhead_ms_p50_zero",
        "infinite_ms_p50",
        "nan_ms_p50",
        "incomplete_ms_p50",
    }


@pytest.mark.slow
@pytest.mark.parametrize(
    "target",
    [pytest.param(name, marks=[pytest.mark.exclusive] if name in NEEDS_THE_MACHINE else []) for name in sorted(SMOKES)],
)
def test_benchmark_prints_finite_non_zero_figures(target, bench_database_url, bench_template):
    if target in NEEDS_ROOT and os.geteuid() != 0:
        pytest.skip(f"{target} builds network namespaces, which need root")
    smoke = SMOKES[target]
    started = time.monotonic()
    run = subprocess.run(
        _command(bench_recipes()[target]),
        cwd=ROOT,
        env=_environment(smoke, bench_database_url, bench_template),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_SECONDS,
        check=False,
    )
    print(f"{target}: {time.monotonic() - started:.0f} s")
    tail = f"\n--- stdout (end) ---\n{run.stdout[-3000:]}\n--- stderr (end) ---\n{run.stderr[-3000:]}"
    assert run.returncode == 0, f"{target} exited {run.returncode}{tail}"
    lines = bench_lines(run.stdout)
    names = [line.get("figure") for line in lines]
    assert not (problems := bad_figures(lines)), f"{target}: {'; '.join(problems)}{tail}"
    assert not (missing := [f for f in smoke.figures if f not in names]), f"{target} did not print {missing}{tail}"
    assert len(names) == len(set(names)), f"{target} printed a figure twice: {sorted(names)}"
