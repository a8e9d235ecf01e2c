"""The messages of a live document socket: the y-websocket protocol plus two of Quire's own.

Every binary frame starts with a var-uint message type. Types 0 (sync), 1 (awareness) and 3 (query
awareness) are y-websocket's (``y-protocols``); Quire adds:

- ``ACKNOWLEDGED`` (100), server → client: a var-uint8-array holding the server's state vector after it
  stored the client's update. Everything the vector covers is durable; the editor shows "All changes
  saved" once it covers every local change.
- ``REFUSED`` (101), server → client: a var-string of JSON ``{"code", "message"}``, sent before the server
  closes the socket for a refused update or frame, and on its own (``code`` = ``read_only``) when the
  author's role no longer allows editing.

y-websocket's messages are written by pycrdt's encoder (``pycrdt._sync``), Quire's two with its numbers and
length-prefixed fields. Parsing is Quire's own, and strict: a frame that does not decode exactly (trailing bytes
included) is malformed. pycrdt's ``Decoder`` reads a field that runs past the end of the frame as a shorter one
and ignores trailing bytes (``tests/collaboration/live/test_protocol_wire.py`` shows it): a truncated or padded
frame would pass for a message.
"""

import json
from dataclasses import dataclass
from enum import IntEnum

from pycrdt import write_message, write_var_uint


class MessageType(IntEnum):
    SYNC = 0
    AWARENESS = 1
    QUERY_AWARENESS = 3
    ACKNOWLEDGED = 100
    REFUSED = 101


class SyncStep(IntEnum):
    STEP1 = 0  # a state vector: "send me what I lack"
    STEP2 = 1  # the reply: an update with everything the asker lacks
    UPDATE = 2  # an update made since


EMPTY_UPDATE = b"\x00\x00"  # an update v1 with no structs and no deletions


class MalformedMessage(ValueError):
    """The frame does not decode as a message of the live document protocol."""


@dataclass(frozen=True)
class SyncMessage:
    step: SyncStep
    payload: bytes  # a state vector for STEP1, an update otherwise


@dataclass(frozen=True)
class AwarenessMessage:
    update: bytes


@dataclass(frozen=True)
class QueryAwarenessMessage:
    pass


ClientMessage = SyncMessage | AwarenessMessage | QueryAwarenessMessage


class Reader:
    def __init__(self, data: bytes):
        self.data, self.position = data, 0

    def uint8(self) -> int:
        if self.position >= len(self.data):
            raise MalformedMessage("A byte runs past the end of the frame.")
        self.position += 1
        return self.data[self.position - 1]

    def var_uint(self) -> int:
        value, shift = 0, 0
        while True:
            if self.position >= len(self.data) or shift > 63:
                raise MalformedMessage("A number runs past the end of the frame.")
            byte = self.data[self.position]
            self.position += 1
            value |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                return value

    def var_bytes(self) -> bytes:
        length = self.var_uint()
        end = self.position + length
        if end > len(self.data):
            raise MalformedMessage("A field runs past the end of the frame.")
        value, self.position = self.data[self.position : end], end
        return value

    def var_string(self) -> str:
        try:
            return self.var_bytes().decode("utf-8")
        except UnicodeDecodeError as exc:
            raise MalformedMessage("A string is not UTF-8.") from exc

    def end(self) -> None:
        if self.position != len(self.data):
            raise MalformedMessage("The frame has bytes after its message.")


var_uint = write_var_uint  # the name collaboration.anchors writes its numbers with


def var_string(value: str) -> bytes:
    # Not pycrdt's ``Encoder.write_var_string``: it prefixes the length in characters, not in UTF-8 bytes.
    return write_message(value.encode("utf-8"))


def message_parse(frame: bytes) -> ClientMessage:
    """Decode a client's frame; raises ``MalformedMessage``. Types only a server sends are malformed here."""
    reader = Reader(frame)
    kind = reader.var_uint()
    if kind == MessageType.SYNC:
        step = reader.var_uint()
        if step not in SyncStep._value2member_map_:
            raise MalformedMessage(f"Unknown sync step {step}.")
        message: ClientMessage = SyncMessage(SyncStep(step), reader.var_bytes())
    elif kind == MessageType.AWARENESS:
        message = AwarenessMessage(reader.var_bytes())
    elif kind == MessageType.QUERY_AWARENESS:
        message = QueryAwarenessMessage()
    else:
        raise MalformedMessage(f"Unknown message type {kind}.")
    reader.end()
    return message


def acknowledged(state_vector: bytes) -> bytes:
    return write_var_uint(MessageType.ACKNOWLEDGED) + write_message(state_vector)


def refused(code: str, message: str) -> bytes:
    return write_var_uint(MessageType.REFUSED) + var_string(json.dumps({"code": code, "message": message}))


# --- awareness updates: var-uint count, then per client: var-uint id, var-uint clock, var-string JSON state ---


@dataclass(frozen=True)
class AwarenessEntry:
    client_id: int
    clock: int
    state_json: str  # "null" when the client left


def awareness_entries(update: bytes) -> list[AwarenessEntry]:
    reader = Reader(update)
    count = reader.var_uint()
    if count > 64:
        raise MalformedMessage("An awareness update names too many clients.")
    entries = [AwarenessEntry(reader.var_uint(), reader.var_uint(), reader.var_string()) for _ in range(count)]
    reader.end()
    return entries


def awareness_update(entries: list[AwarenessEntry]) -> bytes:
    body = b"".join(
        write_var_uint(entry.client_id) + write_var_uint(entry.clock) + var_string(entry.state_json)
        for entry in entries
    )
    return write_var_uint(len(entries)) + body


SIGNED_OUT_MESSAGE = "You were signed out; sign in again to keep working."


class CloseCode(IntEnum):
    """Why the server closed a socket. 4400–4499 mirror HTTP's 4xx and are final: y-websocket does not
    reconnect after them (reconnecting cannot help). After a 45xx code it reconnects, and the sync that
    follows sends whatever the server did not take."""

    MALFORMED = 4400  # a frame that does not decode, or a text frame
    SIGNED_OUT = 4401  # the session ended: signed out, expired, the account deactivated or its password changed
    FORBIDDEN = 4403  # the user may no longer see the project, or sent an update without edit rights
    GONE = 4410  # the document was deleted
    TOO_LARGE = 4413  # a frame, an update, or the document it would make, is over its limit
    SLOW_READER = 4500  # the editor did not take what it was sent fast enough
    BUSY = 4503  # the server could not store an update just now
    IDLE = 4508  # nothing heard for the idle timeout (a live editor speaks at least every 15 s)
    TOO_FAST = 4529  # more messages than a socket may send; the message over the rate was not taken
    TOO_MANY = 4530  # too many sockets open for the user or the document
