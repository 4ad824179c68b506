"""The rule registry. One module per rule; rules are independent of the order they run in
(they read one analysis and return edits as data), so this list only fixes the order of the
rule table and of findings at the same position."""

from __future__ import annotations

from collections.abc import Sequence

from devfix.rules.base import Example, Finding, Rule, RuleContext
from devfix.rules.dev001_device_declaration import DeviceDeclaration
from devfix.rules.dev002_hard_coded_cuda import HardCodedCuda
from devfix.rules.dev003_model_placement import ModelPlacement
from devfix.rules.dev004_batch_to_device import BatchToDevice
from devfix.rules.dev005_loader_pin_memory import LoaderPinMemory
from devfix.rules.dev006_dataset_off_cpu_path import DatasetOffCpuPath
from devfix.rules.dev007_forward_created_tensor import ForwardCreatedTensor
from devfix.rules.dev008_loop_created_tensor import LoopCreatedTensor
from devfix.rules.dev009_host_conversion import HostConversion
from devfix.rules.dev010_load_map_location import LoadMapLocation
from devfix.rules.dev011_discarded_to import DiscardedTo
from devfix.rules.dev012_module_tensor_attribute import ModuleTensorAttribute
from devfix.rules.dev013_plain_list_of_modules import PlainListOfModules
from devfix.rules.dev014_loader_not_pinned import LoaderNotPinned
from devfix.rules.dev015_legacy_cuda_idiom import LegacyCudaIdiom

ALL_RULES: list[type[Rule]] = [
    DeviceDeclaration,
    HardCodedCuda,
    ModelPlacement,
    BatchToDevice,
    LoaderPinMemory,
    DatasetOffCpuPath,
    ForwardCreatedTensor,
    LoopCreatedTensor,
    HostConversion,
    LoadMapLocation,
    DiscardedTo,
    ModuleTensorAttribute,
    PlainListOfModules,
    LoaderNotPinned,
    LegacyCudaIdiom,
]

BY_CODE: dict[str, type[Rule]] = {rule.code: rule for rule in ALL_RULES}
BY_NAME: dict[str, type[Rule]] = {rule.name: rule for rule in ALL_RULES}


def lookup(selector: str) -> list[type[Rule]]:
    """Rules matching a code (`DEV003`), a prefix (`DEV00`), `ALL`, or a kebab-case name."""
    selector = selector.strip()
    if selector.upper() == "ALL":
        return list(ALL_RULES)
    if selector in BY_NAME:
        return [BY_NAME[selector]]
    matches = [rule for rule in ALL_RULES if rule.code.startswith(selector.upper())]
    if not matches:
        raise KeyError(selector)
    return matches


def enabled_rules(
    select: Sequence[str] = (), extend_select: Sequence[str] = (), ignore: Sequence[str] = ()
) -> list[type[Rule]]:
    """The rules to run, in code order."""
    if select:
        chosen = {rule for selector in select for rule in lookup(selector)}
    else:
        chosen = {rule for rule in ALL_RULES if rule.enabled_by_default}
    chosen |= {rule for selector in extend_select for rule in lookup(selector)}
    chosen -= {rule for selector in ignore for rule in lookup(selector)}
    return [rule for rule in ALL_RULES if rule in chosen]


__all__ = ["ALL_RULES", "BY_CODE", "Example", "Finding", "Rule", "RuleContext", "enabled_rules", "lookup"]
