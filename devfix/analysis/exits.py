"""What ends a block or the run, read off statements: `raise`, `sys.exit()`, `pytest.skip()`,
a `return`; which statement line holds a call, and what a test's name was bound to before.
The reach analysis (reach.py) builds on these; they need no index of the file's GPU calls."""

from __future__ import annotations

import libcst as cst

from devfix.analysis.program import Program
from devfix.analysis.tree import Tree

EXITS = frozenset(
    {
        "pytest.skip",
        "pytest.exit",
        "pytest.fail",
        "sys.exit",
        "exit",
        "quit",
        "builtins.exit",
        "builtins.quit",
        "os._exit",
    }
)


def last_small(body: cst.BaseSuite) -> cst.BaseSmallStatement | None:
    """The block's last small statement, indented or on its header's line (`if not
    torch.cuda.is_available(): sys.exit()`); None when the block ends with a compound one."""
    if isinstance(body, cst.SimpleStatementSuite):
        return body.body[-1] if body.body else None
    statements = body.body if isinstance(body, cst.IndentedBlock) else ()
    last = statements[-1] if statements else None
    return last.body[-1] if isinstance(last, cst.SimpleStatementLine) and last.body else None


def returns(body: cst.BaseSuite) -> bool:
    return isinstance(last_small(body), cst.Return)


def collective(program: Program, call: cst.CSTNode) -> bool:
    """`torch.distributed.all_reduce(...)`: GPU code by design where the group is NCCL's, but a
    `gloo` group takes CPU tensors, so what follows it may still run without a GPU (dlrm's
    `barrier()`, whose `torch.cuda.synchronize()` after it is a bug)."""
    callee = program.values.get(id(call.func)) if isinstance(call, cst.Call) else None
    return callee is not None and (callee.qual or "").startswith("torch.distributed.")


def line_of(tree: Tree, call: cst.CSTNode) -> cst.CSTNode | None:
    """The statement line that holds `call` where nothing in the line makes it conditional (a
    conditional expression, `and`/`or`, a lambda, a comprehension)."""
    for ancestor in tree.ancestors(call):
        if isinstance(ancestor, cst.SimpleStatementLine):
            return ancestor
        if isinstance(ancestor, (cst.IfExp, cst.BooleanOperation, cst.Lambda, cst.BaseComp, cst.DictComp)):
            return None
    return None


def asked_under_earlier(block: cst.CSTNode, statement: cst.CSTNode, test: cst.BaseExpression, asking: set[int]) -> bool:
    """An earlier `if name:` of `block`, with the same plain name as `test` and no assignment of
    it in between, holds a statement that asks for a GPU."""
    if not isinstance(test, cst.Name):
        return False
    found = False
    for earlier in getattr(block, "body", ()):
        if earlier is statement:
            return found
        if isinstance(earlier, cst.If) and isinstance(earlier.test, cst.Name) and earlier.test.value == test.value:
            found = found or id(earlier.body) in asking
        elif assigns(earlier, test.value):
            found = False
    return False


def assigns(statement: cst.CSTNode, name: str) -> bool:
    """A statement line that binds `name` (`distributed = False`)."""
    if not isinstance(statement, cst.SimpleStatementLine):
        return False
    for small in statement.body:
        targets: list[cst.BaseExpression] = []
        if isinstance(small, cst.Assign):
            targets = [target.target for target in small.targets]
        elif isinstance(small, (cst.AnnAssign, cst.AugAssign)):
            targets = [small.target]
        if any(isinstance(target, cst.Name) and target.value == name for target in targets):
            return True
    return False


def ends(tree: Tree, program: Program, body: cst.BaseSuite) -> bool:
    """The block leaves the function or the program: return, raise, `pytest.skip()`, `sys.exit()`."""
    last = last_small(body)
    return last is not None and (isinstance(last, cst.Return) or exits(tree, program, last))


def exits(tree: Tree, program: Program, small: cst.BaseSmallStatement) -> bool:
    """`raise ...`, `sys.exit(0)`, `pytest.skip(...)`: nothing after it in its block runs. The
    flow does not evaluate a branch the GPU run never takes (`if not torch.cuda.is_available():
    sys.exit(1)`, PC-DARTS): the callee's name is then resolved through the scopes."""
    if isinstance(small, cst.Raise):
        return True
    if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
        callee = program.values.get(id(small.value.func))
        qual = callee.qual if callee is not None else tree.qualname(small.value.func)
        return qual in EXITS
    return False


# What a missing GPU never raises: a handler for these alone does not catch it.
NOT_GPU_FAILURES = frozenset(
    {
        "KeyboardInterrupt",
        "SystemExit",
        "StopIteration",
        "ImportError",
        "ModuleNotFoundError",
        "KeyError",
        "IndexError",
        "ValueError",
        "FileNotFoundError",
        "ZeroDivisionError",
        "NameError",
    }
)


def catches_gpu_failures(block: cst.Try | cst.TryStar) -> bool:
    """`try: ... except KeyboardInterrupt:` stops a training run early; it does not catch the
    RuntimeError or AssertionError a CUDA call raises without a GPU. A bare `except:`,
    `except Exception:` or a name devfix does not know may, unless it ends by raising again
    (`print("Failed at loading", name); raise`): the failure still ends the run."""
    for handler in block.handlers:
        if raises_again(handler.body):
            continue
        kind = handler.type
        names = kind.elements if isinstance(kind, cst.Tuple) else [kind] if kind is not None else []
        if not names:
            return True
        for name in names:
            node = name.value if isinstance(name, cst.Element) else name
            if not (isinstance(node, cst.Name) and node.value in NOT_GPU_FAILURES):
                return True
    return False


def raises_again(body: cst.BaseSuite) -> bool:
    """The handler's last statement is a `raise` (the same error, or another)."""
    return last_raise(body) is not None


def last_raise(body: cst.BaseSuite) -> cst.Raise | None:
    """The `raise` that ends the block's last statement line, if it ends so."""
    last = last_small(body)
    return last if isinstance(last, cst.Raise) else None
