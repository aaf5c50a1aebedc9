"""The package's shape (docs/architecture.md): no import circle inside lsmgpu, counting imports
inside functions, and no module over 400 lines without a reason written at its top."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: the installed packages and the folders they come from (setup.cfg package_dir)
SOURCES = {"lsmgpu": ROOT / "lsmgpu", "lsmgpu.problems": ROOT / "problems"}
MAX_LINES = 400


def modules() -> dict[str, Path]:
    """Module name -> file, for every module of lsmgpu (lsmgpu.problems included)."""
    found = {}
    for package, folder in SOURCES.items():
        for path in folder.rglob("*.py"):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join([package, *parts])] = path
    return found


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The lsmgpu modules that module ``name`` imports, anywhere in its file."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[:len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
        else:
            continue
        found |= {t for t in targets if t in known and t != name}
    return found


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, found, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_the_cycle_finder_finds_a_circle():
    """The cycle finder finds a circle."""
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_circle_inside_lsmgpu():
    """No import circle inside lsmgpu."""
    found = modules()
    graph = {name: imports(name, path, set(found)) for name, path in found.items()}
    assert graph["lsmgpu.parallel.multistart"] >= {"lsmgpu.parallel.batch"}   # the parser sees imports
    assert "lsmgpu.backends.cuda" in graph["lsmgpu.backends"]                   # ... inside functions too
    assert cycles(graph) == []


def test_long_modules_say_why():
    """Long modules say why."""
    for name, path in modules().items():
        text = path.read_text()
        if text.count("\n") > MAX_LINES:
            head = ast.get_docstring(ast.parse(text)) or ""
            assert "long because" in head.lower(), f"{name} has {text.count(chr(10))} lines and no reason at its top"


def test_every_test_says_what_it_checks():
    """Every test function has a docstring (what it checks and why), so a failure reads as a
    broken promise, not a name."""
    import ast
    missing = []
    for path in sorted(Path(__file__).parent.rglob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_") and not ast.get_docstring(node):
                missing.append(f"{path.name}::{node.name}")
    assert missing == []


def test_the_docs_links_lead_somewhere():
    """Every relative link of README.md and of the written docs (docs/*.md, docs/benchmarks/) names
    a file of the repository; the raw reports under docs/bench/ are kept as the runs wrote them."""
    import re
    pages = [ROOT / "README.md", *(ROOT / "docs").glob("*.md"), *(ROOT / "docs" / "benchmarks").glob("*.md")]
    broken = []
    for page in pages:
        for link in re.findall(r"\]\(([^)#\s]+)", page.read_text()):
            if not link.startswith(("http://", "https://", "mailto:")) and not (page.parent / link).exists():
                broken.append(f"{page.relative_to(ROOT)}: {link}")
    assert broken == []
