"""Secrets out of text before it is stored, embedded or shown to a model.

`redact(text)` replaces API keys, tokens, private keys and passwords with
`[REDACTED:kind]` and says how many it replaced. Two kinds of detector find them:

- formats (`secret_formats.FORMATS`): a provider's documented prefix, length and alphabet;
- context, here: a value that is a secret because of what stands around it. A keyword
  and a value (`password=...`, `"SecretAccessKey": "..."`, `DB_PASSWORD: ...`, env
  lines, `--token X`, "my password is ..."); `mysql -p...` and other command lines;
  `Authorization: Basic|Bearer ...`; a URL's password; signed URLs' signatures; a
  secret whose form alone is too plain beside its key id or provider (AWS, Twilio, Azure
  storage, Alibaba); private key blocks (PEM, PGP, PuTTY), encrypted or cut off.

A value in a keyword's context must look like a secret (`_looks_random`), not like words,
a number, a path, a variable or a placeholder: "Password: forgotten again" and "The
secret: consistency beats intensity" pass. Nothing is redacted for looking random
alone: git SHAs, UUIDs, hashes and base64 images pass unless a keyword names them a secret.
What the detectors find is merged (a JWT after "Bearer" is one secret, counted once).
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from .secret_formats import FORMATS
from .text import is_stopword

# The metadata key of a note that says how many secrets were redacted from it when added.
REDACTED = "amem_redacted"


@dataclass(frozen=True)
class _Found:
    start: int
    end: int
    kind: str
    rank: int  # where finds overlap, the lowest rank names the kind (formats are 0)


def redact(text: str) -> tuple[str, int]:
    """The text with its secrets replaced by `[REDACTED:kind]`, and how many there were."""
    found = _merged(_find(text))
    if not found:
        return text, 0
    parts, last = [], 0
    for f in found:
        parts += [text[last : f.start], f"[REDACTED:{f.kind}]"]
        last = f.end
    parts.append(text[last:])
    return "".join(parts), len(found)


def redact_data(value: Any) -> tuple[Any, int]:
    """`redact` over every string in a JSON-like value (keys too), and the count."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, (list, tuple)):
        pairs = [redact_data(v) for v in value]
        return type(value)(v for v, _ in pairs), sum(n for _, n in pairs)
    if isinstance(value, dict):
        out, count = {}, 0
        for key, item in value.items():
            (key, n), (item, m) = redact_data(key), redact_data(item)
            out[key] = item
            count += n + m
        return out, count
    return value, 0


# Lower case for the ASCII letters only: the same length as the text, so that positions
# found in one are positions in the other (str.lower can lengthen a text: "İ").
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
# Every format's secret holds a run of 16 of these: a text without one is not searched.
_LONG_TOKEN = re.compile(r"[A-Za-z0-9_+/=.:~%-]{16,}")
# A documentation's stand-in of a key's length: ghp_XXXX..., key-xxxx..., 0000... (no
# key holds a run of twelve of one of those).
_FILLER = re.compile(r"([xX0])\1{11}")


def _find(text: str) -> Iterator[_Found]:
    lowered = text.translate(_ASCII_LOWER)
    if _LONG_TOKEN.search(text):
        for fmt in FORMATS:
            if fmt.words and not any(map(lowered.__contains__, fmt.words)):
                continue
            group = "s" if "s" in fmt.pattern.groupindex else 0
            for m in fmt.pattern.finditer(text):
                if (m.start() == 0 or text[m.start() - 1] not in fmt.not_after) and not _FILLER.search(m.group()):
                    yield _Found(m.start(group), m.end(group), fmt.kind, 0)
    for rank, finder in enumerate(_CONTEXT, 1):
        for start, end, kind in finder(text, lowered):
            if end > start:
                yield _Found(start, end, kind, rank)


def _merged(found: Iterator[_Found]) -> list[_Found]:
    """Overlapping finds as one: their union, named by the most specific detector."""
    out: list[_Found] = []
    for f in sorted(found, key=lambda f: (f.start, f.rank)):
        if out and f.start < out[-1].end:
            last = out[-1]
            named = last if last.rank <= f.rank else f
            out[-1] = _Found(last.start, max(last.end, f.end), named.kind, named.rank)
        else:
            out.append(f)
    return out


# -- what a secret value looks like -----------------------------------------------------
_PLACEHOLDER = re.compile(
    r"""(?ix) ^(?:
        \$\{.* | \$(?-i:[A-Z_][A-Z0-9_]*|[a-z_][a-z0-9_]*) | \$\(.* | %[\w.]+% | \$?\{\{.* | <[^<>]*>? | \[REDACTED.*   # variables, templates
      | %[-+\ \#0]*\d*(?:\.\d+)?[sdifrx] | \{\w*\} | \w*<[a-z][\w\ -]*>? | \(\w+\)?      # printf, format fields, sk_test_<key>, (a remark)
      | \*+ | x{4,} | \.{3,} | …
      | none | null | nil | true | false | undefined | empty | required | optional | str | string | bytes
      | secret | password | passwd | pass | token | changeme | change_me | changeit | placeholder
      | redacted | dummy | test | todo | tbd | hidden | removed | \w*_here
      | ![\w/:.-]+                                                  # a YAML tag: !vault
    )$
    | example | replace[_ -]?me | (?:your|my)[_ -]?(?:own[_ -])?(?:api[_ -]?|db[_ -]?)?(?:key|token|secret|pass(?:word)?)
    """
)
# A value in code that names where the secret is: a call or an index (os.environ['X'],
# get_token()), a URL; a dotted name (self.password, settings.SECRET_KEY); a path
# (/run/secrets/db, ~/.ssh/id_ed25519; not base64 that starts with a /: it holds + or =
# or a long random part).
_CODE = re.compile(r"^(?:[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*[(\[]|[A-Za-z][A-Za-z0-9+.-]*://)")
_DOTTED = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+;?")
_PATH = re.compile(r"(?:~|\.\.?)?/[\w.@%~/-]*|[A-Za-z]:\\[\w.@%~\\ -]*")
_PATH_SEPARATORS = re.compile(r"[/\\]")
_SEPARATORS = "-_. /"
_WORD_SEPARATORS = re.compile(r"[-_. /]+")


def _not_a_value(value: str) -> bool:
    if _PLACEHOLDER.search(value) or _CODE.match(value) or _FILLER.search(value):
        return True
    if _PATH.fullmatch(value):
        return all(len(part) <= 16 or not _looks_random(part) for part in _PATH_SEPARATORS.split(value))
    return bool(_DOTTED.fullmatch(value)) and not any(_looks_random(p) for p in value.rstrip(";").split("."))


def _looks_random(value: str) -> bool:
    """True for what a password, key or token looks like; false for words (in any case,
    joined by - _ . / or space), numbers, dates and versions without letters."""
    if any(not c.isalnum() and c not in _SEPARATORS for c in value):
        return True  # a symbol: pa$$word, Tr0ub4dor&3, base64's + and =
    has_digit, has_alpha = any(c.isdigit() for c in value), any(c.isalpha() for c in value)
    if has_digit:
        return has_alpha  # hunter2, a hex key; not 2024-01-01 or 10.0.0.2
    parts = [p for p in _WORD_SEPARATORS.split(value) if p]
    if any(_case_changes(p) * 3 > len(p) for p in parts):
        return True  # kjHGfdsaQWEr: case changes every few letters, unlike camelCase words
    if len(parts) == 1 and len(value) >= 12 and _random_letters(value):
        return True  # gzhvxgpegneqthmp: a generated password of letters
    return len(parts) == 1 and len(value) >= 20 and _entropy(value) >= 3.8


# The 175 commonest pairs of letters in English (Norvig's counts over Google's books): a
# word's letter pairs are mostly among them, random letters' seldom (26 % of pairs). Less
# than this share, and letters were drawn, not written: an app password (kbdu kkrz xbid
# avje), not words (lint test docs html).
_COMMON_PAIRS = frozenset(
    "th he in er an re on at en nd ti es or te of ed is it al ar st to nt ng se ha as ou io le ve co me de hi ri ro "
    "ic ne ea ra ce li ch ll be ma si om ur ca el ta la ns di fo ho pe ec pr no ct us ac ot il tr ly nc et ut ss so "
    "rs un lo wa ge ie wh ee wi em ad ol rt po we na ul ni ts mo ow pa im mi ai sh ir su id os iv ia am fi ci vi pl "
    "ig tu ev ld ry mp fe bl ab gh ty op wo sa ay ex ke fr oo av ag if ap gr od bo sp rd do uc bu ei ov by rm ep tt "
    "oc fa ef cu rn sc gi da yo cr cl du ga qu ue ff ba ey ls va um pp ua up lu go ht".split()
)
_DRAWN = 0.42


def _random_letters(value: str) -> bool:
    """Letters that pair seldom as English words' letters do (see _COMMON_PAIRS)."""
    words = [w for w in re.split(r"[^A-Za-z]+", value.lower()) if len(w) > 1]
    pairs = [w[i : i + 2] for w in words for i in range(len(w) - 1)]
    return bool(pairs) and sum(p in _COMMON_PAIRS for p in pairs) <= _DRAWN * len(pairs)


def _case_changes(word: str) -> int:
    return sum(1 for a, b in zip(word, word[1:]) if a.isupper() != b.isupper())


def _entropy(value: str) -> float:
    counts, n = Counter(value), len(value)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


# -- private key blocks -----------------------------------------------------------------
_NL = r"(?:\r?\n|\\r?\\n)"  # a line break, or one escaped in a JSON or YAML string
_KEY_BEGIN = re.compile(r"-{4,5} ?BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)? ?-{4,5}")
_KEY_END = re.compile(r"-{4,5} ?END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)? ?-{4,5}")
_ANY_BEGIN = re.compile(r"-{4,5} ?BEGIN ")
_KEY_MATERIAL = re.compile(r"[A-Za-z0-9+/]{16,}")
# The lines of a block cut off before its END line: base64 lines and headers
# (Proc-Type: 4,ENCRYPTED, DEK-Info:, Version:), a blank line between them; or, in a
# block pasted on one line, base64 runs of 16 or more.
_KEY_REST = re.compile(
    rf"(?:(?:[ \t]*{_NL}){{1,2}}[ \t]*(?:[A-Za-z0-9+/]+={{0,3}}|[A-Z][A-Za-z-]+: [^\r\n\\]*)(?=[ \t]*(?:{_NL}|$|[\"'`]))"
    r"|[ \t]+[A-Za-z0-9+/]{16,}={0,3})*"
)
_PUTTY = re.compile(r"PuTTY-User-Key-File-\d+: [^\r\n]*(?:\r?\n(?:[A-Za-z-]+: [^\r\n]*|[A-Za-z0-9+/=]+))*")


def _private_keys(text: str, lowered: str):
    """PEM, OpenSSH, SSH2, PGP and PuTTY private keys, whole: to the END line, or as far
    as the key's lines go when it was cut off (or its END line is missing)."""
    if "private key" in lowered:
        for m in _KEY_BEGIN.finditer(text):
            following = _ANY_BEGIN.search(text, m.end())
            end = _KEY_END.search(text, m.end(), following.start() if following else len(text))
            end = end.end() if end else _KEY_REST.match(text, m.end()).end()
            if _KEY_MATERIAL.search(text, m.end(), end):  # not "a file that starts with -----BEGIN ..."
                yield m.start(), end, "private_key"
    if "putty-user-key-file" in lowered:
        for m in _PUTTY.finditer(text):
            yield m.start(), m.end(), "private_key"


# -- a secret beside its key id ---------------------------------------------------------
@dataclass(frozen=True)
class _Pair:
    kind: str
    secret: re.Pattern  # the secret's own form, which alone is too plain to be sure of
    words: tuple[str, ...]  # lower-case pieces of `near`, one of which the text must hold (none: no such test)
    near: re.Pattern  # what must stand within `within` characters of it
    accept: Callable[[str], bool]
    within: int | None = 300  # None: anywhere in the text
    unless: re.Pattern | None = None  # what, on the candidate's line, says it is something else


_PAIRS = [
    # An AWS secret access key (40 characters of base64) near its key id, a redacted key id
    # or the word AWS: a CSV row, the two lines of ~/.aws/credentials, "AKIA... / wJalr...".
    _Pair("aws_secret", re.compile(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])"),
          ("a3t", "akia", "asia", "abia", "acca", "aws", "amazon"),
          re.compile(r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}|\[REDACTED:aws_key\]|(?i:aws|amazon)"),
          lambda v: _random_base64(v) and "EXAMPLE" not in v),
    # A Twilio API key's secret (32 letters and digits) near its SID (SK...), an auth
    # token (32 hex) near the account SID (AC...): Twilio's "API keys overview".
    _Pair("twilio_key", re.compile(r"(?<![A-Za-z0-9])[A-Za-z0-9]{32}(?![A-Za-z0-9])"), (),
          re.compile(r"(?:AC|SK)[0-9a-fA-F]{32}|\[REDACTED:twilio_key\]"), lambda v: _looks_random(v)),
    # An Azure storage account key (512 bits: 88 characters of base64) in a note that names
    # Azure, `az storage` or AccountKey (detect-secrets azure_storage_key looks 2 lines
    # around; the form is plain enough for the whole note), unless its line calls it a
    # hash: a SHA-512 digest in base64 has the same form (npm's "integrity": "sha512-...").
    _Pair("azure_secret", re.compile(r"(?<![A-Za-z0-9/+=-])[A-Za-z0-9+/]{86}==(?![A-Za-z0-9/+=])"),
          ("azure", "az storage", "storage account", "accountkey"), re.compile(r"(?i:azure|az storage|storage account|accountkey)"),
          lambda v: True, within=None, unless=re.compile(r"(?i:sha-?512|integrity|digest|checksum|hash)")),
    # An Alibaba Cloud AccessKey secret (30 letters and digits) near its id (LTAI...).
    _Pair("alibaba_key", re.compile(r"(?<![A-Za-z0-9])[A-Za-z0-9]{30}(?![A-Za-z0-9])"), ("ltai", "redacted:alibaba"),
          re.compile(r"LTAI[A-Za-z0-9]{20}|\[REDACTED:alibaba_key\]"), lambda v: _looks_random(v)),
]
_LONG_RUN = re.compile(r"[A-Za-z0-9+/]{30}")  # the shortest secret of _PAIRS


def _beside_their_ids(text: str, lowered: str):
    """Secrets whose form alone is too plain (40 or 32 characters of base64 or hex), when
    their id or their provider stands near."""
    pairs = [p for p in _PAIRS if (not p.words or any(map(lowered.__contains__, p.words))) and p.near.search(text)]
    if not pairs or not _LONG_RUN.search(text):
        return
    for pair in pairs:
        for m in pair.secret.finditer(text):
            if not pair.accept(m.group()):
                continue
            if pair.within is not None and not pair.near.search(text, max(0, m.start() - pair.within), m.end() + pair.within):
                continue
            if pair.unless and pair.unless.search(text, text.rfind("\n", 0, m.start()) + 1, m.start()):
                continue
            yield m.start(), m.end(), pair.kind


def _random_base64(value: str) -> bool:
    """Upper and lower case and digits, not a path of words (data/2024/Reports/Summary)."""
    return (any(c.isupper() for c in value) and any(c.islower() for c in value) and any(c.isdigit() for c in value)
            and any(_looks_random(part) for part in value.split("/")))


# -- URLs with a password ----------------------------------------------------------------
# scheme://user:PASSWORD@host, the user may be empty (redis://:pw@host); the password may
# hold / : and @ (the last @ before a host ends it). The user and the host stay.
_URL_CREDENTIALS = re.compile(
    r"\b[A-Za-z][A-Za-z0-9+.-]{1,30}://[^\s:/?#@\[\]\"'<>]*:(?P<s>[^\s\"'<>]+?)@"
    r"(?=[A-Za-z0-9\[][A-Za-z0-9.\[\]:%_-]*(?:[/?#\s\"'<>),;]|$))"
)
_PORT = re.compile(r"\d{1,5}(?:/|$)")  # http://host:8080/path@x: a port, not a password


def _url_passwords(text: str, lowered: str):
    if "://" not in text:
        return
    for m in _URL_CREDENTIALS.finditer(text):
        value = m.group("s")
        if not _PORT.match(value) and not _not_a_value(value):
            yield m.start("s"), m.end("s"), "url_password"


# -- Authorization headers, Bearer tokens ------------------------------------------------
_AUTH_HEADER = re.compile(
    r"(?i)\b(?:proxy-)?authorization[\"']?[ \t]*[:=][ \t]*[\"']?"
    r"(?:(?P<scheme>basic|bearer|token|bot|apikey|api-key|key|sso-key|oauth)[ \t]+)?(?P<s>[^\s\"'`,;]{8,})"
)
_BEARER = re.compile(r"\bBearer[ \t]+(?P<s>[A-Za-z0-9._~+/-]{16,}=*)")


def _auth_headers(text: str, lowered: str):
    if "authorization" in lowered:
        for m in _AUTH_HEADER.finditer(text):
            value, scheme = m.group("s"), (m.group("scheme") or "").lower()
            if _not_a_value(value):
                continue
            if scheme == "basic":
                if _basic_credentials(value):
                    yield m.start("s"), m.end("s"), "basic_auth"
            elif _looks_random(value):
                yield m.start("s"), m.end("s"), "bearer"
    if "bearer" in lowered:
        for m in _BEARER.finditer(text):
            if _looks_random(m.group("s")) and not _not_a_value(m.group("s")):
                yield m.start("s"), m.end("s"), "bearer"


def _basic_credentials(value: str) -> bool:
    """`Basic` credentials are base64 of user:password."""
    try:
        return b":" in base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False


# -- signed URLs (Azure SAS, S3 and GCS presigned URLs) ----------------------------------
_SIGNATURE = re.compile(
    r"(?i)(?:^|(?<=[?&;\s]))(?:sig|signature|x-amz-signature|x-goog-signature|x-amz-security-token)=(?P<s>[^&\s#\"'<>]{16,})"
)


def _url_signatures(text: str, lowered: str):
    if "sig" in lowered or "x-amz-security-token" in lowered:
        for m in _SIGNATURE.finditer(text):
            yield m.start("s"), m.end("s"), "url_signature"


# -- keyword = value -----------------------------------------------------------------
_PASSWORD_WORDS = {
    "password", "passwd", "passphrase", "passwort", "passcode", "pass", "pwd", "pw", "kennwort",
    "contraseña", "contrasena", "senha", "parola", "wachtwoord", "hasło", "haslo", "пароль", "密码", "パスワード",
}
_SECRET_WORDS = {"secret", "token", "credential", "credentials", "auth"}
# "key" is a secret after one of these ("API key", "AccountKey", "secret_key"), not alone.
_KEY_QUALIFIERS = (
    "api", "access", "secret", "private", "account", "auth", "client", "app", "application", "master",
    "license", "licence", "signing", "encryption", "shared", "service", "subscription", "storage",
    "consumer", "webhook", "session", "ingest", "admin", "deploy", "security",
)
# A last word that names the value's form, not what it is (secret_key_base, token_value).
_FORM_WORDS = {"value", "base", "b64", "base64", "hex", "pem", "raw", "str", "string", "data"}
# Where these stand (in the text in ASCII lower case), the key around them is read.
_KEYWORDS = (
    "pass", "pw", "secret", "token", "credential", "auth", "key", "kennwort", "contrase", "senha", "parola",
    "wachtwoord", "hasło", "haslo", "пароль", "Пароль", "ПАРОЛЬ", "密码", "パスワード",
)
_KEY_HEAD = re.compile(r"[\w$@.-]*$")  # the key's start, read back from its keyword
_KEY_TAIL = re.compile(r"[\w.-]*")
_WORD_BEFORE = re.compile(r"([A-Za-z]{2,20}) $")  # "API key", "client secret"
_ASSIGNED = re.compile(
    r"(?P<close>[\"'`\]*_]{0,3})"  # "password": / ['token'] = / **Password:**
    r"(?:(?:[ \t]+(?i:for|of|on|to|at|in|from|with)[ \t]+[\w.@-]+(?:[ \t]+[\w.@-]+){0,3}?)?"  # "password for the prod db is"
    r"(?:[ \t]+\([^()\n]{1,40}\))?"  # a remark: "auth token (primary):"
    r"(?:[ \t]*(?P<op>:=|=>|!==?|={1,3}|:(?![:/]))|[ \t]+(?P<verb>(?i:is|was))[ \t]+)|(?P<space>[ \t]+))"
    r"[ \t*_`]*"  # emphasis and `code` marks around a value in Markdown
    r"(?:(?:[rbuf@]{1,2})?(?P<q>[\"'])(?P<qv>(?:\\.|(?!(?P=q))[^\n\\])*)(?P=q)|(?P<uv>[^\s\"'`]+))"
)
# Where an unquoted value ends: before a connection or query string's next key
# ("...;Database=x", "...&user=x"), a separator followed by a space, trailing punctuation.
_NEXT_KEY = re.compile(r"[;&,](?=[\w. ]*=)|[;,](?=\s|$)")
_TRAILING = ".,;:)]}>*_"
_INNER_ASSIGNMENT = re.compile(r"([A-Za-z_][\w.-]*)=(?!=*$)")


@lru_cache(maxsize=4096)  # the same keys come back: author, keyboard, DB_PASSWORD
def _key_kind(key: str) -> str | None:
    """"password" or "secret" when the key's last word names one, else None: DB_PASSWORD,
    PGPASSWORD, SecretAccessKey, x-api-key, client secret; not max_tokens, token_count,
    password_file, key_id, primary key."""
    words = _words(key)
    while len(words) > 1 and words[-1] in _FORM_WORDS:
        words.pop()
    if not words:
        return None
    last, before = words[-1], (words[-2] if len(words) > 1 else "")
    if last in _PASSWORD_WORDS or last.endswith(("password", "passwd")):
        return "password"
    if last in _SECRET_WORDS or last.endswith(("secret", "token")):
        return "secret"
    if last == "key" and before in _KEY_QUALIFIERS or last.endswith("key") and last[:-3].endswith(_KEY_QUALIFIERS):
        return "secret"
    return None


_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")  # apiKey, APIKey
_NOT_A_LETTER = re.compile(r"[\W_]+")


def _words(key: str) -> list[str]:
    return [w.lower() for w in _NOT_A_LETTER.split(_CAMEL.sub(" ", key)) if w]


def _keyword_hits(lowered: str) -> list[tuple[int, int]]:
    """(start, end) of each keyword in the text, in order (str.find: far faster than a regex)."""
    hits = []
    for word in _KEYWORDS:
        i = lowered.find(word)  # -1 at once for most words of most notes
        while i != -1:
            hits.append((i, i + len(word)))
            i = lowered.find(word, i + 1)
    return sorted(hits)


def _assignments(text: str, lowered: str):
    done = 0  # the text before this is read
    for hit_start, hit_end in _keyword_hits(lowered):
        if hit_start < done:
            continue
        start = _KEY_HEAD.search(text, max(0, hit_start - 60), hit_start).start()
        end = _KEY_TAIL.match(text, hit_end).end()
        done = end
        kind = _key_kind(text[start:end])
        if kind is None and (before := _WORD_BEFORE.search(text, max(0, start - 21), start)):
            kind = _key_kind(before.group(1) + " " + text[start:end])
        if kind is None:
            continue
        m = _ASSIGNED.match(text, end)
        if m and (found := _assigned_secret(m, kind)):
            done = found[1]
            yield found


def _assigned_secret(m: re.Match, kind: str) -> tuple[int, int, str] | None:
    quoted = m.group("q") is not None
    if quoted:
        value, start = m.group("qv"), m.start("qv")
    else:
        raw = _NEXT_KEY.split(m.group("uv"), 1)[0]
        inner = _INNER_ASSIGNMENT.match(raw)
        if inner and _key_kind(inner.group(1)):
            return None  # "secret: `password=...`": the inner assignment is judged by itself
        value, start = raw.rstrip(_TRAILING), m.start("uv")
    if len(value) < 4 or _not_a_value(value) or _KEY_BEGIN.search(value):
        return None  # a key block is for `_private_keys` to judge (a template of one holds no key)
    if m.group("space") is not None:  # "password Tr0ub4dor&3", as .netrc writes it
        ok = kind == "password" and len(value) >= 8 and _looks_random(value)
    elif m.group("verb"):  # "my password is ..."
        ok = len(value) >= 8 and _looks_random(value)
    elif quoted:  # password = "...", "SecretAccessKey": "...": whatever it holds
        ok = True
    elif kind == "password" and value.isdigit():
        ok = len(value) >= 4
    elif m.group("op") == ":":  # YAML, a header, or prose ("Password: forgotten again")
        ok = len(value) >= 6 and _looks_random(value)
    else:  # PASSWORD=..., --token=..., key := ...
        ok = _looks_random(value) or len(value) >= 12 and value.isalpha() and _case_changes(value) <= 1
    return (start, start + len(value), kind) if ok else None


# -- password files: .pgpass, .netrc ------------------------------------------------
# PostgreSQL's password file (libpq, "The Password File"): hostname:port:database:username:
# password, a field `*` for any, `\:` and `\\` escaped. The port is digits or `*`; the
# host, database and user hold a letter or are `*` (a time, a MAC address does not); a
# sixth field makes it something else.
_FIELD = r"(?:\*|(?:\\.|[^:\s\\`\"'])*[A-Za-z_](?:\\.|[^:\s\\`\"'])*)"
_PGPASS = re.compile(
    rf"(?<![^\s`\"'(\[])(?:\*|[A-Za-z0-9][A-Za-z0-9.-]*[A-Za-z.][A-Za-z0-9.-]*|\d{{1,3}}(?:\.\d{{1,3}}){{3}}"
    r"|(?:\\:|[0-9A-Fa-f])+)"  # ... or an IPv6 address, its colons escaped
    rf":(?:\*|\d{{1,5}}):{_FIELD}:{_FIELD}:(?P<s>(?:\\.|[^:\s\\`\"'])+)(?=[\s`\"')\],;]|\.(?:\s|$)|$)"
)
# ftp's .netrc (curl, git, pip read it too): `machine HOST login USER password PASSWORD`
# (or `default ...`), on one line or several. Its place says what the value is.
_NETRC = re.compile(
    r"\b(?:machine\s+\S+|default)(?:\s+(?:login|account|port)\s+\S+)*\s+password\s+(?P<s>[^\s\"'`\\]+)"
)


_PORT_FIELD = re.compile(r":(?:\*|\d{1,5}):")  # where a .pgpass line is looked for (a scan of the whole
# text for its first field cost 0.2 ms a paragraph)
_FIELD_START = re.compile(r"[^\s`\"'(\[]*$")


def _password_files(text: str, lowered: str):
    if text.count(":") >= 4:
        done = 0
        for port in _PORT_FIELD.finditer(text):
            if port.start() < done:
                continue  # inside the line found last
            start = _FIELD_START.search(text, max(done, port.start() - 200), port.start()).start()
            m = _PGPASS.match(text, start)
            if m and (value := m.group("s")) and len(value) >= 4 and not _not_a_value(value):
                done = m.end()
                yield m.start("s"), m.end("s"), "password"
    if "password" in lowered and ("machine" in lowered or "default" in lowered):
        for m in _NETRC.finditer(text):
            value = m.group("s")
            if len(value) >= 4 and not _not_a_value(value):
                yield m.start("s"), m.end("s"), "password"


# -- passphrases: words after their keyword ---------------------------------------------
# "my vault passphrase is correct horse battery staple", a wallet's seed phrase, an app
# password shown in groups ("abcd efgh ijkl mnop", Apple's "abcd-efgh-ijkl-mnop"): three
# words or more that end the clause. Prose after the keyword ("the passphrase is stored in
# the vault", "... is four random words") holds a function word or a word that describes
# a passphrase rather than being one: those are left.
# Its keywords (in the languages _PASSWORD_WORDS names) and the ways a value follows one
# ("is", ":", "=", "->", "set to"; "ist", "est", "es", "é", "è").
_PHRASE_KEY = (r"(?i:\b(?:pass[ -]?phrases?|passwords?|passwd|pw|pass|pass ?codes?|secret phrases?|(?P<seed>(?:seed|recovery"
               r"|backup|mnemonic) phrases?|mnemonics?|seed)|recovery codes?|passwort|kennwort|mot de passe|contrase[ñn]a"
               r"|wachtwoord|senha))")
_PHRASE_WORD = r"(?:[^\W\d_]{2,12}|\d{1,4})"
_PHRASE = re.compile(
    _PHRASE_KEY +  # "... for the guest network", "on the new SSD", "du wifi", "del router"
    r"(?:[ \t]+(?i:for|of|on|at|in|from|with|du|de|del|do|da|des|für|von|vom|voor|van|per|para|pour)"
    r"[ \t]+[\w.@'/-]+(?:[ \t]+[\w.@'/-]+){0,3}?)?"
    r"(?:[ \t]+\([^()\n]{1,40}\))?"  # a remark: "password (yes, with spaces):"
    r"(?:[ \t]*(?::=|=|->|→|=>|:(?![:/]))|[ \t]+(?P<verb>(?i:(?:(?:is|was|has been) )?(?:set|changed|reset) to|is|was|are|reads"
    r"|ist|est|es|é|è|to))\b[ \t]*:?|[ \t]+(?=[\"']))"
    r"[ \t]*[*_`\"']*"
    rf"(?P<s>[^\W\d_]{{2,12}}(?:(?P<sep>[ -]){_PHRASE_WORD}){{2,23}})(?![\w-])"
)
_SETTING = re.compile(r"(?i)\b(?:set|change[sd]?|reset)\b")
# The words before it: "thimble maple hazel meadow is the passphrase for the backup disk".
_PHRASE_BEFORE = re.compile(
    rf"(?:^|(?<=[:>\n]))[ \t]*(?P<s>[^\W\d_]{{2,12}}(?:(?P<sep> ){_PHRASE_WORD}){{2,23}})[ \t]+(?i:is|was)[ \t]+"
    r"(?i:the|my|our|your)[ \t]+(?:[\w-]+[ \t]+){0,2}?" + _PHRASE_KEY
)
_DESCRIBING = frozenset(
    "random words word long short strong weak secure safe memorable stored saved kept written required needed same "
    "different new old empty changed reset expired shared unique simple hard easy good bad fine wrong right known "
    "unknown missing invalid sensitive case encrypted hashed rotated listed attached below above there here set "
    "one two three four five six seven eight nine ten eleven twelve twenty dozen".split()
    # the function words of the other languages whose keywords _PHRASE reads (de, fr, es, nl, pt, it)
    + "der die das den dem des ein eine im auf mit für ist und oder nicht steht siehe le la les du de dans sur sous "
      "avec pour un une est et ou pas voir el los las en con para por es y del al está ver het een op met voor niet "
      "zie o os em no na com um uma é e do da não il lo gli su per è della nel vedi".split()
)


_PHRASE_STEM = re.compile(r"pass|pw|phrase|mnemonic|seed|recovery code|kennwort|contrase|wachtwoord|senha")
_WORD_START = re.compile(r"[^\W\d_]*$")


def _phrase_matches(text: str, lowered: str):
    """_PHRASE where a keyword starts (at the stem's word or the word before: "seed
    phrase", "mot de passe"), _PHRASE_BEFORE on a keyword's line: a scan of all the text
    cost 0.2 ms a paragraph."""
    lines: set[int] = set()
    for stem in _PHRASE_STEM.finditer(lowered):
        word = _WORD_START.search(lowered, max(0, stem.start() - 40), stem.start()).start()  # "WLAN-Passwort": at "Passwort"
        before = max(lowered.rfind(c, 0, max(word - 1, 0)) for c in " \t\n") + 1
        for start in {word, before, max(lowered.rfind(c, 0, max(before - 1, 0)) for c in " \t\n") + 1}:
            if m := _PHRASE.match(text, start):
                yield m
        line = lowered.rfind("\n", 0, stem.start()) + 1
        if line not in lines:
            lines.add(line)
            end = lowered.find("\n", stem.end())
            yield from _PHRASE_BEFORE.finditer(text, line, len(text) if end == -1 else end)


def _passphrases(text: str, lowered: str):
    for m in _phrase_matches(text, lowered):
        if (m.groupdict().get("verb") or "").lower() == "to" and not _SETTING.search(
                text, text.rfind("\n", 0, m.start()) + 1, m.start("verb")):
            continue  # "to" says what a passphrase was set to, not where one is
        words = m.group("s").split(m.group("sep"))
        if len(set(m.group("s").lower()) - {" ", "-"}) < 4:
            continue  # xxxx xxxx xxxx xxxx: a stand-in
        # A wallet's seed phrase (BIP-39) is 12 to 24 words of a list that holds common
        # ones ("open", "again"): its count says enough.
        seed = m.group("seed") is not None and len(words) in (12, 15, 18, 21, 24)
        if seed or not _prose(words):
            yield m.start("s"), m.end("s"), "password"


def _prose(words: list[str]) -> bool:
    """Words that say something about a passphrase rather than being one: the first is a
    function word or one that describes ("is stored in the vault", "est dans le
    gestionnaire", "is four random words"), or one in four is ("... sent in a separate
    email"). A passphrase's words are content words, a phrase's few ("bajo la lluvia")."""
    plain = [w.lower() for w in words if not w.isdigit()]
    said = [is_stopword(w) or w in _DESCRIBING for w in plain]
    return bool(said) and (said[0] or 4 * sum(said) >= len(said))


# -- app passwords: four groups of four letters -------------------------------------------
# Google shows its app passwords as `abcd efgh ijkl mnop`, Apple its app-specific ones as
# `abcd-efgh-ijkl-mnop`: random letters. Near a password's keyword on their line, or drawn
# rather than written (_random_letters) anywhere: "must have more time next week" is words.
_LETTER_CODE = re.compile(r"[a-z]{4}(?P<sep>[ -])[a-z]{4}(?P=sep)[a-z]{4}(?P=sep)[a-z]{4}(?![\w-])")
_CODE_KEY = re.compile(r"(?i:pass|pw|asp\b)")


def _letter_codes(text: str, lowered: str):
    at = 0
    while m := _LETTER_CODE.search(text, at):
        at = m.end()
        code = m.group()
        if m.start() and (text[m.start() - 1].isalnum() or text[m.start() - 1] in "_-"):
            at = m.start() + 1  # inside a longer word: the code may start further on
            continue
        if len(set(code) - {" ", "-"}) < 4:
            continue  # xxxx-xxxx-xxxx-xxxx: a documentation's stand-in
        keyed = _CODE_KEY.search(text, text.rfind("\n", 0, m.start()) + 1, m.start())
        words = code.split(m.group("sep"))
        if _random_letters(code) or keyed and not any(is_stopword(w) or w in _DESCRIBING for w in words):
            yield m.start(), m.end(), "password"


# -- a Markdown table's password column ----------------------------------------------
_TABLE_ROW = re.compile(r"^[ \t]*\|(.+)\|[ \t]*$", re.M)


def _table_cells(text: str, lowered: str):
    """The cells under a column whose header names a password ("| password |"), in the
    rows of that table, that look like one."""
    if "|" not in text or "pass" not in lowered and "pw" not in lowered:
        return
    rows = list(_TABLE_ROW.finditer(text))
    columns: set[int] = set()
    for n, row in enumerate(rows):
        cells = row.group(1).split("|")
        if n and row.start() != rows[n - 1].end() + 1:
            columns = set()  # another table
        if all(re.fullmatch(r"[ \t:-]*", c) for c in cells):
            continue  # the line under the header
        below = rows[n + 1].group(1) if n + 1 < len(rows) and rows[n + 1].start() == row.end() + 1 else ""
        if below and all(re.fullmatch(r"[ \t:-]*", c) for c in below.split("|")):  # a header
            columns = {i for i, c in enumerate(cells) if _key_kind(c.strip()) == "password"}
            continue
        start = row.start(1)
        for i, cell in enumerate(cells):
            value = cell.strip()
            if i in columns and len(value) >= 4 and _looks_random(value) and not _not_a_value(value):
                at = start + cell.index(value)
                yield at, at + len(value), "password"
            start += len(cell) + 1


# -- BitLocker recovery keys -----------------------------------------------------------
# Eight groups of six digits, each a multiple of 11 (Microsoft's recovery password format).
_BITLOCKER = re.compile(r"\d{6}(?:-\d{6}){7}(?![\d-])")


def _recovery_keys(text: str, lowered: str):
    if text.count("-") < 7:
        return
    for m in _BITLOCKER.finditer(text):
        if (not m.start() or text[m.start() - 1] not in "0123456789-") and all(
                int(group) % 11 == 0 for group in m.group().split("-")):
            yield m.start(), m.end(), "recovery_key"


# -- command lines -------------------------------------------------------------------
_WORD = r"(?:\"[^\"\n]*\"|'[^'\n]*'|(?!-)[^\s\"'`][^\s`]*)"  # a shell word
_COMMANDS = [  # (the words one of which the text must hold, the pattern)
    # mysql -pSECRET: the password right after -p (with a space between, -p asks for it).
    (("mysql", "mariadb"), re.compile(r"\b(?:mysql\w*|mariadb[\w-]*)\b[^\n|;&]*?[ \t]-p(?P<s>" + _WORD + ")")),
    (("sshpass", "mongo", "login"),
     re.compile(r"\b(?:sshpass|mongo\w*|(?:docker|podman|nerdctl)[ \t]+login)\b[^\n|;&]*?[ \t]-p[ \t]+(?P<s>" + _WORD + ")")),
    (("redis-cli",), re.compile(r"\bredis-cli\b[^\n|;&]*?[ \t]-a[ \t]+(?P<s>" + _WORD + ")")),
    # curl -u user:password (the password after the first colon).
    (("curl", "wget"), re.compile(r"\b(?:curl|wget)\b[^\n|;&]*?[ \t](?:-u|--user)(?:[ \t]+|=)[\"']?[^\s:\"']*:(?P<s>[^\s\"']+)")),
    # htpasswd -b FILE USER PASSWORD (Apache: -b takes the password from the command line).
    (("htpasswd",), re.compile(r"\bhtpasswd((?:[ \t]+-[A-Za-z]+)*)[ \t]+-[A-Za-z]*b[A-Za-z]*((?:[ \t]+-[A-Za-z]+)*)"
                               r"[ \t]+" + _WORD + r"[ \t]+" + _WORD + r"[ \t]+(?P<s>" + _WORD + ")")),
    # keytool's -storepass, -keypass, -srcstorepass, -destkeypass...: one dash, the word whole.
    (("pass",), re.compile(r"(?<![\w-])-(?:src|dest|new)?(?:store|key)pass[ \t]+(?P<s>" + _WORD + ")")),
    # Python's smtplib, imaplib, ftplib: .login(user, password) with both given as text.
    ((".login(",), re.compile(r"\.login\(\s*([\"'])[^\"'\n]*\1\s*,\s*(?P<s>\"[^\"\n]+\"|'[^'\n]+')\s*\)")),
]
_LONG_FLAG = re.compile(r"--(?P<flag>[A-Za-z][\w-]*)[ \t]+(?P<s>" + _WORD + ")")  # --token X


def _command_lines(text: str, lowered: str):
    for words, pattern in _COMMANDS:
        if not any(map(lowered.__contains__, words)):
            continue
        for m in pattern.finditer(text):
            start, end = _unquoted(m, "s")
            if not _not_a_value(text[start:end]):
                yield start, end, "password"
    if "--" in text and any(map(lowered.__contains__, _KEYWORDS)):
        for m in _LONG_FLAG.finditer(text):
            if m.start() > 0 and not text[m.start() - 1].isspace():
                continue
            kind = _key_kind(m.group("flag"))
            start, end = _unquoted(m, "s")
            value = text[start:end]
            if kind and len(value) >= 4 and not _not_a_value(value):
                yield start, end, kind


def _unquoted(m: re.Match, group: str) -> tuple[int, int]:
    start, end = m.span(group)
    if end - start >= 2 and m.group(group)[0] in "\"'" and m.group(group)[-1] == m.group(group)[0]:
        return start + 1, end - 1
    return start, end


# Most specific first: a key block's lines are not also read as passwords.
_CONTEXT: list[Callable[[str, str], Iterator[tuple[int, int, str]]]] = [
    _private_keys, _beside_their_ids, _url_passwords, _auth_headers, _url_signatures, _password_files, _command_lines,
    _assignments, _passphrases, _letter_codes, _table_cells, _recovery_keys,
]
