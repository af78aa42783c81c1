"""What the generated bindings share: turning a generated input model into a start body."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


def initial_data(model: BaseModel) -> dict[str, Any]:
    """The JSON object a generated input model stands for, with only the fields that were set."""
    data = model.model_dump(mode="json", by_alias=True, exclude_unset=True)
    if not isinstance(data, dict):
        raise TypeError(f"{type(model).__name__} is not a JSON object")
    return data
