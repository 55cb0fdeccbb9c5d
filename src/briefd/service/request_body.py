"""The base of every request body REST and MCP take (I1, I2)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator

from briefd.service.problems import flags_for_counts


class RequestIn(BaseModel):
    """A request body: a field it does not have is an error naming it (422), not ignored — a
    typo such as ``max_token`` would otherwise quietly fall back to the default. A count sent
    as ``true`` or ``false`` is refused naming the field, as MCP tool arguments are
    (:func:`~briefd.service.problems.flags_for_counts`): pydantic read ``true`` as 1."""

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _no_flag_for_a_count(cls, data: Any) -> Any:
        wrong = flags_for_counts(cls, data) if isinstance(data, Mapping) else ""
        if wrong:
            raise ValueError(wrong)
        return data
