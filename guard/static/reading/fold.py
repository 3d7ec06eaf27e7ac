"""Constant folding for interpreter one-liners: what a call's computed argument works out to.

``x = 'rm -rf '; os.system(x + '~')``, ``shutil.rmtree(os.path.expanduser('~'))``,
``system("rm -rf $ENV{HOME}")``, ``fs.rmSync(os.homedir(), {recursive: true})``: the argument is
folded from string literals, concatenation, joins, format strings, known path and environment
functions and simple assignments seen earlier in the code. Each call that runs a command, deletes a
path, writes a file or kills a process becomes an :class:`Effect` with its folded value, or with
``None`` when the value cannot be worked out (the caller asks: guard cannot see the target).

Python is read with :mod:`ast`; Node, Perl, Ruby and PHP with a small tokenizer and a folder for
expressions (terms joined by ``+`` or ``.``), not a parser. Both are linear in the code's size, and
bounded: at most :data:`MAX_CODE` characters, :data:`MAX_VALUE` characters per folded value.
"""

from __future__ import annotations

import ast
import posixpath
import re
import shlex
from collections.abc import Iterator
from typing import Any

import attrs

from guard import lazyre

MAX_CODE = 32768
MAX_VALUE = 4096
MAX_EFFECTS = 64
Value = str | tuple[str, ...] | None


@attrs.frozen
class Effect:
    """``kind`` is ``script`` (a shell command line), ``argv`` (a program and its words), ``delete``
    (``recursive`` or not), ``write``, ``extract`` (an archive unpacked into a folder), ``copy`` or
    ``move`` (``value`` is ``(source, dest)``, dest ``""`` when it did not fold), ``kill`` (``value``
    is ``(signal, pid)``), ``code`` (more code in the same language), ``import`` (a module imported
    by a call, Python only) or ``environ`` (``os.environ[k] = v``, ``del os.environ[k]``: see ``env``
    and ``unset``); ``value`` None means guard could not fold the argument."""

    kind: str
    value: Value
    call: str
    recursive: bool = False
    # ``environ`` (the code's own environment, for the commands it starts after) and a command started
    # with ``env={…}``: variables set (None: to a value not worked out) and taken away
    env: tuple[tuple[str, str | None], ...] = ()
    unset: tuple[str, ...] = ()


@attrs.frozen
class _EnvMap:
    """An environment mapping Python or Node code builds for a child (``env=``, ``{env: …}``): the
    variables set (None: to a value not worked out), those taken away, and whether the rest of the
    caller's environment is in it."""

    pairs: tuple[tuple[str, str | None], ...] = ()
    gone: tuple[str, ...] = ()
    inherits: bool = False

    def set(self, pairs: tuple[tuple[str, str | None], ...]) -> _EnvMap:
        keys = {k for k, _ in pairs}
        kept = tuple(p for p in self.pairs if p[0] not in keys)
        return attrs.evolve(self, pairs=kept + pairs, gone=tuple(k for k in self.gone if k not in keys))

    def drop(self, keys: tuple[str, ...]) -> _EnvMap:
        pairs = tuple(p for p in self.pairs if p[0] not in keys)
        return attrs.evolve(self, pairs=pairs, gone=(*self.gone, *(k for k in keys if self.inherits)))

    def spread(self, base: _EnvMap) -> _EnvMap:
        """``{...base, …these}``: ``base``'s variables under these."""
        return _EnvMap(base.pairs, base.gone, base.inherits or self.inherits).set(self.pairs)

    def for_child(self) -> tuple[tuple[tuple[str, str | None], ...], tuple[str, ...]]:
        """What a command started with this mapping sees set and taken away: a mapping that does not
        inherit the caller's environment leaves guard's workspace out unless it names it."""
        replaced = not self.inherits and all(k != "GUARD_HOME" for k, _ in self.pairs)
        return self.pairs, (*self.gone, *(("GUARD_HOME",) if replaced else ()))


_INHERITED = _EnvMap(inherits=True)
_EMPTY_ENV = _EnvMap()


def _short(value: Value) -> Value:
    if isinstance(value, str):
        return value if len(value) <= MAX_VALUE else None
    if isinstance(value, tuple):
        return value if sum(len(v) for v in value) <= MAX_VALUE else None
    return None


def _home_path(text: str, home: str) -> str:
    return home + text[1:] if text == "~" or text.startswith("~/") else text


# -- Python ------------------------------------------------------------------------------------

_PY_SHELL = frozenset(
    {
        "os.system",
        "os.popen",
        "subprocess.getoutput",
        "subprocess.getstatusoutput",
        "commands.getoutput",
        "commands.getstatusoutput",
        "pty.spawn",
    }
)
_PY_SUBPROCESS = frozenset(
    {"subprocess.run", "subprocess.call", "subprocess.check_call", "subprocess.check_output", "subprocess.Popen"}
)
_PY_EXECV = frozenset({"os.execv", "os.execve", "os.execvp", "os.execvpe"})
_PY_EXECL = frozenset({"os.execl", "os.execle", "os.execlp", "os.execlpe"})
_PY_SPAWNV = frozenset({"os.spawnv", "os.spawnve", "os.spawnvp", "os.spawnvpe"})
_PY_SPAWNL = frozenset({"os.spawnl", "os.spawnle", "os.spawnlp", "os.spawnlpe"})
_PY_DELETE = {
    "shutil.rmtree": True,
    "os.remove": False,
    "os.unlink": False,
    "os.rmdir": False,
    "os.removedirs": False,
}
_PY_KILL = frozenset({"os.kill", "os.killpg"})
_PY_OPEN = frozenset({"open", "io.open", "builtins.open", "codecs.open", "io.FileIO"})
_PY_PATH_WRITES = frozenset({"write_text", "write_bytes", "open"})
_PY_WRITE_FLAGS = lazyre.compile(r"O_(?:WRONLY|RDWR|CREAT|TRUNC|APPEND)")
_PY_COPY = {
    "shutil.copy": "copy",
    "shutil.copy2": "copy",
    "shutil.copyfile": "copy",
    "shutil.copytree": "copy",
    "shutil.move": "move",
    "os.rename": "move",
    "os.replace": "move",
}
# Where guard's own program and packages are, as folded values (guard.static.families.guardfiles knows the
# spelling ``…/bin/guard``, ``…/site-packages/guard``): ``shutil.copy(shutil.which("guard"), …)``.
GUARD_SCRIPT = "/guard-fold/bin/guard"
GUARD_PACKAGE = "/guard-fold/site-packages/{}"
_PY_IMPORT = frozenset(
    {
        "__import__",
        "builtins.__import__",
        "import_module",
        "importlib.import_module",
        "importlib.__import__",
        "runpy.run_module",
        "importlib.util.find_spec",
        "pkgutil.resolve_name",
    }
)
_PY_HOME_ENV = frozenset({"HOME", "USERPROFILE"})
_PY_ENVIRON = frozenset(
    {"os.environ.pop", "os.environ.clear", "os.environ.update", "os.environ.setdefault", "os.putenv", "os.unsetenv"}
)


def _env(key: Value, home: str) -> str | None:
    """An environment variable's value as far as it is known: the home, or (``GUARD_HOME``) a guard
    workspace, which the resolver protects wherever the person keeps theirs (``~/.guard`` always is)."""
    if key in _PY_HOME_ENV:
        return home
    return posixpath.join(home, ".guard") if key == "GUARD_HOME" else None


class _Py:
    def __init__(self, home: str) -> None:
        self.home = home
        self.env: dict[str, Value] = {}
        self.envs: dict[str, _EnvMap] = {}  # names bound to an environment mapping (``e = os.environ.copy()``)
        self.alias: dict[str, str] = {}
        self.out: list[Effect] = []

    # names
    def qual(self, node: ast.expr) -> str | None:
        if isinstance(node, ast.Name):
            return self.alias.get(node.id, node.id)
        if isinstance(node, ast.Attribute):
            base = self.qual(node.value)
            return f"{base}.{node.attr}" if base else None
        if isinstance(node, ast.Call) and self.qual(node.func) in _PY_IMPORT and node.args:
            value = self.val(node.args[0])  # ``__import__("o" + "s")`` is ``os``
            return value if isinstance(value, str) else None
        return None

    # values
    def val(self, node: ast.expr | None) -> Value:
        return _short(self._val(node)) if node is not None else None

    def _val(self, node: ast.expr) -> Value:
        if isinstance(node, ast.Constant):
            if isinstance(node.value, str):
                return node.value
            if isinstance(node.value, bytes):
                return node.value.decode("utf-8", "replace")
            if isinstance(node.value, int) and not isinstance(node.value, bool):
                return str(node.value)
            return None
        if isinstance(node, ast.Name):
            return self.env.get(node.id)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            inner = self.val(node.operand)
            return "-" + inner if isinstance(inner, str) and inner.isdigit() else None
        if isinstance(node, (ast.List, ast.Tuple)):
            words: list[str] = []
            for e in node.elts:
                item = self.val(e.value if isinstance(e, ast.Starred) else e)
                if isinstance(e, ast.Starred) and isinstance(item, tuple):
                    words.extend(item)  # ``[sys.executable, *["-m", "x"]]``
                elif isinstance(item, str) and not isinstance(e, ast.Starred):
                    words.append(item)
                else:
                    return None
            return tuple(words)
        if isinstance(node, ast.JoinedStr):
            parts = []
            for v in node.values:
                part = self.val(v.value) if isinstance(v, ast.FormattedValue) else self.val(v)
                if not isinstance(part, str):
                    return None
                parts.append(part)
            return "".join(parts)
        if isinstance(node, ast.BinOp):
            left, right = self.val(node.left), self.val(node.right)
            if isinstance(node.op, ast.Add) and type(left) is type(right) and left is not None:
                return left + right  # type: ignore[operator]
            if isinstance(node.op, ast.Div) and isinstance(left, str) and isinstance(right, str):
                return posixpath.join(left, right)  # ``Path.home() / ".ssh"``
            if isinstance(node.op, ast.Mod) and isinstance(left, str) and right is not None:
                try:
                    return left % right
                except (TypeError, ValueError, KeyError):
                    return None
            return None
        if isinstance(node, ast.Subscript):
            package = self.qual(node.value) or ""
            if package in ("guard.__path__", "integrations.__path__"):  # ``guard.__path__[0]``
                return GUARD_PACKAGE.format(package.split(".")[0])
            if self.qual(node.value) == "os.environ":
                return _env(self.val(node.slice), self.home)
            return None
        if isinstance(node, ast.Attribute):
            name = self.qual(node)
            if name == "sys.executable":
                return "python"
            if name in ("guard.__file__", "integrations.__file__"):
                return GUARD_PACKAGE.format(name.split(".")[0]) + "/__init__.py"
            if name in ("os.sep", "os.path.sep"):
                return "/"
            if name in ("os.curdir", "os.path.curdir"):
                return "."
            return None
        if isinstance(node, ast.Call):
            return self.call_val(node)
        return None

    def call_val(self, node: ast.Call) -> Value:
        args = [self.val(a) for a in node.args]
        func = node.func
        if isinstance(func, ast.Attribute):
            recv = self.val(func.value)
            if func.attr == "join" and isinstance(recv, str) and len(args) == 1:
                items = args[0]
                return recv.join(items) if isinstance(items, tuple) else None
            if func.attr == "format" and isinstance(recv, str):
                kwargs = {k.arg: self.val(k.value) for k in node.keywords if k.arg}
                if any(a is None for a in args) or any(v is None for v in kwargs.values()):
                    return None
                try:
                    return recv.format(*args, **kwargs)
                except (IndexError, KeyError, ValueError, AttributeError):
                    return None
            if func.attr in ("expanduser", "resolve", "absolute", "strip", "rstrip", "lstrip") and isinstance(
                recv, str
            ):
                return _home_path(recv, self.home) if func.attr == "expanduser" else recv
            if func.attr == "joinpath" and isinstance(recv, str) and all(isinstance(a, str) for a in args):
                return posixpath.join(recv, *[a for a in args if isinstance(a, str)])
        name = self.qual(func)
        if name is None:
            return None
        short = name.rsplit(".", 1)[-1]
        if name in ("os.path.expanduser", "posixpath.expanduser") and args and isinstance(args[0], str):
            return _home_path(args[0], self.home)
        if name in ("os.path.join", "posixpath.join") and args and all(isinstance(a, str) for a in args):
            return posixpath.join(*[a for a in args if isinstance(a, str)])
        if name == "shutil.which" and args[:1] == ["guard"]:
            return GUARD_SCRIPT
        if name in ("os.path.dirname", "posixpath.dirname") and args and isinstance(args[0], str):
            return posixpath.dirname(args[0])
        if name in ("os.path.abspath", "os.path.realpath", "os.path.normpath", "os.fspath", "str"):
            return args[0] if args and isinstance(args[0], str) else None
        if name in ("os.path.expandvars",) and args and isinstance(args[0], str):
            return re.sub(r"\$(?:HOME\b|\{HOME\})", self.home, args[0])
        if name in ("os.getenv", "os.environ.get") and args:
            return _env(args[0], self.home)
        if name in ("pathlib.Path.home", "Path.home", "os.path.home"):
            return self.home
        if name in ("os.getcwd", "pathlib.Path.cwd", "Path.cwd"):
            return "."
        if short in ("Path", "PosixPath", "PurePath", "PurePosixPath") and all(isinstance(a, str) for a in args):
            return posixpath.join(*[a for a in args if isinstance(a, str)]) if args else "."
        if name == "shlex.join" and args and isinstance(args[0], tuple):
            return shlex.join(args[0])
        if name in ("tempfile.mkdtemp", "tempfile.gettempdir"):
            return "/tmp/guard-fold"
        return None

    # statements
    def stmts(self, body: list[ast.stmt]) -> None:
        for stmt in body:
            if len(self.out) >= MAX_EFFECTS:
                return
            self.stmt(stmt)

    def stmt(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            for a in stmt.names:
                if isinstance(stmt, ast.Import):
                    self.alias[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
                elif stmt.module:
                    self.alias[a.asname or a.name] = f"{stmt.module}.{a.name}"
            return
        nested: list[list[ast.stmt]] = []
        heads: list[ast.AST] = []
        for field, value in ast.iter_fields(stmt):
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                nested.append(value)
            elif field == "handlers":
                nested.extend(h.body for h in value)
            elif isinstance(value, ast.AST):
                heads.append(value)
            elif isinstance(value, list):
                heads.extend(v for v in value if isinstance(v, ast.AST))
        for head in heads:
            self.calls(head)
        if isinstance(stmt, ast.Assign):
            value = self.val(stmt.value)
            for target in stmt.targets:
                self.bind(target, value, stmt.value)
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            self.bind(stmt.target, self.val(stmt.value), stmt.value)
        elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
            old, new = self.env.get(stmt.target.id), self.val(stmt.value)
            joined = old + new if isinstance(stmt.op, ast.Add) and type(old) is type(new) and old else None  # type: ignore[operator]
            self.env[stmt.target.id] = _short(joined)
        elif isinstance(stmt, ast.Delete):  # ``del os.environ["GUARD_HOME"]``, ``del e["GUARD_HOME"]``
            gone = tuple(k for k in map(self.environ_key, stmt.targets) if k is not None)
            self.environ("del os.environ", unset=gone)
            for name, key in (m for m in map(self.mapped_key, stmt.targets) if m is not None):
                self.envs[name] = self.envs[name].drop((key,))
        elif isinstance(stmt, (ast.For, ast.AsyncFor)) and isinstance(stmt.target, ast.Name):
            self.env[stmt.target.id] = None  # a loop variable: one of many values
        for body in nested:
            self.stmts(body)

    def bind(self, target: ast.expr, value: Value, node: ast.expr) -> None:
        if isinstance(target, ast.Name):
            self.env[target.id] = value
            env = self.env_map(node)
            if env is None:
                self.envs.pop(target.id, None)
            else:
                self.envs[target.id] = env
        elif (key := self.environ_key(target)) is not None:  # ``os.environ["GUARD_HOME"] = "/tmp/x"``
            self.environ("os.environ", env=((key, value if isinstance(value, str) else None),))
        elif (mapped := self.mapped_key(target)) is not None:  # ``e["GUARD_HOME"] = "/tmp/x"``
            self.envs[mapped[0]] = self.envs[mapped[0]].set(((mapped[1], value if isinstance(value, str) else None),))
        elif isinstance(target, (ast.Tuple, ast.List)):
            items = node.elts if isinstance(node, (ast.Tuple, ast.List)) else []
            for i, t in enumerate(target.elts):
                self.bind(t, self.val(items[i]) if i < len(items) else None, items[i] if i < len(items) else node)

    def calls(self, tree: ast.AST) -> None:
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and len(self.out) < MAX_EFFECTS:
                self.call(node)

    def call(self, node: ast.Call) -> None:
        if self.env_change(node):  # ``e.pop("GUARD_HOME")`` on ``e = os.environ.copy()``
            return
        name = self.qual(node.func) or ""
        args = node.args
        shell = any(k.arg == "shell" and _truthy(k.value) for k in node.keywords)
        emit = self.out.append
        if name in _PY_SHELL:
            value = self.val(args[0]) if args else None
            emit(Effect("argv" if isinstance(value, tuple) else "script", value, name))
        elif name in _PY_SUBPROCESS:
            first = args[0] if args else next((k.value for k in node.keywords if k.arg == "args"), None)
            value = self.val(first)
            if isinstance(value, tuple) and shell:
                value = " ".join(value)
            env, unset = self.child_env(next((k.value for k in node.keywords if k.arg == "env"), None))
            emit(Effect("argv" if isinstance(value, tuple) else "script", value, name, env=env, unset=unset))
        elif name in _PY_ENVIRON:
            self.environ_call(name, node)
        elif name == "asyncio.create_subprocess_shell":
            value = self.val(args[0]) if args else None
            emit(Effect("script", value if isinstance(value, str) else None, name))
        elif name == "asyncio.create_subprocess_exec":
            words = [self.val(a) for a in args]
            ok = bool(words) and all(isinstance(w, str) for w in words)
            emit(Effect("argv", tuple(w for w in words if isinstance(w, str)) if ok else None, name))
        elif name in _PY_EXECV or name in _PY_SPAWNV or name in ("os.posix_spawn", "os.posix_spawnp"):
            at = 2 if name in _PY_SPAWNV else 1
            value = self.val(args[at]) if len(args) > at else None
            emit(Effect("argv", value if isinstance(value, tuple) else None, name))
        elif name in _PY_EXECL or name in _PY_SPAWNL:
            at = 2 if name in _PY_SPAWNL else 1
            words = [self.val(a) for a in args[at:] if not isinstance(a, ast.Starred)]
            if name.endswith("e") and words:
                words = words[:-1]  # the environment
            ok = bool(words) and all(isinstance(w, str) for w in words)
            emit(Effect("argv", tuple(w for w in words if isinstance(w, str)) if ok else None, name))
        elif name in _PY_DELETE:
            emit(Effect("delete", self.path(args), name, recursive=_PY_DELETE[name]))
        elif name in _PY_OPEN or name == "os.truncate":  # ``open(p, "w")`` with ``p = "…/settings.json"``
            if name == "os.truncate" or _opens_for_writing(self, node, 1):
                self._write(self.path(args), name)
        elif name == "os.open" and len(args) > 1 and _PY_WRITE_FLAGS.search(ast.unparse(args[1])):
            self._write(self.path(args), name)
        elif name == "shutil.unpack_archive" or (
            isinstance(node.func, ast.Attribute) and node.func.attr == "extractall"
        ):
            at, key = (1, "extract_dir") if name == "shutil.unpack_archive" else (0, "path")
            folder = args[at] if len(args) > at else next((k.value for k in node.keywords if k.arg == key), None)
            self._write(self.val(folder) if folder is not None else ".", name or "extractall", "extract")
        elif isinstance(node.func, ast.Attribute) and node.func.attr in _PY_PATH_WRITES:
            if node.func.attr != "open" or _opens_for_writing(self, node, 0):  # ``Path(p).open("w")``
                self._write(self.val(node.func.value), f"Path.{node.func.attr}")
        elif name in _PY_COPY and args:  # only when the source folds: an unknown copy is an ordinary one
            source, dest = self.val(args[0]), self.val(args[1]) if len(args) > 1 else None
            if isinstance(source, str):
                emit(Effect(_PY_COPY[name], (source, dest if isinstance(dest, str) else ""), name))
        elif name in _PY_KILL:
            pid = self.val(args[0]) if args else None
            sig = self.val(args[1]) if len(args) > 1 else "15"
            if sig is None and len(args) > 1:  # ``signal.SIGKILL``, ``SIGTERM``, ``signal.Signals.SIGKILL``
                named = ast.unparse(args[1]).rsplit(".", 1)[-1]
                sig = named if re.fullmatch(r"SIG[A-Z0-9]+", named) else None
            if isinstance(pid, str) and name == "os.killpg":
                pid = "-" + pid
            if isinstance(pid, str) and isinstance(sig, str):
                emit(Effect("kill", (sig, pid), name))
            else:
                emit(Effect("kill", None, name))
        elif name in _PY_IMPORT:
            first = args[0] if args else next((k.value for k in node.keywords if k.arg in ("name", "mod_name")), None)
            value = self.val(first) if first is not None else None
            emit(Effect("import", value if isinstance(value, str) else None, name))
        elif name in ("exec", "builtins.exec") and args:
            value = self.val(args[0])
            if isinstance(args[0], ast.Constant) and isinstance(value, str):
                self.nested(value)  # ``exec('os.system(c)')``: read with the variables set so far
            elif isinstance(value, str):
                emit(Effect("code", value, name))
        elif isinstance(node.func, ast.Attribute) and node.func.attr in ("unlink", "rmdir"):
            recv = node.func.value  # ``Path(x).unlink()``, ``p.unlink()`` with ``p = Path(…)``
            target = self.val(recv)
            if (
                isinstance(target, str)
                or isinstance(recv, ast.Call)
                or (isinstance(recv, ast.Name) and recv.id in self.env)
            ):
                emit(Effect("delete", target if isinstance(target, str) else None, f"Path.{node.func.attr}"))

    # the environment: what the commands the code starts inherit
    def environ_key(self, target: ast.expr) -> str | None:
        """``os.environ["GUARD_HOME"]`` as a target: the variable's name, when it folds."""
        if isinstance(target, ast.Subscript) and self.qual(target.value) == "os.environ":
            key = self.val(target.slice)
            return key if isinstance(key, str) else None
        return None

    def mapped_key(self, target: ast.expr) -> tuple[str, str] | None:
        """``e["GUARD_HOME"]`` as a target, ``e`` bound to an environment mapping: its name and the key."""
        if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and target.value.id in self.envs:
            key = self.val(target.slice)
            return (target.value.id, key) if isinstance(key, str) else None
        return None

    def environ(self, call: str, env: tuple[tuple[str, str | None], ...] = (), unset: tuple[str, ...] = ()) -> None:
        if env or unset:
            self.out.append(Effect("environ", "", call, env=env, unset=unset))

    def environ_call(self, name: str, node: ast.Call) -> None:
        """``os.environ.pop(k)``, ``os.unsetenv(k)``, ``os.environ.clear()``, ``os.putenv(k, v)``,
        ``os.environ.setdefault(k, v)``, ``os.environ.update({k: v}, k=v)``."""
        keys = [self.val(a) for a in node.args]
        if name == "os.environ.clear":
            self.environ(name, unset=("GUARD_HOME",))  # (all of them: guard's workspace among them)
        elif name in ("os.environ.pop", "os.unsetenv") and keys and isinstance(keys[0], str):
            self.environ(name, unset=(keys[0],))
        elif name in ("os.putenv", "os.environ.setdefault") and keys and isinstance(keys[0], str):
            value = keys[1] if len(keys) > 1 else None
            self.environ(name, env=((keys[0], value if isinstance(value, str) else None),))
        elif name == "os.environ.update":
            self.environ(name, env=self.pairs(node.args[0] if node.args else None, node.keywords)[0])

    def child_env(self, node: ast.expr | None) -> tuple[tuple[tuple[str, str | None], ...], tuple[str, ...]]:
        """``env={"PATH": …}`` (the whole environment: guard's workspace is gone unless named),
        ``env={**os.environ, "GUARD_HOME": …}``, ``dict(os.environ, GUARD_HOME=…)`` (changed) or a variable
        holding one (``e = os.environ.copy(); e.pop("GUARD_HOME")``, ``env=e``): the variables a command
        started with it sees set and taken away. Anything else is not worked out (no change read)."""
        env = self.env_map(node)
        return env.for_child() if env is not None else ((), ())

    def env_map(self, node: ast.expr | None) -> _EnvMap | None:
        """The environment mapping ``node`` builds: ``os.environ``, ``os.environ.copy()``, ``dict(os.environ,
        K=v)``, ``{**os.environ, K: v}``, ``{"PATH": …}``, ``dict(PATH=…)`` or a name bound to one; None when
        it is not one guard can read."""
        if node is None:
            return None
        if isinstance(node, ast.Name):
            return self.envs.get(node.id)
        if self.qual(node) == "os.environ":
            return _INHERITED
        if isinstance(node, ast.Dict):
            spread = [v for k, v in zip(node.keys, node.values, strict=True) if k is None]
            base = (self.env_map(spread[0]) or _INHERITED) if spread else _EMPTY_ENV
            return base.set(self.pairs(node, [])[0])
        if isinstance(node, ast.Call):
            func = self.qual(node.func)
            first = node.args[0] if node.args else None
            if func == "dict":
                pairs, starred = self.pairs(None, node.keywords)  # (``dict(**x)``: x may be the environment)
                base = (self.env_map(first) or _INHERITED) if first is not None or starred else _EMPTY_ENV
                return base.set(pairs)
            if func in ("copy.copy", "copy.deepcopy"):
                return self.env_map(first)
            if isinstance(node.func, ast.Attribute) and node.func.attr == "copy" and not node.args:
                return self.env_map(node.func.value)  # ``os.environ.copy()``, ``e.copy()``
        return None

    def env_change(self, node: ast.Call) -> bool:
        """``e.pop("GUARD_HOME")``, ``e.update(GUARD_HOME=…)``, ``e.setdefault(k, v)``, ``e.clear()`` on a name
        bound to an environment mapping: the mapping changed (True), or not one (False)."""
        func = node.func
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in self.envs):
            return False
        name, env = func.value.id, self.envs[func.value.id]
        keys = [self.val(a) for a in node.args]
        if func.attr == "clear":
            env = _EMPTY_ENV
        elif func.attr == "pop" and keys and isinstance(keys[0], str):
            env = env.drop((keys[0],))
        elif func.attr == "setdefault" and keys and isinstance(keys[0], str):
            value = keys[1] if len(keys) > 1 else None
            env = env.set(((keys[0], value if isinstance(value, str) else None),))
        elif func.attr == "update":
            env = env.set(self.pairs(node.args[0] if node.args else None, node.keywords)[0])
        else:
            return False
        self.envs[name] = env
        return True

    def pairs(
        self, node: ast.expr | None, keywords: list[ast.keyword]
    ) -> tuple[tuple[tuple[str, str | None], ...], bool]:
        """The names and values a dict literal and keywords give, and whether a ``**mapping`` is among them
        (``**os.environ``, or one not worked out: the environment may be inherited)."""
        out: list[tuple[str, str | None]] = []
        inherits = False
        if isinstance(node, ast.Dict):
            for k, v in zip(node.keys, node.values, strict=True):
                if k is None:
                    inherits = True
                    continue
                key, value = self.val(k), self.val(v)
                if isinstance(key, str):
                    out.append((key, value if isinstance(value, str) else None))
        for kw in keywords:
            if kw.arg is None:
                inherits = True
            else:
                value = self.val(kw.value)
                out.append((kw.arg, value if isinstance(value, str) else None))
        return tuple(out), inherits

    def _write(self, target: Value, call: str, kind: str = "write") -> None:
        """A file written (or an archive unpacked into a folder: ``extract``) where the target folds;
        one that does not is an ordinary write (no effect)."""
        if isinstance(target, str):
            self.out.append(Effect(kind, target, call))

    def nested(self, code: str) -> None:
        try:
            tree = ast.parse(code)
        except (SyntaxError, ValueError):
            return
        self.stmts(tree.body)

    def path(self, args: list[ast.expr]) -> str | None:
        value = self.val(args[0]) if args else None
        return value if isinstance(value, str) else None


def _opens_for_writing(py: _Py, node: ast.Call, at: int) -> bool:
    """``open(p, "w")``, ``open(p, mode="a+")``, ``Path(p).open("x")``: a mode that writes."""
    mode_node = (
        node.args[at] if len(node.args) > at else next((k.value for k in node.keywords if k.arg == "mode"), None)
    )
    mode = py.val(mode_node) if mode_node is not None else "r"
    return mode is None or (isinstance(mode, str) and bool(set(mode) & set("wax+")))


def _truthy(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and bool(node.value)


def python(code: str, home: str) -> list[Effect] | None:
    """The effects of Python ``code``; None when it does not parse (the pattern passes still read it)."""
    if len(code) > MAX_CODE:
        return None
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    reader = _Py(home)
    try:
        reader.stmts(tree.body)
    except RecursionError:
        return None
    return reader.out


# -- Node, Perl, Ruby, PHP: a tokenizer and a folder for ``term (op term)*`` -----------------------

_TOKEN_TEXT = (
    r"""(?P<sq>'(?:\\.|[^'\\])*')|(?P<dq>"(?:\\.|RUBY[^"\\])*")|(?P<bt>`(?:\\.|[^`\\])*`)"""
    r"""|(?P<qw>%[xwWi]?[{(\[](?:[^{}()\[\]]|\\.)*[})\]]|q[qxw]?\{[^}]*\})"""
    r"""|(?P<sym>(?<![\w)\]]):[A-Za-z_]\w*)|(?P<env>\$ENV\{\s*['"]?\w+['"]?\s*\}|\$_SERVER\[\s*['"]\w+['"]\s*\])"""
    r"""|(?P<name>[$@%]?[A-Za-z_][\w]*(?:(?:\.|::)[A-Za-z_]\w*)*)"""
    r"""|(?P<num>-?\d+)|(?P<nl>\n)|(?P<op>=>|==|=~|!=|\.=|\+=|[-+.,;=(){}\[\]:!])|(?P<sp>[ \t\r]+)|(?P<other>.)"""
)
_TOKEN = lazyre.compile(_TOKEN_TEXT.replace("RUBY", ""), re.S)
_RUBY_TOKEN = lazyre.compile(_TOKEN_TEXT.replace("RUBY", r"#\{[^}\n]*\}|"), re.S)  # ``"#{ENV["HOME"]}"``
_HOME_NAMES = frozenset(
    {"os.homedir", "Dir.home", "process.env.HOME", "Etc.getpwuid", "homedir", "Deno.env.get", "Bun.env.HOME"}
)
_SHELL_CALLS = {
    "js": ("execSync", "exec", "child_process.exec", "child_process.execSync", "cp.exec", "cp.execSync"),
    "perl": ("system", "exec", "readpipe"),
    "ruby": ("system", "exec", "spawn", "Kernel.system", "Kernel.exec", "Kernel.spawn", "IO.popen", "Open3.capture2"),
    "php": ("system", "exec", "shell_exec", "passthru", "popen", "proc_open"),
}
_ARGV_CALLS = {"js": ("spawn", "spawnSync", "execFile", "execFileSync")}
_JS_DELETE = ("rmSync", "rm", "rmdirSync", "rmdir", "unlinkSync", "unlink", "rimraf", "rimraf.sync", "removeSync")
_DENO_DELETE = ("Deno.remove", "Deno.removeSync")  # ``Deno.remove(path, {recursive: true})``
_DELETE_CALLS = {
    "js": _JS_DELETE,
    "perl": ("remove_tree", "rmtree", "File::Path::remove_tree", "File::Path::rmtree", "unlink"),
    "ruby": (
        "FileUtils.rm_rf",
        "FileUtils.rm_r",
        "FileUtils.remove_dir",
        "FileUtils.rm",
        "File.delete",
        "FileUtils.remove_entry",
    ),
    "php": ("unlink", "rmdir"),
}
_KILL_CALLS = {"js": ("process.kill",), "perl": ("kill",), "ruby": ("Process.kill",), "php": ("posix_kill",)}
# Calls that write the file their first argument names, and those that copy or move onto their second.
_JS_WRITE = frozenset(
    {"writeFileSync", "writeFile", "appendFileSync", "appendFile", "createWriteStream", "truncateSync", "truncate"}
    | {"outputFileSync", "outputFile", "writeJsonSync", "writeJSONSync", "writeJson", "outputJsonSync"}
)
_JS_COPY = {"copyFileSync": "copy", "copyFile": "copy", "cpSync": "copy", "copySync": "copy"} | {
    "renameSync": "move",
    "rename": "move",
    "moveSync": "move",
}
_WRITE_CALLS = {
    "ruby": ("File.write", "IO.write", "File.binwrite", "IO.binwrite", "FileUtils.touch"),
    "php": ("file_put_contents",),
}
_COPY_CALLS = {
    "ruby": {"FileUtils.cp": "copy", "FileUtils.copy": "copy", "FileUtils.mv": "move", "File.rename": "move"},
    "php": {"copy": "copy", "rename": "move"},
    "perl": {"copy": "copy", "move": "move", "File::Copy::copy": "copy", "File::Copy::move": "move", "rename": "move"},
}
_DECL = frozenset({"my", "our", "local", "let", "const", "var"})
_METHODS = frozenset({"join", "concat", "toString", "to_s", "trim", "strip", "chomp"})
_STOP = frozenset({",", ")", ";", "]", "}", "", "if", "unless", "or", "and", "&&", "||", "do"})


def _tokens(code: str, lang: str) -> list[tuple[str, str]]:
    out = []
    for m in (_RUBY_TOKEN if lang == "ruby" else _TOKEN).finditer(code):
        kind = m.lastgroup or "other"
        if kind != "sp":
            out.append((kind, m.group()))
    return out


class _Toks:
    """Fold expressions over a token list; ``env`` holds the string variables assigned so far."""

    def __init__(self, code: str, lang: str, home: str) -> None:
        self.t = _tokens(code, lang)
        self.lang, self.home = lang, home
        self.env: dict[str, Value] = {}
        self.envs: dict[str, _EnvMap] = {}  # Node: names bound to an environment object (``{...process.env}``)
        self.concat = "." if lang in ("perl", "php") else "+"

    def kind(self, i: int) -> str:
        return self.t[i][0] if i < len(self.t) else "end"

    def text(self, i: int) -> str:
        return self.t[i][1] if i < len(self.t) else ""

    def expr(self, i: int) -> tuple[Value, int]:
        """Fold ``term (op term)*`` from token ``i``; returns the value (None if unknown) and the next index."""
        value, i = self.term(i)
        while self.text(i) == self.concat:
            right, i = self.term(i + 1)
            value = value + right if isinstance(value, str) and isinstance(right, str) else None
        while self.text(i) not in _STOP and self.kind(i) != "nl":
            value = None  # something else follows (``x ? a : b``, ``a * 2``): not folded
            i = self.skip(i)
        return _short(value), i

    def skip(self, i: int) -> int:
        """Past one token, or a whole bracketed group."""
        depth = 0
        while i < len(self.t):
            tok = self.text(i)
            depth += tok in ("(", "[", "{")
            depth -= tok in (")", "]", "}")
            i += 1
            if depth <= 0:
                return i
        return i

    def term(self, i: int) -> tuple[Value, int]:
        kind, tok = self.kind(i), self.text(i)
        if kind in ("sq", "dq", "bt"):
            value = self.string(tok)
            return self.methods(value, i + 1)
        if kind == "env":
            key = re.sub(r"\W|ENV|_SERVER", "", tok)
            return (self.home if key == "HOME" else None), i + 1
        if kind == "num":
            return tok, i + 1
        if kind == "sym":
            return tok[1:], i + 1
        if tok == "[":
            items, i = self.args(i + 1, "]")
            value = tuple(v for v in items if isinstance(v, str)) if all(isinstance(v, str) for v in items) else None
            return self.methods(value, i)
        if tok == "(":
            value, i = self.expr(i + 1)
            return self.methods(value, i + 1 if self.text(i) == ")" else i)
        if kind == "name":
            name = tok
            if name in ("ENV", "process.env") and self.text(i + 1) == "[":
                env_key, j = self.expr(i + 2)
                return _env(env_key, self.home), j + 1
            if name == "process.env.GUARD_HOME":
                return self.methods(_env("GUARD_HOME", self.home), i + 1)
            if name in _HOME_NAMES or name.endswith(".homedir"):
                j = i + 1
                if self.text(j) == "(":
                    _, j = self.args(j + 1, ")")
                return self.methods(self.home, j)
            base, _, last = name.rpartition(".")
            if base and last in _METHODS and self.lang not in ("perl", "php"):  # ``parts.join(' ')``
                args: list[Value] = []
                j = i + 1
                if self.text(j) == "(":
                    args, j = self.args(j + 1, ")")
                return self.methods(self.method(self.env.get(base.lstrip("$")), last, args), j)
            if self.text(i + 1) == "(":
                args, j = self.args(i + 2, ")")
                return self.methods(self.fn(name, args), j)
            return self.methods(self.env.get(name.lstrip("$")), i + 1)
        return None, i + 1

    def methods(self, value: Value, i: int) -> tuple[Value, int]:
        """``[…].join(' ')``, ``'x'.concat(y)``, ``require('os').homedir()`` after a term (not in Perl
        or PHP, where ``.`` joins strings)."""
        while self.lang not in ("perl", "php") and self.text(i) == "." and self.kind(i + 1) == "name":
            method, i = self.text(i + 1), i + 2
            args: list[Value] = []
            if self.text(i) == "(":
                args, i = self.args(i + 1, ")")
            value = self.method(value, method, args)
        return value, i

    def method(self, value: Value, method: str, args: list[Value]) -> Value:
        if method == "join" and isinstance(value, tuple):
            sep = args[0] if args else ","
            return sep.join(value) if isinstance(sep, str) else None
        if method == "concat" and isinstance(value, str) and all(isinstance(a, str) for a in args):
            return value + "".join(a for a in args if isinstance(a, str))
        if method in ("toString", "to_s", "trim", "strip", "chomp"):
            return value
        if method == "homedir":
            return self.home
        return None

    def args(self, i: int, close: str) -> tuple[list[Value], int]:
        items: list[Value] = []
        while i < len(self.t) and self.text(i) != close:
            if self.text(i) in (",", "\n"):
                i += 1
                continue
            if self.text(i) == "{":  # an options object: ``{recursive: true}``
                j = self.skip(i)
                items.append("{" + " ".join(tok for _, tok in self.t[i:j]) + "}")
                i = j
                continue
            value, j = self.expr(i)
            items.append(value)
            i = max(j, i + 1)
        return items, i + 1

    def fn(self, name: str, args: list[Value]) -> Value:
        strings = [a for a in args if isinstance(a, str)]
        complete = len(strings) == len(args)
        if name in ("path.join", "File.join", "path.resolve", "join_paths") and complete and args:
            return posixpath.join(*strings)
        if name in ("File.expand_path", "path.normalize", "glob", "realpath", "abs_path") and args:
            return _home_path(strings[0], self.home) if strings and args[0] is strings[0] else None
        if name in ("getenv", "ENV.fetch") and args:
            return self.home if args[0] == "HOME" else None
        if name in ("process.cwd", "Dir.pwd", "getcwd", "cwd"):
            return "."
        if name in ("join",) and self.lang == "perl" and args and isinstance(args[0], str) and complete:
            return args[0].join(strings[1:])
        return None

    def string(self, tok: str) -> Value:
        body, quote = tok[1:-1], tok[0]
        if quote == "'" or (quote == '"' and self.lang == "js"):
            return re.sub(r"\\(.)", r"\1", body)
        return self.interpolate(body)

    def interpolate(self, body: str) -> Value:
        """``"$ENV{HOME}/x"``, ``"#{h}/x"``, ``` `rm ${p}` ```: each placeholder folded or the whole unknown."""
        out, pos = [], 0
        pattern = re.compile(r"\$\{([^}]*)\}|#\{([^}]*)\}|\$ENV\{\s*['\"]?(\w+)['\"]?\s*\}|\$(\w+)|\\(.)", re.S)
        for m in pattern.finditer(body):
            out.append(body[pos : m.start()])
            pos = m.end()
            expr, ruby, env, var, esc = m.groups()
            if esc is not None:
                out.append({"n": "\n", "t": "\t"}.get(esc, esc))
                continue
            if env is not None:
                value: Value = self.home if env == "HOME" else None
            elif var is not None:
                if self.lang in ("ruby", "js"):
                    out.append(m.group())  # ``$x`` is not interpolation here
                    continue
                value = self.env.get(var)
            else:
                inner = expr if expr is not None else ruby
                sub = _Toks(inner or "", self.lang, self.home)
                sub.env = self.env
                value, _ = sub.expr(0) if sub.t else (None, 0)
            if not isinstance(value, str):
                return None
            out.append(value)
        out.append(body[pos:])
        return "".join(out)

    def effects(self) -> Iterator[Effect]:
        lang, t = self.lang, self.t
        i, emitted = 0, 0
        while i < len(t) and emitted < MAX_EFFECTS:
            kind, tok = t[i]
            start_of_statement = i == 0 or self.text(i - 1) in (";", "{", "}", "\n") or self.kind(i - 1) == "nl"
            if kind == "name" and tok in _DECL:
                i += 1
                continue
            if (
                kind == "name"
                and self.text(i + 1) in ("=", ".=", "+=")
                and (start_of_statement or self.text(i - 1) in _DECL or self.text(i - 1) == "(")
            ):
                value, j = self.expr(i + 2)
                key = tok.lstrip("$")
                if self.text(i + 1) != "=":
                    old = self.env.get(key)
                    value = old + value if isinstance(old, str) and isinstance(value, str) else None
                self.env[key] = value
                if lang == "js":
                    yield from self.js_assigned(key, i + 2, value)
                i = max(j, i + 2)
                continue
            if lang == "js" and kind == "name" and (tok == "delete" or tok == "process.env" or tok == "Object.assign"):
                found = self.js_environ(i)
                if found is not None:
                    yield found
            if kind == "bt" and lang in ("perl", "ruby", "php"):
                value = self.string(tok)
                if "$" in tok or "#{" in tok:
                    emitted += 1
                    yield Effect("script", value, "backticks")
                i += 1
                continue
            which = self.which(tok)
            if kind != "name" or which is None or (self.text(i - 1) == "." and lang != "js"):
                i += 1
                continue
            if self.text(i + 1) == "(":
                args, _ = self.args(i + 2, ")")
            elif lang in ("perl", "ruby") and self.kind(i + 1) in ("sq", "dq", "name", "env", "num", "bt", "op"):
                if self.kind(i + 1) == "op" and self.text(i + 1) != "[":
                    i += 1
                    continue
                args, _ = self._bare_args(i + 1)
            else:
                i += 1
                continue
            effect = self._effect(which, tok, args)
            if effect is not None and lang == "js" and effect.kind in ("script", "argv"):
                child = self.js_call_env(i + 2)  # ``execSync("claude …", {env: {PATH: …}})``
                if child is not None:
                    pairs, gone = child.for_child()
                    effect = attrs.evolve(effect, env=pairs, unset=gone)
            i += 1
            if effect is not None:
                emitted += 1
                yield effect

    # Node's environment: ``process.env`` changed for the commands the code starts, or an ``env`` option
    def js_assigned(self, key: str, at: int, value: Value) -> Iterator[Effect]:
        """``process.env.GUARD_HOME = …`` (the code's own environment), ``e.GUARD_HOME = …`` on an
        environment object, ``const e = {...process.env}`` (one bound)."""
        base, _, name = key.rpartition(".")
        pair = ((name, value if isinstance(value, str) else None),)
        if base == "process.env":
            yield Effect("environ", "", "process.env", env=pair)
        elif base in self.envs:
            self.envs[base] = self.envs[base].set(pair)
        env, _ = self.js_env_value(at)
        if env is None:
            self.envs.pop(key, None)
        else:
            self.envs[key] = env

    def js_environ(self, i: int) -> Effect | None:
        """``delete process.env.GUARD_HOME``, ``process.env["GUARD_HOME"] = …``, ``Object.assign(process.env,
        {…})``; ``delete e.GUARD_HOME`` on an environment object. None for anything else."""
        tok = self.text(i)
        if tok == "delete":
            name, key = self.text(i + 1), None
            if name == "process.env" and self.text(i + 2) == "[":
                key, _ = self.expr(i + 3)
            elif "." in name:
                name, _, key = name.rpartition(".")
            if name == "process.env" and isinstance(key, str):
                return Effect("environ", "", "delete process.env", unset=(key,))
            if name in self.envs and isinstance(key, str):
                self.envs[name] = self.envs[name].drop((key,))
            return None
        if tok == "process.env" and self.text(i + 1) == "[":
            key, j = self.expr(i + 2)
            if isinstance(key, str) and self.text(j) == "]" and self.text(j + 1) == "=":
                value, _ = self.expr(j + 2)
                return Effect("environ", "", "process.env", env=((key, value if isinstance(value, str) else None),))
            return None
        if tok == "Object.assign" and self.text(i + 1) == "(" and self.text(i + 2) == "process.env":
            env, _ = self.js_env_value(i)
            return Effect("environ", "", "Object.assign", env=env.pairs) if env is not None and env.pairs else None
        return None

    def js_call_env(self, i: int) -> _EnvMap | None:
        """The ``env`` of a call's options object (``{env: {PATH: …}}``, ``{cwd, env: e}``), from the token
        after the call's ``(``; None when it passes none (the child inherits ``process.env``)."""
        while i < len(self.t) and self.text(i) != ")":
            if self.text(i) == "{":
                j = i + 1
                while j < len(self.t) and self.text(j) != "}":
                    if self.text(j) == "env" and self.text(j + 1) == ":":
                        return self.js_env_value(j + 2)[0]
                    j = self.skip(j)
            i = self.skip(i)
        return None

    def js_env_value(self, i: int) -> tuple[_EnvMap | None, int]:
        """The environment object an expression builds: ``process.env``, ``{...process.env, K: v}``,
        ``{PATH: …}``, ``Object.assign({}, process.env, {…})`` or a name bound to one; the next token."""
        tok = self.text(i)
        if tok == "process.env":
            return _INHERITED, i + 1
        if tok in self.envs:
            return self.envs[tok], i + 1
        if tok == "Object.assign" and self.text(i + 1) == "(":  # later sources over earlier ones
            merged, j = _EMPTY_ENV, i + 2
            while j < len(self.t) and self.text(j) != ")":
                if self.text(j) == ",":
                    j += 1
                    continue
                part, k = self.js_env_value(j)
                merged = (part or _INHERITED).spread(merged)  # (a source not read may hold anything)
                j = k if part is not None else self.skip(j)
            return merged, j + 1
        if tok != "{":
            return None, i + 1
        env, j = _EMPTY_ENV, i + 1
        while j < len(self.t) and self.text(j) != "}":
            kind, key = self.kind(j), self.text(j)
            if key == "." and self.text(j + 1) == "." and self.text(j + 2) == ".":  # ``...process.env``
                base, j = self.js_env_value(j + 3)
                env = env.spread(base or _INHERITED)
            elif kind in ("name", "sq", "dq") and self.text(j + 1) == ":":
                value, j = (None, self.skip(j + 2)) if self.text(j + 2) == "{" else self.expr(j + 2)
                name = key if kind == "name" else self.string(key)
                if isinstance(name, str):
                    env = env.set(((name, value if isinstance(value, str) else None),))
            elif kind == "name" and self.text(j + 1) in (",", "}"):  # ``{PATH}``
                env, j = env.set(((key, None),)), j + 1
            else:
                j = self.skip(j)
        return env, j + 1

    def which(self, tok: str) -> str | None:
        """What a call named ``tok`` does: ``script``, ``argv``, ``delete``, ``kill``, or None."""
        lang = self.lang
        if lang == "js":
            bare = tok.rsplit(".", 1)[-1]
            if bare in ("execSync", "exec") and _js_proc(tok):
                return "script"
            if bare in _ARGV_CALLS["js"] and _js_proc(tok):
                return "argv"
            if tok in _JS_DELETE or (bare in _JS_DELETE and _js_fs(tok)) or tok in _DENO_DELETE:
                return "delete"
            if bare in _JS_WRITE and ("." not in tok or _js_fs(tok)):
                return "write"
            if bare in _JS_COPY and ("." not in tok or _js_fs(tok)):
                return _JS_COPY[bare]
            return "kill" if tok == "process.kill" else None
        if tok in _SHELL_CALLS.get(lang, ()):
            return "script"
        if tok in _DELETE_CALLS.get(lang, ()):
            return "delete"
        if tok in _WRITE_CALLS.get(lang, ()):
            return "write"
        if tok in _COPY_CALLS.get(lang, {}):
            return _COPY_CALLS[lang][tok]
        return "kill" if tok in _KILL_CALLS.get(lang, ()) else None

    def _bare_args(self, i: int) -> tuple[list[Value], int]:
        """``system "rm -rf $h"``, ``kill 9, $pid``: arguments without parentheses, to the statement's end."""
        items: list[Value] = []
        while i < len(self.t) and self.text(i) not in (";", "}", "") and self.kind(i) != "nl":
            if self.text(i) == ",":
                i += 1
                continue
            if self.kind(i) == "name" and self.text(i) in ("if", "unless", "or", "and", "or die", "do"):
                break
            value, j = self.expr(i)
            items.append(value)
            i = max(j, i + 1)
        return items, i

    def _effect(self, which: str, call: str, args: list[Value]) -> Effect | None:
        if which in ("write", "copy", "move"):  # judged where the target folds; an unknown one is an ordinary write
            first, second = [*args, None, None][:2]
            if which == "write":
                return Effect("write", first, call) if isinstance(first, str) else None
            if isinstance(first, str):
                return Effect(which, (first, second if isinstance(second, str) else ""), call)
            return Effect("write", second, call) if isinstance(second, str) else None
        if which == "kill":
            if len(args) >= 2 and all(isinstance(a, str) for a in args[:2]):
                sig, pid = (args[1], args[0]) if call == "posix_kill" or call == "process.kill" else (args[0], args[1])
                return Effect("kill", (str(sig).lstrip(":"), str(pid)), call)
            if len(args) == 1 and isinstance(args[0], str) and call == "process.kill":
                return Effect("kill", ("15", args[0]), call)
            return Effect("kill", None, call)
        if which == "delete":
            target = args[0] if args and isinstance(args[0], str) else None
            recursive = "remove_tree" in call or "rmtree" in call or "rm_r" in call or "remove_dir" in call
            recursive = recursive or "rimraf" in call or "removeSync" in call or "remove_entry" in call
            recursive = recursive or any(isinstance(a, str) and "recursive" in a and "true" in a for a in args[1:])
            return Effect("delete", target, call, recursive=recursive)
        options = [a for a in args if isinstance(a, str) and a.startswith("{")]
        words = [a for a in args if not (isinstance(a, str) and a.startswith("{"))]
        if which == "argv" or (which == "script" and len(words) > 1 and call not in ("IO.popen", "Open3.capture2")):
            argv: list[str] = []
            for w in words:
                if isinstance(w, tuple):
                    argv.extend(w)
                elif isinstance(w, str):
                    argv.append(w)
                else:
                    return Effect("argv", None, call)
            if any("shell" in o and "true" in o for o in options):
                return Effect("script", " ".join(argv), call)
            return Effect("argv", tuple(argv) if argv else None, call)
        first = words[0] if words else None
        if isinstance(first, tuple):
            return Effect("argv", first, call)
        return Effect("script", first if isinstance(first, str) else None, call)


def _js_proc(name: str) -> bool:
    return name.split(".")[0] in ("child_process", "cp", "proc", "childProcess", "require") or "." not in name


def _js_fs(name: str) -> bool:
    return name.split(".")[0] in ("fs", "fsp", "fse", "fsExtra", "promises", "rimraf") or name.startswith("fs.")


def tokens(code: str, lang: str, home: str) -> list[Effect] | None:
    """The effects of Node, Perl, Ruby or PHP ``code``."""
    if len(code) > MAX_CODE or lang not in _SHELL_CALLS:
        return []
    try:
        return list(_Toks(code, lang, home).effects())
    except RecursionError:  # brackets nested past Python's stack: the pattern passes still read it
        return None


def effects(code: str, lang: str, home: str) -> list[Effect] | None:
    """Folded effects of ``code`` in ``lang``; None when the language is not read or the code does not parse."""
    if lang == "python":
        return python(code, home)
    return tokens(code, lang, home)


def describe(effect: Effect) -> str:
    value: Any = effect.value
    if isinstance(value, tuple):
        value = " ".join(value)
    return f"{effect.call}({value if value is not None else '…'})"
