"""Which files of a run need the CUDA runtime as soon as they are imported.

A file that compiles CUDA sources at its top (`load(..., sources=["kernel.cu"])` of
`torch.utils.cpp_extension`), imports a module that a setup script of the run builds from
CUDA sources (`CUDAExtension`, an `Extension` with `.cu` sources), or imports a package that
only works with a GPU (CuPy, PyCUDA, TensorRT) is GPU code by design; so is every file whose
top-level imports reach one. Found by a text scan of every file, before any is parsed.
"""

from __future__ import annotations

import os
import posixpath
import re

from devfix.analysis.imports import TOP_IMPORT, ProjectIndex, dotted, import_statements
from devfix.analysis.torch_api import GPU_ONLY_PACKAGES

# `_backend = load(name="inplace_abn", sources=[..."inplace_abn_cuda.cu"])` at a module's top,
# or the call alone (RWKV's demos: `load(name="wkv7s", ..., is_python_module=False)`):
# importing the module compiles CUDA code, which needs the CUDA toolkit and a GPU.
_JIT_LOAD = re.compile(rb"^(?:[A-Za-z_][\w.]*[ \t]*=[ \t]*)?(?:[\w.]+\.)?load(?:_inline)?\(", re.MULTILINE)
# `CUDAExtension("mysigmoid", [...])` in a setup script: `import mysigmoid` is CUDA kernels.
_CUDA_EXTENSION = re.compile(rb"\bCUDAExtension\(\s*(?:name\s*=\s*)?['\"]([\w.]+)['\"]")
# `Extension('gpu_nms', ['nms_kernel.cu', 'gpu_nms.pyx'], libraries=['cudart'])`: a compiled
# module with CUDA sources, built in place beside its setup script (py-faster-rcnn's NMS).
_COMPILED_EXTENSION = re.compile(
    rb"\b(?:CUDA)?Extension\(\s*(?:name\s*=\s*)?['\"]([\w.]+)['\"]\s*,\s*(?:sources\s*=\s*)?\[([^\]]*)\]"
)
# `ffi = create_extension('_ext.dcn_v2', ...)` of the legacy `torch.utils.ffi`, in a build
# script that refuses to run without CUDA (`if torch.cuda.is_available(): ... else: raise`,
# DCNv2's `build.py`) or asks for it unconditionally (`with_cuda=True`): the module exists
# only where a GPU built it. A script that builds a CPU
# version when there is no GPU (faster-rcnn's `with_cuda = False` fallback) is not one.
_FFI_EXTENSION = re.compile(rb"\bcreate_extension\(\s*(?:name\s*=\s*)?['\"]([\w.]+)['\"]")
# `create_extension('_ext.pointnet2', ..., with_cuda=True)`: CUDA asked for unconditionally
# (Relation-Shape-CNN's `build_ffi.py`, which links kernels a CMake build compiled from `.cu`).
_FFI_WITH_CUDA = re.compile(rb"[(,]\s*with_cuda\s*=\s*True\b")  # the keyword, not `with_cuda = True`
# `extension("MultiScaleDeformableAttention", sources, ...)`, `CppExtension(name="ops", ...)`
_ANY_EXTENSION = re.compile(rb"\b\w*[Ee]xtension\(\s*(?:name\s*=\s*)?['\"]([\w.]+)['\"]")
_REFUSES_WITHOUT_CUDA = re.compile(
    rb"^(?:if[ \t]+not[ \t]+torch\.cuda\.is_available\(\)[ \t]*:[ \t]*\n[ \t]+raise\b"
    rb"|([ \t]*)if[ \t]+torch\.cuda\.is_available\(\)[^\n:]*:[ \t]*\n(?:(?:\1[ \t][^\n]*)?\n)*\1else[ \t]*:[ \t]*\n[ \t]+raise\b)",
    re.MULTILINE,
)


def cuda_extension_names(files: list[tuple[str, bytes]]) -> frozenset[str]:
    """The modules the run's setup scripts build with `CUDAExtension("mysigmoid", [...])`:
    `import mysigmoid` is CUDA kernels, whatever their sources are called."""
    return frozenset(name.decode("ascii", "replace") for _, data in files for name in _CUDA_EXTENSION.findall(data))


def builds_cuda_on_import(files: list[tuple[str, bytes]], index: ProjectIndex) -> frozenset[str]:
    """The files that compile CUDA sources at their top (`_backend = load(..., sources=[...".cu"])`
    of `torch.utils.cpp_extension`), import a module a setup script of the run compiles from
    CUDA sources, or import a package that only works with a GPU (`from cupy.cuda import
    function` in a QRNN's `forget_mult.py`), and every file whose top-level imports reach one."""
    compiled = _compiled_cuda_modules(files)
    tops = {path: _module_level_imports(data) for path, data in files}
    compilers = {path for path, data in files if _compiles_cuda(data)}
    found = {
        path
        for path, data in files
        if (path in compilers and _JIT_LOAD.search(data))
        or (compiled and _imports_compiled(path, tops[path], compiled))
        or imports_gpu_package(data)
        or (compilers and _calls_a_compiler_at_top(path, data, tops[path], compilers, index))
    }
    if not found:
        return frozenset()
    importers: dict[str, list[str]] = {}
    installed = _installed_modules(files)
    for path, _ in files:
        for imported in index.imports(path, tops[path]):
            importers.setdefault(imported, []).append(path)
        for imported in _installed_imports(tops[path], installed):
            importers.setdefault(imported, []).append(path)
    tries = {path: groups for path, data in files if (groups := _imports_with_fallbacks(data))}
    todo = list(found)
    while todo:
        while todo:
            for importer in importers.get(todo.pop(), []):
                if importer not in found:
                    found.add(importer)
                    todo.append(importer)
        for path, groups in tries.items():
            if path not in found and any(
                all(_imports_cuda(path, text, compiled, found, index) for text in group) for group in groups
            ):
                found.add(path)
                todo.append(path)
    return frozenset(found)


_PY_MODULES = re.compile(rb"\bpy_modules\s*=\s*\[([^\]]*)\]")


def _installed_modules(files: list[tuple[str, bytes]]) -> dict[str, str]:
    """The modules setup scripts of the run install by name (`py_modules=['correlation']`
    beside `CUDAExtension('correlation_cuda', ...)`, imaginaire's FlowNet2 layers): the file
    of the run that `import correlation` takes anywhere once the package is installed."""
    paths = {path.replace(os.sep, "/") for path, _ in files}
    found: dict[str, str] = {}
    for path, data in files:
        if b"py_modules" not in data:
            continue
        folder = posixpath.dirname(path.replace(os.sep, "/"))
        for listed in _PY_MODULES.findall(data):
            for name in re.findall(rb"['\"]([\w.]+)['\"]", listed):
                module = name.decode("ascii", "replace")
                target = posixpath.join(folder, module.replace(".", "/") + ".py") if folder else module + ".py"
                if target in paths:
                    found[module] = target
    return found


def _installed_imports(top: bytes, installed: dict[str, str]) -> list[str]:
    """The installed modules (`_installed_modules`) a file's top-level absolute imports name."""
    if not installed:
        return []
    found = []
    for level, module, _imported, plain in import_statements(top):
        for name in ([module] if plain is None else plain) if not level else ():
            if name in installed:
                found.append(installed[name])
    return found


def _imports_with_fallbacks(data: bytes) -> list[list[bytes]]:
    """Each top-level `try:` whose `except` imports something too, as the import lines of its
    body and of each handler: `try: import _raymarching_mob as _backend` / `except ImportError:
    from .backend import _backend` (nerf2mesh), the built extension or else its JIT build. An
    `except` without an import (`pass`, `= None`) is a way around the import."""
    if b"try" not in data or b"except" not in data:
        return []
    groups: list[list[list[bytes]]] = []
    current: list[list[bytes]] | None = None
    for line in data.splitlines():
        if line[:1].strip():
            if _TRY.match(line):
                current = [[]]
                groups.append(current)
            elif _EXCEPT.match(line) and current is not None:
                current.append([])
            elif not line.startswith((b"else", b"finally", b"#")):
                current = None
        elif current is not None:
            # `sys.path.insert(0, './correlation'); import correlation` (sniklaus' liteflownet)
            current[-1].extend(
                part.strip() for part in line.split(b";") if part.lstrip().startswith((b"import ", b"from "))
            )
    return [[b"\n".join(part) for part in group] for group in groups if len(group) > 1 and all(group)]


def _imports_cuda(path: str, text: bytes, compiled: frozenset[str], found: set[str], index: ProjectIndex) -> bool:
    """The import lines bring in CUDA kernels: a compiled CUDA module, a GPU-only package, or a
    file of the run that needs CUDA on import."""
    return (
        (bool(compiled) and _imports_compiled(path, text, compiled))
        or imports_gpu_package(text)
        or any(imported in found for imported in index.scan_imports(path, text))
    )


def _compiles_cuda(data: bytes) -> bool:
    """The file hands CUDA sources to `torch.utils.cpp_extension` (at its top or in a function)."""
    return b"cpp_extension" in data and (b'.cu"' in data or b".cu'" in data)


def _calls_a_compiler_at_top(path: str, data: bytes, top: bytes, compilers: set[str], index: ProjectIndex) -> bool:
    """`anti_alias_activation_cuda = load.load()` at the file's top, where `load` comes from a
    module of the run whose functions compile CUDA sources (BigVGAN's fused activation:
    importing `activation1d` builds the kernel, so its importers need a GPU)."""
    names = []
    for level, module, imported, _plain in import_statements(top):
        for name in imported:
            if (
                index.resolve(path, module, level) in compilers
                or index.resolve(path, f"{module}.{name}" if module else name, level) in compilers
            ):
                names.append(name)
    return any(
        re.search(rb"^(?:[\w.]+[ \t]*=[ \t]*)?" + re.escape(name.encode()) + rb"(?:\.\w+)?\(", data, re.MULTILINE)
        for name in names
    )


_TOP_BLOCK = re.compile(rb"^(?:try|except|else|finally)\b")
_TRY = re.compile(rb"^try[ \t]*:")
_EXCEPT = re.compile(rb"^except\b")
_MAIN_CHECK = re.compile(rb"^if[ \t]+__name__[ \t]*==[ \t]*['\"]__main__['\"][ \t]*:")


def _module_level_imports(data: bytes) -> bytes:
    """The import lines that must succeed when the file is imported: at its top, in the `else:`
    of a top-level `if __name__ == "__main__":` (QRNN's `from .forget_mult import ForgetMult`,
    which an import takes), or in a top-level `try:`/`except:` block whose fallback compiles
    CUDA sources itself (pointnet2_ops' `try: import pointnet2_ops._ext` / `except ImportError:
    load(... .cu)`); not an optional import (RAFT's `try: import alt_cuda_corr` / `except:
    pass`), nor those of a function, a class or another `if` (`if torch.cuda.is_available():
    from .gpu_nms import ...`)."""
    found = []
    in_try = False
    after_main_check = in_import_branch = False
    compiles = b"cpp_extension" in data and b".cu" in data
    lines = data.splitlines()
    required = _required_try_blocks(lines) if b"raise" in data else set()
    block = -1
    for number, line in enumerate(lines):
        if line[:1].strip():
            in_try = _TOP_BLOCK.match(line) is not None
            block = number if _TRY.match(line) else block
            in_import_branch = after_main_check and line.startswith(b"else")
            after_main_check = _MAIN_CHECK.match(line) is not None
            if line.startswith((b"import ", b"from ")):
                found.append(line)
        elif ((in_try and (compiles or block in required)) or in_import_branch) and line.lstrip().startswith(
            (b"import ", b"from ")
        ):
            found.append(line.lstrip())
    return b"\n".join(found)


def _required_try_blocks(lines: list[bytes]) -> set[int]:
    """The top-level `try:` blocks (their first line's number) whose `except` only raises again
    (PointNet's `try: from ._ball_query_cuda import ...` / `except ImportError: raise
    ImportError('Failed to load one or more extensions')`), or raises unless a setup flag is
    set: their imports must succeed."""
    found: set[int] = set()
    start = -1
    for number, line in enumerate(lines):
        if _TRY.match(line):
            start = number
        elif _EXCEPT.match(line) and start >= 0:
            body = [later.strip() for later in lines[number + 1 : number + 6] if later.strip()]
            first = body[0] if body else b""
            # or raises unless the package's own setup script is running (Pointnet2_PyTorch's
            # `if not getattr(builtins, "__POINTNET2_SETUP__", False): raise ImportError(...)`)
            setup_flag = first.startswith(b"if ") and b"_SETUP__" in first
            if first.startswith(b"raise") or (setup_flag and len(body) > 1 and body[1].startswith(b"raise")):
                found.add(start)
        elif line[:1].strip() and not _TOP_BLOCK.match(line):
            start = -1
    return found


def _compiled_cuda_modules(files: list[tuple[str, bytes]]) -> frozenset[str]:
    """Where the modules that the run's setup scripts compile from CUDA sources land, as
    slash paths beside the script (`lib/nms/gpu_nms`): importing one needs the CUDA runtime."""
    found = set()
    for path, data in files:
        names = _cuda_extensions_built(data)
        if not names:
            continue
        folder = posixpath.dirname(path.replace(os.sep, "/"))
        for name in names:
            module = name.decode("ascii", "replace").replace(".", "/")
            found.add(posixpath.join(folder, module) if folder else module)
    return frozenset(found)


def _cuda_extensions_built(data: bytes) -> set[bytes]:
    """The dotted names of the CUDA-only modules one setup or build script compiles."""
    names: set[bytes] = set()
    if b"Extension(" in data and (b".cu" in data or b"CUDAExtension" in data):
        names = {name for name, sources in _COMPILED_EXTENSION.findall(data) if re.search(rb"\.cu['\"]", sources)}
        names.update(_CUDA_EXTENSION.findall(data))  # torch's CUDAExtension, whatever its sources are called
    if b"create_extension(" in data and (_REFUSES_WITHOUT_CUDA.search(data) or _FFI_WITH_CUDA.search(data)):
        names.update(_FFI_EXTENSION.findall(data))
    if b"CUDAExtension(" in data and b"def " in data:
        names.update(_built_by_helpers(data))
    if b"CUDAExtension" in data and _REFUSES_WITHOUT_CUDA.search(data):
        # `extension = CUDAExtension` where there is a GPU, else `raise` (Deformable-DETR's
        # `models/ops/setup.py`): whatever the extension is called through, it is CUDA's
        names.update(_ANY_EXTENSION.findall(data))
    return names


_TOP_DEF = re.compile(rb"^def[ \t]+(\w+)[ \t]*\(([^)]*)\)", re.MULTILINE)
_UNINDENTED = re.compile(rb"^[^\s#]", re.MULTILINE)
_STRING_ARG = re.compile(rb"\s*(?:(\w+)\s*=\s*)?['\"]([\w.]+)['\"]\s*,")


def _built_by_helpers(data: bytes) -> set[bytes]:
    """`make_cuda_ext(name='iou3d_nms_cuda', module='pcdet.ops.iou3d_nms', sources=[...])`, a
    setup script's own helper that returns `CUDAExtension(name='%s.%s' % (module, name), ...)`
    (OpenPCDet, AlphaPose, mmdetection 1.x): the dotted names of the modules it builds."""
    found: set[bytes] = set()
    defs = list(_TOP_DEF.finditer(data))
    for index, match in enumerate(defs):
        end = defs[index + 1].start() if index + 1 < len(defs) else len(data)
        body = data[match.end() : end]
        outside = _UNINDENTED.search(body, body.find(b"\n") + 1)  # the function ends at the next top-level line
        if b"CUDAExtension(" not in body[: outside.start() if outside else len(body)]:
            continue
        params = [p.split(b"=")[0].strip() for p in match.group(2).split(b",")]
        calls = [m.end() for m in re.finditer(rb"(?<![\w.])" + re.escape(match.group(1)) + rb"\(", data)]
        for start in calls:
            given: dict[bytes, bytes] = {}
            position, at = 0, start
            while (arg := _STRING_ARG.match(data, at)) is not None:
                key = arg.group(1) or (params[position] if position < len(params) else b"")
                given[key] = arg.group(2)
                position, at = position + 1, arg.end()
            if b"name" in given:
                found.add(given[b"module"] + b"." + given[b"name"] if b"module" in given else given[b"name"])
    return found


def _imports_compiled(path: str, top: bytes, compiled: frozenset[str]) -> bool:
    """`from .gpu_nms import gpu_nms` beside the setup script that builds it, or an absolute
    `import nms.gpu_nms` whose dotted path ends where the module lands."""
    folder = posixpath.dirname(path.replace(os.sep, "/"))
    for level, module, imported, plain in import_statements(top):
        names = plain if plain is not None else [module, *dotted(module, imported)]
        for name in filter(None, names):
            target = name.replace(".", "/")
            if level:
                base = folder
                for _ in range(level - 1):
                    base = posixpath.dirname(base)
                if (posixpath.join(base, target) if base else target) in compiled:
                    return True
            elif any(module_path == target or module_path.endswith("/" + target) for module_path in compiled):
                return True
    return False


def imports_gpu_package(data: bytes) -> bool:
    """The file imports, at its top level, a package that only works with a GPU (`from
    cupy.cuda import function`, `pynvrtc`): its own code is GPU code by design."""
    for match in TOP_IMPORT.finditer(data):
        for name in (match.group(1) or match.group(2)).decode("ascii", "replace").split(","):
            if name.strip().split(" ")[0].split(".")[0] in GPU_ONLY_PACKAGES:
                return True
    return False
