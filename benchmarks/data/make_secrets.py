"""Writes benchmarks/data/secrets.jsonl: the corpus that measures amem's secret redaction.

    .venv/bin/python benchmarks/data/make_secrets.py      # rewrites secrets.jsonl (same seed, same file)

Written from the providers' own documentation of their credential formats (prefix, length,
alphabet; each item's "source" says where), not from any detector's rules. The random part
of every value comes from one seeded RNG in the documented alphabet and length, so the file
is the same on every run; it is committed beside this script.

One JSON object a line:
  {"id", "kind", "text", "secrets": [values that must not survive redaction], "source"}
  {"id", "kind": "lookalike:<what>", "text", "secrets": []}   -- must come back unchanged

Multi-line values (PEM and PGP blocks) are listed whole; the test also checks that no line
of their body survives. Key material is shaped like the real thing (DER structure, OpenSSH
and OpenPGP packets, CRC-24 armor checksum, GitHub/npm CRC32 checksums, Bech32) but is not
a working credential of anyone's. The shapes are imported by tests/secret_corpus.py: only
the keys that need `cryptography` (not a dependency of amem) import it, when made.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import random
import string
import struct
import uuid
import zlib
from pathlib import Path
from urllib.parse import quote

OUT = Path(__file__).with_name("secrets.jsonl")
rng = random.Random(20240524)

UPPER = string.ascii_uppercase
LOWER = string.ascii_lowercase
DIGITS = string.digits
LETTERS = string.ascii_letters
ALNUM = LETTERS + DIGITS
BASE62 = DIGITS + UPPER + LOWER
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"
BASE32 = UPPER + "234567"

items: list[dict] = []


# -- random values in a documented alphabet --------------------------------------------

def pick(alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def raw(n: int) -> bytes:
    return rng.randbytes(n)


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def password(n: int, must: str = "") -> str:
    """A password as people make them: letters, digits, punctuation, with `must` inside."""
    body = list(pick(ALNUM + "!@#%^&*-_=+.?~", n - len(must)))
    for ch in must:
        body.insert(rng.randrange(len(body) + 1), ch)
    return "".join(body)


def words(n: int) -> str:
    pool = ["correct", "horse", "battery", "staple", "violet", "granite", "lantern", "orbit", "pepper",
            "harbour", "thistle", "copper", "meadow", "cinder", "walrus", "quartz", "saffron", "tundra"]
    return " ".join(rng.sample(pool, n))


def base62(n: int, width: int) -> str:
    out = ""
    while n:
        n, r = divmod(n, 62)
        out = BASE62[r] + out
    return out.rjust(width, "0")


def crc32_token(prefix: str, body_len: int = 30) -> str:
    """GitHub/npm tokens: prefix, random base62, then the CRC32 of that part in 6 base62 digits."""
    body = pick(ALNUM, body_len)
    return prefix + body + base62(zlib.crc32(body.encode()), 6)


def snowflake() -> int:
    return rng.randrange(10**17, 10**19)


# -- DER, PEM, OpenSSH, OpenPGP, Bech32 ------------------------------------------------

def der_len(n: int) -> bytes:
    if n < 128:
        return bytes([n])
    nb = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([0x80 | len(nb)]) + nb


def der(tag: int, content: bytes) -> bytes:
    return bytes([tag]) + der_len(len(content)) + content


def der_int(value: bytes | int) -> bytes:
    if isinstance(value, int):
        value = value.to_bytes(max(1, (value.bit_length() + 7) // 8), "big")
    if value[0] & 0x80:
        value = b"\x00" + value
    return der(0x02, value)


def der_seq(*parts: bytes) -> bytes:
    return der(0x30, b"".join(parts))


def der_oid(dotted: str) -> bytes:
    nums = [int(x) for x in dotted.split(".")]
    out = bytes([40 * nums[0] + nums[1]])
    for n in nums[2:]:
        chunk = [n & 0x7F]
        n >>= 7
        while n:
            chunk.insert(0, 0x80 | (n & 0x7F))
            n >>= 7
        out += bytes(chunk)
    return der(0x06, out)


NULL = b"\x05\x00"


def big(nbytes: int) -> bytes:
    """A random big integer of exactly nbytes (top bit set, as a modulus or prime has)."""
    b = bytearray(raw(nbytes))
    b[0] |= 0x80
    return bytes(b)


def rsa_der() -> bytes:
    """PKCS#1 RSAPrivateKey (RFC 8017 A.1.2) for a 2048-bit key: version, n, e, d, p, q, dp, dq, qinv."""
    return der_seq(der_int(0), der_int(big(256)), der_int(65537), der_int(big(256)),
                   *(der_int(big(128)) for _ in range(5)))


def pkcs8_der() -> bytes:
    """PKCS#8 PrivateKeyInfo (RFC 5208) wrapping an RSA key."""
    return der_seq(der_int(0), der_seq(der_oid("1.2.840.113549.1.1.1"), NULL), der(0x04, rsa_der()))


def encrypted_pkcs8_der() -> bytes:
    """EncryptedPrivateKeyInfo with PBES2 / PBKDF2-HMAC-SHA256 / AES-256-CBC, as OpenSSL 3 writes it."""
    kdf = der_seq(der_oid("1.2.840.113549.1.5.12"),
                  der_seq(der(0x04, raw(16)), der_int(2048), der_seq(der_oid("1.2.840.113549.2.9"), NULL)))
    cipher = der_seq(der_oid("2.16.840.1.101.3.4.1.42"), der(0x04, raw(16)))
    alg = der_seq(der_oid("1.2.840.113549.1.5.13"), der_seq(kdf, cipher))
    return der_seq(alg, der(0x04, raw(1232)))


def certificate_der() -> bytes:
    """The outline of an X.509 certificate: tbsCertificate, sha256WithRSAEncryption, signature."""
    tbs = der_seq(der(0xA0, der_int(2)), der_int(raw(16)), der(0x30, raw(700)))
    return der_seq(tbs, der_seq(der_oid("1.2.840.113549.1.1.11"), NULL), der(0x03, b"\x00" + raw(256)))


def wrap(text: str, width: int) -> list[str]:
    return [text[i:i + width] for i in range(0, len(text), width)]


def pem(label: str, data: bytes, headers: list[str] = (), width: int = 64) -> str:
    lines = [f"-----BEGIN {label}-----", *headers, *([""] if headers else []),
             *wrap(b64(data), width), f"-----END {label}-----"]
    return "\n".join(lines)


def ssh_string(b: bytes | str) -> bytes:
    if isinstance(b, str):
        b = b.encode()
    return struct.pack(">I", len(b)) + b


def ed25519_pair() -> tuple[bytes, bytes]:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ed25519

    key = ed25519.Ed25519PrivateKey.from_private_bytes(raw(32))
    pub = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return key.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw,
                             serialization.NoEncryption()), pub


def openssh_private(comment: str) -> tuple[str, str]:
    """An unencrypted ed25519 key in OpenSSH's own format (PROTOCOL.key), and its public line."""
    priv, pub = ed25519_pair()
    pubblob = ssh_string("ssh-ed25519") + ssh_string(pub)
    check = raw(4)
    section = check + check + ssh_string("ssh-ed25519") + ssh_string(pub) + ssh_string(priv + pub) + ssh_string(comment)
    section += bytes(range(1, 1 + (-len(section) % 8)))
    blob = (b"openssh-key-v1\x00" + ssh_string("none") + ssh_string("none") + ssh_string(b"")
            + struct.pack(">I", 1) + ssh_string(pubblob) + ssh_string(section))
    return pem("OPENSSH PRIVATE KEY", blob, width=70), f"ssh-ed25519 {b64(pubblob)} {comment}"


def crc24(data: bytes) -> int:
    crc = 0xB704CE
    for byte in data:
        crc ^= byte << 16
        for _ in range(8):
            crc <<= 1
            if crc & 0x1000000:
                crc ^= 0x1864CFB
    return crc & 0xFFFFFF


def pgp_block(kind: str, uid: str, headers: list[str] = ()) -> str:
    """An ASCII-armored OpenPGP key (RFC 4880 §6.2): a v4 EdDSA key packet (tag 5 secret, tag 6
    public), a user id, a signature, a subkey; then '=' and the CRC-24 of the binary."""
    _, pub = ed25519_pair()
    body = (b"\x04" + struct.pack(">I", rng.randrange(1_600_000_000, 1_720_000_000)) + b"\x16"
            + b"\x09\x2b\x06\x01\x04\x01\xda\x47\x0f\x01" + b"\x01\x07\x40" + pub)
    if kind == "PRIVATE":
        body += b"\xfe\x07\x03\x02" + raw(8) + b"\xff" + raw(16) + raw(70)  # S2K-protected secret
    tag = 0x94 if kind == "PRIVATE" else 0x98
    uidp = uid.encode()
    data = bytes([tag, len(body)]) + body + bytes([0xB4, len(uidp)]) + uidp + b"\x88\x93" + raw(0x93)
    data += bytes([0x9C if kind == "PRIVATE" else 0xB8, 0x5D]) + raw(0x5D) + b"\x88\x78" + raw(0x78)
    lines = [f"-----BEGIN PGP {kind} KEY BLOCK-----", *headers, "", *wrap(b64(data), 64),
             "=" + b64(crc24(data).to_bytes(3, "big")), f"-----END PGP {kind} KEY BLOCK-----"]
    return "\n".join(lines)


BECH32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"


def bech32(hrp: str, data: bytes) -> str:
    """BIP-173 Bech32, the encoding age uses for its keys."""
    def polymod(values):
        gen = [0x3B6A57B2, 0x26508E6D, 0x1EA119FA, 0x3D4233DD, 0x2A1462B3]
        chk = 1
        for v in values:
            top = chk >> 25
            chk = (chk & 0x1FFFFFF) << 5 ^ v
            for i in range(5):
                chk ^= gen[i] if (top >> i) & 1 else 0
        return chk

    acc, bits, five = 0, 0, []
    for byte in data:
        acc = (acc << 8) | byte
        bits += 8
        while bits >= 5:
            bits -= 5
            five.append((acc >> bits) & 31)
    if bits:
        five.append((acc << (5 - bits)) & 31)
    expanded = [ord(c) >> 5 for c in hrp] + [0] + [ord(c) & 31 for c in hrp]
    pm = polymod(expanded + five + [0] * 6) ^ 1
    checksum = [(pm >> 5 * (5 - i)) & 31 for i in range(6)]
    return hrp + "1" + "".join(BECH32[d] for d in five + checksum)


def age_identity() -> tuple[str, str]:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import x25519

    secret = raw(32)
    pub = x25519.X25519PrivateKey.from_private_bytes(secret).public_key().public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return bech32("age-secret-key-", secret).upper(), bech32("age", pub)


def jwt(payload: dict, alg: str = "HS256") -> str:
    header = b64url(json.dumps({"alg": alg, "typ": "JWT"}, separators=(",", ":")).encode())
    body = b64url(json.dumps(payload, separators=(",", ":")).encode())
    if alg == "HS256":
        sig = hmac.new(raw(32), f"{header}.{body}".encode(), hashlib.sha256).digest()
    else:
        sig = raw(256)
    return f"{header}.{body}.{b64url(sig)}"


def png(width: int, height: int) -> bytes:
    """A real PNG: random RGB pixels, zlib-compressed (a screenshot-sized thumbnail)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    rows = b"".join(b"\x00" + raw(width * 3) for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b""))


# -- the provider formats --------------------------------------------------------------

def aws_key_id(prefix: str = "AKIA") -> str:
    return prefix + pick(BASE32, 16)


def aws_secret() -> str:
    return pick(B64, 40)


def openai_legacy() -> str:
    return "sk-" + pick(ALNUM, 20) + "T3BlbkFJ" + pick(ALNUM, 20)


def openai_project(prefix: str = "sk-proj-") -> str:
    return prefix + pick(B64URL, 74) + "T3BlbkFJ" + pick(B64URL, 74)


def anthropic(kind: str = "api03") -> str:
    return f"sk-ant-{kind}-" + pick(B64URL, 93) + "AA"


def slack_bot() -> str:
    return f"xoxb-{pick(DIGITS, 12)}-{pick(DIGITS, 13)}-{pick(ALNUM, 24)}"


def slack_user() -> str:
    return f"xoxp-{pick(DIGITS, 12)}-{pick(DIGITS, 12)}-{pick(DIGITS, 13)}-{pick(HEX, 32)}"


def slack_app() -> str:
    return f"xapp-1-A{pick(UPPER + DIGITS, 10)}-{pick(DIGITS, 13)}-{pick(HEX, 64)}"


def slack_webhook() -> tuple[str, str]:
    secret = pick(ALNUM, 24)
    return f"https://hooks.slack.com/services/T{pick(UPPER + DIGITS, 8)}/B{pick(UPPER + DIGITS, 10)}/{secret}", secret


def google_key() -> str:
    return "AIzaSy" + pick(B64URL, 33)


def google_oauth_secret() -> str:
    return "GOCSPX-" + pick(B64URL, 28)


def stripe(prefix: str) -> str:
    return prefix + "51" + pick(ALNUM, 97)


def hf() -> str:
    return "hf_" + pick(LETTERS, 34)


def telegram() -> str:
    return f"{rng.randrange(10**8, 10**10)}:AA{pick(B64URL, 33)}"


def discord(sig_len: int = 27) -> str:
    first = base64.b64encode(str(snowflake()).encode()).decode().rstrip("=")
    return f"{first}.{b64url(raw(4))}.{pick(B64URL, sig_len)}"


def pypi(caveat: dict) -> str:
    """A PyPI token: 'pypi-' and a base64url macaroon (v2 binary: location pypi.org, identifier,
    the caveat, the 32-byte signature)."""
    ident = str(uuid.UUID(bytes=raw(16), version=4)).encode()
    cav = json.dumps(caveat).encode()
    blob = (b"\x02\x01\x08pypi.org\x02" + bytes([len(ident)]) + ident + b"\x00\x02" + bytes([len(cav)])
            + cav + b"\x00\x00\x06\x20" + raw(32))
    return "pypi-" + b64url(blob)


def vault_service() -> str:
    """Vault 1.10+ service token: 'hvs.' + base64url of the token protobuf (32 random bytes and the
    inner 'hvs.' id of 24 base62)."""
    inner = ("hvs." + pick(ALNUM, 24)).encode()
    blob = b"\x08\x01\x12\x20" + raw(32) + b"\x1a" + bytes([len(inner) + 2]) + b"\x0a" + bytes([len(inner)]) + inner
    return "hvs." + b64url(blob)


def sendgrid() -> str:
    return "SG." + pick(B64URL, 22) + "." + pick(B64URL, 43)


def azure_account_key() -> str:
    return b64(raw(64))


def azure_sas_sig() -> str:
    return quote(b64(raw(32)), safe="")


# -- the corpus ------------------------------------------------------------------------

def secret(kind: str, name: str, text: str, secrets: list[str], source: str) -> None:
    for value in secrets:
        assert value in text, (name, value)
    items.append({"id": f"{kind}/{name}", "kind": kind, "text": text, "secrets": secrets, "source": source})


def lookalike(what: str, name: str, text: str) -> None:
    items.append({"id": f"lookalike:{what}/{name}", "kind": f"lookalike:{what}", "text": text, "secrets": []})


SRC = {
    "aws": "AWS IAM docs (AccessKey data type; 'Manage access keys'): access key id 20 characters, AKIA (long-term) "
           "or ASIA (temporary), example AKIAIOSFODNN7EXAMPLE; secret access key 40 characters of A-Za-z0-9+/, "
           "example wJalrXUtnFEMI/K7MDENG/bPxRfiC+EXAMPLEKEY; STS returns a SessionToken with temporary keys",
    "github": "GitHub blog 'Behind GitHub's new authentication token formats' and changelog 2021-03-31: prefixes "
              "ghp_ (PAT), gho_ (OAuth), ghu_ (user-to-server), ghs_ (server-to-server), ghr_ (refresh); "
              "alphabet A-Za-z0-9; 36 characters after the prefix, the last 6 a CRC32 checksum",
    "github_pat": "GitHub fine-grained personal access tokens: github_pat_ + 22 + '_' + 59 characters of A-Za-z0-9 "
                  "(93 in all), as GitHub shows them when created",
    "openai": "OpenAI API docs (Authentication: 'Authorization: Bearer OPENAI_API_KEY'; project keys sk-proj-, "
              "service-account keys sk-svcacct-); OpenAI documents no length or alphabet: the shape "
              "(base64url body with the 'T3BlbkFJ' marker, legacy sk- + 48) is from public examples",
    "anthropic": "Anthropic API docs (every request carries an x-api-key header); Anthropic documents no key "
                 "format: sk-ant-api03- + 95 base64url characters ending 'AA' (108 in all) from public examples",
    "slack": "Slack docs 'Token types': bot tokens xoxb-, user tokens xoxp-, app-level tokens xapp-; the "
             "dash-separated shape (team/user ids, then the random part) from Slack's own examples",
    "slack_webhook": "Slack docs 'Sending messages using incoming webhooks': "
                     "https://hooks.slack.com/services/T…/B…/ and a 24-character secret (their example "
                     "T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX)",
    "google_api_key": "Google Cloud docs 'Manage API keys': the key string is like "
                      "AIzaSyDaGmWKa4JsXZ-HjGw7ISLn_3namBGewQe (39 characters, A-Za-z0-9_-)",
    "google_oauth": "Google Auth Platform docs / Google Developers blog: OAuth client secrets now start GOCSPX-; "
                    "length (28 after the prefix, A-Za-z0-9_-) from downloaded client_secret.json files",
    "jwt": "RFC 7519 §3 and RFC 7515 §7.1: base64url(header).base64url(claims).base64url(signature)",
    "pem": "RFC 7468 §2 (-----BEGIN/END label-----, base64 in 64-character lines) over PKCS#1 (RFC 8017 A.1.2), "
           "PKCS#8 (RFC 5208/5958) and SEC1 (RFC 5915) DER",
    "pem_encrypted": "RFC 1421 §4.6.1 headers as OpenSSL writes them: 'Proc-Type: 4,ENCRYPTED' and "
                     "'DEK-Info: AES-256-CBC,<IV in hex>', a blank line, then the base64 ciphertext",
    "pem_pkcs8_encrypted": "RFC 5958 §3 EncryptedPrivateKeyInfo, PBES2 (RFC 8018) as OpenSSL 3 writes "
                           "'-----BEGIN ENCRYPTED PRIVATE KEY-----'",
    "openssh": "OpenSSH PROTOCOL.key: 'openssh-key-v1' binary in '-----BEGIN OPENSSH PRIVATE KEY-----', "
               "base64 wrapped at 70 columns as ssh-keygen writes it",
    "gcp_sa": "Google Cloud docs 'Create and delete service account keys': the JSON key file's private_key "
              "field holds a PKCS#8 PEM with its newlines escaped as \\n",
    "pgp": "RFC 4880 §6.2 ASCII armor: '-----BEGIN PGP PRIVATE KEY BLOCK-----', optional headers, a blank line, "
           "base64 (GnuPG writes 64 columns), '=' + CRC-24, END line",
    "bearer": "RFC 6750 §2.1: 'Authorization: Bearer' b64token = 1*(ALPHA / DIGIT / '-' / '.' / '_' / '~' / '+' / '/') *'='",
    "basic": "RFC 7617 §2: 'Authorization: Basic' base64(user-id ':' password); curl manual: -u user:password sends it",
    "url_password": "RFC 3986 §3.2.1 userinfo 'user:password@host'; PostgreSQL libpq connection URIs; the "
                    "Redis URI scheme (IANA) redis://[[user]:password@]host with an empty user allowed; "
                    "MongoDB connection string docs (mongodb+srv://user:password@cluster)",
    "pgpassword": "PostgreSQL docs 'Environment Variables' (libpq): PGPASSWORD behaves the same as the password "
                  "connection parameter",
    "mysql": "MySQL manual 'Specifying the password': --password[=password] or -p[password], with no space "
             "between -p and the password",
    "password": "No provider format: password assignments in dotenv, YAML, TOML, INI/properties, Django settings "
                "and docker -e, quoted where the value holds $, ; or spaces",
    "stripe": "Stripe docs 'API keys': secret keys sk_live_, restricted keys rk_live_ (publishable pk_ keys are "
              "meant to be public); Stripe's security engineer in GitLab issue 458019: (sk|rk)_live_ then "
              "10-128 alphanumerics; live keys seen as sk_live_51 + 97",
    "stripe_whsec": "Stripe docs 'Webhooks': each endpoint has a signing secret starting whsec_ "
                    "(32 alphanumerics after it in the Dashboard)",
    "huggingface": "Hugging Face Hub docs 'User access tokens' (tokens start hf_); 34 letters after it in "
                   "public examples",
    "gitlab": "GitLab docs 'Personal access token prefix' (default glpat-, GitLab issue 342327); 20 characters "
              "of A-Za-z0-9_- after it",
    "azure_storage": "Microsoft Learn 'Configure Azure Storage connection strings': "
                     "DefaultEndpointsProtocol=https;AccountName=…;AccountKey=…;EndpointSuffix=core.windows.net; "
                     "account keys are 512-bit, 88 base64 characters",
    "azure_sas": "Microsoft Learn 'Create a service SAS' / 'Grant limited access with SAS': sv, ss, srt, sp, se, "
                 "st, spr and sig, the URL-encoded base64 HMAC-SHA256 signature",
    "twilio": "Twilio docs 'What is a SID': 34 characters, a 2-letter prefix (AC account, SK API key) and 32 hex "
              "digits; 'API keys overview': an API key SID comes with a secret; Auth Tokens are 32 hex "
              "characters (Twilio Console)",
    "sendgrid": "Twilio SendGrid docs 'API Keys': keys are 69 characters long; SG.<22>.<43> (base64url) in "
                "SendGrid's own examples",
    "telegram": "Telegram Bot API docs (core.telegram.org/bots): the token looks like "
                "110201543:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw (bot id, ':', 35 characters)",
    "discord": "Discord developer docs 'Reference / Authentication': 'Authorization: Bot "
               "MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs'; three base64url parts "
               "(user id, timestamp, HMAC)",
    "pypi": "PyPI help 'API tokens': username __token__, the token value including its pypi- prefix; tokens "
            "are macaroons (Warehouse), base64url, beginning pypi-AgEIcHlwaS5vcmc",
    "npm": "GitHub changelog 2021-09-23 'npm has a new access token format': npm_ + 36 characters "
           "(30 random, 6 CRC32 checksum); npm docs '.npmrc' //registry.npmjs.org/:_authToken=",
    "vault": "HashiCorp Vault docs 'Tokens' (Vault 1.10+): service tokens start hvs., batch tokens hvb.; "
             "service tokens are 95+ characters of base64url",
    "age": "age format spec (age-encryption.org/v1): X25519 identities are Bech32 with HRP AGE-SECRET-KEY-, "
           "upper case; age-keygen writes '# created', '# public key: age1…' comments above it",
    "mailchimp": "Mailchimp Marketing API docs 'Quick start': the API key ends with the data center, "
                 "e.g. -us6 (32 hex characters, '-us', digits)",
    "shopify": "Shopify developer changelog (2020-01-28, 2020-04-01): app secrets shpss_, access tokens shpat_ "
               "(public apps), shpca_ (custom apps), shppa_ (private apps), then 32 hex characters",
    "digitalocean": "DigitalOcean token prefixes (announced 2022): dop_v1_ personal access tokens, doo_v1_ OAuth, "
                    "dor_v1_ refresh; 64 hex characters after it in public examples",
    "datadog": "Datadog docs 'API and Application Keys' with datadog.yaml api_key and DD_API_KEY/DD_APP_KEY; "
               "API keys 32 hex, application keys 40 hex (Datadog documents no prefix)",
}


def build() -> None:
    # AWS --------------------------------------------------------------------------------
    kid, sec = aws_key_id(), aws_secret()
    secret("aws_secret_access_key", "credentials-file",
           f"[default]\naws_access_key_id = {kid}\naws_secret_access_key = {sec}\nregion = eu-west-1\n", [kid, sec], SRC["aws"])
    kid, sec = aws_key_id(), aws_secret()
    secret("aws_secret_access_key", "json-create-access-key",
           '$ aws iam create-access-key --user-name ci-deploy\n{\n    "AccessKey": {\n        "UserName": "ci-deploy",\n'
           f'        "AccessKeyId": "{kid}",\n        "Status": "Active",\n        "SecretAccessKey": "{sec}",\n'
           '        "CreateDate": "2024-05-02T09:14:27+00:00"\n    }\n}', [kid, sec], SRC["aws"])
    kid, sec = aws_key_id(), aws_secret()
    secret("aws_secret_access_key", "chat-pair-no-keyword",
           f"creds for the staging bucket: {kid} {sec} -- rotate them after the demo please", [kid, sec], SRC["aws"])
    kid, sec = aws_key_id(), aws_secret()
    secret("aws_secret_access_key", "env-export",
           f"export AWS_ACCESS_KEY_ID={kid}\nexport AWS_SECRET_ACCESS_KEY={sec}\naws s3 ls s3://acme-backups/",
           [kid, sec], SRC["aws"])
    kid, sec = aws_key_id(), aws_secret()
    secret("aws_secret_access_key", "boto3-snippet",
           f's3 = boto3.client(\n    "s3",\n    aws_access_key_id="{kid}",\n    aws_secret_access_key="{sec}",\n)',
           [kid, sec], SRC["aws"])
    kid, sec = aws_key_id(), aws_secret()
    secret("aws_secret_access_key", "yaml-config",
           f"storage:\n  backend: s3\n  s3:\n    bucket: notes-archive\n    access_key_id: {kid}\n    secret_access_key: {sec}\n",
           [kid, sec], SRC["aws"])
    kid, sec, tok = aws_key_id("ASIA"), aws_secret(), b64(raw(264))
    secret("aws_secret_access_key", "sts-session",
           f"AWS_ACCESS_KEY_ID={kid}\nAWS_SECRET_ACCESS_KEY={sec}\nAWS_SESSION_TOKEN={tok}\n", [kid, sec, tok], SRC["aws"])
    kid = aws_key_id()
    secret("aws_access_key_id", "log-line",
           f"2024-05-02T10:11:12Z WARN botocore.credentials Found credentials in environment variables: {kid}", [kid], SRC["aws"])
    kid = aws_key_id()
    secret("aws_access_key_id", "markdown-note",
           f"## Incident 14\n\nThe leaked key was `{kid}` (user build-bot). Deactivated at 11:02.", [kid], SRC["aws"])

    # GitHub -----------------------------------------------------------------------------
    t = crc32_token("ghp_")
    secret("github_token", "ghp-clone-url", f"git clone https://{t}@github.com/acme/infra.git", [t], SRC["github"])
    t = crc32_token("ghp_")
    secret("github_token", "ghp-chat", f"use my token for now: {t} (expires friday)", [t], SRC["github"])
    t = crc32_token("gho_")
    secret("github_token", "gho-oauth-json",
           f'{{"access_token":"{t}","token_type":"bearer","scope":"repo,gist"}}', [t], SRC["github"])
    t, r = crc32_token("ghu_"), "ghr_" + pick(ALNUM, 76)
    secret("github_token", "ghu-ghr-refresh-json",
           f'{{\n  "access_token": "{t}",\n  "expires_in": 28800,\n  "refresh_token": "{r}",\n'
           '  "refresh_token_expires_in": 15811200,\n  "scope": "",\n  "token_type": "bearer"\n}', [t, r], SRC["github"])
    t = crc32_token("ghs_")
    secret("github_token", "ghs-actions-log",
           f"2024-05-02T08:00:01.3Z ##[debug]GITHUB_TOKEN={t}\n2024-05-02T08:00:01.4Z Run actions/checkout@v4",
           [t], SRC["github"])
    r = "ghr_" + pick(ALNUM, 76)
    secret("github_token", "ghr-chat", f"the app's refresh token is {r}; it is good for six months", [r], SRC["github"])
    p = f"github_pat_{pick(ALNUM, 22)}_{pick(ALNUM, 59)}"
    secret("github_token", "github-pat-env", f"GH_TOKEN={p}\nGH_REPO=acme/notes\n", [p], SRC["github_pat"])
    p = f"github_pat_{pick(ALNUM, 22)}_{pick(ALNUM, 59)}"
    secret("github_token", "github-pat-gh-cli",
           f"echo {p} | gh auth login --with-token", [p], SRC["github_pat"])

    # OpenAI / Anthropic -----------------------------------------------------------------
    k = openai_project()
    secret("openai_key", "project-env", f"OPENAI_API_KEY={k}\nOPENAI_MODEL=gpt-4o-mini\n", [k], SRC["openai"])
    k = openai_legacy()
    secret("openai_key", "legacy-python", f'client = OpenAI(api_key="{k}")\nprint(client.models.list())', [k], SRC["openai"])
    k = openai_project("sk-svcacct-")
    secret("openai_key", "svcacct-curl",
           f'curl https://api.openai.com/v1/models -H "Authorization: Bearer {k}"', [k], SRC["openai"])
    k = anthropic()
    secret("anthropic_key", "export", f"export ANTHROPIC_API_KEY={k}\nclaude --version", [k], SRC["anthropic"])
    k = anthropic()
    secret("anthropic_key", "curl-x-api-key",
           f'curl https://api.anthropic.com/v1/messages \\\n  -H "x-api-key: {k}" \\\n  -H "anthropic-version: 2023-06-01"',
           [k], SRC["anthropic"])
    k = anthropic()
    secret("anthropic_key", "chat", f"Here's the key I used in the notebook: {k}", [k], SRC["anthropic"])

    # Slack ------------------------------------------------------------------------------
    t = slack_bot()
    secret("slack_token", "xoxb-env", f"SLACK_BOT_TOKEN={t}\nSLACK_CHANNEL=#deploys\n", [t], SRC["slack"])
    t = slack_user()
    secret("slack_token", "xoxp-curl",
           f'curl -H "Authorization: Bearer {t}" https://slack.com/api/conversations.list', [t], SRC["slack"])
    t = slack_app()
    secret("slack_token", "xapp-yaml", f"socket_mode:\n  enabled: true\n  app_token: {t}\n", [t], SRC["slack"])
    t = slack_app()
    secret("slack_token", "xapp-chat", f"socket mode needs the app-level token, mine is {t}", [t], SRC["slack"])
    url, s = slack_webhook()
    secret("slack_webhook", "json-config", f'{{"notify": {{"webhook_url": "{url}", "channel": "#alerts"}}}}', [s],
           SRC["slack_webhook"])
    url, s = slack_webhook()
    secret("slack_webhook", "curl-post",
           f"curl -X POST -H 'Content-type: application/json' --data '{{\"text\":\"deploy done\"}}' {url}", [s],
           SRC["slack_webhook"])

    # Google -----------------------------------------------------------------------------
    k = google_key()
    secret("google_api_key", "maps-script-tag",
           f'<script src="https://maps.googleapis.com/maps/api/js?key={k}&callback=initMap" async></script>',
           [k], SRC["google_api_key"])
    k = google_key()
    secret("google_api_key", "gemini-curl",
           f'curl "https://generativelanguage.googleapis.com/v1beta/models/gemini-1.5-flash:generateContent?key={k}" '
           "-H 'Content-Type: application/json' -d @prompt.json", [k], SRC["google_api_key"])
    k = google_key()
    secret("google_api_key", "env", f"GOOGLE_API_KEY={k}\n", [k], SRC["google_api_key"])
    s = google_oauth_secret()
    secret("google_oauth_secret", "client-secret-json",
           f'{{"web":{{"client_id":"{pick(DIGITS, 12)}-{pick(LOWER + DIGITS, 32)}.apps.googleusercontent.com",'
           f'"project_id":"notes-sync-4821","auth_uri":"https://accounts.google.com/o/oauth2/auth",'
           f'"token_uri":"https://oauth2.googleapis.com/token","client_secret":"{s}",'
           '"redirect_uris":["http://localhost:8080/callback"]}}', [s], SRC["google_oauth"])
    s = google_oauth_secret()
    secret("google_oauth_secret", "env", f"GOOGLE_CLIENT_ID=ignored\nGOOGLE_CLIENT_SECRET={s}\n", [s], SRC["google_oauth"])

    # JWT --------------------------------------------------------------------------------
    t = jwt({"sub": "user_4821", "name": "Greta Lund", "iat": 1714640000, "exp": 1714726400})
    secret("jwt", "http-request-dump",
           f"GET /api/v2/notes HTTP/1.1\nHost: notes.example.com\nAuthorization: Bearer {t}\nAccept: application/json",
           [t], SRC["jwt"])
    t = jwt({"iss": "https://accounts.google.com", "aud": "notes-sync", "sub": pick(DIGITS, 21),
             "email": "greta@example.org", "iat": 1714640000, "exp": 1714643600}, "RS256")
    secret("jwt", "id-token-json", f'{{"id_token": "{t}", "expires_in": 3599}}', [t], SRC["jwt"])
    t = jwt({"uid": 77, "role": "admin", "exp": 1735689600})
    secret("jwt", "cookie-chat", f"the session cookie was session={t} -- that's how they got in", [t], SRC["jwt"])

    # PEM private keys -------------------------------------------------------------------
    k = pem("RSA PRIVATE KEY", rsa_der())
    secret("private_key", "rsa-markdown-fence", f"Key for the old build box:\n\n```\n{k}\n```\n\nDon't reuse it.", [k], SRC["pem"])
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    ek = ec.derive_private_key(int.from_bytes(raw(32), "big") % (2**255), ec.SECP256R1())
    k = ek.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                         serialization.NoEncryption()).decode().strip()
    indented = "\n".join("    " + line for line in k.splitlines())
    secret("private_key", "ec-k8s-secret-yaml",
           f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: api-tls\ntype: kubernetes.io/tls\nstringData:\n"
           f"  tls.key: |\n{indented}\n", [indented.strip()], SRC["pem"])
    k, _ = openssh_private("greta@laptop")
    secret("private_key", "openssh-chat", f"$ cat ~/.ssh/id_ed25519\n{k}\n$ ", [k], SRC["openssh"])
    k = pem("PRIVATE KEY", pkcs8_der())
    secret("private_key", "pkcs8-python-string", f'SIGNING_KEY = """{k}\n"""\n', [k], SRC["pem"])
    k = pem("RSA PRIVATE KEY", raw(1200), ["Proc-Type: 4,ENCRYPTED", f"DEK-Info: AES-256-CBC,{pick('0123456789ABCDEF', 32)}"])
    secret("private_key", "encrypted-proc-type", f"old key, passphrase is in 1Password:\n{k}", [k], SRC["pem_encrypted"])
    k = pem("ENCRYPTED PRIVATE KEY", encrypted_pkcs8_der())
    secret("private_key", "encrypted-pkcs8", f"{k}\n", [k], SRC["pem_pkcs8_encrypted"])
    full = pem("RSA PRIVATE KEY", rsa_der()).splitlines()
    k = "\n".join(full[:14])
    secret("private_key", "truncated-no-end", f"pasting the key, it got cut off:\n{k}", [k], SRC["pem"])
    k = pem("RSA PRIVATE KEY", rsa_der())
    secret("private_key", "dotenv-multiline", f'APP_NAME=notes\nJWT_PRIVATE_KEY="{k}"\nJWT_TTL=3600\n', [k], SRC["pem"])
    k = pem("PRIVATE KEY", pkcs8_der()).replace("\n", "\\n") + "\\n"
    secret("private_key", "gcp-service-account-json",
           f'{{\n  "type": "service_account",\n  "project_id": "notes-sync-4821",\n  "private_key_id": "{pick(HEX, 40)}",\n'
           f'  "private_key": "{k}",\n  "client_email": "sync@notes-sync-4821.iam.gserviceaccount.com"\n}}', [k], SRC["gcp_sa"])

    # PGP --------------------------------------------------------------------------------
    k = pgp_block("PRIVATE", "Greta Lund <greta@example.org>")
    secret("pgp_private_key", "gpg-export", f"$ gpg --export-secret-keys --armor greta@example.org\n{k}", [k], SRC["pgp"])
    k = pgp_block("PRIVATE", "Release Signing <release@acme.io>", ["Comment: release signing key, do not share"])
    secret("pgp_private_key", "note-with-header", f"Backup of the release key (2024):\n\n{k}\n", [k], SRC["pgp"])

    # Bearer / Basic ---------------------------------------------------------------------
    t = pick(ALNUM, 40)
    secret("bearer_token", "curl", f'curl -H "Authorization: Bearer {t}" https://api.internal.example/v1/jobs', [t], SRC["bearer"])
    t = pick(LETTERS, 32)
    secret("bearer_token", "no-digit-http", f"POST /v1/ingest HTTP/1.1\nHost: collector.local\nAuthorization: Bearer {t}\n",
           [t], SRC["bearer"])
    t = pick(ALNUM, 12) + "-" + pick(ALNUM, 10) + "." + pick(ALNUM, 14) + "_" + pick(ALNUM, 6)
    secret("bearer_token", "python-headers", f'headers = {{"Authorization": "Bearer {t}", "Accept": "application/json"}}',
           [t], SRC["bearer"])
    cred = b64(f"deploy:{password(18)}".encode())
    secret("basic_auth", "header", f"Authorization: Basic {cred}", [cred], SRC["basic"])
    cred = b64(f"admin:{password(14)}".encode())
    secret("basic_auth", "nginx-debug-log",
           f'2024/05/02 10:11:12 [debug] 4821#0: *9 http header: "Authorization: Basic {cred}"', [cred], SRC["basic"])
    pw = password(16)
    secret("basic_auth", "curl-u", f"curl -u admin:{pw} https://grafana.example.com/api/dashboards/home", [pw], SRC["basic"])

    # URLs with passwords ----------------------------------------------------------------
    pw = password(20)
    secret("url_password", "postgres", f"DATABASE_URL=postgres://app:{pw}@db.internal:5432/app", [pw], SRC["url_password"])
    pw = password(16, "/")
    secret("url_password", "slash-in-password", f"mysql://root:{pw}@127.0.0.1:3306/shop", [pw], SRC["url_password"])
    pw = pick(ALNUM, 24)
    secret("url_password", "redis-empty-user", f"REDIS_URL=redis://:{pw}@cache.internal:6379/0", [pw], SRC["url_password"])
    pw = pick(ALNUM, 16)
    secret("url_password", "mongodb-srv",
           f'client = MongoClient("mongodb+srv://notes_admin:{pw}@cluster0.ab1cd.mongodb.net/?retryWrites=true&w=majority")',
           [pw], SRC["url_password"])
    pw = quote(password(18, "/@"), safe="")
    secret("url_password", "percent-encoded", f"broker_url = 'amqps://svc:{pw}@broker.example.com:5671/notes'",
           [pw], SRC["url_password"])
    pw = pick(ALNUM, 14)
    secret("url_password", "https-git-remote", f"git remote add backup https://greta:{pw}@git.example.org/notes.git",
           [pw], SRC["url_password"])

    # PGPASSWORD / mysql -p --------------------------------------------------------------
    pw = password(16)
    secret("pgpassword", "inline", f"PGPASSWORD={pw} psql -h db.internal -U postgres -c 'select count(*) from notes'",
           [pw], SRC["pgpassword"])
    pw = password(18, "$")
    secret("pgpassword", "export-quoted", f"export PGPASSWORD='{pw}'\npg_dump -h db.internal notes > notes.sql",
           [pw], SRC["pgpassword"])
    pw = password(14)
    secret("mysql_password", "dash-p-attached", f"mysql -u root -p{pw} -h 127.0.0.1 shop", [pw], SRC["mysql"])
    pw = password(16, ";")
    secret("mysql_password", "dash-p-quoted-semicolon", f"mysqldump -uadmin -p'{pw}' --all-databases > dump.sql",
           [pw], SRC["mysql"])

    # Password assignments ---------------------------------------------------------------
    pw = password(16, "$$")
    secret("password_assignment", "dotenv-dollar", f'DB_USER=notes\nDB_PASSWORD="{pw}"\n', [pw], SRC["password"])
    pw = words(4)
    secret("password_assignment", "yaml-spaces", f"database:\n  user: notes\n  password: '{pw}'\n", [pw], SRC["password"])
    pw = password(14, ";")
    secret("password_assignment", "toml-semicolon", f'[smtp]\nuser = "alerts@acme.io"\npassword = "{pw}"\n', [pw], SRC["password"])
    pw = password(20)
    secret("password_assignment", "django-settings",
           f"DATABASES = {{\n    'default': {{\n        'ENGINE': 'django.db.backends.postgresql',\n"
           f"        'NAME': 'notes',\n        'USER': 'notes',\n        'PASSWORD': '{pw}',\n    }}\n}}", [pw], SRC["password"])
    pw = password(18)
    secret("password_assignment", "spring-properties",
           f"spring.datasource.url=jdbc:postgresql://db:5432/notes\nspring.datasource.password={pw}\n", [pw], SRC["password"])
    pw = password(16)
    secret("password_assignment", "docker-run-env", f"docker run -d -e POSTGRES_PASSWORD={pw} -p 5432:5432 postgres:16",
           [pw], SRC["password"])
    pw = password(12)
    secret("password_assignment", "chat-prose", f"the wifi password at the cabin is {pw} if anyone needs it", [pw], SRC["password"])
    pw = words(3) + " " + str(rng.randrange(10, 99))
    secret("password_assignment", "json-spaces", f'{{"username": "greta", "password": "{pw}", "remember": true}}',
           [pw], SRC["password"])

    # Stripe -----------------------------------------------------------------------------
    k = stripe("sk_live_")
    secret("stripe_key", "sk-live-env", f"STRIPE_SECRET_KEY={k}\nSTRIPE_PUBLISHABLE_KEY=pk_live_{pick(ALNUM, 99)}\n", [k], SRC["stripe"])
    k = stripe("rk_live_")
    secret("stripe_key", "rk-live-python", f'import stripe\nstripe.api_key = "{k}"\nstripe.Charge.list(limit=3)', [k], SRC["stripe"])
    k = "whsec_" + pick(ALNUM, 32)
    secret("stripe_key", "whsec-env", f"STRIPE_WEBHOOK_SECRET={k}\n", [k], SRC["stripe_whsec"])

    # Hugging Face / GitLab --------------------------------------------------------------
    k = hf()
    secret("huggingface_token", "cli-login", f"huggingface-cli login --token {k} --add-to-git-credential", [k], SRC["huggingface"])
    k = hf()
    secret("huggingface_token", "python-login", f'from huggingface_hub import login\nlogin(token="{k}")', [k], SRC["huggingface"])
    k = hf()
    secret("huggingface_token", "env", f"HF_TOKEN={k}\n", [k], SRC["huggingface"])
    k = "glpat-" + pick(B64URL, 20)
    secret("gitlab_token", "remote-url", f"git remote set-url origin https://oauth2:{k}@gitlab.com/acme/notes.git", [k], SRC["gitlab"])
    k = "glpat-" + pick(B64URL, 20)
    secret("gitlab_token", "ci-curl", f'curl --header "PRIVATE-TOKEN: {k}" "https://gitlab.example.com/api/v4/projects"', [k], SRC["gitlab"])
    k = "glpat-" + pick(B64URL, 20)
    secret("gitlab_token", "chat", f"new deploy token for the runner: {k}", [k], SRC["gitlab"])

    # Azure ------------------------------------------------------------------------------
    key = azure_account_key()
    secret("azure_storage_key", "appsettings-json",
           '{\n  "IsEncrypted": false,\n  "Values": {\n    "AzureWebJobsStorage": "DefaultEndpointsProtocol=https;'
           f'AccountName=notesfn4821;AccountKey={key};EndpointSuffix=core.windows.net"\n  }}\n}}', [key], SRC["azure_storage"])
    key = azure_account_key()
    secret("azure_storage_key", "env-connection-string",
           f'AZURE_STORAGE_CONNECTION_STRING="DefaultEndpointsProtocol=https;AccountName=acmebackups;AccountKey={key};'
           'EndpointSuffix=core.windows.net"', [key], SRC["azure_storage"])
    k1, k2 = azure_account_key(), azure_account_key()
    secret("azure_storage_key", "az-keys-list-json",
           "$ az storage account keys list -g notes -n acmebackups\n[\n  {\n"
           f'    "creationTime": "2024-05-02T09:00:00+00:00",\n    "keyName": "key1",\n    "permissions": "FULL",\n    "value": "{k1}"\n  }},\n'
           f'  {{\n    "creationTime": "2024-05-02T09:00:00+00:00",\n    "keyName": "key2",\n    "permissions": "FULL",\n    "value": "{k2}"\n  }}\n]',
           [k1, k2], SRC["azure_storage"])
    sig = azure_sas_sig()
    secret("azure_sas", "blob-url-chat",
           f"download it here: https://acmebackups.blob.core.windows.net/exports/notes.zip?sp=r&st=2024-05-02T09:00:00Z"
           f"&se=2024-05-09T17:00:00Z&spr=https&sv=2022-11-02&sr=b&sig={sig}", [sig], SRC["azure_sas"])
    sig = azure_sas_sig()
    secret("azure_sas", "azcopy",
           f'azcopy copy ./vault "https://acmebackups.blob.core.windows.net/vault?sv=2022-11-02&ss=b&srt=co&sp=rwdlac'
           f'&se=2024-12-31T23:59:59Z&st=2024-05-01T00:00:00Z&spr=https&sig={sig}" --recursive', [sig], SRC["azure_sas"])

    # Twilio / SendGrid ------------------------------------------------------------------
    tok = pick(HEX, 32)
    secret("twilio", "auth-token-env", f"TWILIO_ACCOUNT_SID=AC{pick(HEX, 32)}\nTWILIO_AUTH_TOKEN={tok}\n", [tok], SRC["twilio"])
    sid, sec = "SK" + pick(HEX, 32), pick(ALNUM, 32)
    secret("twilio", "api-key-node",
           f"const client = require('twilio')('{sid}', '{sec}', {{ accountSid: 'AC{pick(HEX, 32)}' }});", [sid, sec], SRC["twilio"])
    sid, sec = "SK" + pick(HEX, 32), pick(ALNUM, 32)
    secret("twilio", "api-key-curl",
           f"curl -X GET 'https://api.twilio.com/2010-04-01/Accounts.json' -u {sid}:{sec}", [sid, sec], SRC["twilio"])
    k = sendgrid()
    secret("sendgrid_key", "env", f"SENDGRID_API_KEY={k}\nMAIL_FROM=notes@acme.io\n", [k], SRC["sendgrid"])
    k = sendgrid()
    secret("sendgrid_key", "python", f"sg = SendGridAPIClient('{k}')\nsg.send(message)", [k], SRC["sendgrid"])
    k = sendgrid()
    secret("sendgrid_key", "smtp-config", f"smtp:\n  host: smtp.sendgrid.net\n  port: 587\n  username: apikey\n  password: {k}\n",
           [k], SRC["sendgrid"])

    # Telegram / Discord -----------------------------------------------------------------
    t = telegram()
    secret("telegram_bot_token", "curl-url",
           f'curl "https://api.telegram.org/bot{t}/sendMessage?chat_id=-1001234567890&text=backup%20done"', [t], SRC["telegram"])
    t = telegram()
    secret("telegram_bot_token", "botfather-chat",
           f"Done! Congratulations on your new bot. Use this token to access the HTTP API:\n{t}\nKeep your token secure.",
           [t], SRC["telegram"])
    t = discord()
    secret("discord_bot_token", "python-run", f"bot = commands.Bot(command_prefix='!')\nbot.run('{t}')", [t], SRC["discord"])
    t = discord(38)
    secret("discord_bot_token", "env", f"DISCORD_TOKEN={t}\nGUILD_ID={snowflake()}\n", [t], SRC["discord"])
    t = discord()
    secret("discord_bot_token", "authorization-header", f"Authorization: Bot {t}\nUser-Agent: DiscordBot (https://acme.io, 1.0)",
           [t], SRC["discord"])

    # PyPI / npm -------------------------------------------------------------------------
    t = pypi({"version": 1, "permissions": "user"})
    secret("pypi_token", "pypirc", f"[pypi]\n  username = __token__\n  password = {t}\n", [t], SRC["pypi"])
    t = pypi({"version": 1, "permissions": {"projects": ["amem-cli"]}})
    secret("pypi_token", "twine-cli", f"twine upload -u __token__ -p {t} dist/*", [t], SRC["pypi"])
    t = pypi({"version": 1, "permissions": "user"})
    secret("pypi_token", "chat", f"I put the upload token in the notes so I don't lose it: {t}", [t], SRC["pypi"])
    t = crc32_token("npm_")
    secret("npm_token", "npmrc", f"//registry.npmjs.org/:_authToken={t}\n@acme:registry=https://registry.npmjs.org/\n", [t], SRC["npm"])
    t = crc32_token("npm_")
    secret("npm_token", "env", f"NPM_TOKEN={t} npm publish --access public", [t], SRC["npm"])

    # Vault / age ------------------------------------------------------------------------
    t = vault_service()
    secret("vault_token", "export", f"export VAULT_ADDR=https://vault.acme.io:8200\nexport VAULT_TOKEN={t}\nvault kv get secret/notes",
           [t], SRC["vault"])
    t = vault_service()
    secret("vault_token", "login-output",
           "Success! You are now authenticated.\n\nKey                  Value\n---                  -----\n"
           f"token                {t}\ntoken_accessor       {pick(ALNUM, 24)}\ntoken_duration       768h", [t], SRC["vault"])
    t = "hvb." + b64url(raw(138))
    secret("vault_token", "batch-json", f'{{"auth": {{"client_token": "{t}", "renewable": false, "lease_duration": 1200}}}}',
           [t], SRC["vault"])
    sk, pk = age_identity()
    secret("age_secret_key", "key-file",
           f"# created: 2024-05-02T09:14:27+02:00\n# public key: {pk}\n{sk}\n", [sk], SRC["age"])
    sk, _ = age_identity()
    secret("age_secret_key", "sops-env", f"SOPS_AGE_KEY={sk} sops -d secrets.enc.yaml", [sk], SRC["age"])

    # Mailchimp / Shopify / DigitalOcean / Datadog ---------------------------------------
    dc = f"us{rng.randrange(1, 22)}"
    k = f"{pick(HEX, 32)}-{dc}"
    secret("mailchimp_key", "js-config", f'mailchimp.setConfig({{\n  apiKey: "{k}",\n  server: "{dc}",\n}});', [k], SRC["mailchimp"])
    k = f"{pick(HEX, 32)}-us{rng.randrange(1, 22)}"
    secret("mailchimp_key", "env", f"MAILCHIMP_API_KEY={k}\n", [k], SRC["mailchimp"])
    k = "shpat_" + pick(HEX, 32)
    secret("shopify_token", "curl-header",
           f'curl -H "X-Shopify-Access-Token: {k}" https://acme-store.myshopify.com/admin/api/2024-04/products.json', [k], SRC["shopify"])
    k = "shpss_" + pick(HEX, 32)
    secret("shopify_token", "app-secret-env", f"SHOPIFY_API_KEY={pick(HEX, 32)}\nSHOPIFY_API_SECRET={k}\n", [k], SRC["shopify"])
    k = "dop_v1_" + pick(HEX, 64)
    secret("digitalocean_token", "doctl", f"doctl auth init --access-token {k}", [k], SRC["digitalocean"])
    k = "dop_v1_" + pick(HEX, 64)
    secret("digitalocean_token", "tfvars", f'do_token = "{k}"\nregion   = "ams3"\n', [k], SRC["digitalocean"])
    k = pick(HEX, 32)
    secret("datadog_key", "agent-yaml", f"## datadog.yaml\napi_key: {k}\nsite: datadoghq.eu\nlogs_enabled: true\n", [k], SRC["datadog"])
    k, a = pick(HEX, 32), pick(HEX, 40)
    secret("datadog_key", "env-pair", f"export DD_API_KEY={k}\nexport DD_APP_KEY={a}\ndog metric post app.notes 1", [k, a], SRC["datadog"])

    lookalikes()


def lookalikes() -> None:
    u = lambda: str(uuid.UUID(bytes=raw(16), version=4))  # noqa: E731
    sha1 = lambda: pick(HEX, 40)  # noqa: E731
    sha256 = lambda: pick(HEX, 64)  # noqa: E731

    # identifiers and hashes
    lookalike("uuid", "ticket", f"Ticket {u()} is assigned to Bruno; due Friday.")
    lookalike("uuid", "k8s-metadata", f"metadata:\n  name: notes-api\n  namespace: prod\n  uid: {u()}\n  resourceVersion: \"48213\"")
    lookalike("uuid", "json-ids", f'{{"request_id": "{u()}", "trace_id": "{pick(HEX, 32)}", "span_id": "{pick(HEX, 16)}"}}')
    lookalike("git_sha", "revert-commit", f'Revert "Cache embeddings per note"\n\nThis reverts commit {sha1()}.')
    lookalike("git_sha", "short-shas-prose", f"Fixed in {pick(HEX, 7)}, see also {pick(HEX, 7)} and {pick(HEX, 10)} for the test.")
    lookalike("git_sha", "log-oneline", "\n".join(f"{pick(HEX, 7)} {m}" for m in
              ["Merge pull request #212 from acme/fix-links", "Bump numpy to 2.0.1", "Docs: explain trust", "Add doctor --fix"]))
    lookalike("git_sha", "cherry-pick", f"git cherry-pick {sha1()} {sha1()}")
    lookalike("sha256", "prose", f"The sha256 of the release tarball is {sha256()}, which matches the checksum file.")
    lookalike("sha256", "sha256sum-output", f"{sha256()}  amem_cli-0.1.0.tar.gz\n{sha256()}  amem_cli-0.1.0-py3-none-any.whl")
    lookalike("sha256", "requirements-hashes",
              f"numpy==2.0.1 \\\n    --hash=sha256:{sha256()} \\\n    --hash=sha256:{sha256()}")
    lookalike("sha256", "cargo-lock", f'[[package]]\nname = "serde"\nversion = "1.0.203"\nsource = "registry+https://github.com/rust-lang/crates.io-index"\nchecksum = "{sha256()}"')
    lookalike("sha512", "package-lock-integrity",
              f'"node_modules/lodash": {{\n  "version": "4.17.21",\n  "resolved": "https://registry.npmjs.org/lodash/-/lodash-4.17.21.tgz",\n  "integrity": "sha512-{b64(raw(64))}"\n}}')
    lookalike("md5", "etag", f'ETag: "{pick(HEX, 32)}"\nLast-Modified: Thu, 02 May 2024 09:14:27 GMT')
    lookalike("docker_digest", "compose-image", f"services:\n  api:\n    image: ghcr.io/acme/notes-api@sha256:{sha256()}\n    restart: always")
    lookalike("docker_digest", "pull-output",
              f"latest: Pulling from library/postgres\nDigest: sha256:{sha256()}\nStatus: Downloaded newer image for postgres:16")

    # base64 that is not a secret
    lookalike("base64_image", "markdown-png", f"Screenshot of the graph view:\n\n![graph](data:image/png;base64,{b64(png(12, 8))})")
    lookalike("base64_image", "html-gif", '<img alt="" src="data:image/gif;base64,R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7">')
    svg = b'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><circle cx="8" cy="8" r="6" fill="#2a9d8f"/></svg>'
    lookalike("base64_image", "css-svg", f".badge {{ background: url(data:image/svg+xml;base64,{b64(svg)}) no-repeat; }}")
    text = ("Minutes of the garden committee, second of May. Present: Alice, Bruno, Chiara. The compost bins "
            "are full again; Bruno will order two more. The tomato seedlings go out after the last frost.").encode()
    lookalike("base64_text", "mime-attachment",
              "Content-Type: text/plain; name=\"minutes.txt\"\nContent-Transfer-Encoding: base64\n\n" + "\n".join(wrap(b64(text), 76)))
    lookalike("base64_text", "echo-decode", f"echo '{b64(b'Remember to water the orchids on Thursday and Sunday.')}' | base64 -d")
    lookalike("public_key", "certificate-pem", f"ca.crt for the internal registry:\n{pem('CERTIFICATE', certificate_der())}")
    _, pub_line = openssh_private("bruno@workstation")
    lookalike("public_key", "ssh-authorized-keys", f"# ~/.ssh/authorized_keys\n{pub_line}")
    lookalike("public_key", "pgp-public-block", f"My public key, for encrypted mail:\n\n{pgp_block('PUBLIC', 'Bruno Maier <bruno@example.org>')}")
    lookalike("public_key", "age-recipient", f"Encrypt backups to my age recipient: {age_identity()[1]}")
    lookalike("public_key", "stripe-publishable",
              f"<script>const stripe = Stripe('pk_live_{pick(ALNUM, 99)}');</script>")

    # AWS-looking
    account = pick(DIGITS, 12)
    lookalike("aws_arn", "iam-role", f"Assume arn:aws:iam::{account}:role/ci-deploy, then arn:aws:s3:::acme-logs-prod/*")
    lookalike("aws_arn", "account-prose", f"The prod account is {account} in eu-west-1; bucket s3://acme-notes-archive.")
    lookalike("aws_arn", "cloudformation-getatt",
              "DeployKey:\n  Type: AWS::IAM::AccessKey\n  Properties:\n    UserName: !Ref DeployUser\nOutputs:\n"
              "  SecretAccessKey:\n    Value: !GetAtt DeployKey.SecretAccessKey")

    # the words password / secret / token / key, placeholders and references
    lookalike("word", "password-forgotten", "Password: forgotten again, had to reset it through the email link.")
    lookalike("word", "secret-consistency", "The secret: consistency beats intensity.")
    lookalike("word", "token-next-word", "token = the next word in the sequence, as the model predicts it")
    lookalike("word", "key-insight", "The key insight: caching the embeddings halves the latency.")
    lookalike("word", "tokenizer", "Token limit: 4,096 tokens per request; the tokenizer splits 'password' into two tokens.")
    lookalike("word", "secret-sauce", "Keynote tomorrow: the secret sauce of our token economy is trust, not tokens.")
    lookalike("word", "reset-link", "Reset your password at https://accounts.example.com/reset and pick a passphrase.")
    lookalike("word", "rotated-prose", "Rotated the leaked key this morning; the old one is revoked and the new one is in the vault.")
    lookalike("word", "docs-table",
              "| Setting | Type | Meaning |\n|---|---|---|\n| `password` | string | The database password, read from `DB_PASSWORD`. |\n"
              "| `api_key` | string | Your provider key; leave empty to use the environment. |")
    lookalike("word", "log-token-expired", f"WARN auth: token expired for user 4821 (request {pick(HEX, 32)}), asking to log in again")
    lookalike("word", "sql-schema", "CREATE TABLE users (id uuid PRIMARY KEY, password_hash text NOT NULL, api_token_id bigint);")
    lookalike("reference", "environ", "api_key = os.environ['API_KEY']")
    lookalike("reference", "settings-attr", "secret_key = settings.SECRET_KEY\ntoken = request.headers.get('X-Token')")
    lookalike("reference", "getpass", "password = getpass.getpass('Password: ')")
    lookalike("reference", "compose-interpolation", "environment:\n  POSTGRES_PASSWORD: ${DB_PASSWORD}\n  API_TOKEN: ${API_TOKEN:?set it}")
    lookalike("reference", "ansible-jinja", "mysql_user:\n  name: notes\n  password: \"{{ vault_db_password }}\"")
    lookalike("reference", "command-substitution", "export GITHUB_TOKEN=$(gh auth token)\nexport NPM_TOKEN=\"$(op read op://ci/npm/token)\"")
    lookalike("reference", "rails-dummy", "SECRET_KEY_BASE_DUMMY=1 bundle exec rails assets:precompile")
    lookalike("placeholder", "angle-brackets", "password=<your password here>")
    lookalike("placeholder", "sk-dots", "OPENAI_API_KEY=sk-...\nANTHROPIC_API_KEY=sk-ant-...")
    lookalike("placeholder", "xxxxx", "API_TOKEN=xxxxxxxxxxxxxxxxxxxxxxxx\nSECRET=xxxxx")
    lookalike("placeholder", "aws-template", "aws_access_key_id = <YOUR_ACCESS_KEY_ID>\naws_secret_access_key = <YOUR_SECRET_ACCESS_KEY>")
    lookalike("placeholder", "pem-dots", 'PRIVATE_KEY="-----BEGIN PRIVATE KEY-----\\n...\\n-----END PRIVATE KEY-----\\n"')
    lookalike("redacted", "aws", "The key [REDACTED:aws_key] was rotated on Monday.")
    lookalike("redacted", "bearer", "Authorization: Bearer [REDACTED:bearer_token]")
    lookalike("redacted", "password", "password=[REDACTED:password] and the user is notes")

    # URLs with a user but no password, emails, addresses, versions, colours, identifiers
    lookalike("url_user", "scp-like", "git clone git@github.com:acme/infra.git")
    lookalike("url_user", "ssh-url", "ssh://deploy@build.example.org:2222/srv/notes.git")
    lookalike("url_user", "https-user", "https://alice@dev.azure.com/acme/notes/_git/web")
    lookalike("url_user", "postgres-pgpass", "postgres://app@db.internal:5432/app (the password comes from ~/.pgpass)")
    lookalike("email", "prose", "Mail from jamal.okafor@example.org about the invoice; reply to billing+notes@acme.io.")
    lookalike("email", "git-author", "Author: Chiara Bassi <chiara.bassi@example.com>\nDate:   Thu May 2 09:14:27 2024 +0200")
    lookalike("ipv6", "listen", "listening on [2001:db8:85a3::8a2e:370:7334]:8443 and 127.0.0.1:8080")
    lookalike("ipv6", "link-local", "ping6 fe80::1ff:fe23:4567:890a%eth0 -c 3")
    lookalike("mac_address", "dhcp", "DHCPACK on 192.168.1.42 to 3c:22:fb:a1:7e:09 (greta-laptop)")
    lookalike("version", "upgrade-note", "Upgraded to Python 3.12.4, numpy 2.0.1, torch 2.3.1+cu121 and onnxruntime 1.18.0.")
    lookalike("version", "semver-build", "version: 1.2.3-rc.1+build.20240502.a1b2c3d")
    lookalike("hex_colour", "css", ".note { color: #1e90ff; background: #fafafa; border-color: #c0ffee; }")
    lookalike("hex_colour", "palette", "palette = ['#264653', '#2a9d8f', '#e9c46a', '#f4a261', '#e76f51']")
    lookalike("identifier", "java-class", "class AbstractSingletonProxyFactoryBeanDefinitionRegistryPostProcessorTest extends TestCase {}")
    lookalike("identifier", "python-test-name", "def test_redact_keeps_ordinary_sentences_with_the_word_password_unchanged():")
    lookalike("identifier", "webpack-chunk", f'<script src="/static/js/main.{pick(HEX, 16)}.chunk.js"></script>')
    lookalike("identifier", "slack-ids", "Posted in C024BE91L by U0G9QF9C6; thread ts 1714640067.004219.")
    lookalike("identifier", "base58-address", "Donations: bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq")


def main() -> None:
    build()
    ids = [it["id"] for it in items]
    assert len(ids) == len(set(ids)), "ids must be unique"
    with OUT.open("w", encoding="utf-8") as f:
        for it in items:
            f.write(json.dumps(it, ensure_ascii=False) + "\n")
    n_secret = sum(1 for it in items if it["secrets"])
    print(f"{OUT}: {n_secret} secret items, {len(items) - n_secret} look-alikes")


if __name__ == "__main__":
    main()
