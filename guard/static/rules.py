"""Every static rule as data: a stable id, a severity, a reason a person understands, a safer alternative.

Detectors elsewhere in ``guard.static`` only name a rule id; what the user reads comes from here,
so wording and severity change in one place and ids never move. ``G1xx`` is the static range:

- G100 the agent's own bookkeeping tools
- G101-G109 recursive and cross-command deletes, G120-G129 disks, files and scripts
- G110-G119 remote code and execution
- G130-G133 permissions, G134-G139 git
- G140-G149 secrets, exfiltration and network
- G150-G157 persistence and guard's own files
- G160-G169 databases, clusters, clouds and containers
- G170-G179 publishing and system control
- G180-G189 the ordinary levels (read-only, development, unknown, tools)
- G190-G199 user rules and what guard cannot see (parse failures, dynamic names, depth, size)

An ``alternative`` is a command a person could run instead; the test suite checks that guard
itself does not block it (peers were caught recommending commands they then refused).
"""

from __future__ import annotations

import attrs

from guard.model import Risk

C, H, M, L, S = Risk.CRITICAL, Risk.HIGH, Risk.MEDIUM, Risk.LOW, Risk.SAFE


@attrs.frozen
class Rule:
    """One static rule. ``ceiling`` marks the "guard cannot see" rules that always ask."""

    id: str
    risk: Risk
    family: str
    message: str
    alternative: str | None = None
    tags: frozenset[str] = attrs.field(default=frozenset(), converter=frozenset)
    ceiling: bool = False


def _r(
    id: str, risk: Risk, family: str, message: str, alternative: str | None = None, *tags: str, ceiling: bool = False
) -> Rule:
    return Rule(id, risk, family, message, alternative, frozenset(tags), ceiling)


_BUILD = "rm -rf ./build"
_FETCH = "curl -fsSLo install.sh https://example.com/install.sh"

RULES: tuple[Rule, ...] = (
    _r(
        "G100",
        S,
        "level",
        "Coordinates the agent's own work (plans, to-do lists, sub-agents); nothing outside the agent changes.",
        None,
    ),
    # -- filesystem destruction
    _r("G101", C, "filesystem", "Recursively deletes the filesystem root or a home directory.", _BUILD, "delete"),
    _r("G102", C, "filesystem", "Recursively deletes a system directory the machine needs to run.", _BUILD, "delete"),
    _r(
        "G103",
        C,
        "filesystem",
        "Recursively deletes a credential store (SSH keys, cloud credentials, keyrings).",
        None,
        "delete",
        "secret_read",
    ),
    _r("G104", H, "filesystem", "Recursively deletes files outside the project.", _BUILD, "delete"),
    _r("G105", H, "filesystem", "Deletes the whole project directory or its git history.", "git clean -n", "delete"),
    _r(
        "G106",
        H,
        "filesystem",
        "Recursively deletes a path built from a variable that may be empty, which could turn into / or ~.",
        'rm -rf "${BUILD_DIR:?}/dist"',
        "delete",
    ),
    _r("G107", M, "filesystem", "Recursively deletes a directory inside the project.", None, "delete"),
    _r(
        "G108",
        C,
        "filesystem",
        "Moves the filesystem root, a home, a system or a credential directory away, destroying it in place.",
        None,
        "delete",
    ),
    _r("G109", C, "filesystem", "Deletes a directory that was just moved out of a protected location.", None, "delete"),
    # -- remote code and execution
    _r(
        "G110",
        C,
        "remote_code",
        "Pipes content downloaded from the network into a shell or interpreter.",
        _FETCH,
        "remote_code",
        "execute",
        "network",
        "untrusted_input",
    ),
    _r(
        "G111",
        C,
        "remote_code",
        "Runs an encoded (base64 or hex) payload, hiding what it does.",
        "base64 --decode payload.b64",
        "remote_code",
        "execute",
    ),
    _r(
        "G112",
        C,
        "remote_code",
        "Executes downloaded content through eval, source, or command or process substitution.",
        _FETCH,
        "remote_code",
        "execute",
        "network",
        "untrusted_input",
    ),
    _r(
        "G113",
        C,
        "remote_code",
        "Downloads a program and runs it in the same command.",
        _FETCH,
        "remote_code",
        "execute",
        "network",
        "untrusted_input",
    ),
    _r("G114", M, "remote_code", "Interpreter code runs commands guard cannot see.", None, "execute", ceiling=True),
    _r("G115", L, "execute", "Runs a script or program from the project.", None, "execute"),
    _r("G116", M, "execute", "Runs a script or program from outside the project.", None, "execute"),
    _r(
        "G117",
        M,
        "execute",
        "Downloads and runs a package from a registry (npx, uvx, pipx run ...).",
        None,
        "execute",
        "network",
        "untrusted_input",
    ),
    _r("G118", M, "execute", "Interpreter code deletes files, runs commands or uses the network.", None, "execute"),
    _r("G119", L, "execute", "Runs a short interpreter program.", None, "execute"),
    # -- disks, files and scripts
    _r(
        "G120",
        C,
        "disk",
        "Writes raw data onto a disk device, destroying its filesystem.",
        "dd if=/dev/zero of=./disk.img bs=1M count=10",
        "write",
    ),
    _r("G121", C, "disk", "Formats or wipes a disk or its partition table.", "lsblk", "write"),
    _r(
        "G122",
        C,
        "filesystem",
        "Overwrites or deletes a critical system file (accounts, passwords, boot, loader).",
        None,
        "write",
    ),
    _r("G123", H, "filesystem", "Changes or deletes files in a system directory.", None, "write"),
    _r("G124", H, "filesystem", "Deletes or overwrites a credential file.", None, "write"),
    _r("G125", M, "filesystem", "Deletes or overwrites files outside the project.", None, "write"),
    _r(
        "G126",
        M,
        "filesystem",
        "Deletes or overwrites files whose location guard cannot work out.",
        None,
        "write",
        ceiling=True,
    ),
    _r("G127", H, "filesystem", "Writes a script that contains a command guard would block.", None, "write"),
    _r(
        "G128",
        M,
        "permissions",
        "Makes a file writable by every user or changes its owner.",
        "chmod 755 ./bin/tool",
        "write",
    ),
    # -- permissions
    _r(
        "G130",
        C,
        "permissions",
        "Changes permissions or ownership recursively on the root, a home or a system directory.",
        "chmod -R u+rwX ./build",
        "write",
    ),
    _r(
        "G131",
        H,
        "permissions",
        "Makes files world-writable or changes ownership recursively.",
        "chmod -R u+rwX ./build",
        "write",
    ),
    _r(
        "G132",
        H,
        "permissions",
        "Sets a setuid or setgid bit, letting a program run with its owner's rights.",
        "chmod 755 ./bin/tool",
        "write",
    ),
    _r("G133", H, "permissions", "Changes permissions or ownership of a system or credential file.", None, "write"),
    # -- git
    _r("G134", M, "git", "Rewrites git history interactively.", "git log --oneline -10", "write"),
    _r(
        "G135",
        C,
        "git",
        "Force-pushes over, or deletes, a shared branch such as main or master.",
        "git push --force-with-lease origin HEAD:my-feature",
        "network",
        "egress",
    ),
    _r(
        "G136",
        H,
        "git",
        "Force-pushes, overwriting commits on the remote.",
        "git push --force-with-lease",
        "network",
        "egress",
    ),
    _r("G137", H, "git", "Discards uncommitted changes in the working tree.", "git stash", "delete"),
    _r(
        "G138",
        H,
        "git",
        "Deletes branches, stashes or history that may not be recoverable.",
        "git branch -d old-work",
        "delete",
    ),
    _r("G139", H, "git", "Makes git run a program named in an option or in configuration.", "git log", "execute"),
    # -- secrets, exfiltration, network
    _r(
        "G140",
        H,
        "secrets",
        "Reads a credential store (private keys, cloud or registry credentials).",
        None,
        "secret_read",
    ),
    _r(
        "G141",
        M,
        "secrets",
        "Reads a file that holds project secrets (.env and similar).",
        "cat .env.example",
        "secret_read",
    ),
    _r("G142", M, "secrets", "Prints secret values or the whole environment.", "printenv PATH", "secret_read"),
    _r("G143", C, "secrets", "Sends secrets or credentials to the network.", None, "secret_read", "egress", "network"),
    _r(
        "G144",
        C,
        "secrets",
        "Opens a remote shell (reverse or bind shell) for someone else to control.",
        None,
        "execute",
        "egress",
        "network",
        "remote_code",
    ),
    _r("G145", M, "network", "Sends data to a remote host.", None, "egress", "network"),
    _r("G146", M, "network", "Downloads content from the network.", None, "network", "untrusted_input"),
    _r(
        "G147",
        H,
        "secrets",
        "Sends a secret value from the environment to a remote host.",
        None,
        "secret_read",
        "egress",
        "network",
    ),
    _r("G148", L, "network", "Talks to a service on this machine.", None, "network"),
    _r("G149", M, "network", "Runs a command on another machine.", None, "network", "egress", "execute"),
    # -- persistence and guard's own files
    _r(
        "G150",
        C,
        "persistence",
        "Adds or changes SSH authorized keys, granting someone login access.",
        None,
        "persistence",
        "write",
    ),
    _r(
        "G151",
        H,
        "persistence",
        "Changes a startup file that runs in every new shell or session.",
        "source ./env.sh",
        "persistence",
        "write",
    ),
    _r(
        "G152",
        C,
        "persistence",
        "Makes dangerous code run automatically (startup file, cron job, hook).",
        None,
        "persistence",
        "write",
    ),
    _r(
        "G153",
        H,
        "persistence",
        "Schedules commands to run later or at boot (cron, at, systemd, launchd).",
        None,
        "persistence",
    ),
    _r("G154", C, "persistence", "Changes sudo or login rules (sudoers, PAM).", None, "persistence", "write"),
    _r(
        "G155",
        H,
        "persistence",
        "Installs git hooks or git configuration that runs programs.",
        None,
        "persistence",
        "write",
    ),
    _r(
        "G156",
        C,
        "protected",
        "Changes guard's own files or an agent host's hook settings, which would switch guard off.",
        None,
        "protected_path",
        "write",
    ),
    _r("G157", H, "persistence", "Injects a library into programs (LD_PRELOAD and similar).", None, "execute"),
    # -- databases, clusters, clouds, containers
    _r("G160", H, "database", "Drops a database, schema, table or collection.", None, "delete"),
    _r("G161", H, "database", "Empties a table (TRUNCATE, or DELETE/UPDATE without WHERE).", None, "delete"),
    _r("G162", H, "database", "Flushes every key in a key-value store.", "redis-cli DBSIZE", "delete"),
    _r("G163", H, "database", "Resets or drops the application's database through its framework.", None, "delete"),
    _r(
        "G164",
        H,
        "infra",
        "Deletes Kubernetes resources or Helm releases.",
        "kubectl get pods -n staging",
        "delete",
        "network",
    ),
    _r(
        "G165",
        H,
        "infra",
        "Destroys infrastructure or applies changes without review.",
        "terraform plan",
        "delete",
        "network",
    ),
    _r("G166", H, "infra", "Deletes cloud resources.", None, "delete", "network"),
    _r("G167", H, "infra", "Deletes container volumes or prunes Docker data.", "docker system df", "delete"),
    _r(
        "G168",
        C,
        "infra",
        "Starts a privileged container with the host's root filesystem mounted.",
        'docker run --rm -v "$PWD":/work alpine ls /work',
        "execute",
    ),
    _r(
        "G169",
        H,
        "infra",
        "Gives a container privileged access or mounts sensitive host paths.",
        'docker run --rm -v "$PWD":/work alpine ls /work',
        "execute",
    ),
    # -- publishing and system control
    _r(
        "G170",
        H,
        "publish",
        "Publishes a package, image or release to a registry.",
        "npm publish --dry-run",
        "publish",
        "egress",
        "network",
    ),
    _r("G171", C, "system", "Shuts down or reboots the machine.", None),
    _r("G172", C, "system", "Kills every process the user can signal.", "kill -TERM 4242"),
    _r("G173", H, "system", "Flushes or disables the firewall.", "sudo iptables -L -n"),
    _r("G174", H, "system", "Stops or disables a system service.", "systemctl status nginx"),
    _r("G175", C, "system", "Fork bomb: starts processes until the machine stops responding.", None, "execute"),
    _r("G176", H, "system", "Changes users, passwords, kernel or security settings.", None),
    _r("G177", M, "system", "Changes system state with administrator rights or a system tool.", None),
    _r("G178", M, "system", "Stops running processes.", None),
    _r("G179", M, "system", "Installs, removes or updates system packages.", None, "network", "execute"),
    # -- the ordinary levels
    _r("G180", S, "level", "Read-only command.", None),
    _r("G181", L, "level", "Ordinary development command.", None),
    _r("G182", M, "level", "A command guard does not know; its effect depends on context.", None),
    _r(
        "G183",
        M,
        "level",
        "Installs or updates dependencies, which downloads and runs package code.",
        None,
        "network",
        "execute",
        "write",
    ),
    _r("G184", L, "level", "Changes files inside the project.", None, "write"),
    _r("G185", M, "level", "Writes files outside the project.", None, "write"),
    _r("G186", L, "level", "Works on temporary files.", None),
    _r("G187", M, "level", "Unknown tool: guard cannot judge what it does.", None, "unknown_tool"),
    _r("G188", M, "level", "Talks to a database, cluster or cloud account.", None, "network"),
    _r("G189", L, "level", "Changes the project's git state.", None, "write"),
    # -- user rules and what guard cannot see
    _r("G190", C, "user", "Matches a deny rule in your guard configuration.", None),
    _r("G191", M, "user", "Matches an ask rule in your guard configuration.", None, ceiling=True),
    _r("G192", S, "user", "Matches an allow rule in your guard configuration.", None),
    _r(
        "G193",
        S,
        "user",
        "An allow rule in a project-local .guard.toml was ignored: project files may only tighten.",
        None,
    ),
    _r(
        "G194",
        M,
        "unknown",
        "Runs a command built at runtime (eval, source or a substitution guard cannot see).",
        None,
        "execute",
        ceiling=True,
    ),
    _r("G195", M, "unknown", "The command could not be parsed, so guard cannot tell what it does.", None, ceiling=True),
    _r("G196", M, "unknown", "The command name is only known at runtime.", None, "execute", ceiling=True),
    _r("G197", M, "unknown", "Wrappers or nesting go deeper than guard follows.", None, ceiling=True),
    _r("G198", M, "unknown", "The call is too large to check (over the size limit).", None, ceiling=True),
    _r(
        "G199",
        M,
        "unknown",
        "The command contains invisible characters that can hide what it does.",
        None,
        ceiling=True,
    ),
)

CATALOG: dict[str, Rule] = {r.id: r for r in RULES}


def rule(rule_id: str) -> Rule:
    """``rule("G101").risk is Risk.CRITICAL``."""
    return CATALOG[rule_id]
