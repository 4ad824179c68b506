"""DEV010 load-map-location: `torch.load(f)` without `map_location` gets one."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from devfix.analysis import torch_api as api
from devfix.analysis.checkpoints import has_literal, path_shapes, saved_shapes
from devfix.analysis.facts import FileFacts
from devfix.analysis.linking import FunctionSummary
from devfix.analysis.reach import runs_without_gpu
from devfix.analysis.tree import Tree, nodes_of
from devfix.analysis.values import Kind, Place, Value
from devfix.edits import Replace
from devfix.rules.base import Example, Finding, Rule, RuleContext
from devfix.rules.common import add_keyword, keyword
from devfix.rules.loaded import bound_to, held_on_the_cpu, reads_after


class LoadMapLocation(Rule):
    code = "DEV010"
    name = "load-map-location"
    summary = "`torch.load(f)` without `map_location` fails on a CPU-only machine for a checkpoint saved on a GPU."
    fix_summary = '`torch.load(f)` gets `map_location=device` (or `"cpu"` when it feeds `load_state_dict` and no device is in reach), so GPU checkpoints load on CPU-only machines.'
    verify_hint = "torch.load(f, map_location=device)"
    why = """
`torch.save` records the device of every tensor. Without `map_location`, `torch.load`
puts each tensor back on that device, so a checkpoint written on a GPU machine fails to
load on a CPU-only one ("Attempting to deserialize object on a CUDA device but
torch.cuda.is_available() is False"), and on a multi-GPU machine lands on the GPU it was
saved from. devfix uses the device variable in reach (`map_location=device`); without one,
`map_location="cpu"` where the result feeds `load_state_dict` (which copies into the model's
own tensors wherever they are) or is moved by the program itself afterwards, and a report
without a fix elsewhere (a new device could disagree with the script's own `--cuda` option). It only reports
programs that put something on a device: a script that runs everything on the CPU saves and
loads CPU checkpoints. A file whose contents are only read for their items, none of which
feeds `load_state_dict` (`data = torch.load(args.data)`, then `data["train"]["src"]`: a
processed corpus of lists and dictionaries), shows no tensor at all and is left alone; so is
one converted straight to NumPy (`torch.load(f).numpy()`), which works only on a CPU tensor.
`weights_only=` is kept.
"""
    example = """
model.load_state_dict(torch.load("checkpoint.pt", weights_only=True))
"""
    use_instead = """
model.load_state_dict(torch.load("checkpoint.pt", weights_only=True, map_location=device))
"""
    invalid = (
        Example(
            "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "state = torch.load('ckpt.pt', weights_only=True)\n",
            "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "state = torch.load('ckpt.pt', weights_only=True, map_location=device)\n",
        ),
        Example(
            "import torch\nfrom torch import nn\nmodel = nn.Linear(2, 2).cuda()\nmodel.load_state_dict(torch.load('w.pt'))\n",
        ),
    )
    valid = (
        "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "state = torch.load('ckpt.pt', map_location=device)\n",
        "import torch\nstate = torch.load('ckpt.pt', 'cpu')\n",
        "import torch\nfrom torch import nn\nmodel = nn.Linear(2, 2)\nmodel.load_state_dict(torch.load('w.pt'))\n",
    )

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        facts = ctx.facts
        if not facts.uses_device:
            return  # a program that places nothing saves and loads CPU checkpoints
        for call, _ in facts.program.loads:
            finding = self._check_load(ctx, call)
            if finding is not None:
                yield finding

    def _check_load(self, ctx: RuleContext, call: cst.Call) -> Finding | None:
        if keyword(call, "map_location") is not None:
            return None
        if any(arg.star for arg in call.args) or len([a for a in call.args if a.keyword is None]) != 1:
            return None  # `torch.load(f, loc)` or `**kwargs`: map_location may be there
        facts = ctx.facts
        if _saved_here_before(facts, call) or _saved_by_a_call_before(facts, call) or _in_a_test(facts, call):
            return None  # written by this very run on this machine: it loads wherever it was saved
        if _saved_on_cpu(facts, call) or _saved_by_a_cpu_only_file(facts, call):
            return None  # the run's saves of that path write CPU tensors: they load anywhere
        if not facts.view.other_files_save and _every_save_here_on_cpu(facts) and _feeds_load_state_dict(facts, call):
            return None  # the file trains and saves on the CPU (`model.cpu()` first): what it loads back
        if not runs_without_gpu(facts.tree, facts.program, call):
            return None  # after `assert torch.cuda.is_available()`: only a GPU machine loads it
        if _mapped_in_the_other_branch(facts, call) or _mapping_left_to_the_caller(facts, call):
            return None  # `if device == cpu: torch.load(f, map_location="cpu") else: torch.load(f)`
        if _restores_a_scheduler(facts, call):
            return None  # `scheduler.load_state_dict(torch.load(...))`: step counts and rates, no tensor
        if _read_only_for_items(facts, call):
            return None  # a corpus or vocabulary file: nothing shows a tensor in it
        if held_on_the_cpu(facts, call):
            return None  # `torch.load(f).numpy()`, `torch.FloatTensor(mel)`: CPU tensors only, so the file holds them
        if _loads_a_cached_dataset(facts, call):
            return None  # `dataset, _ = torch.load(cache_path)`: a dataset object pickled on the host
        source = facts.code(call.args[0].value, 40)
        loader = facts.code(call.func, 20)
        message = f"`{loader}({source})` has no `map_location`: a checkpoint saved on a GPU fails to load without one"
        moved_after = _moved_after(facts, call)
        # a whole model the program moves itself afterwards (`if opt.cuda: model.cuda()`) loads
        # on the CPU: loading it onto a device would override that choice
        choice = None if moved_after else facts.devices.in_reach_or_planned(call)
        if choice is not None and facts.devices.may_be_an_index(choice.code, call):
            choice = None  # `map_location=0` raises TypeError: "cpu" where that is right, else a report
        in_a_dataset = _in_a_dataset(facts, call) and not _made_on_the_device_otherwise(facts, call)
        if in_a_dataset:
            choice = None  # a DataLoader's workers read it: CUDA there fails in forked workers
        code = choice.code if choice is not None else None
        whole = moved_after and not _feeds_load_state_dict(facts, call)
        if whole and facts.view.plain_gpu_tensors:
            # "cpu", then the program's `.cuda()`, would leave a plain tensor attribute of such
            # a model on the CPU, where the original load put it on the GPU
            return self.finding(
                call, message, hint="pass `map_location=` the device the program moves the model to afterwards"
            )
        if code is None and (_feeds_load_state_dict(facts, call) or moved_after or in_a_dataset):
            code = facts.quote("cpu")
        if code is None:
            return self.finding(call, message, hint='pass `map_location=` (the device the program uses, or "cpu")')
        new = add_keyword(call, "map_location", ctx.expression(code))
        return self.finding(call, f"{message}; load with `map_location={code}`", [Replace(call, new)], device=choice)


def _in_a_test(facts: FileFacts, call: cst.Call) -> bool:
    """A test function (`test_*`, `_test_*`) loads the checkpoint it wrote itself, on the same
    machine. Not one the file calls from other code: ssd.pytorch's `test.py` runs `test_voc()`
    from its `__main__` block, an evaluation script loading the released weights (a helper
    that tests call, `_test_saves(device, dirname)`, is still a test)."""
    function = facts.tree.enclosing(call, cst.FunctionDef)
    while isinstance(function, cst.FunctionDef):
        if _is_test(function) and all(
            _is_test(facts.tree.enclosing(site, cst.FunctionDef))
            for site in facts.program.call_sites.get(id(function), [])
        ):
            return True
        function = facts.tree.enclosing(function, cst.FunctionDef)
    return False


def _is_test(function: cst.CSTNode | None) -> bool:
    return isinstance(function, cst.FunctionDef) and function.name.value.lstrip("_").startswith("test")


def _saved_here_before(facts: FileFacts, call: cst.Call) -> bool:
    """`torch.save(obj, "model.pth")` to the same path expression earlier in the same scope, or
    in the `__init__` of the class whose method loads it (an LR finder saves the initial
    weights when it is built and restores them after its test): written by this very run."""
    tree = facts.tree
    paths = path_shapes(tree, call.args[0].value)
    scope = tree.function_scope_of(call)
    init = _init_of_class(tree, call)
    for save, _ in facts.program.saves:
        if len(save.args) < 2:
            continue
        here = tree.function_scope_of(save) is scope and tree.order(save) < tree.order(call)
        built = init is not None and tree.enclosing(save, cst.FunctionDef) is init
        if (here or built or _called_before(facts, save, call)) and path_shapes(tree, save.args[1].value) & paths:
            return True
    return False


def _saved_by_a_call_before(facts: FileFacts, call: cst.Call) -> bool:
    """A call earlier in the loading function, made whenever the load is, to a function or
    method of the project that saves to the same path: the time-series trainers' `for epoch
    ...: early_stopping(val_loss, model, path)`, whose `__call__` (another file's class)
    saves `path + '/' + 'checkpoint.pth'`, then `torch.load(path + '/' + 'checkpoint.pth')`
    after the loop. Only shapes with a literal in them count: a bare variable names no file."""
    tree = facts.tree
    paths = {shape for shape in path_shapes(tree, call.args[0].value) if has_literal(shape)}
    if not paths:
        return False
    loader = tree.enclosing(call, cst.FunctionDef)
    if loader is None and facts.program.path.endswith(".ipynb"):
        return False  # a notebook's reader may run the loading cell alone, in a later session
    order = tree.order(call)
    for site in tree.data.within(tree.data.calls, loader) if loader is not None else tree.data.calls:
        if tree.order(site) >= order or tree.enclosing(site, cst.FunctionDef) is not loader:
            continue
        if _callee_saves(facts, site) & paths and _runs_whenever(tree, site, call):
            return True
    return False


def _callee_saves(facts: FileFacts, site: cst.Call) -> frozenset[str]:
    """The checkpoint path shapes the function or method `site` calls writes."""
    program, func = facts.program, site.func
    if isinstance(func, cst.Attribute):
        receiver, name = facts.value(func.value), func.attr.value
    else:
        receiver, name = facts.value(func), "__call__"
        if receiver is not None and isinstance(receiver.ref, cst.FunctionDef):
            linked = program.linked.get(id(receiver.ref))
            if isinstance(linked, FunctionSummary):
                return linked.saves
            return saved_shapes(facts.tree, program, receiver.ref)
    cls = program.classes.get(id(receiver.cls)) if receiver is not None and receiver.cls is not None else None
    if cls is None:
        return frozenset()
    method = cls.linked_method(name)
    if method is not None:
        return method.saves
    local = cls.method(name)
    return saved_shapes(facts.tree, program, local) if local is not None else frozenset()


def _called_before(facts: FileFacts, save: cst.Call, load: cst.Call) -> bool:
    """The load is in a function of the file that is called only after the save ran: by the
    module code, after it saved or called the function that saves (`for epoch in ...:
    train(epoch)`, then `test()`, NRI's training scripts), or by the saving function itself,
    after its save (GCNII's `train()` keeps the best epoch, then tests it)."""
    tree, program = facts.tree, facts.program
    saver, loader = tree.enclosing(save, cst.FunctionDef), tree.enclosing(load, cst.FunctionDef)
    if loader is None and isinstance(saver, cst.FunctionDef) and not program.path.endswith(".ipynb"):
        # the module's own code calls the saving function, then loads (rtdl's `save_checkpoint()`
        # on each best epoch of a module-level loop, then the final reload); not a notebook,
        # whose reader may run the loading cell alone, in a later session
        return any(
            tree.function_scope_of(site).kind == "module"
            and tree.order(site) < tree.order(load)
            and _runs_whenever(tree, site, load)
            for site in program.call_sites.get(id(saver), [])
        )
    if not isinstance(loader, cst.FunctionDef) or saver is loader:
        return False
    if isinstance(saver, cst.FunctionDef):
        saves = [
            site for site in program.call_sites.get(id(saver), []) if tree.function_scope_of(site).kind == "module"
        ]
    else:
        saves = [save]  # the module's own code saves
    loads = program.call_sites.get(id(loader), [])

    def after_the_save(site: cst.Call) -> bool:
        if tree.enclosing(site, cst.FunctionDef) is saver and saver is not None:
            return tree.order(site) > tree.order(save)  # `train()` saves the best epoch, then tests it
        return tree.function_scope_of(site).kind == "module" and any(
            tree.order(site) > tree.order(s) and _runs_whenever(tree, s, site) for s in saves
        )

    return bool(saves and loads) and all(after_the_save(site) for site in loads)


def _runs_whenever(tree: Tree, first: cst.CSTNode, then: cst.CSTNode) -> bool:
    """Every `if` around `first` holds `then` too, in the same branch, or is tested again each
    time round a loop (`for epoch ...: if loss < best: save`, the best epoch kept so far):
    `then` runs only where `first` ran. Not `if args.train: agent.save_model(path)`, then `if
    args.test: agent.load_model(path)`: a test run loads what an earlier run saved."""
    path: list[cst.CSTNode] = []  # the ancestors of `first` below the first one that holds `then`
    child = first
    for ancestor in tree.ancestors(first):
        if tree.is_inside(then, child) or isinstance(ancestor, (cst.FunctionDef, cst.Module)):
            break
        path.append(ancestor)
        child = ancestor
    for index, ancestor in enumerate(path):
        branch = isinstance(ancestor, (cst.If, cst.Else, cst.Try, cst.ExceptHandler))
        if branch and not any(isinstance(outer, (cst.For, cst.While)) for outer in path[index + 1 :]):
            return False
    return True


def _init_of_class(tree: Tree, call: cst.Call) -> cst.FunctionDef | None:
    """The `__init__` of the class whose method (other than `__init__`) makes `call`."""
    method = tree.enclosing(call, cst.FunctionDef)
    if not isinstance(method, cst.FunctionDef) or method.name.value == "__init__":
        return None
    block = tree.parent(method)
    klass = tree.parent(block) if block is not None else None
    if not isinstance(klass, cst.ClassDef):
        return None
    return next((s for s in klass.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "__init__"), None)


def _saved_on_cpu(facts: FileFacts, call: cst.Call) -> bool:
    """Every `torch.save` of the file to the loaded path saves `net.cpu().state_dict()` or
    `x.cpu()`: the checkpoint holds CPU tensors, which load on any machine."""
    tree = facts.tree
    paths = path_shapes(tree, call.args[0].value)
    saved = [
        (save.args[0].value, value)
        for save, value in facts.program.saves
        if len(save.args) >= 2 and path_shapes(tree, save.args[1].value) & paths
    ]
    return bool(saved) and all(
        _moved_to_cpu(node) or _on_the_cpu(value) or _plain_object(facts, value) for node, value in saved
    )


def _saved_by_a_cpu_only_file(facts: FileFacts, call: cst.Call) -> bool:
    """The loaded file's name (`DATA_DIR / "2_3_lenet5.pt"`) is one that only files of the run
    that place nothing anywhere save (project.cpu_saved_names): a lesson trained on the CPU."""
    names = facts.view.cpu_saved_names
    if not names:
        return False
    node = call.args[0].value
    if isinstance(node, cst.Name):
        bindings = facts.tree.scope_of(node).lookup(node.value) or []
        node = bindings[0].value if len(bindings) == 1 and bindings[0].value is not None else node
    return any(
        isinstance(text, str) and text.replace("\\", "/").rsplit("/", 1)[-1] in names
        for text in (string.evaluated_value for string in nodes_of(node, cst.SimpleString))
    )


def _in_a_dataset(facts: FileFacts, call: cst.Call) -> bool:
    """The load is in a method of a dataset class (Turbulent-Flow-Net's `__getitem__` reads one
    sample file per item): a DataLoader's workers run it, where a CUDA map_location would
    initialise CUDA in forked processes; the data belongs on the CPU, and the loader pins it."""
    klass = facts.tree.enclosing(call, cst.ClassDef)
    info = facts.program.classes.get(id(klass)) if klass is not None else None
    return info is not None and info.kind == "dataset"


def _every_save_here_on_cpu(facts: FileFacts) -> bool:
    """The file saves models, and every `torch.save` of it writes CPU tensors (fast-neural-style's
    `transformer.cpu()` before it saves the trained weights): the state dicts its other
    functions load are those, with no GPU storage in them."""
    saves = [(save, save.args[0].value) for save, _ in facts.program.saves if save.args]
    return bool(saves) and all(_moved_to_cpu(node) or _cpu_state_dict(facts, save, node) for save, node in saves)


def _cpu_state_dict(facts: FileFacts, save: cst.Call, node: cst.BaseExpression) -> bool:
    """`model.state_dict()` where the saving function moved `model` to the CPU before
    (`transformer.cpu()`): the flow's place of a model alone is no proof (a class's network,
    moved by a subclass in another file, looks unmoved here)."""
    if not (
        isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "state_dict"
    ):
        return False
    model = node.func.value
    tree = facts.tree
    scope = tree.function_scope_of(save)
    return any(
        isinstance(call.func, cst.Attribute)
        and call.func.value.deep_equals(model)
        and (call.func.attr.value == "cpu" or (call.func.attr.value == "to" and _moved_to_cpu(call)))
        and tree.function_scope_of(call) is scope
        and tree.order(call) < tree.order(save)
        for call in facts.data.calls
    )


def _on_the_cpu(value: Value, depth: int = 0) -> bool:
    """A model or tensor the flow shows on the CPU where it is saved (a notebook's model saved
    before any cell moves it), or a list or tuple of such tensors and plain values (a chatbot's
    pre-built training batches, cached with `torch.save(training_batches, f)`)."""
    if value.kind is Kind.STRUCT and depth < 3:
        # a tuple's items, where the flow knows them one by one; else a list's element
        parts = list(value.items) if value.items else [value.element] if value.element is not None else []
        if not parts:
            return value.place is Place.CPU  # `lengths`, a list the flow knows only as host data
        return all(part.kind is Kind.HOST or _on_the_cpu(part, depth + 1) for part in parts)
    return value.kind in (Kind.MODULE, Kind.TENSOR) and value.place is Place.CPU


def _plain_object(facts: FileFacts, value: Value, depth: int = 0) -> bool:
    """An instance of a project class that is no model and whose code names no device, whose
    attributes hold tensors, plain values and such objects: a corpus that tokenises text files
    into `torch.LongTensor`s, cached with `torch.save(corpus, fn)` (awd-lstm-lm's scripts). Its
    tensors are made on the CPU, so the cache loads anywhere."""
    cls = facts.program.classes.get(id(value.cls)) if value.kind is Kind.OTHER and value.cls is not None else None
    if cls is None or cls.kind != "other" or cls.framework or cls.opaque or cls.dynamic or depth > 2:
        return False
    attrs = [attr for _, attr in cls.linked.attrs] if cls.linked is not None else list(cls.attrs.values())
    plain = all(_plain_value(facts, attr, depth + 1) for attr in attrs)
    return bool(attrs) and plain and not _names_a_device(cls.node)


def _plain_value(facts: FileFacts, value: Value, depth: int) -> bool:
    """A tensor not on the device, a plain value, a list or dictionary of those, a plain object."""
    if value.kind is Kind.TENSOR:
        return value.place is not Place.DEVICE
    if value.kind is Kind.STRUCT:
        parts = [*(value.items or ()), *((value.element,) if value.element is not None else ())]
        return depth <= 3 and all(_plain_value(facts, part, depth + 1) for part in parts)
    if value.kind is Kind.OTHER and value.cls is not None:
        return _plain_object(facts, value, depth)
    return value.kind in (Kind.HOST, Kind.OTHER)


def _names_a_device(klass: cst.ClassDef) -> bool:
    """The class's code names a device: `.cuda(`, `.to(`, `.device`, `device=`."""
    finder = _DeviceWords()
    klass.visit(finder)
    return finder.found


class _DeviceWords(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found = False

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self.found = self.found or node.attr.value in ("cuda", "to", "device", "set_default_device")

    def visit_Arg(self, node: cst.Arg) -> None:
        self.found = self.found or (node.keyword is not None and node.keyword.value == "device")


def _moved_to_cpu(node: cst.BaseExpression) -> bool:
    """`net.cpu().state_dict()`, `tensor.cpu()`."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "state_dict":
        node = node.func.value
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "cpu"


def _target_name(facts: FileFacts, call: cst.Call) -> str | None:
    parent = facts.tree.parent(call)
    if isinstance(parent, cst.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0].target, cst.Name):
        return parent.targets[0].target.value
    return None


def _read_only_for_items(facts: FileFacts, call: cst.Call) -> bool:
    """`data = torch.load(args.data)`, and every later use of `data` in its scope reads an
    item for a setting or a data pipeline (`args.max_len = data["max_len"]`,
    `DataLoader(data["train"]["src"], ...)`, `data.get("dict")`, `X, Y = data["X"], data["Y"]`
    then `TensorDataset(X[idx], Y[idx])`; the tensor itself sliced into a `TensorDataset`, as
    ufno's notebooks do with `test_a = torch.load(...)`): a file of lists and dictionaries, a processed
    corpus or dataset (torch-light's `corpus.py` writes one with `torch.save`; ogb's
    fingerprint example, 8 GB that a loader batches on the host). Nothing shows a tensor in
    it, let alone a GPU one: no evidence of a bug (a checkpoint feeds `load_state_dict`, is
    moved, called or handed on whole), and loading a dataset onto the GPU would break its
    loader (worker processes, pinned memory)."""
    name = _target_name(facts, call)
    if name is None:
        return False
    reads = reads_after(facts, call, name)
    return (
        bool(reads)
        and all(
            _reads_an_item(facts, node)
            or _item_feeds_datasets(facts, node)
            or _inside_a_tensor_dataset(facts.tree, node)
            or _reads_its_shape(facts.tree, node)
            for node in reads
        )
        and any(not _reads_its_shape(facts.tree, node) for node in reads)
    )


def _reads_its_shape(tree: Tree, name: cst.Name) -> bool:
    """`print(test_a.shape)`: what the file holds is only looked at."""
    parent = tree.parent(name)
    return isinstance(parent, cst.Attribute) and parent.value is name and parent.attr.value in ("shape", "dtype")


def _item_feeds_datasets(facts: FileFacts, name: cst.Name) -> bool:
    """`X = data["X"]` (or `X, Y = data["X"], data["Y"]`), and `X` is read only inside the
    arguments of `TensorDataset(...)` (`TensorDataset(X[split["train"]], Y[split["train"]])`)."""
    tree = facts.tree
    item = tree.parent(name)
    if not (isinstance(item, cst.Subscript) and item.value is name):
        return False
    target = bound_to(tree, item)
    if target is None:
        return False
    reads = reads_after(facts, item, target.value)
    return bool(reads) and all(_inside_a_tensor_dataset(tree, read) for read in reads)


def _inside_a_tensor_dataset(tree: Tree, node: cst.CSTNode) -> bool:
    for ancestor in tree.ancestors(node):
        if isinstance(ancestor, cst.Call) and tree.qualname(ancestor.func) in api.TENSOR_DATASETS:
            return True
        if isinstance(ancestor, cst.BaseStatement):
            return False
    return False


def _loads_a_cached_dataset(facts: FileFacts, call: cst.Call) -> bool:
    """`dataset, _ = torch.load(cache_path)` where the other branch builds `dataset =
    torchvision.datasets.UCF101(...)` and saves it there (torchvision's reference scripts):
    the file holds a dataset object, made on the host. Mapping it to the device would put its
    tensors on the GPU, where the loader's forked workers cannot reach them."""
    for made in _other_bindings(facts, call, first_item=True):
        value = facts.value(made)
        built = facts.value(made.func) if isinstance(made, cst.Call) else None
        library = built is not None and built.qual is not None and built.qual.startswith(api.DATASET_LIBRARIES)
        if library or (value is not None and value.kind is Kind.DATASET) or _builds_a_dataset(facts, made):
            return True
    return False


def _other_bindings(facts: FileFacts, call: cst.Call, *, first_item: bool = False) -> list[cst.BaseExpression]:
    """What the other assignments of the name `name = torch.load(...)` binds assign to it (the
    first name of `name, _ = torch.load(...)` with `first_item`)."""
    parent = facts.tree.parent(call)
    if not isinstance(parent, cst.Assign) or len(parent.targets) != 1:
        return []
    assigned: cst.BaseExpression = parent.targets[0].target
    if first_item and isinstance(assigned, cst.Tuple) and assigned.elements:
        assigned = assigned.elements[0].value
    if not isinstance(assigned, cst.Name):
        return []
    bindings = facts.tree.scope_of(assigned).lookup(assigned.value) or []
    return [b.value for b in bindings if b.value is not None and b.node is not parent]


def _made_on_the_device_otherwise(facts: FileFacts, call: cst.Call) -> bool:
    """`data = torch.load(file_name)` where the other branch makes `data = torch.rand(n, 1,
    device=device)` and saves it (a course's sine-regression dataset): the cache holds what the
    program keeps on the device, so loading it onto the CPU would change where it lives."""
    for made in _other_bindings(facts, call):
        value = facts.value(made)
        if value is not None and value.kind is Kind.TENSOR and value.place is Place.DEVICE:
            return True
    return False


def _builds_a_dataset(facts: FileFacts, made: cst.BaseExpression) -> bool:
    """`SegmentationDataSet3(...)` of a project `Dataset` class, in the branch the flow did
    not take (`if use_saved_data:` loads the cache, `else:` builds and saves it)."""
    if not (isinstance(made, cst.Call) and isinstance(made.func, cst.Name)):
        return False
    program = facts.program
    callee = program.module_env.get(made.func.value)
    klass = program.classes.get(id(callee.ref)) if callee is not None and callee.ref is not None else None
    return klass is not None and klass.kind == "dataset"


def _mapped_in_the_other_branch(facts: FileFacts, call: cst.Call) -> bool:
    """The load sits in one branch of an `if` whose other branch loads onto the CPU
    (latent_ode's datasets: `if device == torch.device("cpu"): torch.load(f, map_location="cpu")`
    `else: torch.load(f)`): the author chose per machine where the file loads. An other branch
    that maps to a GPU (`map_location='cuda:{}'.format(args.gpu)`, the ImageNet example's
    resume) says nothing of the CPU-only machine."""
    tree = facts.tree
    child: cst.CSTNode = call
    for ancestor in tree.ancestors(call):
        if isinstance(ancestor, cst.If) and child is not ancestor.test:
            other = ancestor.orelse if child is ancestor.body else ancestor.body
            return other is not None and any(
                _maps_to_the_cpu(facts, load) and tree.is_inside(load, other)
                for load in tree.data.calls
                if tree.qualname(load.func) == "torch.load"
            )
        if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef)):
            return False
        child = ancestor
    return False


def _mapping_left_to_the_caller(facts: FileFacts, call: cst.Call) -> bool:
    """A helper that takes the mapping from its callers and hands it to another of its loads
    (`def load_checkpoint(filename, map_location=None): if map_location: return torch.load(
    filename, map_location=map_location)`, then `return torch.load(filename)`): the plain load
    is where a caller asked for none, the callers' choice (an RL course's notebooks)."""
    tree = facts.tree
    function = tree.enclosing(call, cst.FunctionDef)
    if not isinstance(function, cst.FunctionDef):
        return False
    every = (*function.params.params, *function.params.kwonly_params)
    # a mapping that callers may leave out (`map_location=None`), not `train(hyp, opt, device)`
    params = {p.name.value for p in every if isinstance(p.default, cst.Name) and p.default.value == "None"}
    for load in tree.data.within(tree.data.calls, function):
        given = keyword(load, "map_location") if load is not call else None
        if given is not None and isinstance(given.value, cst.Name) and given.value.value in params:
            return tree.qualname(load.func) == "torch.load"
    return False


def _maps_to_the_cpu(facts: FileFacts, load: cst.Call) -> bool:
    """`torch.load(f, map_location="cpu")`, `map_location=torch.device("cpu")`."""
    found = keyword(load, "map_location")
    if found is None:
        return False
    if isinstance(found.value, cst.SimpleString):
        return found.value.evaluated_value == "cpu"
    value = facts.value(found.value)
    return value is not None and value.kind is Kind.DEVICE and value.place is Place.CPU


def _reads_an_item(facts: FileFacts, name: cst.Name) -> bool:
    """`name[...]` or `name.get(...)`, and the item only settles a setting (`args.max_len =
    data["max_len"]`), is copied into a dictionary, or is handed to a call that is given no
    model (`DataLoader(data["train"]["src"], ...)`). Not an item bound to a name (`net = ckpt["net"]`), iterated
    (`ckpt["model"].items()`, a state dict's weights) or handed to a call together with a
    model (`load_pretrained(net, ckpt["net"])`, `net.load_state_dict(ckpt["model"])`)."""
    tree = facts.tree
    parent = tree.parent(name)
    item: cst.CSTNode | None
    if isinstance(parent, cst.Subscript) and parent.value is name:
        item = parent
    elif (
        isinstance(parent, cst.Attribute)
        and parent.value is name
        and parent.attr.value == "get"
        and isinstance(tree.parent(parent), cst.Call)
    ):
        item = tree.parent(parent)
    else:
        return False
    while item is not None and isinstance(tree.parent(item), cst.Subscript):
        item = tree.parent(item)
    holder = tree.parent(item) if item is not None else None
    if isinstance(holder, cst.Assign):
        return holder.value is item and all(isinstance(t.target, cst.Attribute) for t in holder.targets)
    if isinstance(holder, cst.DictElement) and holder.value is item:
        return True  # copied into the run's own record (`{"word_dict": data["dict"]["word"]}`)
    call = tree.parent(holder) if isinstance(holder, cst.Arg) else None
    if not isinstance(call, cst.Call):
        return False
    if isinstance(call.func, cst.Attribute) and call.func.attr.value in ("load_state_dict", "copy_"):
        return False
    return not any(_is_module(facts.value(arg.value)) for arg in call.args if arg is not holder)


def _is_module(value: Value | None) -> bool:
    return value is not None and value.kind is Kind.MODULE


def _restores_a_scheduler(facts: FileFacts, call: cst.Call) -> bool:
    """`scheduler.load_state_dict(torch.load(os.path.join(path, "scheduler.pt")))` of Hugging
    Face's example scripts, `scheduler` built by `get_linear_schedule_with_warmup(...)` or a
    `torch.optim.lr_scheduler` class: a learning-rate schedule's state is plain numbers (its
    epoch, its base rates), never a tensor on a GPU."""
    tree = facts.tree
    parent = tree.parent(call)
    outer = tree.parent(parent) if isinstance(parent, cst.Arg) else None
    if not (
        isinstance(outer, cst.Call)
        and isinstance(outer.func, cst.Attribute)
        and outer.func.attr.value == "load_state_dict"
        and isinstance(outer.func.value, cst.Name)
    ):
        return False
    built = [binding.value for binding in tree.function_scope_of(call).lookup(outer.func.value.value) or ()]
    return bool(built) and all(isinstance(value, cst.Call) and _builds_a_scheduler(facts, value) for value in built)


def _builds_a_scheduler(facts: FileFacts, call: cst.Call) -> bool:
    """A learning-rate scheduler's constructor, or a function of this file that returns one
    (electra's own copy of `get_linear_schedule_with_warmup`, returning `LambdaLR(...)`)."""
    if api.is_lr_scheduler(_qual(facts, call.func)):
        return True
    callee = facts.value(call.func)
    function = callee.ref if callee is not None else None
    if not isinstance(function, cst.FunctionDef):
        return False
    returned = [
        node.value
        for node in facts.tree.data.within(facts.tree.data.returns, function)
        if isinstance(node, cst.Return)
        and node.value is not None
        and facts.tree.enclosing(node, cst.FunctionDef) is function  # not a nested `lr_lambda`'s
    ]
    return bool(returned) and all(
        isinstance(value, cst.Call) and api.is_lr_scheduler(_qual(facts, value.func)) for value in returned
    )


def _qual(facts: FileFacts, func: cst.BaseExpression) -> str:
    value = facts.value(func)
    return (value.qual or "") if value is not None else ""


def _feeds_load_state_dict(facts: FileFacts, call: cst.Call) -> bool:
    """`m.load_state_dict(torch.load(f))`, or `ckpt = torch.load(f)` then `m.load_state_dict(ckpt[...])`."""
    tree = facts.tree
    parent = tree.parent(call)
    if isinstance(parent, cst.Arg):
        outer = tree.parent(parent)
        return (
            isinstance(outer, cst.Call)
            and isinstance(outer.func, cst.Attribute)
            and outer.func.attr.value == "load_state_dict"
        )
    name = _target_name(facts, call)
    if name is None:
        return False
    scope = tree.function_scope_of(call)
    uses = 0
    for other in tree.data.calls:
        func = other.func
        if not isinstance(func, cst.Attribute) or tree.function_scope_of(other) is not scope:
            continue
        for arg in other.args:
            argument = arg.value
            while isinstance(argument, cst.Subscript):
                argument = argument.value
            if isinstance(argument, cst.Name) and argument.value == name:
                if func.attr.value != "load_state_dict":
                    return False
                uses += 1
    return uses > 0


def _moved_after(facts: FileFacts, call: cst.Call) -> bool:
    """`model = torch.load(f)` later moved by the program itself (`model.cuda()` if `--cuda`):
    loading on the CPU leaves the placement to that move."""
    name = _target_name(facts, call)
    if name is None:
        return False
    tree = facts.tree
    scope = tree.function_scope_of(call)
    for other in tree.data.calls:
        func = other.func
        if (
            isinstance(func, cst.Attribute)
            and func.attr.value in ("to", "cuda")
            and isinstance(func.value, cst.Name)
            and func.value.value == name
        ):
            if tree.function_scope_of(other) is scope and tree.order(other) > tree.order(call):
                if not _other_branches(tree, call, other):
                    return True
    return False


def _other_branches(tree: Tree, first: cst.CSTNode, second: cst.CSTNode) -> bool:
    """`first` and `second` lie in different branches of one `if`: NCF's `if exists(path): model =
    torch.load(path) else: model = NCF(...); model.cuda()` moves only the model it builds."""
    for ancestor in tree.ancestors(first):
        if isinstance(ancestor, (cst.FunctionDef, cst.Module)):
            return False
        if isinstance(ancestor, cst.If) and tree.is_inside(second, ancestor):
            return tree.is_inside(first, ancestor.body) != tree.is_inside(second, ancestor.body)
    return False
