"""Real-shaped secrets and look-alike decoys, for the redaction tests (unit and end to end).

`secrets()` gives (kind, the secret value, a sentence holding it): 244 of them, of the
ten kinds `amem_cli.redact` first knew (benchmarks/data/secrets.jsonl covers the rest).
Each value has its provider's published shape, prefix, alphabet and length, made by the
generators of benchmarks/data/make_secrets.py (whose SRC names each source), never
shaped to fit amem's rules: a password is a password as people make them, with or
without a digit. `decoys()` 600 strings that must pass unchanged (git SHAs, UUIDs, long
hex ids, code that names a password without holding one). Seeded: the same corpus
every run.
"""

from __future__ import annotations

import importlib.util
import random
import string
import sys
import uuid
from pathlib import Path
from urllib.parse import quote

_spec = importlib.util.spec_from_file_location(
    "make_secrets", Path(__file__).parents[1] / "benchmarks" / "data" / "make_secrets.py")
shapes = sys.modules[_spec.name] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(shapes)

rng = random.Random(7)
ALNUM = string.ascii_letters + string.digits


def _s(n: int, chars: str = ALNUM) -> str:
    return "".join(rng.choice(chars) for _ in range(n))


def secrets() -> list[tuple[str, str, str]]:
    """(kind, the secret value, a sentence holding it)."""
    shapes.rng.seed(7)  # the generators draw from their module's RNG
    pick, choice, randint = shapes.pick, shapes.rng.choice, shapes.rng.randint
    out = []
    for _ in range(20):
        v = shapes.aws_key_id(choice(["AKIA", "ASIA"]))
        out.append(("aws_key", v, f"export AWS_ACCESS_KEY_ID={v}"))
        v = shapes.crc32_token(choice(["ghp_", "gho_", "ghu_", "ghs_", "ghr_"]))
        out.append(("github_token", v, f"I pushed with token {v} yesterday"))
        v = f"github_pat_{pick(shapes.ALNUM, 22)}_{pick(shapes.ALNUM, 59)}"
        out.append(("github_token", v, f"GH_TOKEN: {v}"))
        v = shapes.openai_legacy()
        out.append(("openai_key", v, f"client = OpenAI(api_key='{v}')"))
        v = shapes.openai_project(choice(["sk-proj-", "sk-svcacct-"]))
        out.append(("openai_key", v, f"OPENAI_API_KEY={v}"))
        v = choice([shapes.slack_bot, shapes.slack_user, shapes.slack_app])()
        out.append(("slack_token", v, f"the Slack token is {v}."))
        v = shapes.google_key()
        out.append(("google_api_key", v, f"maps?key={v}&q=x"))
        v = shapes.jwt({"sub": pick(shapes.ALNUM, 8), "iat": randint(1, 10**9)})
        out.append(("jwt", v, f"the cookie was {v}"))
        # Generated, or typed and percent-encoded as a URL needs (RFC 3986 3.2.1).
        v = choice([pick(shapes.ALNUM, randint(12, 24)), quote(shapes.password(randint(12, 20)), safe="")])
        out.append(("url_password", v, f"DATABASE_URL=postgres://admin:{v}@db.internal:5432/app"))
        v = pick(shapes.ALNUM + "-._~+/", randint(24, 64))  # RFC 6750 2.1 b64token, an opaque token
        out.append(("bearer", v, f"curl -H 'Authorization: Bearer {v}' https://api.example.com"))
        v = shapes.password(randint(10, 20))
        out.append(("password", v, f'password="{v}"'))
        v = pick(shapes.HEX, 32)
        out.append(("secret", v, f"api_key: {v}"))
    # Private keys with the structure of real ones (RFC 7468 PEM over DER).
    for v in (shapes.pem("RSA PRIVATE KEY", shapes.rsa_der()), shapes.pem("PRIVATE KEY", shapes.pkcs8_der()),
              shapes.pem("ENCRYPTED PRIVATE KEY", shapes.encrypted_pkcs8_der()),
              shapes.pem("RSA PRIVATE KEY", shapes.raw(1200),
                         ["Proc-Type: 4,ENCRYPTED", f"DEK-Info: AES-256-CBC,{pick('0123456789ABCDEF', 32)}"])):
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
