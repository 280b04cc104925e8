"""Payload encryption for switchback: an AES-256-GCM `PayloadCodec` (codec/aes_gcm.py) and a
codec server for the Temporal web UI and CLI (codec/server.py, `python -m switchback.codec.server`).

Off unless `SWITCHBACK_CODEC_KEYS` is set; `codec_from_env()` then returns the codec and
`with_codec(converter, codec)` puts it on a data converter.
"""

from switchback.codec.aes_gcm import (
    ENV_KEYS,
    AesGcmCodec,
    CodecError,
    DecryptionError,
    UnknownKeyError,
    codec_from_env,
    parse_keys,
    with_codec,
)

__all__ = ["ENV_KEYS", "AesGcmCodec", "CodecError", "DecryptionError", "UnknownKeyError",
           "codec_from_env", "parse_keys", "with_codec"]
