"""Secret shapes for the redaction tests: each case carries one unique canary value.

``CASES`` are (id, tool, params, canary). The canary is random (a seeded generator), so its
bytes can appear in a file only if guard wrote the secret; ``tail`` (its last 10 characters)
catches a secret masked only in part.
"""

from __future__ import annotations

import base64
import json
import random
import string
from typing import Any

_RNG = random.Random(20261201)
ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
UPPER_NUM = string.ascii_uppercase + string.digits
URLSAFE = ALNUM + "-_"


def rand(n: int, alphabet: str = ALNUM) -> str:
    """n random characters with at least one lowercase, one uppercase and one digit where possible."""
    while True:
        out = "".join(_RNG.choice(alphabet) for _ in range(n))
        kinds = [
            any(c in alphabet and c in s for c in out)
            for s in (string.ascii_lowercase, string.ascii_uppercase, string.digits)
        ]
        wanted = [
            any(c in alphabet for c in s) for s in (string.ascii_lowercase, string.ascii_uppercase, string.digits)
        ]
        if kinds == wanted:
            return out


def pw() -> str:
    """A password-like canary (letters, digits, one symbol that shells leave alone)."""
    return rand(6) + "-" + rand(8)


def tail(canary: str) -> str:
    return canary[-10:]


Case = tuple[str, str, dict[str, Any], str]
CASES: list[Case] = []


def bash(case_id: str, command: str, canary: str) -> None:
    CASES.append((case_id, "bash", {"command": command, "description": "run it"}, canary))


def write(case_id: str, path: str, content: str, canary: str) -> None:
    CASES.append((case_id, "write", {"file_path": path, "content": content}, canary))


def mcp(case_id: str, params: dict[str, Any], canary: str) -> None:
    CASES.append((case_id, "mcp__vault__put", params, canary))


# -- well-known token formats, where nothing around them says "secret" ---------------------
_tokens = {
    "aws-akia": "AKIA" + rand(16, UPPER_NUM),
    "aws-asia": "ASIA" + rand(16, UPPER_NUM),
    "github-ghp": "ghp_" + rand(36),
    "github-gho": "gho_" + rand(36),
    "github-ghs": "ghs_" + rand(36),
    "github-pat": "github_pat_" + rand(22) + "_" + rand(59),
    "gitlab": "glpat-" + rand(20, URLSAFE),
    "slack-bot": "xoxb-" + rand(12, string.digits) + "-" + rand(24),
    "slack-user": "xoxp-" + rand(12, string.digits) + "-" + rand(24),
    "stripe-sk": "sk_live_" + rand(24),
    "stripe-rk": "rk_live_" + rand(24),
    "stripe-pk": "pk_live_" + rand(24),
    "openai-proj": "sk-proj-" + rand(48, URLSAFE),
    "openai": "sk-" + rand(48),
    "anthropic": "sk-ant-api03-" + rand(80, URLSAFE),
    "google": "AIza" + rand(35, URLSAFE),
    "jwt": "eyJhbGciOiJIUzI1NiJ9."
    + base64.urlsafe_b64encode(json.dumps({"sub": rand(12)}).encode()).decode().rstrip("=")
    + "."
    + rand(43, URLSAFE),
    "npm": "npm_" + rand(36),
    "pypi": "pypi-AgEIcHlwaS5vcmc" + rand(60, URLSAFE),
    "huggingface": "hf_" + rand(34),
    "twilio": "SK" + rand(32, HEX),
    "sendgrid": "SG." + rand(22, URLSAFE) + "." + rand(43, URLSAFE),
    "shopify": "shpat_" + rand(32, HEX),
    "databricks": "dapi" + rand(32, HEX),
    "digitalocean": "dop_v1_" + rand(64, HEX),
    "heroku": "HRKU-" + rand(60, URLSAFE),
    "mailgun": "key-" + rand(32, HEX),
    "square": "sq0atp-" + rand(22, URLSAFE),
    "telegram": "7" + rand(9, string.digits) + ":AA" + rand(33, URLSAFE),
    "discord": "M" + rand(25, ALNUM) + "." + rand(6, ALNUM) + "." + rand(38, URLSAFE),
}
for _id, _tok in _tokens.items():
    bash(_id, f"echo {_tok} >> notes.txt && ./deploy --region eu", _tok)

_slack_hook = rand(9, UPPER_NUM) + "/" + rand(9, UPPER_NUM) + "/" + rand(24)
bash("slack-webhook", f"curl -X POST https://hooks.slack.com/services/{_slack_hook} -d @msg.json", _slack_hook)
_discord_hook = rand(68, URLSAFE)
bash("discord-webhook", f"curl https://discord.com/api/webhooks/1234567890/{_discord_hook}", _discord_hook)

# -- private keys, multi-line -----------------------------------------------------------
_rsa = rand(64, ALNUM + "+/")
write(
    "pem-rsa",
    "/home/u/.ssh/id_rsa",
    f"-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA{_rsa}\n{rand(64, ALNUM + '+/')}\n-----END RSA PRIVATE KEY-----\n",
    _rsa,
)
_ossh = rand(70, ALNUM + "+/")
bash(
    "pem-openssh",
    f"printf '%s' '-----BEGIN OPENSSH PRIVATE KEY-----\n{_ossh}\n-----END OPENSSH PRIVATE KEY-----' > k",
    _ossh,
)
_gcp = rand(64, ALNUM + "+/")
write(
    "gcp-service-account",
    "/home/u/sa.json",
    json.dumps(
        {
            "type": "service_account",
            "project_id": "demo",
            "private_key_id": rand(40, HEX),
            "private_key": f"-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg{_gcp}\n-----END PRIVATE KEY-----\n",
            "client_email": "sa@demo.iam.gserviceaccount.com",
        },
        indent=2,
    ),
    _gcp,
)

# -- secrets by their place ---------------------------------------------------------------
_c = pw()
bash("url-userinfo", f"git clone https://alice:{_c}@git.example.com/org/repo.git", _c)
_c = rand(40, URLSAFE)
bash("bearer", f"curl -H 'Authorization: Bearer {_c}' https://api.example.com/v1/me", _c)
_c = base64.b64encode(f"bob:{pw()}".encode()).decode()
bash("basic", f'curl -H "Authorization: Basic {_c}" https://api.example.com', _c)
_c = pw()
bash("env-password", f"DB_PASSWORD={_c} ./manage.py migrate", _c)
_c = rand(32)
bash("export-api-key", f'export API_KEY="{_c}" && make release', _c)
_c = pw()
bash("flag-password", f"psql --host db --password {_c} app", _c)
_c = pw()
bash("flag-password-eq", f"./tool login --password={_c}", _c)
_c = pw()
bash("mysql-p", f"mysql -h db -u root -p{_c} shop", _c)
_c = rand(30)
bash("flag-token", f"./cli publish --token {_c} --dry-run", _c)
_c = rand(30)
bash("flag-secret", f"vault-sync --secret {_c}", _c)
_c = rand(30)
bash("flag-api-key", f"datadog-ci upload --api-key {_c} ./dist", _c)
_c = pw()
bash("pgpassword", f"PGPASSWORD={_c} pg_dump -h db app > dump.sql", _c)
_c = pw()
bash("sshpass", f"sshpass -p {_c} ssh deploy@10.0.0.5 uptime", _c)
_c = pw()
bash("docker-login", f"docker login -u ci -p {_c} registry.example.com", _c)
_c = pw()
bash("curl-user", f"curl -u admin:{_c} https://jenkins.example.com/api/json", _c)
_c = pw()
bash("sudo-stdin", f"echo {_c} | sudo -S apt-get install -y nginx", _c)
_c = rand(40, ALNUM + "+/")
bash("aws-configure", f"aws configure set aws_secret_access_key {_c}", _c)
_c = rand(36)
bash("npm-authtoken", f"echo '//registry.npmjs.org/:_authToken={_c}' >> ~/.npmrc", _c)
_c = rand(32)
bash("curl-cookie", f"curl -b 'session={_c}' https://app.example.com/admin", _c)
_c = rand(32)
bash("cookie-header", f"curl -H 'Cookie: sid={_c}; theme=dark' https://app.example.com", _c)
_c = pw()
bash("json-body", f'curl -X POST -d \'{{"user":"bob","password":"{_c}"}}\' https://api.example.com/login', _c)
_c = rand(86, ALNUM + "+/") + "=="
bash(
    "azure-accountkey",
    "az storage blob list --connection-string "
    f"'DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={_c};EndpointSuffix=core.windows.net'",
    _c,
)
_c = pw()
bash("odbc-pwd", f"sqlcmd -S db -Q 'select 1' --conn 'Server=db;Uid=sa;Pwd={_c};'", _c)
_c = rand(40)
bash("signing-key", f"SIGNING_KEY={_c} ./release.sh", _c)
_c = rand(30)
bash("x-api-key", f"curl -H 'X-Api-Key: {_c}' https://api.example.com", _c)
_c = "glpat-" + rand(20, URLSAFE)
bash("gitlab-header", f'curl --header "PRIVATE-TOKEN: {_c}" https://gitlab.example.com/api/v4/projects', _c)
_c = pw()
bash("k8s-literal", f"kubectl create secret generic db --from-literal=password={_c}", _c)
_c = rand(32)
bash("gh-secret", f"gh secret set DEPLOY_KEY --body {_c}", _c)
_c = rand(32)
bash("client-secret", f"OAUTH_CLIENT_SECRET={_c} ./serve", _c)
_c = pw()
bash("wget-password", f"wget --user bob --password {_c} https://files.example.com/a.tgz", _c)

# -- .env and config bodies written by a Write tool ---------------------------------------
_env = {"stripe": "sk_live_" + rand(24), "npm": "npm_" + rand(36), "hf": "hf_" + rand(34)}
for _k, _v in _env.items():
    write(
        f"env-{_k}",
        "/srv/app/.env",
        f"# app\nDEBUG=false\nSTRIPE={_env['stripe']}\nNPM={_env['npm']}\nHF={_env['hf']}\n",
        _v,
    )
_c = pw()
write("yaml-password", "/srv/app/config.yml", f"db:\n  host: db\n  password: {_c}\n", _c)
_c = pw()
write("dotenv-quoted", "/srv/app/.env.local", f'SECRET_KEY="{_c}"\nDEBUG=1\n', _c)

# -- structured params: the key says it -----------------------------------------------------
_c = pw()
mcp("param-password", {"path": "db/prod", "password": _c}, _c)
_c = rand(30)
mcp("param-nested-header", {"url": "https://x.example.com", "headers": {"X-Api-Key": _c, "Accept": "json"}}, _c)
_c = pw()
mcp("param-auth-tuple", {"auth": ["bob", _c]}, _c)
_c = rand(30)
mcp("param-camel", {"config": {"clientSecret": _c, "clientId": "app-1"}}, _c)

CANARIES = [c for _, _, _, c in CASES]
assert len(set(CANARIES)) == len(CANARIES) >= 50, len(CANARIES)

# Calls that must stay readable: words like "password" or "token" that hold no secret.
NEAR_MISSES = [
    "grep -n password README.md",
    'git commit -m "fix token parsing"',
    "ls --sort=key",
    "docker run -u 1000:1000 alpine id",
    "export TOKENIZERS_PARALLELISM=false",
    "mysql -u root -p shop",
    "echo $PWD",
    "aws secretsmanager get-secret-value --secret-id prod/db",
    "docker login --password-stdin registry.example.com",
]
