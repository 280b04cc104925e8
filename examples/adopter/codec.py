"""The application's own encryption: AES-256-GCM under its own key (APP_CODEC_KEY, 64 hex
digits) and its own encoding name. The plugin keeps it: every payload of the application's
workflows and of the AgentJobs it starts is sealed with it."""

from __future__ import annotations

import os
from collections.abc import Sequence

from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from temporalio.api.common.v1 import Payload
from temporalio.converter import PayloadCodec

ENCODING = b"binary/app-encrypted"


class AppCodec(PayloadCodec):
    def __init__(self, key: bytes | None = None) -> None:
        self.aead = AESGCM(key or bytes.fromhex(os.environ["APP_CODEC_KEY"]))

    async def encode(self, payloads: Sequence[Payload]) -> list[Payload]:
        out = []
        for p in payloads:
            nonce = os.urandom(12)
            sealed = nonce + self.aead.encrypt(nonce, p.SerializeToString(), None)
            out.append(Payload(metadata={"encoding": ENCODING}, data=sealed))
        return out

    async def decode(self, payloads: Sequence[Payload]) -> list[Payload]:
        out = []
        for p in payloads:
            if p.metadata.get("encoding") != ENCODING:
                out.append(p)
                continue
            inner = Payload()
            inner.ParseFromString(self.aead.decrypt(p.data[:12], p.data[12:], None))
            out.append(inner)
        return out
