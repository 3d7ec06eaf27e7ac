"""The Node, Perl, Ruby and PHP reader of the interpreter folder (:mod:`guard.static.reading.fold`): a
small tokenizer and a folder for expressions (terms joined by ``+`` or ``.``), not a parser."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator

import attrs

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
        self.envs: dict[str, EnvMap] = {}  # Node: names bound to an environment object (``{...process.env}``)
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
        return short(value), i

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
                return env_value(env_key, self.home), j + 1
            if name == "process.env.GUARD_HOME":
                return self.methods(env_value("GUARD_HOME", self.home), i + 1)
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
            return home_path(strings[0], self.home) if strings and args[0] is strings[0] else None
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
            if lang == "js":
                self.js_alias(i)
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
    def js_alias(self, i: int) -> None:
        """``const e = process.env``, ``const {env} = process``, ``const {env: e} = process``: ``e`` is the
        code's own environment, not a copy, so every later use is read as ``process.env`` (``delete
        e.GUARD_HOME`` as ``delete process.env.GUARD_HOME``) in the tokens after the declaration."""
        names: list[str] = []
        end = 0
        if self.kind(i) == "name" and self.text(i + 1) == "=" and self.text(i + 2) == "process.env":
            if self.text(i + 3) in _STOP or self.kind(i + 3) == "nl":
                names, end = [self.text(i)], i + 3
        elif self.text(i) == "{" and self.text(i - 1) in _DECL:
            j = i + 1
            while self.kind(j) == "name" or self.text(j) in (",", ":"):
                if self.text(j) == "env" and self.text(j + 1) == ":" and self.kind(j + 2) == "name":
                    names.append(self.text(j + 2))
                elif self.text(j) == "env" and self.text(j + 1) in (",", "}"):
                    names.append("env")
                j += 1
            if not (self.text(j) == "}" and self.text(j + 1) == "=" and self.text(j + 2) == "process"):
                return
            end = j + 3
        for name in names:
            if not name.startswith("process"):
                self.rename(name, end)

    def rename(self, alias: str, start: int) -> None:
        """Read ``alias`` and ``alias.KEY`` as ``process.env`` from token ``start`` until it is assigned
        again; an object key (``{env: …}``) and a property (``x.env``) keep their names."""
        for k in range(start, len(self.t)):
            kind, tok = self.t[k]
            head, dot, rest = tok.partition(".")
            if kind != "name" or head != alias or self.text(k - 1) == "." or self.text(k + 1) == ":":
                continue
            if not dot and self.text(k + 1) == "=" and self.text(k + 2) != "=":
                return  # ``e = {…}``: no longer the code's environment
            self.t[k] = (kind, "process.env" + dot + rest)

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

    def js_call_env(self, i: int) -> EnvMap | None:
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

    def js_env_value(self, i: int) -> tuple[EnvMap | None, int]:
        """The environment object an expression builds: ``process.env``, ``{...process.env, K: v}``,
        ``{PATH: …}``, ``Object.assign({}, process.env, {…})`` or a name bound to one; the next token."""
        tok = self.text(i)
        if tok == "process.env":
            return INHERITED, i + 1
        if tok in self.envs:
            return self.envs[tok], i + 1
        if tok == "Object.assign" and self.text(i + 1) == "(":  # later sources over earlier ones
            merged, j = EMPTY_ENV, i + 2
            while j < len(self.t) and self.text(j) != ")":
                if self.text(j) == ",":
                    j += 1
                    continue
                part, k = self.js_env_value(j)
                merged = (part or INHERITED).spread(merged)  # (a source not read may hold anything)
                j = k if part is not None else self.skip(j)
            return merged, j + 1
        if tok != "{":
            return None, i + 1
        env, j = EMPTY_ENV, i + 1
        while j < len(self.t) and self.text(j) != "}":
            kind, key = self.kind(j), self.text(j)
            if key == "." and self.text(j + 1) == "." and self.text(j + 2) == ".":  # ``...process.env``
                base, j = self.js_env_value(j + 3)
                env = env.spread(base or INHERITED)
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
