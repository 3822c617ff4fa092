"""Real-shaped secrets and look-alike decoys, for the redaction tests (unit and end to end).

`secrets()` gives (kind, the secret value, a sentence holding it): 244 of them, of the
ten kinds `amem_cli.redact` first knew (benchmarks/data/secrets.jsonl covers the rest);
`decoys()` 600 strings that must pass unchanged (git SHAs,
UUIDs, long hex ids, code that names a password without holding one). Seeded: the same
corpus every run.
"""

from __future__ import annotations

import base64
import json
import random
import string
import uuid

rng = random.Random(7)
ALNUM = string.ascii_letters + string.digits
UPPER = string.ascii_uppercase + string.digits
URLSAFE = ALNUM + "-_"


def _s(n: int, chars: str = ALNUM) -> str:
    return "".join(rng.choice(chars) for _ in range(n))


def _b64(obj: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")


def _pem(kind: str) -> str:
    body = "\n".join(_s(64, ALNUM + "+/") for _ in range(5))
    return f"-----BEGIN {kind}PRIVATE KEY-----\n{body}\n-----END {kind}PRIVATE KEY-----"


def secrets() -> list[tuple[str, str, str]]:
    """(kind, the secret value, a sentence holding it)."""
    rng.seed(7)
    out = []
    for _ in range(20):
        v = rng.choice(["AKIA", "ASIA"]) + _s(16, UPPER)
        out.append(("aws_key", v, f"export AWS_ACCESS_KEY_ID={v}"))
        v = rng.choice(["ghp_", "gho_", "ghs_", "ghu_"]) + _s(36)
        out.append(("github_token", v, f"I pushed with token {v} yesterday"))
        v = "github_pat_" + _s(22) + "_" + _s(59)
        out.append(("github_token", v, f"GH_TOKEN: {v}"))
        v = "sk-" + _s(48)
        out.append(("openai_key", v, f"client = OpenAI(api_key='{v}')"))
        v = "sk-proj-" + _s(40, URLSAFE) + "1"
        out.append(("openai_key", v, f"OPENAI_API_KEY={v}"))
        v = f"xox{rng.choice('abprs')}-{_s(11, string.digits)}-{_s(12, string.digits)}-{_s(24)}"
        out.append(("slack_token", v, f"the bot token is {v}."))
        v = "AIza" + _s(35, URLSAFE)
        out.append(("google_api_key", v, f"maps?key={v}&q=x"))
        v = ".".join([_b64({"alg": "HS256", "typ": "JWT"}), _b64({"sub": _s(8), "iat": rng.randint(1, 10**9)}), _s(43, URLSAFE)])
        out.append(("jwt", v, f"the cookie was {v}"))
        v = _s(18) + "9"
        out.append(("url_password", v, f"DATABASE_URL=postgres://admin:{v}@db.internal:5432/app"))
        v = _s(40, ALNUM + "._-") + "7"
        out.append(("bearer", v, f"curl -H 'Authorization: Bearer {v}' https://api.example.com"))
        v = _s(14) + "!3"
        out.append(("password", v, f'password="{v}"'))
        v = _s(32, string.hexdigits.lower())
        out.append(("secret", v, f"api_key: {v}"))
    for kind in ("RSA ", "EC ", "OPENSSH ", ""):
        v = _pem(kind)
        out.append(("private_key", v, f"here is the key:\n{v}\nkeep it safe"))
    return out


def decoys() -> list[str]:
    rng.seed(8)
    words = "the build passed after we pinned numpy and reran the migration on staging".split()
    out = []
    for _ in range(60):
        out.append(f"fixed in commit {_s(40, '0123456789abcdef')}")
        out.append(f"request id {uuid.UUID(int=rng.getrandbits(128))} timed out")
        out.append(f"blob {_s(64, '0123456789abcdef')} is cached")
        out.append(" ".join(rng.choice(words) for _ in range(12)))
        out.append(f"see https://github.com/org/repo/pull/{rng.randint(1, 9999)} and ssh://git@github.com/org/repo")
        out.append(f"the server listens on http://localhost:{rng.randint(1000, 9999)}/api")
        out.append("we use scikit-learn, sk-learn style pipelines, a task-runner and ask-me-anything threads")
        out.append("password = os.environ['DB_PASSWORD']; token = get_token(); api_key = settings_value")
        out.append("Bearer tokens expire after an hour; rotate the secret: monthly")
        out.append(f"version {rng.randint(1, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 99)} ships AKIA docs")
    return out
