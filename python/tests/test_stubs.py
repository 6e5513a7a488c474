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


GOOD = '''
import socket
import mpk

def send(sock: socket.socket, value: object) -> None:
    packer = mpk.Packer()
    sock.sendall(packer.pack(value))          # bytes, not Optional[bytes]
    sock.sendall(mpk.packb(value, use_bin_type=True, default=repr))

def stream(packer: "mpk.Packer[None]") -> bytes:
    packer.pack(1)
    return packer.bytes()

buffered = mpk.Packer(autoreset=False)
assert buffered.pack(1) is None
data: bytes = mpk.packb([1, 2])
value = mpk.unpackb(data, use_list=False, strict_map_key=False, max_depth=10)
try:
    mpk.unpackb(data[:-1])
except mpk.DecodeError as e:
    kind: str = e.kind
    offset: int = e.offset + 1
'''

BAD = '''
import mpk

mpk.unpackb(b"\\x90", use_bin_tpye=True)      # a misspelt option
mpk.packb(1, use_single_flaot=True)
mpk.Packer(autoreset=False).pack(1).hex()      # pack returns None without autoreset
e = mpk.DecodeError()
e.kind + 1                                     # kind is a str
'''


def test_mypy_accepts_the_common_uses_and_rejects_misspelt_options(tmp_path):
    import subprocess
    import sys

    (tmp_path / "good.py").write_text(GOOD)
    (tmp_path / "bad.py").write_text(BAD)
    proc = subprocess.run([sys.executable, "-m", "mypy", "--no-incremental", "--cache-dir", str(tmp_path / "cache"),
                           "--strict-optional", "good.py", "bad.py"], cwd=tmp_path, capture_output=True, text=True)
    out = proc.stdout
    assert "good.py" not in out, out
    bad_lines = sorted({int(line.split(":")[1]) for line in out.splitlines() if line.startswith("bad.py:")})
    assert bad_lines == [4, 5, 6, 8], out
