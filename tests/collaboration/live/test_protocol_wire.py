"""The bytes on the editor's socket: y-websocket in the browser reads what pycrdt's encoder writes here, and the
server parses frames with a strict decoder of its own rather than pycrdt's, which is lax (shown below)."""

import pytest
from pycrdt import Decoder, Doc, Text, create_awareness_message, create_sync_message, create_update_message
from pycrdt._sync import create_sync_step1_message, create_sync_step2_message

from collaboration.live import protocol
from collaboration.live.protocol import AwarenessEntry, MalformedMessage

LONG = bytes(range(200))  # a length of two var-uint bytes: 200 = 0xC8 0x01


def _update() -> bytes:
    doc = Doc()
    doc["content"] = Text("hello")
    return doc.get_update()


def test_y_websocket_frames_are_the_bytes_y_protocols_writes():
    """message type, sync step, var-uint length, payload (y-protocols' sync.js and y-websocket)."""
    assert create_sync_step1_message(b"\x01\x05\x03") == b"\x00\x00\x03\x01\x05\x03"
    assert create_sync_step2_message(LONG) == b"\x00\x01\xc8\x01" + LONG
    assert create_update_message(LONG) == b"\x00\x02\xc8\x01" + LONG
    assert create_awareness_message(b"\x00") == b"\x01\x01\x00"


def test_sync_step_1_from_a_document_carries_its_state_vector():
    doc = Doc()
    doc["content"] = Text("hello")
    assert create_sync_message(doc) == create_sync_step1_message(doc.get_state())


def test_quires_own_frames_keep_their_bytes():
    assert protocol.acknowledged(LONG) == b"\x64\xc8\x01" + LONG
    assert protocol.refused("read_only", "é") == b'\x65\x2a{"code": "read_only", "message": "\\u00e9"}'


def test_an_awareness_update_counts_its_strings_in_utf8_bytes():
    entry = AwarenessEntry(client_id=300, clock=1, state_json='{"n":"é"}')
    encoded = protocol.awareness_update([entry])
    assert encoded == b"\x01\xac\x02\x01\x0a" + '{"n":"é"}'.encode()
    assert protocol.awareness_entries(encoded) == [entry]


@pytest.mark.parametrize(
    "frame",
    [create_update_message(_update()), create_sync_step2_message(LONG), create_awareness_message(b"\x00")],
    ids=["update", "sync-step-2", "awareness"],  # an update names a random client: its bytes vary by process
)
def test_what_the_encoder_writes_the_parser_reads_back(frame):
    protocol.message_parse(frame)


def _pycrdt_reads(field: bytes) -> bytes:
    try:
        return Decoder(field).read_message()
    except Exception as exc:
        pytest.fail(
            f"pycrdt's Decoder now refuses a malformed field ({exc!r}): the strict decoder in "
            "collaboration/live/protocol.py may give way to it"
        )


def test_pycrdts_decoder_reads_a_truncated_field_as_a_shorter_one_where_ours_refuses():
    update = _update()
    truncated = create_update_message(update)[:-3]
    assert _pycrdt_reads(truncated[2:]) == update[:-3], "pycrdt's Decoder no longer takes a truncated field"
    with pytest.raises(MalformedMessage):
        protocol.message_parse(truncated)


def test_pycrdts_decoder_ignores_trailing_bytes_where_ours_refuses():
    update = _update()
    trailing = create_update_message(update) + b"\x00"
    assert _pycrdt_reads(trailing[2:]) == update, "pycrdt's Decoder no longer ignores trailing bytes"
    with pytest.raises(MalformedMessage):
        protocol.message_parse(trailing)
