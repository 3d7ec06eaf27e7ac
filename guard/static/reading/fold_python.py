"""The Python reader of the interpreter folder (:mod:`guard.static.reading.fold`): ``ast`` walked once,
assignments and known path and environment functions folded, each call that runs, deletes, writes,
copies, kills, imports or changes the environment made an :class:`~guard.static.reading.folded.Effect`."""

from __future__ import annotations

import ast
import posixpath
import re
import shlex

from guard import lazyre
from guard.static.reading.folded import (
    EMPTY_ENV,
    INHERITED,
    MAX_CODE,
    MAX_EFFECTS,
    Effect,
    EnvMap,
    Value,
    env_value,
    home_path,
    short,
)

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
# (``os.putenv(k, v)`` sets as ``setdefault`` does here, ``os.unsetenv(k)`` takes away as ``pop``)
_OS_ENV_METHODS = {"os.putenv": "setdefault", "os.unsetenv": "pop"}
_PY_ENVIRON = frozenset(
    {"os.environ.pop", "os.environ.clear", "os.environ.update", "os.environ.setdefault", "os.putenv", "os.unsetenv"}
)


class _Py:
    def __init__(self, home: str) -> None:
        self.home = home
        self.env: dict[str, Value] = {}
        self.envs: dict[str, EnvMap] = {}  # names bound to an environment mapping (``e = os.environ.copy()``)
        self.alias: dict[str, str] = {}
        self.archives: dict[
            str, tuple[str, bool]
        ] = {}  # names bound to an opened archive: (path, keeps absolute names)
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
        return short(self._val(node)) if node is not None else None

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
                return env_value(self.val(node.slice), self.home)
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
                return home_path(recv, self.home) if func.attr == "expanduser" else recv
            if func.attr == "joinpath" and isinstance(recv, str) and all(isinstance(a, str) for a in args):
                return posixpath.join(recv, *[a for a in args if isinstance(a, str)])
        name = self.qual(func)
        if name is None:
            return None
        short = name.rsplit(".", 1)[-1]
        if name in ("os.path.expanduser", "posixpath.expanduser") and args and isinstance(args[0], str):
            return home_path(args[0], self.home)
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
            return env_value(args[0], self.home)
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
        if isinstance(stmt, (ast.With, ast.AsyncWith)):  # ``with tarfile.open("x.tar") as t:``
            for item in stmt.items:
                if isinstance(item.optional_vars, ast.Name):
                    self.bind_archive(item.optional_vars.id, item.context_expr)
        if isinstance(stmt, ast.Assign):
            value = self.val(stmt.value)
            for target in stmt.targets:
                self.bind(target, value, stmt.value)
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            self.bind(stmt.target, self.val(stmt.value), stmt.value)
        elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
            old, new = self.env.get(stmt.target.id), self.val(stmt.value)
            joined = old + new if isinstance(stmt.op, ast.Add) and type(old) is type(new) and old else None  # type: ignore[operator]
            self.env[stmt.target.id] = short(joined)
        elif isinstance(stmt, ast.Delete):  # ``del os.environ["GUARD_HOME"]``, ``del e["GUARD_HOME"]``
            gone = tuple(k for k in map(self.environ_key, stmt.targets) if k is not None)
            self.environ("del os.environ", unset=gone)
            for name, key in (m for m in map(self.mapped_key, stmt.targets) if m is not None):
                self.envs[name] = self.envs[name].drop((key,))
        elif isinstance(stmt, (ast.For, ast.AsyncFor)) and isinstance(stmt.target, ast.Name):
            self.env[stmt.target.id] = None  # a loop variable: one of many values
        for body in nested:
            self.stmts(body)

    def archive_of(self, node: ast.expr) -> tuple[str | None, bool]:
        """The archive a ``tarfile.open(p)``/``zipfile.ZipFile(p)`` call (or a name bound to one) opens,
        and whether its absolute member names are kept (tarfile's are, zipfile cuts them); None
        when it does not fold."""
        if isinstance(node, ast.Name):
            return self.archives.get(node.id, (None, False))
        if not isinstance(node, ast.Call):
            return None, False
        opener = self.qual(node.func) or ""
        if opener not in _PY_ARCHIVE_OPENERS:
            return None, False
        first = node.args[0] if node.args else _keyword(node, "name") or _keyword(node, "file")
        path = self.val(first) if first is not None else None
        return (path if isinstance(path, str) else None), opener.startswith("tarfile")

    def bind_archive(self, name: str, node: ast.expr) -> None:
        path, absolute = self.archive_of(node) if isinstance(node, ast.Call) else (None, False)
        if path is None:
            self.archives.pop(name, None)
        else:
            self.archives[name] = (path, absolute)

    def bind(self, target: ast.expr, value: Value, node: ast.expr) -> None:
        if isinstance(target, ast.Name):
            self.bind_archive(target.id, node)
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
            target = self.val(folder) if folder is not None else "."
            if isinstance(target, str):
                if name == "shutil.unpack_archive":  # (tarfile underneath keeps absolute names)
                    path = self.val(args[0] if args else _keyword(node, "filename"))
                    archive, absolute = (path if isinstance(path, str) else None), True
                else:
                    assert isinstance(node.func, ast.Attribute)
                    archive, absolute = self.archive_of(node.func.value)
                self.out.append(Effect("extract", target, name or "extractall", absolute, source=archive or ""))
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
        """``os.environ.pop(k)``, ``os.unsetenv(k)``, ``os.environ.clear()`` (all of them: guard's workspace
        among them), ``os.putenv(k, v)``, ``os.environ.setdefault(k, v)``, ``os.environ.update({k: v}, k=v)``:
        the change :meth:`changed` makes to a mapping, made to the code's own environment."""
        method = _OS_ENV_METHODS.get(name) or name.rpartition(".")[2]
        env = self.changed(INHERITED, method, node)
        if env is not None:
            pairs, gone = env.for_child()
            self.environ(name, env=pairs, unset=gone)

    def child_env(self, node: ast.expr | None) -> tuple[tuple[tuple[str, str | None], ...], tuple[str, ...]]:
        """``env={"PATH": …}`` (the whole environment: guard's workspace is gone unless named),
        ``env={**os.environ, "GUARD_HOME": …}``, ``dict(os.environ, GUARD_HOME=…)`` (changed) or a variable
        holding one (``e = os.environ.copy(); e.pop("GUARD_HOME")``, ``env=e``): the variables a command
        started with it sees set and taken away. Anything else is not worked out (no change read)."""
        env = self.env_map(node)
        return env.for_child() if env is not None else ((), ())

    def env_map(self, node: ast.expr | None) -> EnvMap | None:
        """The environment mapping ``node`` builds: ``os.environ``, ``os.environ.copy()``, ``dict(os.environ,
        K=v)``, ``{**os.environ, K: v}``, ``{"PATH": …}``, ``dict(PATH=…)`` or a name bound to one; None when
        it is not one guard can read."""
        if node is None:
            return None
        if isinstance(node, ast.Name):
            return self.envs.get(node.id)
        if self.qual(node) == "os.environ":
            return INHERITED
        if isinstance(node, ast.Dict):
            spread = [v for k, v in zip(node.keys, node.values, strict=True) if k is None]
            base = (self.env_map(spread[0]) or INHERITED) if spread else EMPTY_ENV
            return base.set(self.pairs(node, [])[0])
        if isinstance(node, ast.Call):
            func = self.qual(node.func)
            first = node.args[0] if node.args else None
            if func == "dict":
                pairs, starred = self.pairs(None, node.keywords)  # (``dict(**x)``: x may be the environment)
                base = (self.env_map(first) or INHERITED) if first is not None or starred else EMPTY_ENV
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
        env = self.changed(self.envs[func.value.id], func.attr, node)
        if env is None:
            return False
        self.envs[func.value.id] = env
        return True

    def changed(self, env: EnvMap, method: str, node: ast.Call) -> EnvMap | None:
        """``env`` after ``clear()``, ``pop(k)``, ``setdefault(k, v)`` or ``update({k: v}, k=v)``; None for
        another method, or a key that does not fold."""
        keys = [self.val(a) for a in node.args]
        if method == "clear":
            return EMPTY_ENV
        if method == "pop" and keys and isinstance(keys[0], str):
            return env.drop((keys[0],))
        if method == "setdefault" and keys and isinstance(keys[0], str):
            value = keys[1] if len(keys) > 1 else None
            return env.set(((keys[0], value if isinstance(value, str) else None),))
        if method == "update":
            return env.set(self.pairs(node.args[0] if node.args else None, node.keywords)[0])
        return None

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


_PY_ARCHIVE_OPENERS = frozenset({"tarfile.open", "tarfile.TarFile", "tarfile.TarFile.open", "zipfile.ZipFile"})


def _keyword(node: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in node.keywords if k.arg == name), None)


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
