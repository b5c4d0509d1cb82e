"""Automations: rules (trigger, conditions, actions) run on the bridge with their own token.

The front door: ``AutomationRunner`` (loads, watches, runs, manages), ``RuleStore``,
``Rule`` and ``rule_schema``; ``SwitchBindings`` (Matter bindings beside the rules).
Details: docs/automations.md.
"""

from bridge.automations.bindings import SwitchBindings, parse_pair
from bridge.automations.rules import HomePlace, Rule, rule_schema, zone
from bridge.automations.runner import AutomationRunner
from bridge.automations.store import RuleStore

__all__ = [
    "AutomationRunner",
    "HomePlace",
    "Rule",
    "RuleStore",
    "SwitchBindings",
    "parse_pair",
    "rule_schema",
    "zone",
]
