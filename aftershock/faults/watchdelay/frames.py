"""The frames of a watch stream, in whatever encoding the client asked for.

The watch-delay proxy keeps the client's own Accept header: kube-controller-manager asks for
protobuf, and its metadata informers (garbage collector, quota) for PartialObjectMetadata,
which they cannot read as anything else. So the proxy reads the frames the apiserver sends:
- JSON (``application/json``): one event per line;
- protobuf (``application/vnd.kubernetes.protobuf;stream=watch``): each frame is a 4-byte
  big-endian length and a ``WatchEvent`` message (type = 1, object = 2, a RawExtension whose
  raw = 1 is ``k8s\\x00`` and a ``runtime.Unknown``: typeMeta = 1, raw = 2, the object, whose
  metadata = 1 holds name = 1, namespace = 3, resourceVersion = 6).
Any other encoding is passed through as it comes, undelayed.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

MAGIC = b"k8s\x00"
JSON, PROTOBUF, OPAQUE = "json", "protobuf", "opaque"


@dataclass(frozen=True)
class Frame:
    """One event as it travels: ``data`` is the frame with its own framing."""

    data: bytes
    type: str = ""
    name: str = ""
    namespace: str = ""
    rv: str = ""


def encoding_of(content_type: str | None) -> str:
    kind = (content_type or "").lower()
    if "protobuf" in kind:
        return PROTOBUF
    if "json" in kind:
        return JSON
    return OPAQUE


def frames(stream: BinaryIO, encoding: str) -> Iterator[Frame]:
    """Every frame the apiserver sends, until the stream ends."""
    if encoding == JSON:
        while line := stream.readline():
            if line.strip():
                yield json_frame(line.rstrip(b"\n"))
    elif encoding == PROTOBUF:
        while len(head := _read(stream, 4)) == 4:
            payload = _read(stream, struct.unpack(">I", head)[0])
            yield protobuf_frame(head + payload)
    else:
        while chunk := stream.read1(65536) if hasattr(stream, "read1") else stream.read(65536):
            yield Frame(chunk)


def _read(stream: BinaryIO, size: int) -> bytes:
    data = b""
    while len(data) < size:
        more = stream.read(size - len(data))
        if not more:
            break
        data += more
    return data


def json_frame(line: bytes) -> Frame:
    try:
        event = json.loads(line)
    except ValueError:
        event = {}
    meta = (event.get("object") or {}).get("metadata") or {}
    return Frame(line + b"\n", event.get("type", ""), meta.get("name", ""),
                 meta.get("namespace", ""), meta.get("resourceVersion", ""))


# --- protobuf, as little of it as a watch event needs ----------------------------------------


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, at
        shift += 7


def fields(data: bytes) -> dict[int, bytes | int]:
    """The first occurrence of each field of a message (length-delimited ones as bytes)."""
    found: dict[int, bytes | int] = {}
    at = 0
    while at < len(data):
        key, at = _varint(data, at)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, at = _varint(data, at)
        elif wire == 2:
            size, at = _varint(data, at)
            value, at = data[at:at + size], at + size
        elif wire == 1:
            value, at = data[at:at + 8], at + 8
        elif wire == 5:
            value, at = data[at:at + 4], at + 4
        else:
            raise ValueError(f"protobuf wire type {wire}")
        found.setdefault(number, value)
    return found


def _text(value: bytes | int | None) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else ""


def protobuf_frame(data: bytes) -> Frame:
    try:
        event = fields(data[4:])
        raw = fields(event.get(2, b"")).get(1, b"")
        unknown = fields(raw[len(MAGIC):] if raw.startswith(MAGIC) else raw)
        meta = fields(fields(unknown.get(2, b"")).get(1, b""))
        return Frame(data, _text(event.get(1)), _text(meta.get(1)), _text(meta.get(3)),
                     _text(meta.get(6)))
    except (ValueError, IndexError):
        return Frame(data)


def _field(number: int, value: bytes | str | int) -> bytes:
    if isinstance(value, int):
        return _key(number, 0) + _encode_varint(value)
    data = value.encode() if isinstance(value, str) else value
    return _key(number, 2) + _encode_varint(len(data)) + data


def _key(number: int, wire: int) -> bytes:
    return _encode_varint(number << 3 | wire)


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def expired(encoding: str) -> bytes:
    """A watch event that says 410 Gone (the client must re-list), in the stream's encoding."""
    message = "too old resource version (aftershock)"
    if encoding == PROTOBUF:
        status = (_field(2, "Failure") + _field(3, message) + _field(4, "Expired")
                  + _field(6, 410))
        unknown = MAGIC + _field(1, _field(1, "v1") + _field(2, "Status")) + _field(2, status)
        event = _field(1, "ERROR") + _field(2, _field(1, unknown))
        return struct.pack(">I", len(event)) + event
    return json.dumps({"type": "ERROR", "object": {
        "kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Expired",
        "code": 410, "message": message}}).encode() + b"\n"
