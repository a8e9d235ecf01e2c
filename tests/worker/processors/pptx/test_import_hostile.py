"""Hostile presentations end in a classified failure from the import's own limits, never a hang.

Each test asserts the failure's code as well as its class, so a run that only stopped at the
wall-clock limit (``wall_time_exceeded``) would fail the test.
"""

import pytest

from quire_worker.contracts import ProcessorFailure
from quire_worker.processors.pptx.slide_model import ImportBounds
from tests.worker.pptx_decks import (
    deck_with_broken_slide,
    deck_with_nested_groups,
    deck_with_picture,
    deck_with_slides,
    deck_with_zip_bomb,
    noise_png,
    png_claiming_size,
)


def import_failure(import_pptx, data: bytes, **bounds) -> ProcessorFailure:
    with pytest.raises(ProcessorFailure) as raised:
        import_pptx(data, bounds=ImportBounds(**bounds))
    return raised.value


def test_a_file_that_is_not_a_zip_is_invalid_input(import_pptx):
    failure = import_failure(import_pptx, b"%PDF-1.7 definitely not a presentation")

    assert (failure.failure_class, failure.code) == ("invalid_input", "not_a_zip")


def test_a_presentation_whose_parts_do_not_parse_is_invalid_input(import_pptx):
    failure = import_failure(import_pptx, deck_with_broken_slide())

    assert (failure.failure_class, failure.code) == ("invalid_input", "unreadable_presentation")


def test_a_zip_bomb_inside_the_package_is_refused_before_expansion(import_pptx):
    failure = import_failure(import_pptx, deck_with_zip_bomb(64 * 1024 * 1024), max_expanded_bytes=16 * 1024 * 1024)

    assert failure.failure_class == "resource_limit"
    assert failure.code in ("compression_ratio", "expanded_too_large")


def test_thousands_of_slides_exceed_the_slide_limit(import_pptx):
    failure = import_failure(import_pptx, deck_with_slides(2000), max_slides=100)

    assert (failure.failure_class, failure.code) == ("resource_limit", "too_many_slides")
    assert "2000" in failure.message


def test_deeply_nested_groups_exceed_the_nesting_limit(import_pptx):
    failure = import_failure(import_pptx, deck_with_nested_groups(40), max_group_depth=8)

    assert (failure.failure_class, failure.code) == ("resource_limit", "groups_too_deep")


def test_groups_within_the_nesting_limit_import(import_pptx):
    result = import_pptx(deck_with_nested_groups(6), bounds=ImportBounds(max_group_depth=8))

    assert {output.role for output in result.outputs} == {"bundle", "report"}


def test_a_picture_with_too_many_bytes_exceeds_the_picture_limit(import_pptx):
    failure = import_failure(import_pptx, deck_with_picture(noise_png(300)), max_picture_bytes=100_000)

    assert (failure.failure_class, failure.code) == ("resource_limit", "picture_too_large")


def test_a_picture_claiming_billions_of_pixels_is_refused_without_decoding(import_pptx):
    failure = import_failure(import_pptx, deck_with_picture(png_claiming_size(60_000, 60_000)))

    assert (failure.failure_class, failure.code) == ("resource_limit", "picture_too_many_pixels")


def test_an_unknown_input_profile_is_invalid_input(import_pptx):
    with pytest.raises(ProcessorFailure) as raised:
        import_pptx(deck_with_nested_groups(0), profile="glossy")

    assert (raised.value.failure_class, raised.value.code) == ("invalid_input", "unknown_profile")
