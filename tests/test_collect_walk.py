"""collect.py walks the tree itself instead of through LibCST's visitor (it costs a fraction):
the walk must reach the same nodes, with the same parents, in the same preorder as
`CSTNode.visit`, on every kind of syntax (a LibCST upgrade that changes a node's children
shows here first)."""

from __future__ import annotations

from pathlib import Path

import libcst as cst

from devfix.analysis import collect as collect_module
from devfix.analysis.collect import collect

FIXTURES = Path(__file__).resolve().parent / "fixtures"

EVERY_KIND = '''
"""doc"""
from __future__ import annotations
import os.path as osp, sys
from . import sibling
from ..pkg import (a as b, c)
from m import *
x: int = 1
y = z = [i for i in range(3) if i] + list({k: v for k, v in {}.items()}) + [*(), *{1}]
y += 1; del y
async def f(a, /, b: int = 2, *args, c, d=3, **kw) -> "T":
    global G
    nonlocal_ = lambda p, *q, r=1, **s: (yield p)
    async with open(a) as (h, j), open(b):
        async for e in h:
            await e
    try:
        raise ValueError("x") from None
    except* (TypeError, OSError) as err:
        pass
    else:
        return
    finally:
        assert a, b
@decorator(1)
class C(Base, metaclass=M):
    attr = f"{a!r:>{width}} {b=} {c:{d}.{e}f} plain"
    def m(self) -> None:
        while (n := self.attr) and not n:
            break
        else:
            continue
        if a: pass
        elif b: ...
        else: x = a if b else c
        print(x[1:2:3, ...], x @ y, -x, ~x, x ** 2 // 3 % 4, 'a' 'b', b"c", 1j, 0x1)
match command:
    case [Point(x=0, y=0), *rest] | {"k": 1, **others} if rest:
        pass
    case str() as s:
        pass
type Alias[T] = list[T]
def g[T: int, *Ts, **P](): pass
'''


def _by_visitor(module: cst.Module) -> tuple[dict[int, int | None], dict[int, int]]:
    """Each node's parent (by id) and preorder index, as LibCST's own visitor reaches them."""
    parents: dict[int, int | None] = {}
    order: dict[int, int] = {}
    stack: list[cst.CSTNode] = []

    class Visitor(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            parents[id(node)] = id(stack[-1]) if stack else None
            order[id(node)] = len(order)
            stack.append(node)
            return True

        def on_leave(self, original_node: cst.CSTNode) -> None:
            stack.pop()

    module.visit(Visitor())
    return parents, order


def _same_walk(source: str | bytes, *, fresh: bool = False) -> None:
    if fresh:
        collect_module._FIELDS.clear()  # learn each type's children from this source's nodes
    module = cst.parse_module(source)
    parents, order = _by_visitor(module)
    data = collect(module)
    assert data.order == order
    assert {key: None if parent is None else id(parent) for key, parent in data.parent.items()} == parents


def test_the_walk_is_libcst_visitors_preorder_on_every_kind_of_syntax() -> None:
    _same_walk(EVERY_KIND)
    # an f-string's `{...}` visits its format spec only when it has one, whichever comes first
    _same_walk('f"{a}"\nf"{b:>{w}}"\n', fresh=True)
    _same_walk('f"{b:>{w}}"\nf"{a}"\n', fresh=True)
    _same_walk(EVERY_KIND, fresh=True)


def test_the_walk_is_libcst_visitors_preorder_on_the_fixtures() -> None:
    for path in sorted(FIXTURES.rglob("*.py"))[:200]:
        _same_walk(path.read_bytes())
