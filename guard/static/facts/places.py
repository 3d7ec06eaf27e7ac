"""Where things are: the tables behind :mod:`guard.static.facts.paths`.

Each table is data, kept apart from the resolver so it can be read (and extended) at a glance.
A prefix ending in ``/`` covers a directory and everything in it; one ending in ``.`` a family of
names (``/etc/cron.`` covers ``/etc/cron.daily``); anything else is one exact path.
"""

from __future__ import annotations

from guard.static.reading.text import wordset


def _kinds(table: str) -> tuple[tuple[str, str], ...]:
    """``"rc: ~/.bashrc ~/.zshrc"`` rows -> ``(("~/.bashrc", "rc"), …)``, in order."""
    out: list[tuple[str, str]] = []
    kind = ""
    for line in table.strip().splitlines():
        head, sep, rest = line.partition(": ")
        if sep and not line.startswith(" "):
            kind, line = head.strip(), rest
        out.extend((prefix, kind) for prefix in line.split())
    return tuple(out)


# Top-level system directories, with the depth up to which a recursive delete is catastrophic
# (``/usr/lib`` is; ``/usr/local/lib/node_modules/x`` is merely dangerous). ``name`` means depth 1.
SYSTEM_ROOTS = {
    name: int(depth or 1)
    for name, _, depth in (
        item.partition(":")
        for item in [
            "etc:2",
            "usr:2",
            "bin",
            "sbin",
            "lib",
            "lib32",
            "lib64",
            "libx32",
            "boot",
            "opt",
            "var:2",
            "srv",
            "sys",
            "proc",
            "dev",
            "run",
            "snap",
            "nix:2",
            "mnt",
            "media",
            "System:2",
            "Library",
            "Applications",
            "private:2",
            "Volumes",
            "efi",
            "cdrom",
            "lost+found",
            "home",
            "Users",
        ]
    )
}
# Data stores under /var/lib whose folder is the data itself (databases, container images and
# volumes): a recursive delete of one is as final as deleting /var/lib.
DATA_STORES = wordset(
    "postgresql pgsql mysql mariadb mongodb redis docker containerd containers elasticsearch opensearch "
    "rabbitmq cassandra influxdb etcd kubelet couchdb clickhouse neo4j minio"
)
TEMP_ROOTS = ("/tmp", "/var/tmp", "/private/tmp", "/var/folders", "/private/var/folders", "/dev/shm")
SPECIAL_DEVICES = wordset("null zero full random urandom stdin stdout stderr tty ptmx")
SPECIAL_DEV_DIRS = wordset("fd pts shm")

# Files whose loss or change breaks accounts, boot or the loader.
CRITICAL_FILES = wordset(
    "/etc/crypttab /etc/fstab /etc/group /etc/gshadow /etc/inittab /etc/ld.so.conf /etc/ld.so.preload "
    "/etc/master.passwd /etc/nsswitch.conf /etc/passwd /etc/shadow"
)

# Persistence points outside a home: what runs at login, on a schedule, at boot, or as root.
SYSTEM_PERSIST = _kinds(
    """
sudoers: /etc/sudoers /etc/sudoers.d/ /etc/pam.d/ /etc/ssh/sshd_config /etc/doas.conf
rc: /etc/profile /etc/profile.d/ /etc/bash.bashrc /etc/bashrc /etc/zshrc /etc/zsh/ /etc/environment
    /etc/rc.local
cron: /etc/crontab /etc/cron. /var/spool/cron/ /etc/anacrontab
service: /etc/systemd/system/ /lib/systemd/system/ /usr/lib/systemd/system/ /etc/init.d/
         /etc/xdg/autostart/ /Library/LaunchDaemons/ /Library/LaunchAgents/ /etc/udev/rules.d/
"""
)
# Persistence points inside a home (relative to it).
HOME_PERSIST = _kinds(
    """
authorized_keys: .ssh/authorized_keys .ssh/authorized_keys2
ssh_config: .ssh/config
rc: .ssh/rc .bashrc .bash_profile .bash_login .bash_logout .profile .zshrc .zshenv .zprofile .zlogin
    .zlogout .kshrc .cshrc .tcshrc .login .xprofile .xinitrc .xsession .pam_environment .bashrc.d/
    .config/fish/config.fish .config/fish/conf.d/ .config/environment.d/
service: .config/systemd/user/ .config/autostart/ Library/LaunchAgents/
git_config: .gitconfig .config/git/config
git_hook: .config/git/hooks/
host_hook: .claude/hooks/ .codex/hooks/ .gemini/hooks/ .cursor/hooks/
path_bin: .local/bin/
"""
)
# Credential stores inside a home (relative to it): reading them is a secret read.
HOME_CREDENTIALS = (
    *wordset(
        ".ssh/ .aws/ .gnupg/ .kube/ .azure/ .config/gcloud/ .config/gh/ .password-store/ "
        ".local/share/keyrings/ Library/Keychains/ .docker/config.json .terraform.d/credentials.tfrc.json "
        ".vault-token .netrc .git-credentials .pgpass .my.cnf .npmrc .pypirc .yarnrc.yml "
        ".cargo/credentials .cargo/credentials.toml .gem/credentials .config/hub .config/op/ .boto .s3cfg "
        ".config/rclone/ .oci/ .config/doctl/ .fly/ .mozilla/ .config/google-chrome/ .config/chromium/ "
        ".config/Bitwarden/ .m2/settings.xml .gradle/gradle.properties .composer/auth.json "
        ".config/configstore/ .wrangler/ .netlify/"
    ),
    "Library/Application Support/Google/Chrome/",
)
# Caches inside a home: deleting them is ordinary cleanup, re-created on demand.
HOME_CACHES = tuple(
    [
        ".cache/",
        "Library/Caches/",
        ".npm/_cacache/",
        ".npm/_npx/",
        ".cargo/registry/",
        ".gradle/caches/",
        ".m2/repository/",
        ".local/share/Trash/",
        ".pnpm-store/",
        ".yarn/cache/",
        "go/pkg/mod/",
        ".bun/install/cache/",
    ]
)

# Folders on a usual PATH besides ~/.local/bin (relative to a home, or absolute): a program there named
# like a common command runs instead of the real one (``cp x ~/bin/git``).
HOME_PATH_DIRS = wordset(
    "bin .bin .npm-global/bin .cargo/bin go/bin .deno/bin .bun/bin .yarn/bin .volta/bin .pyenv/shims "
    ".rbenv/shims .poetry/bin .linuxbrew/bin .nix-profile/bin .asdf/shims .local/share/pnpm"
)
SYSTEM_PATH_DIRS = wordset(
    "/usr/local/bin /usr/local/sbin /opt/homebrew/bin /opt/homebrew/sbin /home/linuxbrew/.linuxbrew/bin /opt/local/bin"
)
COMMON_COMMANDS = wordset(
    "git ls sudo su doas python python3 pip pip3 node npm npx pnpm yarn bun deno ssh scp sftp rsync cat cp mv rm "
    "bash sh zsh fish dash curl wget make docker kubectl gpg grep find sed awk env which ps id whoami tar vim vi "
    "nano less go cargo rustc java ruby gem perl php openssl passwd login systemctl apt apt-get brew code uv "
    "poetry pytest claude codex gemini gh aws gcloud az terraform helm chmod chown kill ln mkdir head tail"
)
