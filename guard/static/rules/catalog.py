"""Every static rule as data: a stable id, a severity, a reason a person understands, a safer alternative.

Detectors elsewhere in ``guard.static`` only name a rule id; what the user reads comes from here,
so wording and severity change in one place and ids never move. ``G1xx`` is the static range:

- G100 the agent's own bookkeeping tools
- G101-G109 recursive and cross-command deletes, G120-G129 disks, files and scripts
- G110-G119 remote code and execution
- G130-G133 permissions, G134-G139 git
- G140-G149 secrets, exfiltration and network
- G150-G159 persistence, guard's own files and code-loading environment variables
- G160-G169 databases, clusters, clouds and containers
- G170-G179 publishing and system control
- G180-G189 the ordinary levels (read-only, development, unknown, tools)
- G190-G199 user rules and what guard cannot see (parse failures, dynamic names, depth, size)
- G400-G499 the static range continued, once G1xx was full (each row says its family); G410-G414
  guard's own control commands (self-protection)

An ``alternative`` is a command a person could run instead; the test suite checks that guard
itself does not block it (peers were caught recommending commands they then refused).
"""

from __future__ import annotations

import re

import attrs

from guard.model import Risk


@attrs.frozen
class Rule:
    """One static rule. ``ceiling`` marks the "guard cannot see" rules that always ask."""

    id: str
    risk: Risk
    family: str
    message: str
    alternative: str | None = None
    tags: frozenset[str] = frozenset()
    ceiling: bool = False

    @property
    def name(self) -> str:
        """A short title: the reason up to its first comma, bracket, colon or full stop."""
        return re.split(r"[,.(;:]", self.message, maxsplit=1)[0].strip()


# id | severity | family | tags ("asks": capped at request_confirm) | reason | safer alternative
_TABLE = """
G100 | safe     | level       |                                        | Coordinates the agent's own work (plans, to-do lists, sub-agents); nothing outside the agent changes.
G009 | medium   | filesystem  | write,asks                             | Writes enough data to fill the disk (an endless stream such as yes or /dev/zero, or a file of a gigabyte or more). | dd if=/dev/zero of=./blank.img bs=1M count=64
G101 | critical | filesystem  | delete                                 | Recursively deletes the filesystem root or a home directory. | rm -rf ./build
G102 | critical | filesystem  | delete                                 | Recursively deletes a system directory the machine needs to run. | rm -rf ./build
G103 | critical | filesystem  | delete,secret_read                     | Recursively deletes a credential store (SSH keys, cloud credentials, keyrings).
G104 | high     | filesystem  | delete                                 | Recursively deletes files outside the project. | rm -rf ./build
G105 | high     | filesystem  | delete                                 | Deletes the whole project directory or its git history. | git clean -n
G106 | high     | filesystem  | delete                                 | Recursively deletes a path built from a variable that may be empty, which could turn into / or ~. | rm -rf "${BUILD_DIR:?}/dist"
G107 | medium   | filesystem  | delete                                 | Recursively deletes a directory inside the project.
G108 | critical | filesystem  | delete                                 | Moves the filesystem root, a home, a system or a credential directory away, destroying it in place.
G109 | critical | filesystem  | delete                                 | Deletes a directory that was just moved out of a protected location.
G110 | critical | remote_code | execute,network,remote_code,untrusted_input | Pipes content downloaded from the network into a shell or interpreter. | curl -fsSLo install.sh https://example.com/install.sh
G111 | critical | remote_code | execute,remote_code                    | Runs an encoded (base64 or hex) payload, hiding what it does. | base64 --decode payload.b64
G112 | critical | remote_code | execute,network,remote_code,untrusted_input | Executes downloaded content through eval, source, or command or process substitution. | curl -fsSLo install.sh https://example.com/install.sh
G113 | critical | remote_code | execute,network,remote_code,untrusted_input | Downloads a program and runs it in the same command. | curl -fsSLo install.sh https://example.com/install.sh
G114 | medium   | remote_code | execute,asks                           | Interpreter code runs commands guard cannot see.
G115 | low      | execute     | execute                                | Runs a script or program from the project.
G116 | medium   | execute     | execute                                | Runs a script or program from outside the project.
G117 | medium   | execute     | execute,network,untrusted_input        | Downloads and runs a package from a registry (npx, uvx, pipx run ...).
G118 | medium   | execute     | execute                                | Interpreter code deletes files, runs commands or uses the network.
G119 | low      | execute     | execute                                | Runs a short interpreter program.
G120 | critical | disk        | write                                  | Writes raw data onto a disk device, destroying its filesystem. | dd if=/dev/zero of=./disk.img bs=1M count=10
G121 | critical | disk        | write                                  | Formats or wipes a disk or its partition table. | lsblk
G122 | critical | filesystem  | write                                  | Overwrites or deletes a critical system file (accounts, passwords, boot, loader).
G123 | high     | filesystem  | write                                  | Changes or deletes files in a system directory.
G124 | high     | filesystem  | write                                  | Deletes or overwrites a credential file.
G125 | medium   | filesystem  | write                                  | Deletes or overwrites files outside the project.
G126 | medium   | filesystem  | write,asks                             | Deletes or overwrites files whose location guard cannot work out.
G127 | high     | filesystem  | write                                  | Writes a script that contains a command guard would block.
G128 | medium   | permissions | write                                  | Makes a file writable by every user or changes its owner. | chmod 755 ./bin/tool
G129 | critical | disk        | delete                                 | Deletes the machine's backups or recovery settings (shadow copies, backup catalog, boot configuration). | vssadmin list shadows
G130 | critical | permissions | write                                  | Changes permissions or ownership recursively on the root, a home or a system directory. | chmod -R u+rwX ./build
G131 | high     | permissions | write                                  | Makes files world-writable or changes ownership recursively. | chmod -R u+rwX ./build
G132 | high     | permissions | write                                  | Sets a setuid or setgid bit, letting a program run with its owner's rights. | chmod 755 ./bin/tool
G133 | high     | permissions | write                                  | Changes permissions or ownership of a system or credential file.
G134 | medium   | git         | write                                  | Rewrites git history interactively. | git log --oneline -10
G135 | critical | git         | egress,network                         | Force-pushes over, or deletes, a shared branch such as main or master. | git push --force-with-lease origin HEAD:my-feature
G136 | high     | git         | egress,network                         | Force-pushes, overwriting commits on the remote. | git push --force-with-lease
G137 | high     | git         | delete                                 | Discards uncommitted changes in the working tree. | git stash
G138 | high     | git         | delete                                 | Deletes branches, stashes or history that may not be recoverable. | git branch -d old-work
G139 | high     | git         | execute                                | Makes git run a program named in an option or in configuration. | git log
G140 | high     | secrets     | secret_read                            | Reads a credential store (private keys, cloud or registry credentials).
G141 | medium   | secrets     | secret_read                            | Reads a file that holds project secrets (.env and similar). | cat .env.example
G142 | medium   | secrets     | secret_read                            | Prints secret values or the whole environment. | printenv PATH
G143 | critical | secrets     | egress,network,secret_read             | Sends secrets or credentials to the network.
G144 | critical | secrets     | egress,execute,network,remote_code     | Opens a remote shell (reverse or bind shell) for someone else to control.
G145 | medium   | network     | egress,network                         | Sends data to a remote host.
G146 | medium   | network     | network,untrusted_input                | Downloads content from the network.
G147 | high     | secrets     | egress,network,secret_read             | Sends a secret value from the environment to a remote host.
G148 | low      | network     | network                                | Talks to a service on this machine.
G465 | low      | network     | network                                | Reads a documentation or package-index page (a well-known docs host; network.docs_hosts).
G149 | medium   | network     | egress,execute,network                 | Runs a command on another machine.
G150 | critical | persistence | persistence,write                      | Adds or changes SSH authorized keys, granting someone login access.
G151 | high     | persistence | persistence,write                      | Changes a startup file that runs in every new shell or session. | source ./env.sh
G152 | critical | persistence | persistence,write                      | Makes dangerous code run automatically (startup file, cron job, hook).
G153 | high     | persistence | persistence                            | Schedules commands to run later or at boot (cron, at, systemd, launchd).
G154 | critical | persistence | persistence,write                      | Changes sudo or login rules (sudoers, PAM).
G155 | high     | persistence | persistence,write                      | Installs git hooks or git configuration that runs programs.
G156 | critical | protected   | protected_path,write                   | Changes guard's own files or an agent host's hook settings, which would switch guard off.
G157 | high     | persistence | execute                                | Injects a library into programs (LD_PRELOAD, LD_AUDIT, DYLD_INSERT_LIBRARIES, or a library path outside the project and the system).
G158 | high     | persistence | execute                                | Sets an environment variable that makes programs load or run code from outside the project (NODE_OPTIONS --require, PYTHONPATH, PYTHONSTARTUP, PERL5OPT, JAVA_TOOL_OPTIONS -javaagent, PATH in a temporary directory). | PYTHONPATH=src python -m pytest
G159 | medium   | persistence | execute                                | Sets an environment variable that makes programs load extra code at start, from the project or an installed package (NODE_OPTIONS -r, RUBYOPT -r, PERL5OPT -M).
G160 | high     | database    | delete                                 | Drops a database, schema, table or collection.
G161 | high     | database    | delete                                 | Empties a table (TRUNCATE, or DELETE/UPDATE without WHERE).
G162 | high     | database    | delete                                 | Flushes every key in a key-value store. | redis-cli DBSIZE
G163 | high     | database    | delete                                 | Resets or drops the application's database through its framework.
G466 | medium   | database    | delete                                 | Undoes database migrations through the framework (rails db:rollback, db:migrate:down or :redo, artisan migrate:rollback, alembic downgrade): their down steps drop the tables and columns they added, with the rows in them. | bin/rails db:migrate:status
G164 | high     | infra       | delete,network                         | Deletes Kubernetes resources or Helm releases. | kubectl get pods -n staging
G165 | high     | infra       | delete,network                         | Destroys infrastructure or applies changes without review. | terraform plan
G166 | high     | infra       | delete,network                         | Deletes cloud resources.
G167 | high     | infra       | delete                                 | Deletes container volumes or prunes Docker data. | docker system df
G168 | critical | infra       | execute                                | Starts a privileged container with the host's root filesystem mounted, or a shell on the host's writable root (chroot into it) or in its process namespace (--pid=host, nsenter -t 1): root on the host. | docker run --rm -v "$PWD":/work alpine ls /work
G169 | high     | infra       | execute                                | Gives a container privileged access or mounts sensitive host paths. | docker run --rm -v "$PWD":/work alpine ls /work
G170 | high     | publish     | egress,network,publish                 | Publishes a package, image or release to a registry. | npm publish --dry-run
G171 | critical | system      |                                        | Shuts down or reboots the machine.
G172 | critical | system      |                                        | Kills every process the user can signal. | kill -TERM 4242
G173 | high     | system      |                                        | Flushes or disables the firewall. | sudo iptables -L -n
G174 | high     | system      |                                        | Stops or disables a system service. | systemctl status nginx
G175 | critical | system      | execute                                | Fork bomb: starts processes until the machine stops responding.
G176 | high     | system      |                                        | Changes users, passwords, kernel or security settings.
G177 | medium   | system      |                                        | Changes system state with administrator rights or a system tool.
G178 | medium   | system      |                                        | Stops running processes.
G179 | medium   | system      | execute,network                        | Installs, removes or updates system packages.
G180 | safe     | level       |                                        | Read-only command.
G181 | low      | level       |                                        | Ordinary development command.
G182 | medium   | level       |                                        | A command guard does not know; its effect depends on context.
G183 | medium   | level       | execute,network,write                  | Installs or updates dependencies, which downloads and runs package code.
G184 | low      | level       | write                                  | Changes files inside the project.
G185 | medium   | level       | write                                  | Writes files outside the project.
G186 | low      | level       |                                        | Works on temporary files.
G187 | medium   | level       | unknown_tool                           | Unknown tool: guard cannot judge what it does.
G188 | medium   | level       | network                                | Talks to a database, cluster or cloud account.
G189 | low      | level       | write                                  | Changes the project's git state.
G190 | critical | user        |                                        | Matches a deny rule in your guard configuration.
G191 | medium   | user        | asks                                   | Matches an ask rule in your guard configuration.
G192 | safe     | user        |                                        | Matches an allow rule in your guard configuration.
G193 | safe     | user        |                                        | An allow rule in a project-local .guard.toml was ignored: project files may only tighten.
G194 | medium   | unknown     | execute,asks                           | Runs a command built at runtime (eval, source or a substitution guard cannot see).
G195 | medium   | unknown     | asks                                   | The command could not be parsed, so guard cannot tell what it does.
G196 | medium   | unknown     | execute,asks                           | The command name is only known at runtime.
G197 | medium   | unknown     | asks                                   | Wrappers or nesting go deeper than guard follows.
G198 | medium   | unknown     | asks                                   | The call is too large to check (over the size limit).
G199 | medium   | unknown     | asks                                   | The command contains invisible characters that can hide what it does.
G400 | low      | filesystem  | delete                                 | Deletes build output, caches or installed dependencies that the project re-creates.
G401 | low      | network     | network,untrusted_input                | Updates the repository from its own configured remote.
G402 | medium   | remote_code | execute,asks                           | Runs a PowerShell command passed base64-encoded; guard decoded and checked it, but asks because encoding hides what runs.
G403 | high     | system      | write                                  | Deletes or changes machine-wide Windows registry keys. | reg query HKLM\\SOFTWARE\\Example
G404 | medium   | persistence | persistence,write                      | Changes a project file that runs commands by itself (a husky git hook, an editor task that runs when the folder opens, a project hook script, a program in the virtualenv or node_modules/.bin).
G405 | medium   | persistence | write                                  | Points the project's package manager at another registry or at a program to run (.npmrc registry or script-shell, .yarnrc yarnPath, pip.conf index-url).
G406 | medium   | remote_code | execute,asks                           | Runs a command spelled backwards or letter-shifted (rev, tr); guard decoded and checked it, but asks because the spelling hides what runs.
G407 | critical | git         | delete                                 | Discards or deletes files across the filesystem root, a home or a system directory through git (clean, reset --hard, checkout run there). | git -C ~ status
G408 | high     | persistence | persistence,write                      | Changes a program that runs by itself: a hook script an agent host runs on every tool call, a command in ~/.local/bin that is found before the system's (a git or ls there shadows the real one), or a program named like a common command (git, ls, sudo, python, node, npm, ssh, …) in another folder on the usual PATH (~/bin, ~/.cargo/bin, ~/go/bin, ~/.npm-global/bin, /usr/local/bin, …). | cp target/release/mytool ~/.cargo/bin/mytool
G415 | critical | protected   | protected_path,write                   | Writes, deletes or moves a path that leads on disk to guard's own files or an agent host's hook settings (through a symbolic or hard link, "..", /proc or a second mount), which would switch guard off.
G416 | critical | protected   | protected_path,write                   | Makes a link or a bind mount onto guard's own files or an agent host's hook settings: a later write to the link's ordinary-looking name would switch guard off. | ln -s src/app.py app.py
G417 | medium   | protected   | write,asks                             | Writes to a path guard could not follow on disk (a loop of symbolic links, or no permission to look), so where the write lands is unknown.
G425 | medium   | unknown     | execute,asks                           | Opens an interactive shell whose input guard cannot see (a shell, interpreter, remote login or database console with no command or script): what is typed into it later is not checked. | sh -c 'ls -la'
G430 | medium   | system      |                                        | Runs a command with administrator rights (sudo, doas, pkexec, run0): whatever the command, a person should see it first. | ls -la /etc
G431 | medium   | execute     | execute                                | Interpreter code runs a command, deletes a path or kills a process named by a value computed at run time (an argument, input, a variable guard could not follow), so guard cannot see what it acts on.
G432 | medium   | filesystem  | delete                                 | Deletes or empties many project files at once by a pattern or a filter that spares nothing in particular (rm src/*.py, find . -name '*.py' -delete, truncate -s 0 src/*.py, find … piped to xargs rm), as rm -rf src asks. | rm src/app.py
G433 | high     | database    | delete,network                         | Purges or deletes a message queue, topic or cache (rabbitmqctl purge_queue or reset, kafka-topics --delete, memcflush). | rabbitmqctl list_queues
G434 | critical | database    | delete                                 | Drops, resets or destroys data or infrastructure on a production target (RAILS_ENV=production, --env production, --context prod-…, terraform workspace prod, a prod database host). | rails db:drop RAILS_ENV=test
G450 | low      | level       | execute,network,write                  | Installs the dependencies the project declares, from its own manifest or lockfile (npm ci, pip install -r requirements.txt, uv sync).
G451 | low      | level       | execute,network,write                  | Installs or updates packages the project already declares in its manifest.
G452 | low      | network     | egress,network                         | Pushes a feature branch to the project's own remote.
G453 | medium   | network     | egress,network                         | Adds a git remote or points one at a new address (git remote add/set-url, remote.X.url, url.X.insteadOf), which decides where a later push sends the project's code. | git remote -v
G435 | critical | database    | delete,network                         | Resets or deletes a hosted database or project through its CLI (supabase db reset --linked or --db-url, supabase projects delete): the remote data is gone. | supabase db reset
G436 | medium   | network     | delete,network                         | Deletes a resource through an HTTP API (curl -X DELETE, wget --method=DELETE, http DELETE). | curl -s localhost:9200/_cat/indices
G437 | high     | unknown     | delete                                 | A tool that is not the shell and whose name says it deletes, drops, truncates or resets something (an MCP server's delete_rows, drop-collection, reset_branch).
G438 | critical | filesystem  | delete                                 | Recursively deletes one of a home's own folders of user data or settings (Desktop, Documents, Downloads, Pictures, Music, Videos, Library, ~/.config, ~/.local …). | rm -rf ./build
G439 | critical | filesystem  | delete                                 | Recursively deletes a home or the root followed by a value that may be empty (rm -rf ~/$dir, rm -rf /$name): empty, it deletes the whole home or the root. | rm -rf "${BUILD_DIR:?}/dist"
G441 | critical | secrets     | delete,secret_read                     | Securely wipes a credential file (shred, srm, wipe of an SSH key, a cloud or registry credential): destroyed on purpose, no backup or undelete brings it back.
G442 | critical | system      |                                        | Leaves an account with no password (passwd -d, usermod -p ''): anyone can log in as that user, root included.
G443 | critical | protected   | protected_path                         | Starts an agent host (claude, codex, gemini, cursor-agent, openclaw) with guard's own settings changed or unset in its environment (GUARD_HOME or a GUARD_* configuration variable) or with its settings read from elsewhere (HOME, CLAUDE_CONFIG_DIR, CODEX_HOME, claude --settings or --setting-sources): its hooks would run under a guard the agent configured, or not at all: only the person may do this, from their own terminal.
G445 | medium   | protected   | protected_path,asks                    | Switches the work tree to a commit that holds another version of the project's hook settings (.claude/settings.json or settings.local.json): what it holds could switch guard off, so guard asks.
G444 | medium   | protected   | asks                                   | Sets or unsets guard's own settings in the environment (GUARD_HOME or a GUARD_* configuration variable) for the programs that follow: a guard they start would use another workspace or configuration.
G440 | critical | secrets     | egress,network                         | Sends a secret written out in the call (a token of a known shape such as AKIA…, ghp_…, sk-…, xox…; in a chat message or an issue also NAME=value where the name says secret) to a host or a tool that did not issue it.
G410 | critical | protected   | protected_path                         | Runs one of guard's own control commands (approve, reset, install or uninstall hooks, feed history, run a hook, start or stop its daemon, tidy, apply or revert rules, change configuration): only the person may do this, from their own terminal.
G411 | critical | protected   | protected_path                         | Stops or kills guard's daemon: only the person may do this, from their own terminal.
G412 | critical | protected   | execute,protected_path                 | Runs Python that imports guard and changes its state, or calls it in a way guard cannot read: only the person may do this, from their own terminal.
G413 | medium   | protected   | asks                                   | Runs a guard subcommand, option or module guard does not know; it may change guard's own state.
G414 | critical | protected   | protected_path,write                   | Copies, links or renames guard's own program or package (its console script, which guard, site-packages/guard): a copy would run guard's control commands under a name guard does not know: only the person may do this, from their own terminal.
G418 | critical | protected   | protected_path,write                   | Uninstalls or replaces guard itself (pip, uv, pipx or uv tool uninstall of guard-preflight or of guard, its import name, a forced reinstall or another build of it from a URL, a path or another index, or deleting or overwriting its console script or package): that switches guard off: only the person may do this, from their own terminal. | pip show guard-preflight
G420 | medium   | unknown     | asks                                   | The call is too complex to check in time, so guard asks instead of guessing.
G421 | medium   | unknown     | asks                                   | A variable's value grows too large to follow, so guard cannot tell what it holds.
"""


def _parse(table: str) -> tuple[Rule, ...]:
    rules = []
    for line in table.strip().splitlines():
        cells = [c.strip() for c in line.split(" | ")]
        rule_id, severity, family, tags, message = cells[:5]
        alternative = cells[5] if len(cells) > 5 and cells[5] else None
        tag_set = {t for t in tags.split(",") if t}
        rules.append(
            Rule(
                rule_id,
                Risk.parse(severity),
                family,
                message,
                alternative,
                frozenset(tag_set - {"asks"}),
                "asks" in tag_set,
            )
        )
    return tuple(rules)


RULES: tuple[Rule, ...] = _parse(_TABLE)
CATALOG: dict[str, Rule] = {r.id: r for r in RULES}


def rule(rule_id: str) -> Rule:
    """``rule("G101").risk is Risk.CRITICAL``."""
    return CATALOG[rule_id]
