"""What the mixins of `Program` (names.py, classes.py, functions.py) share, for the type checker.

`Program` (program.py) is made of `NameFlow`, `ClassFlow` and `FunctionFlow`, and each of them
reads the state `Program` sets up and calls methods that another part defines. `FlowState`,
their common base, declares that state and those methods' signatures; it holds nothing and
defines nothing at run time (the methods are declared only for the type checker), so what
runs is `Program`'s own.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    import libcst as cst

    from devfix.analysis.classinfo import ClassInfo
    from devfix.analysis.collect import Collected
    from devfix.analysis.evaluate import Frame
    from devfix.analysis.functions import Args, FunctionInfo
    from devfix.analysis.linking import ClassSummary, Export, FunctionSummary, Linker
    from devfix.analysis.values import Meeting, Obj, Origin, Place, Value


class FlowState:
    """The state and the methods of `Program` that its mixins use (set up in program.py)."""

    data: Collected
    linker: Linker | None
    module_env: dict[str, Value]
    bound: dict[tuple[int, str], Value]
    values: dict[int, Value]
    meetings: dict[int, Meeting]
    functions: dict[int, FunctionInfo]
    classes: dict[int, ClassInfo]
    built_classes: dict[int, ClassInfo]  # the project classes whose modules the program builds
    linked: dict[int, Export]
    linked_functions: dict[int, FunctionSummary]
    linked_calls: list[tuple[FunctionSummary, dict[str, Value] | None]]
    children: dict[int, list[int]]
    init_modules: dict[tuple[int, str], cst.ClassDef | None]
    ctc_losses: set[int]
    gpu_only_calls: list[cst.CSTNode]
    call_sites: dict[int, list[cst.Call]]
    constructions: dict[int, list[cst.Call]]
    quiet_calls: set[int]
    escaped_functions: set[int]
    namespace_devices: set[str]  # devices the program keeps on its options (`args.device = ...`)
    assume_unmoved: frozenset[int]  # DEV006's what-if: transfers (and linked datasets) taken as gone
    module: cst.Module
    callers_pass: dict[str, tuple[int, frozenset[str]]]
    incoming: dict[str, dict[str, Value]]
    named_elsewhere: frozenset[str]
    _device_params: dict[int, frozenset[str]]
    _cuda_switches: dict[int, frozenset[tuple[str, bool]]]
    _forwarded_switches: dict[int, frozenset[tuple[str, bool]]]

    if TYPE_CHECKING:  # pragma: no cover
        # program.py
        @property
        def imports_torch(self) -> bool: ...

        def meet(
            self,
            node: cst.CSTNode,
            kind: str,
            operands: Iterable[tuple[cst.CSTNode, Value]],
            module: Value | None = None,
            detail: str = "",
        ) -> None: ...

        def construct(
            self,
            frame: Frame,
            node: cst.Call,
            *,
            neutral: bool,
            place: Place = ...,
            cls: ClassInfo | None = None,
            children: tuple[Obj, ...] = (),
            origins: frozenset[Origin] | None = None,
        ) -> Value: ...

        # classes.py
        def linked_class(self, summary: ClassSummary) -> ClassInfo: ...

        def instantiate(self, frame: Frame, node: cst.Call, cls: ClassInfo, args: Args) -> Value: ...

        def settle_constructor(self, info: FunctionInfo, then: FunctionInfo | None = None) -> None: ...

        # functions.py
        def call_function(
            self, frame: Frame, node: cst.Call, info: FunctionInfo, args: Args, bound: Value | None
        ) -> Value: ...

        def note_linked_call(self, summary: FunctionSummary | None, args: Args) -> dict[str, Value] | None: ...

        def note_gpu_argument(
            self,
            node: cst.Call,
            args: Args,
            params: Sequence[str],
            device_params: frozenset[str],
            cuda_switches: frozenset[tuple[str, bool]] = frozenset(),
            needs_gpu: bool = False,
            *,
            method: bool = False,
        ) -> None: ...

        def note_parent_init(self, node: cst.Call, klass: ClassInfo) -> None: ...

        def device_params(self, info: FunctionInfo) -> frozenset[str]: ...

        def cuda_switches(self, info: FunctionInfo) -> frozenset[tuple[str, bool]]: ...

        def _returned(self, frame: Frame, call: cst.Call, value: Value) -> Value: ...
