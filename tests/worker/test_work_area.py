"""Reading a build's results never follows a link the sandbox may have planted."""

import os
from pathlib import Path

import pytest

from quire_worker.processors.latex.work_area import (
    copy_source_file,
    largest_file_bytes,
    read_source_file,
    work_area,
)


@pytest.fixture
def area(tmp_path: Path):
    (tmp_path / "output").mkdir()
    with work_area(next_to=tmp_path / "output") as area:
        yield area


@pytest.fixture
def worker_secret(tmp_path: Path) -> Path:
    secret = tmp_path / "secret.txt"
    secret.write_text("worker secret " * 100)
    return secret


def test_a_result_file_is_copied(area, tmp_path):
    (area.sources / "main.pdf").write_bytes(b"%PDF-1.5 real")

    copied = copy_source_file(area, "main.pdf", tmp_path / "main.pdf")

    assert copied
    assert (tmp_path / "main.pdf").read_bytes() == b"%PDF-1.5 real"


def test_a_result_replaced_by_a_link_is_neither_copied_nor_read(area, tmp_path, worker_secret):
    (area.sources / "main.pdf").symlink_to(worker_secret)

    copied = copy_source_file(area, "main.pdf", tmp_path / "main.pdf")

    assert not copied
    assert not (tmp_path / "main.pdf").exists()
    assert read_source_file(area, "main.pdf", 1024) == b""


def test_a_project_directory_replaced_by_a_link_is_not_followed(area, worker_secret):
    elsewhere = worker_secret.parent / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "main.log").write_text("worker secret")
    os.rename(area.sources, area.root / "moved")
    area.sources.symlink_to(elsewhere)

    assert read_source_file(area, "main.log", 1024) == b""


def test_the_largest_file_ignores_links(area, worker_secret):
    (area.sources / "small.txt").write_text("small")
    (area.sources / "big.txt").symlink_to(worker_secret)

    assert largest_file_bytes(area) == len("small")


def test_the_area_is_removed_afterwards(tmp_path):
    (tmp_path / "output").mkdir()

    with work_area(next_to=tmp_path / "output") as area:
        (area.sources / "main.tex").write_text("x")

    assert not area.root.exists()
