"""The type stubs describe the runtime: every public name and method is in both."""
import ast
import os

import mpk

STUB = os.path.join(os.path.dirname(mpk.__file__), "__init__.pyi")


def stub_tree():
    with open(STUB, encoding="utf-8") as f:
        return ast.parse(f.read())


def test_stub_ships_with_py_typed():
    assert os.path.exists(STUB)
    assert os.path.exists(os.path.join(os.path.dirname(mpk.__file__), "py.typed"))


def test_public_names_match():
    names = set()
    for node in stub_tree().body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.ImportFrom):
            names.update(a.asname for a in node.names if a.asname)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign):
            names.add(node.target.id)
    public = {n for n in names if not n.startswith("_")}
    assert set(mpk.__all__) <= public
    for name in public:
        assert hasattr(mpk, name), name


def test_methods_match():
    for node in stub_tree().body:
        if isinstance(node, ast.ClassDef):
            stubbed = {f.name for f in node.body if isinstance(f, ast.FunctionDef)}
            runtime = {m for m in dir(getattr(mpk, node.name)) if not m.startswith("_")}
            assert runtime == {m for m in stubbed if not m.startswith("_")}, node.name
