"""The data converter a client gets from switchback's plugin: the client's own, with only what
switchback needs changed, as the Temporal integrations of openai-agents and pydantic-ai do.

    payload converter   pydantic's (switchback's inputs and results are pydantic models);
                        one that already is (a subclass of PydanticPayloadConverter) is kept,
                        another than the SDK's default is replaced with a warning
    payload codec       the client's own, kept; none: SWITCHBACK_CODEC_KEYS' AES-GCM codec
                        when that is set (codec/), else none
    failure converter   the client's own, kept; the SDK's default becomes switchback's
                        bounded one, the same converter with each message and stack trace
                        clipped (codec/bounded_failures.py), encoding its attributes when
                        the default did or switchback's codec was added
    external storage    the client's own, kept; none: payloads at or above
                        SWITCHBACK_PAYLOAD_THRESHOLD go to S3 (activities/storage/payloads.py)

These apply to every payload of the client, the user's own workflows' too: their codec and
failure converter are what they were; their pydantic-compatible payloads convert as before.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import warnings
from typing import Any

from temporalio.contrib.pydantic import PydanticPayloadConverter
from temporalio.converter import (
    DataConverter,
    DefaultFailureConverter,
    DefaultFailureConverterWithEncodedAttributes,
    DefaultPayloadConverter,
)

from switchback.activities.storage.payloads import data_converter
from switchback.activities.storage.s3 import S3Store
from switchback.codec import ENV_KEYS, codec_from_env
from switchback.codec.bounded_failures import (
    BoundedFailureConverter,
    BoundedFailureConverterWithEncodedAttributes,
)

log = logging.getLogger("switchback.plugin")


def compose(existing: DataConverter | None, s3: S3Store | None) -> DataConverter:
    """`existing` (None: the SDK's default) with switchback's needs (module docstring)."""
    base = existing or DataConverter.default
    changes: dict[str, Any] = {}
    if not issubclass(base.payload_converter_class, PydanticPayloadConverter):
        if base.payload_converter_class is not DefaultPayloadConverter:
            warnings.warn(f"switchback: the client's payload converter "
                          f"{base.payload_converter_class.__name__} is replaced with "
                          "PydanticPayloadConverter (switchback's payloads are pydantic "
                          "models); derive yours from it to keep it", stacklevel=2)
        changes["payload_converter_class"] = PydanticPayloadConverter
    encode_failures = base.failure_converter_class is DefaultFailureConverterWithEncodedAttributes
    if base.payload_codec is None:
        codec = codec_from_env()
        if codec is not None:
            changes["payload_codec"] = codec
            encode_failures = True  # as switchback's own worker: failure text encrypted too
    elif os.environ.get(ENV_KEYS, "").strip():
        log.warning("%s is set, but the client has a codec of its own: switchback's payloads "
                    "go through that codec, not through %s", ENV_KEYS, ENV_KEYS)
    if base.failure_converter_class in (DefaultFailureConverter,
                                        DefaultFailureConverterWithEncodedAttributes):
        changes["failure_converter_class"] = (BoundedFailureConverterWithEncodedAttributes
                                              if encode_failures else BoundedFailureConverter)
    if base.external_storage is None and s3 is not None:
        storage = data_converter(s3).external_storage
        if storage is not None:
            changes["external_storage"] = storage
    return dataclasses.replace(base, **changes)
