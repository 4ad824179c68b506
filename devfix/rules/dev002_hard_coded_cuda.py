"""DEV002 hard-coded-cuda: CUDA-only code that runs on a CPU-only machine uses the device variable."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import libcst as cst

from devfix.analysis import torch_api as api
from devfix.analysis.demands import compared_with_the_cpu, is_cuda_call
from devfix.analysis.facts import FileFacts
from devfix.analysis.operations import string_of
from devfix.analysis.reach import always_true_guard, gpu_only_call_ids, is_distributed, runs_without_gpu
from devfix.analysis.scopes import dotted_name
from devfix.analysis.tree import Tree, read_names
from devfix.analysis.values import Kind, Place, Value
from devfix.edits import Replace, ReplaceStatement
from devfix.rules.base import Example, Finding, Rule, RuleContext
from devfix.rules.common import is_cuda_string, keyword, keyword_arg, move_to, parenthesize, replace_arg_value

NO_DEVICE_HINT = "declare a device (`device = torch.device(...)`) and use it instead"


class HardCodedCuda(Rule):
    code = "DEV002"
    name = "hard-coded-cuda"
    summary = '`.cuda()`, `.to("cuda")`, `device="cuda"` and other CUDA-only code crash on a CPU-only machine.'
    fix_summary = 'Unguarded `.cuda()`, `.to("cuda")`, `device="cuda"`, `torch.cuda.FloatTensor` and `torch.cuda.set_device()` (they crash without a GPU) use the device variable.'
    why = """
A hard-coded `.cuda()` or `"cuda"` makes the script die on a machine without a GPU
("Torch not compiled with CUDA enabled" / "No CUDA GPUs are available"), and ignores the
device the rest of the program chose. Routing every placement through one device variable
keeps the script runnable everywhere and consistent. The same holds for the other CUDA-only
constructs: the legacy typed constructors used unconditionally (`torch.cuda.FloatTensor`),
and `torch.cuda.set_device(...)` or `torch.cuda.synchronize()` outside a CUDA check (they
get one).

Code that only runs where a GPU exists is correct and left alone: under
`if torch.cuda.is_available():`, under a flag the user sets (`if args.cuda:`), in a
function only called there, inside a `try` that handles the failure, and code that is GPU
code by design because it asks CUDA, unconditionally, for what only a GPU has (a device
index with `torch.cuda.current_device()`, a name, an event, `.cuda(args.gpu)`). A condition
that is always true is not a check: `USE_CUDA = True`, or an option no command line turns off:
one parsed with `type=bool` and a true default (argparse calls `bool` on the text given, so
`--gpu_mode False` is true), or a `store_true` flag whose default is already `True`. Nor is code after a statement that always fails (a name used before anything
binds it, as in a notebook exported out of order) a crash devfix could fix. Rewriting correct guarded code into the device-variable style is
the opt-in DEV015.
"""
    example = """
model = Net().cuda()
x = torch.zeros(8, device="cuda")
Tensor = torch.cuda.FloatTensor
"""
    use_instead = """
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = Net().to(device)
x = torch.zeros(8, device=device)
Tensor = torch.cuda.FloatTensor if torch.cuda.is_available() else torch.FloatTensor
"""
    invalid = (
        Example(
            "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nx = torch.ones(2).cuda()\n",
            "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nx = torch.ones(2).to(device)\n",
        ),
        Example(
            "import torch\ndev = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nx = torch.zeros(3, device='cuda:0')\n",
            "import torch\ndev = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nx = torch.zeros(3, device=dev)\n",
        ),
        Example(
            "import torch\nUSE_CUDA = True\nx = torch.ones(2)\nif USE_CUDA:\n    x = x.cuda()\n",
        ),
    )
    valid = (
        "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nx = torch.ones(2).to(device)\n",
        "import torch\nx = torch.ones(2).to('cpu')\n",
        "import torch\nx = torch.ones(2)\nif torch.cuda.is_available():\n    x = x.cuda()\n",
        "import torch\ncuda = torch.cuda.is_available()\nTensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor\n",
    )

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        facts = ctx.facts
        if is_distributed(facts.tree, facts.program):
            return  # a multi-process program picks a GPU per rank by design
        collecting: dict[int, bool] = {}
        for call in facts.data.calls:
            if not _may_hard_code_cuda(ctx, call):
                continue  # nothing `_check_call` looks at
            if facts.value(call) is None and not _only_without_a_gpu(facts, call):
                continue  # never runs
            if not self._runs_without_gpu(ctx, call):
                continue  # only where there is a GPU
            if _feeds_collectives(facts, call, collecting):
                continue  # mmcv's `collect_results_cpu`: NCCL broadcasts the CUDA tensor it makes
            finding = self._check_call(ctx, call)
            if finding is not None:
                yield finding
        yield from self._cuda_types(ctx)

    def _runs_without_gpu(self, ctx: RuleContext, node: cst.CSTNode) -> bool:
        if _on_the_non_cpu_side_of_a_device_test(ctx.facts.tree, node):
            return False  # `if device == "cpu": ... else: torch.cuda.FloatTensor(x)`: the caller's device decides
        return runs_without_gpu(ctx.facts.tree, ctx.facts.program, node)

    # -- calls -------------------------------------------------------------------------------------
    def _check_call(self, ctx: RuleContext, call: cst.Call) -> Finding | None:
        facts = ctx.facts
        func = call.func
        callee = facts.value(func)
        qual = callee.qual if callee is not None else None
        if qual in api.CUDA_ONLY_STATEMENTS:
            if _device_from_caller(ctx, call) or _moves_to_a_hard_cuda_parameter(ctx, call):
                return None  # `cuda_timestamp(device)`: whoever passes the device decides it is CUDA
            if _alias_chosen_per_device(ctx, call):
                return None
            return self._guard(ctx, call, qual)
        if isinstance(func, cst.Attribute) and func.attr.value == "cuda" and ctx.facts.is_cuda_move(call):
            if self._inside_cuda_method(ctx, call):
                return None  # implements `.cuda()` itself (like `nn.Module.cuda`): CUDA is its contract
            moved = facts.value(func.value)
            if moved is not None and moved.kind is Kind.MODULE and moved.neutral:
                # `nn.MSELoss().cuda()`, a module with no parameters or buffers: `.cuda()` has
                # nothing to copy and never touches CUDA, so it runs on a CPU-only machine
                return None
            receiver = facts.code(func.value, 40)
            written = ", ".join(  # `.cuda(0)`, `.cuda(non_blocking=True)`: the call as written
                f"{arg.keyword.value}={facts.code(arg.value, 20)}" if arg.keyword else facts.code(arg.value, 20)
                for arg in call.args
            )
            message = f"`{receiver}.cuda({written})` hard-codes CUDA"
            message += _always_true(facts, call)
            if _changed_in_place(ctx, func.value):
                # `.cuda()` of a CPU tensor is a copy; `.to(device)` on a CPU-only machine is the
                # tensor itself, which the later in-place write would then change under autograd
                receiver_value = facts.value(func.value)
                if receiver_value is None or receiver_value.place is not Place.CPU:
                    return self.finding(
                        call, f"{message}, and `{receiver}` is changed in place elsewhere", hint=COPY_HINT
                    )
                return self._fix(
                    ctx,
                    call,
                    f"{message} (a copy: `{receiver}` is changed in place elsewhere)",
                    lambda device: self._cuda_to_to(ctx, call, device, copy=True),
                )
            return self._fix(ctx, call, message, lambda device: self._cuda_to_to(ctx, call, device))
        if isinstance(func, cst.Attribute) and func.attr.value == "to" and qual is None:
            moved = facts.value(func.value)
            if moved is not None and moved.kind is Kind.MODULE and moved.neutral and moved.cls is None:
                # `DiceCELoss(...).to("cuda:0")`, a library's layer or loss without tensors: nothing
                # to copy, as for `.cuda()` above (not a class of the run, which may hand layers to
                # `super().__init__`: LPIPS's `LinLayers(nn.ModuleList)`)
                return None
            for arg in call.args:
                if (arg.keyword is None or arg.keyword.value == "device") and self._is_cuda_device(ctx, arg.value):
                    return self._fix_argument(
                        ctx, call, arg, f"`{facts.code(func.value, 40)}.to({facts.code(arg.value)})` hard-codes CUDA"
                    )
                if arg.keyword is None or arg.keyword.value == "device":
                    return _index_of_a_tensor(ctx, call, arg, self)
                break
        given_device = keyword(call, "device")
        if given_device is not None and ((qual or "").startswith("torch.") or _is_tensor_method(func)):
            found = _index_of_a_tensor(ctx, call, given_device, self)
            if found is not None:
                return found
        for name in ("device", "map_location"):
            given = keyword(call, name)
            if given is None or not self._is_cuda_device(ctx, given.value):
                continue
            if name == "map_location" and qual not in api.LOADS:
                continue
            if name == "device" and not (
                (qual or "").startswith("torch.")
                or _is_tensor_method(func)
                or (_project_device_parameter(ctx, callee, name) and not _compared_with_the_cpu(ctx, call))
            ):
                continue
            return self._fix_argument(ctx, call, given, f"`{name}={facts.code(given.value)}` hard-codes CUDA")
        return self._cuda_by_position(ctx, call, callee)

    def _cuda_by_position(self, ctx: RuleContext, call: cst.Call, callee: Value | None) -> Finding | None:
        """`p_sample_loop(diffusion, model, noise, "cuda")`: a plain "cuda" passed by position to a
        parameter that a function of the run moves tensors to (rosinality's sampling script),
        as `device="cuda"` would be by name."""
        ref = callee.ref if callee is not None else None
        if not isinstance(ref, cst.FunctionDef) or callee is None or callee.bound is not None:
            return None
        params = [param.name.value for param in (*ref.params.posonly_params, *ref.params.params)]
        for index, arg in enumerate(call.args):
            if arg.keyword is not None or arg.star or index >= len(params):
                break
            name = params[index]
            if (
                is_cuda_string(arg.value)
                and _written_gpu(arg.value) is None
                and _project_device_parameter(ctx, callee, name)
            ):
                if _compared_with_the_cpu(ctx, call):
                    return None  # `profile(rnn, x, y, "cpu")`, then `"cuda"`: the GPU run is meant
                return self._fix_argument(
                    ctx, call, arg, f"`{ctx.facts.code(arg.value)}` passed as `{name}` hard-codes CUDA"
                )
        return None

    def _fix_argument(self, ctx: RuleContext, call: cst.Call, arg: cst.Arg, message: str) -> Finding:
        """`message`'s fix: the CUDA device `arg` passes becomes the device variable."""
        return self._fix(ctx, call, message, _with_device_in(ctx, call, arg), written=arg.value)

    def _fix(
        self,
        ctx: RuleContext,
        call: cst.Call,
        message: str,
        build: Callable[[str], cst.CSTNode],
        written: cst.BaseExpression | None = None,
    ) -> Finding:
        """`written`: the device as the call writes it (`"cuda:0"`), where it names one."""
        devices = ctx.facts.devices
        chosen = _written_gpu(written) if written is not None else None
        if chosen:
            # lora's notebooks load their pipeline with `.to("cuda:1")`: a new declaration, or one
            # that names no GPU by number, is the current GPU, another one than the author's
            known = devices.in_reach_or_planned(call)
            if known is None or known.request is not None or not devices.gpu_indices(known.code, call):
                return self.finding(
                    call,
                    f"{message}; a device without its number would not be GPU {chosen}",
                    hint=f'declare `device = torch.device("cuda:{chosen}" if torch.cuda.is_available() else "cpu")`',
                )
        device = devices.at(call, self.code)
        if device is None:
            return self.finding(call, f"{message}; no device variable can be declared here", hint=NO_DEVICE_HINT)
        others = devices.gpu_indices(device.code, call)
        if others and (chosen or 0) not in others:
            # stat453's GAN notebook trains on "cuda:2", then puts the model on "cuda:0" for
            # torchsummary, whose inputs are made on the current GPU: the second GPU is on purpose
            # (a face-recognition script's `summary(model.cuda(), ...)` beside its "cuda:1" too:
            # `.cuda()` and "cuda" are the current GPU, the first)
            gpus = ", ".join(f"cuda:{i}" for i in sorted(others))
            return self.finding(
                call, f"{message}; `{device.code}` is another GPU ({gpus})", hint=f"use `{device.code}` if it is meant"
            )
        return self.finding(call, f"{message}; use `{device.code}`", [Replace(call, build(device.code))], device=device)

    @staticmethod
    def _inside_cuda_method(ctx: RuleContext, call: cst.Call) -> bool:
        function = ctx.facts.tree.enclosing(call, cst.FunctionDef)
        return isinstance(function, cst.FunctionDef) and function.name.value == "cuda"

    def _cuda_to_to(self, ctx: RuleContext, call: cst.Call, device: str, copy: bool = False) -> cst.Call:
        non_blocking = keyword(call, "non_blocking")
        receiver = cst.ensure_type(call.func, cst.Attribute).value
        new = move_to(receiver, ctx.expression(device))
        if _a_loaded_storage(ctx.facts.tree, receiver):
            # a storage's `.to()` takes the device by keyword only (a positional one is a TypeError)
            new = new.with_changes(args=[keyword_arg("device", new.args[0].value)])
        extra = [non_blocking.with_changes(comma=cst.MaybeSentinel.DEFAULT)] if non_blocking is not None else []
        if copy:
            extra.append(keyword_arg("copy", cst.Name("True")))
        if extra:
            comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
            args = [new.args[0], *extra]
            new = new.with_changes(args=[arg.with_changes(comma=comma) for arg in args[:-1]] + [args[-1]])
        return new.with_changes(lpar=call.lpar, rpar=call.rpar)

    def _is_cuda_device(self, ctx: RuleContext, expr: cst.BaseExpression) -> bool:
        if is_cuda_string(expr):
            return True
        if isinstance(expr, cst.Call):
            callee = ctx.facts.value(expr.func)
            if callee is not None and callee.qual == "torch.device":
                positional = [arg for arg in expr.args if arg.keyword is None]
                return len(positional) == 1 and is_cuda_string(positional[0].value)
        return False

    # -- CUDA-only constructs ----------------------------------------------------------------------
    def _guard(self, ctx: RuleContext, call: cst.Call, qual: str) -> Finding | None:
        """`torch.cuda.set_device(i)`, `torch.cuda.synchronize()` alone on a line: only where CUDA is."""
        tree = ctx.facts.tree
        statement = tree.statement_of(call)
        message = f"`{ctx.facts.code(call.func)}(...)` fails without a GPU"
        if not (
            isinstance(statement, cst.SimpleStatementLine)
            and len(statement.body) == 1
            and isinstance(statement.body[0], cst.Expr)
            and statement.body[0].value is call
        ):
            return self.finding(call, message, hint="call it only `if torch.cuda.is_available():`")
        torch = ctx.facts.devices.torch_name()
        alone = tree.code(statement.with_changes(leading_lines=())).strip()  # its comments stay above the `if`
        guarded = ctx.statement(f"if {torch}.cuda.is_available():\n    {alone}\n")
        guarded = guarded.with_changes(leading_lines=statement.leading_lines)
        return self.finding(
            call, f"{message}; called only where CUDA is available", [ReplaceStatement(statement, [guarded])]
        )

    def _cuda_types(self, ctx: RuleContext) -> Iterator[Finding]:
        """`torch.cuda.FloatTensor` used where there may be no GPU becomes the conditional form."""
        facts = ctx.facts
        torch = facts.devices.torch_name()
        asking = gpu_only_call_ids(facts.program)
        for attribute in _cuda_type_references(facts):
            if _argument_of(facts.tree, attribute, asking):
                # `torch.set_default_tensor_type(torch.cuda.HalfTensor)`: GPU code by design, like
                # the `.cuda()` after it (minimal-llama's create_model)
                continue
            if not self._runs_without_gpu(ctx, attribute):
                continue
            value = facts.value(attribute)
            if value is None or value.qual is None:
                continue  # never: a reference of a known CUDA tensor type
            cpu_type = value.qual.replace("torch.cuda.", f"{torch}.")
            conditional = ctx.expression(f"({facts.code(attribute)} if {torch}.cuda.is_available() else {cpu_type})")
            parent = facts.tree.parent(attribute)
            if not (isinstance(parent, cst.Call) and parent.func is attribute):
                conditional = conditional.with_changes(lpar=[], rpar=[])
                if not isinstance(parent, (cst.Assign, cst.Arg, cst.AnnAssign, cst.Return)):
                    conditional = parenthesize(conditional)
            message = f"`{facts.code(attribute)}` is a CUDA-only tensor type: it fails without a GPU; falls back to `{cpu_type}`"
            yield self.finding(attribute, message, [Replace(attribute, conditional)])


def _a_loaded_storage(tree: Tree, receiver: cst.BaseExpression) -> bool:
    """`storage` in `torch.load(f, map_location=lambda storage, loc: storage.cuda())` or in a
    function of that shape (`def map_func(storage, location): return storage.cuda()`, two
    parameters, the second unused): the first parameter of a `map_location` callback, a
    storage, not a tensor."""
    if not isinstance(receiver, cst.Name):
        return False
    function = tree.enclosing(receiver, (cst.Lambda, cst.FunctionDef))
    if not isinstance(function, (cst.Lambda, cst.FunctionDef)):
        return False
    params = function.params
    if params.posonly_params or params.kwonly_params or isinstance(params.star_arg, cst.Param) or params.star_kwarg:
        return False
    names = [param.name.value for param in params.params]
    if not names or names[0] != receiver.value:
        return False
    parent = tree.parent(function)
    if isinstance(function, cst.Lambda) and isinstance(parent, cst.Arg) and parent.keyword is not None:
        return parent.keyword.value == "map_location"
    body = _returned(function)
    return (
        len(names) == 2
        and all(param.default is None for param in params.params)
        and isinstance(body, cst.Call)
        and isinstance(body.func, cst.Attribute)
        and body.func.value is receiver
        and names[1] not in {name.value for name in read_names(body)}
    )


def _returned(function: cst.Lambda | cst.FunctionDef) -> cst.BaseExpression | None:
    """What a lambda, or a function whose body is one `return` statement, returns."""
    if isinstance(function, cst.Lambda):
        return function.body
    body = function.body
    statements = body.body if isinstance(body, cst.IndentedBlock) else ()
    if len(statements) != 1 or not isinstance(statements[0], cst.SimpleStatementLine):
        return None
    line = statements[0].body
    return line[0].value if len(line) == 1 and isinstance(line[0], cst.Return) else None


def _feeds_collectives(facts: FileFacts, call: cst.Call, memo: dict[int, bool]) -> bool:
    """`call` makes or moves a tensor (`device="cuda"`, `.cuda()`), and a later statement of its
    block, or of a block around it, hands tensors to a `torch.distributed` collective (mmcv's
    `collect_results_cpu` broadcasts a temporary folder's name in a CUDA tensor): NCCL takes
    CUDA tensors, so the hard-coded device is the collective's, by design. Not a collective
    under a test of its own (BasicSR's `if self.opt['dist']: dist.reduce(...)`), which a run
    without processes skips."""
    if not (keyword(call, "device") is not None or is_cuda_call(call)):
        return False
    tree = facts.tree
    child: cst.CSTNode = call
    for ancestor in tree.ancestors(call):
        if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef, cst.Module)):
            return False
        if isinstance(ancestor, cst.IndentedBlock) and isinstance(child, cst.BaseStatement):
            later = ancestor.body[ancestor.body.index(child) + 1 :]
            if any(_collective_line(facts, statement, memo) for statement in later):
                return True
        child = ancestor
    return False


def _collective_line(facts: FileFacts, statement: cst.BaseStatement, memo: dict[int, bool]) -> bool:
    """The statement is a line that calls a collective of `torch.distributed`."""
    if id(statement) not in memo:
        memo[id(statement)] = isinstance(statement, cst.SimpleStatementLine) and any(
            isinstance(small, cst.Expr)
            and isinstance(small.value, cst.Call)
            and (callee := facts.value(small.value.func)) is not None
            and api.is_collective(callee.qual)
            for small in statement.body
        )
    return memo[id(statement)]


def _argument_of(tree: Tree, node: cst.CSTNode, calls: set[int]) -> bool:
    """`node` is an argument of one of `calls`."""
    arg = tree.parent(node)
    call = tree.parent(arg) if isinstance(arg, cst.Arg) else None
    return call is not None and id(call) in calls


def _index_of_a_tensor(ctx: RuleContext, call: cst.Call, arg: cst.Arg, rule: Rule) -> Finding | None:
    """`self.window.to(x.get_device())`, `torch.eye(n, device=t.get_device())`: `get_device()`
    is the tensor's GPU index, and -1 for a CPU tensor, which no device accepts ("Device index
    must not be negative"), so the code runs on a GPU only. `x.device` is where `x` is, on
    either kind of machine. Only where `x` is a tensor, or no class of the run has a
    `get_device` method of its own that the call could be."""
    index = arg.value
    if not (
        isinstance(index, cst.Call)
        and not index.args
        and isinstance(index.func, cst.Attribute)
        and index.func.attr.value == "get_device"
    ):
        return None
    facts = ctx.facts
    receiver = facts.value(index.func.value)
    if receiver is None or receiver.qual is not None:
        return None  # `lib.get_device()`, a module's function
    unknown = receiver.kind is Kind.OTHER and receiver.cls is None and receiver.ref is None
    if receiver.kind is not Kind.TENSOR and (not unknown or "get_device" in facts.program.project_methods):
        return None
    tensor = facts.code(index.func.value, 40)
    new = replace_arg_value(call, arg, cst.Attribute(value=index.func.value, attr=cst.Name("device")))
    return rule.finding(
        call,
        f"`{tensor}.get_device()` is -1 for a CPU tensor, which no device accepts; use `{tensor}.device`",
        [Replace(call, new)],
    )


def _only_without_a_gpu(facts: FileFacts, call: cst.Call) -> bool:
    """`call` lies in a branch that a CPU-only machine takes and a GPU machine does not: the
    `else:` of `if opt.gpu is not None: model = model.cuda(opt.gpu)`, the default run's
    `model = nn.DataParallel(model).cuda()` (few-shot-video-classification's `generate_model`).
    The flow follows a GPU machine's run and never enters it, but a run without a GPU does,
    and crashes there. Decided by the nearest `if` around the call in its function."""
    tree, program = facts.tree, facts.program
    child: cst.CSTNode = call
    for ancestor in tree.ancestors(call):
        if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.Module)):
            return False
        if isinstance(ancestor, cst.If) and child is not ancestor.test:
            value = program.values.get(id(ancestor.test))
            if value is None or value.truth is None or value.cpu is None or value.truth == value.cpu:
                return False
            return (child is ancestor.body) == value.cpu
        child = ancestor
    return False


def _may_hard_code_cuda(ctx: RuleContext, call: cst.Call) -> bool:
    """What `_check_call` can report at all: a CUDA-only statement, `.cuda(...)`, `.to(...)`, or
    a `device=`/`map_location=` argument. Asked first, as it costs nothing, while the question
    whether the call runs without a GPU walks its ancestors and its function's callers."""
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value in ("cuda", "to"):
        return True
    if any(arg.keyword is not None and arg.keyword.value in ("device", "map_location") for arg in call.args):
        return True
    if any(arg.keyword is None and is_cuda_string(arg.value) for arg in call.args):
        return True  # `sample(model, noise, "cuda")`
    callee = ctx.facts.value(func)
    return callee is not None and callee.qual in api.CUDA_ONLY_STATEMENTS


def _with_device_in(ctx: RuleContext, call: cst.Call, arg: cst.Arg) -> Callable[[str], cst.CSTNode]:
    """The fix's builder: `call` with a device expression as the value of `arg`."""
    return lambda device: replace_arg_value(call, arg, ctx.expression(device))


COPY_HINT = (
    "use `.to(device, copy=True)` where it is a CPU tensor (`.to` returns the tensor itself when it is already there)"
)


def _base(expr: cst.BaseExpression) -> cst.BaseExpression:
    while isinstance(expr, cst.Subscript):
        expr = expr.value
    return expr


def _changed_in_place(ctx: RuleContext, receiver: cst.BaseExpression) -> bool:
    """`self.states` (or a local name) written in place somewhere in its class (or function):
    `self.states[i].copy_(s)`, `self.states[i] = s`, `self.states += s`."""
    name = dotted_name(receiver)
    if name is None:
        return False
    facts = ctx.facts
    owner = (
        facts.tree.enclosing(receiver, cst.ClassDef if name.startswith("self.") else cst.FunctionDef)
        or facts.tree.module
    )

    def inside(node: cst.CSTNode) -> bool:
        return owner is facts.tree.module or facts.tree.is_inside(node, owner)

    for call in facts.data.calls:
        func = call.func
        if (
            isinstance(func, cst.Attribute)
            and func.attr.value.endswith("_")
            and not func.attr.value.startswith("_")
            and dotted_name(_base(func.value)) == name
            and inside(call)
        ):
            return True
    for assign in facts.data.assigns:
        if any(
            isinstance(t.target, cst.Subscript) and dotted_name(_base(t.target)) == name for t in assign.targets
        ) and inside(assign):
            return True
    for other in facts.data.other_assigns:
        if isinstance(other, cst.AugAssign) and dotted_name(_base(other.target)) == name and inside(other):
            return True
    return False


def _cuda_type_references(facts: FileFacts) -> Iterator[cst.Attribute]:
    """`torch.cuda.FloatTensor`-like references the flow evaluated: called, passed, assigned
    (also as one side of a conditional), in the order of the file."""
    candidates: list[cst.BaseExpression] = []
    for call in facts.data.calls:
        if isinstance(call.func, cst.Name) and call.func.value in ("isinstance", "issubclass"):
            continue  # a type test works without a GPU: it is simply false there
        candidates.extend([call.func, *[arg.value for arg in call.args]])
    for assign in facts.data.assigns:
        assigned = assign.value
        candidates.extend([assigned.body, assigned.orelse] if isinstance(assigned, cst.IfExp) else [assigned])
    seen: set[int] = set()
    for node in sorted(candidates, key=facts.tree.order):
        if id(node) in seen or not isinstance(node, cst.Attribute):
            continue
        seen.add(id(node))
        value = facts.value(node)
        if value is not None and value.kind is Kind.DEVICE and value.qual in api.CUDA_TENSOR_TYPES:
            if value.flag in ("choice", "available"):
                continue  # `self.FloatTensor`, set to the CUDA type only where a GPU check or option chose it
            yield node


def _is_tensor_method(func: cst.BaseExpression) -> bool:
    return isinstance(func, cst.Attribute) and func.attr.value in (
        "to",
        "new_zeros",
        "new_ones",
        "new_empty",
        "new_full",
        "new_tensor",
    )


def _always_true(facts: FileFacts, call: cst.Call) -> str:
    """Why a `.cuda()` under an `if` is reported anyway: the guard is always true, and, for an
    option no command line turns off (flagged "fixed", in this file or where it came from), why."""
    guard = always_true_guard(facts.tree, facts.program, call)
    if guard is None:
        return ""
    said = f" (`if {facts.code(guard, 30)}:` is always true"
    value = facts.value(guard)
    if value is not None and value.flag == "fixed":
        said += ": an option no command line turns off, parsed with `type=bool` or `store_true` and `default=True`"
    return said + ")"


def _device_from_caller(ctx: RuleContext, call: cst.Call) -> bool:
    """`torch.cuda.synchronize(device)` where `device` is a parameter of the enclosing
    function: a CPU device would fail there with or without a guard, so the callers, not
    this line, decide that it runs on CUDA (timm's `cuda_timestamp(sync, device)`)."""
    scope = ctx.facts.tree.function_scope_of(call)
    for arg in call.args:
        if isinstance(arg.value, cst.Name):
            bindings = scope.bindings.get(arg.value.value, [])
            if any(b.kind == "param" for b in bindings):
                return True
    return False


def _alias_chosen_per_device(ctx: RuleContext, call: cst.Call) -> bool:
    """`synchronize()` after `synchronize = torch.cuda.synchronize if device_type == "cuda" else
    lambda: None` (nanochat's training scripts): the author already picked the CUDA call only
    for a CUDA device, and the flow, which follows the GPU machine's branch, cannot say so."""
    func = call.func
    if not isinstance(func, cst.Name):
        return False
    bindings = ctx.facts.tree.scope_of(call).lookup(func.value) or []
    return any(binding.kind == "assign" and isinstance(binding.value, cst.IfExp) for binding in bindings)


def _moves_to_a_hard_cuda_parameter(ctx: RuleContext, call: cst.Call) -> bool:
    """`batch.to(device); torch.cuda.synchronize()` in a function whose callers all pass
    `torch.device("cuda")` (a GPU benchmark's `__main__`): the function cannot run without a
    GPU whatever this line does, and the device is the callers' choice."""
    facts = ctx.facts
    function = facts.tree.enclosing(call, cst.FunctionDef)
    if function is None:
        return False
    scope = facts.tree.function_scope_of(call)
    for move in facts.data.within(facts.data.calls, function):
        func = move.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "to" and move.args):
            continue
        target = move.args[0].value
        if not isinstance(target, cst.Name) or not any(b.kind == "param" for b in scope.bindings.get(target.value, [])):
            continue
        value = facts.value(target)
        if value is not None and value.kind is Kind.DEVICE and value.place is Place.DEVICE and value.flag == "hard":
            return True
    return False


def _compared_with_the_cpu(ctx: RuleContext, call: cst.Call) -> bool:
    return compared_with_the_cpu(ctx.facts.program.values, ctx.facts.data.calls, call)


def _project_device_parameter(ctx: RuleContext, callee: Value | None, name: str) -> bool:
    """`utils.interp_sheet(G, ..., device='cuda')`: a function of the run that makes or moves
    tensors with its parameter `name`, so the string passed there is where they go."""
    ref = callee.ref if callee is not None else None
    if not isinstance(ref, cst.FunctionDef):
        return False
    program = ctx.facts.program
    if id(ref) in program.functions:
        return name in program.device_params(program.functions[id(ref)])
    linked = program.linked_functions.get(id(ref))
    return linked is not None and name in linked.device_params


def _written_gpu(expr: cst.BaseExpression) -> int | None:
    """The GPU index a device written out names: 0 for "cuda:0", None for "cuda" (the current
    GPU), `torch.device("cuda:1")` as "cuda:1"."""
    if isinstance(expr, cst.Call) and expr.args:
        expr = expr.args[0].value
    text = string_of(expr)
    return api.gpu_number(text) if text is not None else None


def _on_the_non_cpu_side_of_a_device_test(tree: Tree, node: cst.CSTNode) -> bool:
    """`node` lies in the branch an `if` over a device parameter takes for a device that is not
    the CPU (`if device == "cpu": x = torch.FloatTensor(x) else: x = torch.cuda.FloatTensor(x)`
    in a `forward(self, data, device)`): the function already follows the device its caller
    picks, and a CPU-only machine never reaches that branch unless a caller hard-codes CUDA,
    which is that caller's finding."""
    function = tree.enclosing(node, cst.FunctionDef)
    if not isinstance(function, cst.FunctionDef):
        return False
    params = {param.name.value for param in (*function.params.posonly_params, *function.params.params)}
    child: cst.CSTNode = node
    for ancestor in tree.ancestors(node):
        if ancestor is function:
            return False
        if isinstance(ancestor, cst.If):
            side = _device_side(ancestor.test, params)
            if side is not None and child is (ancestor.body if side else ancestor.orelse):
                return True
        child = ancestor
    return False


def _device_side(test: cst.BaseExpression, params: set[str]) -> bool | None:
    """For `device == "cpu"` over a parameter: False (the `else` is the GPU's side); for
    `device != "cpu"` or `device == "cuda"`: True (the body is); else None."""
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return None
    subject, target = test.left, test.comparisons[0]
    if isinstance(subject, cst.Call) and isinstance(subject.func, cst.Name) and subject.func.value == "str":
        subject = subject.args[0].value if len(subject.args) == 1 else subject
    if isinstance(subject, cst.Attribute) and subject.attr.value == "type":
        subject = subject.value
    if not (
        isinstance(subject, cst.Name) and subject.value in params and isinstance(target.comparator, cst.SimpleString)
    ):
        return None
    text = target.comparator.evaluated_value
    equal = isinstance(target.operator, cst.Equal)
    if not (equal or isinstance(target.operator, cst.NotEqual)) or not isinstance(text, str):
        return None
    if text == "cpu":
        return not equal
    if text == "cuda" or text.startswith("cuda:"):
        return equal
    return None
