"""Parsers for untrusted repository text: strict YAML, Markdown and reStructuredText sections."""

from gitquarry.parsing.strict_yaml import YamlFloat, YamlInt, YamlMapping, YamlSequence, load_yaml

__all__ = ["YamlFloat", "YamlInt", "YamlMapping", "YamlSequence", "load_yaml"]
