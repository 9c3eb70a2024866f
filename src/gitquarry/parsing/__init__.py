"""Parsers for untrusted repository text: strict YAML, Markdown and reStructuredText sections."""

from typing import TYPE_CHECKING

from gitquarry._lazy import lazy_exports

if TYPE_CHECKING:
    from gitquarry.parsing.strict_yaml import (
        YamlFloat,
        YamlInt,
        YamlMapping,
        YamlSequence,
        load_yaml,
    )

#: exported name -> the module that defines it (imported on first use)
_EXPORTS = {
    "YamlFloat": "gitquarry.parsing.strict_yaml",
    "YamlInt": "gitquarry.parsing.strict_yaml",
    "YamlMapping": "gitquarry.parsing.strict_yaml",
    "YamlSequence": "gitquarry.parsing.strict_yaml",
    "load_yaml": "gitquarry.parsing.strict_yaml",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = ["YamlFloat", "YamlInt", "YamlMapping", "YamlSequence", "load_yaml"]
