"""AES-256-GCM payload codec: what Temporal (history, UI, CLI) sees of switchback's payloads.

Contract:
- `encode` encrypts every payload: the whole serialized `Payload` (its metadata and
  data) is sealed with AES-256-GCM under a random 12-byte nonce; the result is a
  payload with metadata `encoding: binary/encrypted`, `encryption-key-id: <id>` and
  data `nonce || ciphertext || tag`. The format is that of Temporal's encryption
  samples (no associated data), so a codec server in another language reads it.
- `decode` decrypts payloads whose encoding is `binary/encrypted` with the key named
  by their `encryption-key-id`; every other payload passes through unchanged (history
  written before encryption was turned on still reads). An unknown key id raises
  `UnknownKeyError` naming the id; a tampered payload (or a wrong key under a known
  id) raises `DecryptionError`. Messages never contain key material or plaintext.
- Keys: `SWITCHBACK_CODEC_KEYS` = `id:base64key,id:base64key,...`, each key 32 bytes
  (standard or URL-safe base64), ids of `[A-Za-z0-9._-]`. The first key encrypts, all
  decrypt. Rotation: put the new key first and keep the old ones after it for as long
  as histories (and externally stored payloads) written with them must be read.
  `codec_from_env()` returns None when the variable is unset or blank: encryption is
  off by default. Make a key with
  `python -c "import os,base64;print(base64.b64encode(os.urandom(32)).decode())"`.
- `with_codec(converter, codec)` puts the codec on a data converter and switches its
  failure converter to `BoundedFailureConverterWithEncodedAttributes` (codec/bounded_failures.py:
  the SDK's encoded-attributes converter, clipped to fit), so failure
  messages and stack traces are encrypted too (the UI shows them through the codec
  server); with `codec=None` the converter is returned unchanged.

With external storage (activities/storage/payloads.py): the SDK (temporalio 1.35,
`DataConverter._transform_outbound_payload(s)`) runs the codec first and external
storage second, and reads back in the reverse order. So a payload above
`SWITCHBACK_PAYLOAD_THRESHOLD` (measured after encryption, which adds ~60 bytes) is
stored in S3 **encrypted**: the object is the serialized `binary/encrypted` payload,
keyed by the SHA-256 of those ciphertext bytes (a random nonce per encode, so equal
values no longer deduplicate). What stays in history for it is the SDK's reference
payload (`json/protobuf` `ExternalStorageReference`: driver name, bucket, object key,
size), which is *not* encrypted in this SDK version (`_ENCODE_STORAGE_REFERENCES` is
off). The codec server therefore shows such a payload as its reference; decrypting
its content needs the S3 object and a worker-side converter. The workspace files
themselves (S3 objects under `<job id>/`) are not touched by this codec.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import os
import re
from collections.abc import Mapping, Sequence

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from temporalio.api.common.v1 import Payload
from temporalio.converter import DataConverter, PayloadCodec

from switchback.codec.bounded_failures import BoundedFailureConverterWithEncodedAttributes

ENV_KEYS = "SWITCHBACK_CODEC_KEYS"
ENCODING = b"binary/encrypted"
KEY_ID = "encryption-key-id"
NONCE_BYTES = 12
TAG_BYTES = 16
KEY_BYTES = 32
_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")


class CodecError(ValueError):
    """A key configuration or payload that the codec cannot work with."""


class UnknownKeyError(CodecError):
    def __init__(self, key_id: str, known: Sequence[str]) -> None:
        super().__init__(f"payload is encrypted with key id '{key_id}', which is not in "
                         f"{ENV_KEYS} (known ids: {', '.join(known)}); add that key after "
                         "the current one to read it")
        self.key_id = key_id


class DecryptionError(CodecError):
    pass


def parse_keys(spec: str) -> list[tuple[str, bytes]]:
    """`id:base64key,...` -> [(id, key)], in order; raises CodecError naming the bad entry."""
    keys: list[tuple[str, bytes]] = []
    for n, entry in enumerate((e.strip() for e in spec.split(",")), start=1):
        if not entry:
            continue
        key_id, sep, b64 = entry.partition(":")
        key_id, b64 = key_id.strip(), b64.strip()
        if not sep or not _ID.fullmatch(key_id):
            raise CodecError(f"{ENV_KEYS} entry {n}: expected 'id:base64key' with an id of "
                             "letters, digits, '.', '_' or '-' (at most 64)")
        if any(k == key_id for k, _ in keys):
            raise CodecError(f"{ENV_KEYS}: key id '{key_id}' appears twice")
        key = _b64(b64)
        if key is None or len(key) != KEY_BYTES:
            got = "not base64" if key is None else f"{len(key)} bytes"
            raise CodecError(f"{ENV_KEYS}: key '{key_id}' must be {KEY_BYTES} bytes of base64 "
                             f"(AES-256), got {got}")
        keys.append((key_id, key))
    if not keys:
        raise CodecError(f"{ENV_KEYS} names no key")
    return keys


def _b64(text: str) -> bytes | None:
    altchars = b"-_" if ("-" in text or "_" in text) else None  # URL-safe alphabet
    try:
        return base64.b64decode(text + "=" * (-len(text) % 4), altchars=altchars, validate=True)
    except (binascii.Error, ValueError):
        return None


class AesGcmCodec(PayloadCodec):
    def __init__(self, keys: Sequence[tuple[str, bytes]]) -> None:
        if not keys:
            raise CodecError("AesGcmCodec needs at least one key")
        self.key_id = keys[0][0]
        self._ciphers = {key_id: AESGCM(key) for key_id, key in keys}
        self._current = self._ciphers[self.key_id]

    @property
    def key_ids(self) -> list[str]:
        return list(self._ciphers)

    def encrypt(self, payload: Payload) -> Payload:
        nonce = os.urandom(NONCE_BYTES)
        sealed = self._current.encrypt(nonce, payload.SerializeToString(), None)
        return Payload(metadata={"encoding": ENCODING, KEY_ID: self.key_id.encode()},
                       data=nonce + sealed)

    def decrypt(self, payload: Payload) -> Payload:
        if payload.metadata.get("encoding") != ENCODING:
            return payload
        key_id = payload.metadata.get(KEY_ID, b"").decode("utf-8", errors="replace")
        cipher = self._ciphers.get(key_id)
        if cipher is None:
            raise UnknownKeyError(key_id, self.key_ids)
        data = payload.data
        if len(data) < NONCE_BYTES + TAG_BYTES:
            raise DecryptionError(f"payload encrypted with key id '{key_id}' is truncated: "
                                  f"{len(data)} bytes")
        try:
            plain = cipher.decrypt(data[:NONCE_BYTES], data[NONCE_BYTES:], None)
        except InvalidTag:
            raise DecryptionError(f"payload encrypted with key id '{key_id}' failed "
                                  "authentication: it was altered, or the key under that id "
                                  "is not the one it was written with") from None
        out = Payload()
        out.ParseFromString(plain)
        return out

    async def encode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return [self.encrypt(p) for p in payloads]

    async def decode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return [self.decrypt(p) for p in payloads]


def codec_from_env(environ: Mapping[str, str] | None = None) -> AesGcmCodec | None:
    """The codec from SWITCHBACK_CODEC_KEYS, or None when it is unset or blank."""
    spec = (os.environ if environ is None else environ).get(ENV_KEYS, "")
    return AesGcmCodec(parse_keys(spec)) if spec.strip() else None


def with_codec(converter: DataConverter, codec: PayloadCodec | None) -> DataConverter:
    """`converter` with `codec` on its payloads and failure messages (None: unchanged)."""
    if codec is None:
        return converter
    return dataclasses.replace(converter, payload_codec=codec,
                               failure_converter_class=BoundedFailureConverterWithEncodedAttributes)
