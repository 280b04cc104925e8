"""The parts of bfcl-eval this package uses, imported in one place.

bfcl-eval writes result, score and lock folders under `BFCL_PROJECT_ROOT` when its
`bfcl_eval.utils` is imported (by default inside site-packages): unless the variable is set,
it is pointed at a fresh temporary folder first (removed when the process exits; nothing
this package uses writes there). bfcl-eval ships no type hints.
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import tempfile

if not os.environ.get("BFCL_PROJECT_ROOT"):
    os.environ["BFCL_PROJECT_ROOT"] = tempfile.mkdtemp(prefix="switchback-bfcl-")
    atexit.register(functools.partial(shutil.rmtree, os.environ["BFCL_PROJECT_ROOT"],
                                      ignore_errors=True))

# ruff: noqa: E402 - the variable is set before bfcl_eval reads it
from bfcl_eval import utils  # type: ignore[import-untyped]
from bfcl_eval.constants.default_prompts import (  # type: ignore[import-untyped]
    DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC,
)
from bfcl_eval.constants.eval_config import (  # type: ignore[import-untyped]
    MULTI_TURN_FUNC_DOC_PATH,
)
from bfcl_eval.constants.executable_backend_config import (  # type: ignore[import-untyped]
    CLASS_FILE_PATH_MAPPING,
    MULTI_TURN_FUNC_DOC_FILE_MAPPING,
    STATELESS_CLASSES,
)
from bfcl_eval.constants.type_mappings import GORILLA_TO_OPENAPI  # type: ignore[import-untyped]
from bfcl_eval.eval_checker.multi_turn_eval import (  # type: ignore[import-untyped]
    multi_turn_checker,
    multi_turn_utils,
)

# the API classes of the multi-turn categories (base, long_context, miss_func, miss_param)
CLASSES = ("GorillaFileSystem", "MathAPI", "MessageAPI", "TwitterAPI", "TicketAPI",
           "TradingBot", "TravelAPI", "VehicleControlAPI")

__all__ = ["CLASSES", "CLASS_FILE_PATH_MAPPING", "DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC",
           "GORILLA_TO_OPENAPI", "MULTI_TURN_FUNC_DOC_FILE_MAPPING", "MULTI_TURN_FUNC_DOC_PATH",
           "STATELESS_CLASSES", "multi_turn_checker", "multi_turn_utils", "utils"]
