"""mpk/rpc.pyi describes mpk.rpc: every public name and method is in both, and mypy accepts the
common uses and rejects a misspelt option."""
import ast
import os
import subprocess
import sys

import mpk.rpc as rpc

STUB = os.path.join(os.path.dirname(rpc.__file__), "rpc.pyi")


def stub_tree():
    with open(STUB, encoding="utf-8") as f:
        return ast.parse(f.read())


def test_public_names_and_methods_match():
    tree = stub_tree()
    names = set()
    classes = {}
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign):
            names.add(node.target.id)
        if isinstance(node, ast.ClassDef):
            classes[node.name] = node

    def stubbed(name):
        node = classes[name]
        out = {f.name for f in node.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}
        for b in node.bases:
            if isinstance(b, ast.Name) and b.id in classes:
                out |= stubbed(b.id)
        return {m for m in out if not m.startswith("_")}

    assert set(rpc.__all__) <= names
    for name in rpc.__all__:
        assert hasattr(rpc, name), name
    for name in classes:
        if name.startswith("_"):
            continue
        cls = getattr(rpc, name)
        runtime = {m for m in dir(cls) if not m.startswith("_") and callable(getattr(cls, m))}
        runtime -= set(dir(BaseException))
        assert runtime <= stubbed(name), (name, runtime - stubbed(name))
        assert stubbed(name) <= set(dir(cls)), (name, stubbed(name) - set(dir(cls)))


GOOD = '''
import asyncio
import mpk.rpc as rpc

server = rpc.Server()

@server.register("get")
def get(fruit: str) -> str:
    return fruit

async def main() -> None:
    listener = await server.listen_tcp("127.0.0.1", 0)
    port: int = listener.sockets[0].getsockname()[1]
    async with await rpc.connect("127.0.0.1", port, **rpc.neovim_options()) as ep:
        v = await ep.call("get", "banana", timeout=1.5)
        await ep.notify("x", 1)
        try:
            await ep.call("get")
        except rpc.RPCError as e:
            m: str = e.message
            nv = e.neovim()
    ep2, proc = await rpc.spawn("nvim", "--embed")
    await ep2.aclose(timeout=1)
    await proc.wait()
    with rpc.Client(("127.0.0.1", port)) as c:
        c.call("get", "kiwi")
'''

BAD = '''
import mpk.rpc as rpc

async def main(ep: rpc.Endpoint) -> None:
    await ep.call("get", timeuot=1)
    rpc.Client(("h", 1), bin_as_strr=True)
'''


def test_mypy(tmp_path):
    (tmp_path / "good.py").write_text(GOOD)
    (tmp_path / "bad.py").write_text(BAD)
    proc = subprocess.run([sys.executable, "-m", "mypy", "--no-incremental", "--cache-dir", str(tmp_path / "cache"),
                           "--strict-optional", "good.py", "bad.py"], cwd=tmp_path, capture_output=True, text=True)
    out = proc.stdout
    assert "good.py" not in out, out
    bad_lines = sorted({int(line.split(":")[1]) for line in out.splitlines() if line.startswith("bad.py:")})
    assert bad_lines == [5, 6], out
