"""The secrets issue 24 found stored, each in the form it was written in, and the two
sentences it found redacted: every secret value is gone, each counted once, the words
around it kept; the sentences pass unchanged. Then a Markdown transcript through `amem
ingest`: a private key block with blank and header lines in it (an encrypted PEM, a PGP
block) is redacted whole, before the transcript is cut into paragraphs."""

from __future__ import annotations

import json

import pytest

from amem_cli.redact import redact

B64 = "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MEFCQ0RFRkdISUpLTE1OT1BRUlNUVVZXWFla"  # 64 characters of base64

PEM_ENCRYPTED = (
    "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,3F17F5316E2BAC89B3C1F2E5AA3D4B21\n\n"
    f"{B64}\n{B64[::-1]}\nq83vEjRWeJA=\n-----END RSA PRIVATE KEY-----"
)
PGP = (
    "-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: GnuPG v2\n\n"
    f"lQOYBF{B64[6:]}\n{B64[::-1]}\n=Xq8T\n-----END PGP PRIVATE KEY BLOCK-----"
)
AZURE_KEY = "Yk1zR2t6QnRpZ0lLd0xGc2VjcmV0a2V5Zm9yYXp1cmVzdG9yYWdlYWNjb3VudDAxMjM0NTY3ODlhYmNkZWZnaGlq+/=="[-88:]
AGE = "AGE-SECRET-KEY-1" + ("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L" * 2)[::-1][:58]  # Bech32's alphabet
PEM_CUT = f"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA{B64[24:]}\n{B64[::-1]}"

# (the secret, the text holding it)
SECRETS = [
    ("wJalrXUtnFEMI/K7MDENG+bPxRfiCY9sKq2Lm4Zt", "aws_access_key_id = [REDACTED:aws_key]\nsecret: wJalrXUtnFEMI/K7MDENG+bPxRfiCY9sKq2Lm4Zt"),
    ("Rk9vQmFyQmF6/Qux+YzEyMzQ1Njc4OTBhYmNkZWZ", "keys: [REDACTED:aws_key] / Rk9vQmFyQmF6/Qux+YzEyMzQ1Njc4OTBhYmNkZWZ"),
    ("9Ht/w3Lq+ZkRtYbN0pXc", '{"AccessKeyId": "ASIA...", "SecretAccessKey": "9Ht/w3Lq+ZkRtYbN0pXc"}'),
    ("ghr_" + "1B4a2e77838347a7E420ce178F2E7c6912E1", "refresh with ghr_1B4a2e77838347a7E420ce178F2E7c6912E1 then"),
    ("xapp-1-A0A1B2C3D4E-1234567890123-" + "a" * 20 + "0f" * 22, "SLACK_APP_TOKEN xapp-1-A0A1B2C3D4E-1234567890123-" + "a" * 20 + "0f" * 22),
    ("T0A1B2C3D/B0A1B2C3D4E/q1W2e3R4t5Y6u7I8o9P0a1S2", "post to https://hooks.slack.com/services/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 on deploy"),
    ("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", "client_secret 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"),
    (PGP, f"my key:\n{PGP}\nend"),
    (PEM_ENCRYPTED, f"the old deploy key\n{PEM_ENCRYPTED}\n"),
    (B64[24:], f"it was cut off:\n{PEM_CUT}"),
    ("abcdefghijKLMNOPqrstuvWXyzABCDefgh", "curl -H 'Authorization: Bearer abcdefghijKLMNOPqrstuvWXyzABCDefgh' https://api.example.org"),
    ("p4ss/w0rd/x", "DATABASE_URL=postgres://app:p4ss/w0rd/x@db.example.org:5432/app"),
    ("Redis-pw-42", "redis://:Redis-pw-42@cache.example.org:6379/0"),
    ("Pg-Pass-2024", "PGPASSWORD=Pg-Pass-2024 psql -h db -U app"),
    ("Mysql!Pass9", "mysql -h db -u root -pMysql!Pass9 app"),
    ("pa$$word", 'DB_PASSWORD="pa$$word"'),
    ("semi;colon;pw", "password: 'semi;colon;pw'"),
    ("correct horse battery staple", 'password = "correct horse battery staple"'),
    ("sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc", "stripe.api_key = sk_live_4eC39HqLyjWDarjtT1zdp7dc"),
    ("hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh", "HF token hf_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh"),
    ("glpat-" + "x1Y2z3A4b5C6d7E8f9G0", "GITLAB glpat-x1Y2z3A4b5C6d7E8f9G0"),
    ("Q2xhcmVzLWFjY291bnQta2V5LW5vdC1yZWFsLTAxMjM0NTY3ODlhYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5ejAx==",
     "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=Q2xhcmVzLWFjY291bnQta2V5LW5vdC1yZWFsLTAxMjM0NTY3ODlhYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5ejAx==;EndpointSuffix=core.windows.net"),
    ("bXlTaWduYXR1cmUxMjM0NTY3ODk%3D", "https://acct.blob.core.windows.net/c/f.txt?sv=2022-11-02&sp=r&se=2030-01-01&sig=bXlTaWduYXR1cmUxMjM0NTY3ODk%3D"),
    ("AC" + "0123456789abcdef0123456789abcdef", "twilio sid AC0123456789abcdef0123456789abcdef"),
    ("SG." + "AbCdEfGhIjKlMnOpQrStUv.wXyZ0123456789AbCdEfGhIjKlMnOpQrStUvWxYz012", "SENDGRID SG.AbCdEfGhIjKlMnOpQrStUv.wXyZ0123456789AbCdEfGhIjKlMnOpQrStUvWxYz012"),
    ("123456789:" + "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw7", "bot 123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw7"),
    ("MTA5ODc2NTQzMjEwOTg3NjU0Mw.GhIjKl.AbCdEfGhIjKlMnOpQrStUvWxYz01234", "DISCORD_TOKEN MTA5ODc2NTQzMjEwOTg3NjU0Mw.GhIjKl.AbCdEfGhIjKlMnOpQrStUvWxYz01234"),
    ("pypi-AgEIcHlwaS5vcmc" + "CJGY4ZjNkYjJlLTQ1NmItNGQ4OS1hMDM0LTk1ZTI5ZjU2NzEyMwACKlsz", "password = pypi-AgEIcHlwaS5vcmcCJGY4ZjNkYjJlLTQ1NmItNGQ4OS1hMDM0LTk1ZTI5ZjU2NzEyMwACKlsz"),
    ("npm_" + "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "//registry.npmjs.org/:_authToken=npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"),
    ("hvs." + "CAESIKjB0x9Yp2Lk4Qm7ZtR5Nw8Vd3Xs6Gh1Jf0Ae2Bc4Dd6", "VAULT_TOKEN is hvs.CAESIKjB0x9Yp2Lk4Qm7ZtR5Nw8Vd3Xs6Gh1Jf0Ae2Bc4Dd6"),
    (AGE, f"# created: 2024-05-01\n# public key: age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p\n{AGE}"),
    ("YWxhZGRpbjpvcGVuc2VzYW1l", "Authorization: Basic YWxhZGRpbjpvcGVuc2VzYW1l"),
    # Secrets too plain alone, beside their key id or provider.
    ("q7Lm2XpR9vT4wZ8nB3cF6hJ1kD5sG0aE", "Client([REDACTED:twilio_key], 'q7Lm2XpR9vT4wZ8nB3cF6hJ1kD5sG0aE')"),
    (AZURE_KEY, f'$ az storage account keys list -n acct\n[\n  {{"keyName": "key1",\n   "permissions": "FULL",\n   "value": "{AZURE_KEY}"}}\n]'),
]

# The two sentences of the issue, and what stands near a keyword or a provider's name
# without being a secret: variables, placeholders, a key block's template, paths, hashes.
LOOKALIKES = [
    "Password: forgotten again",
    "The secret: consistency beats intensity, every week.",
    "environment:\n  DB_PASSWORD: ${DB_PASSWORD:?set it}\n  API_TOKEN: {{ api_token }}",
    "password=<your password here>",
    'PRIVATE_KEY="-----BEGIN PRIVATE KEY-----\\n...\\n-----END PRIVATE KEY-----\\n"',
    "the file starts with -----BEGIN RSA PRIVATE KEY----- and ends with -----END RSA PRIVATE KEY-----",
    "token_file: /run/secrets/api_token, max_tokens: 4096, tokenizer=bert-base-uncased",
    "aws s3 sync ./site s3://bucket/data/2024/Reports/QuarterlyFinanceSummary1 --delete",
    "Azure artifact checksum (sha512, base64): " + "z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUdBeoGlODJ6+SfaPg==",
    "fixed in 9fceb02d0ae598e95dc970b74767f19372d61af8 for request 3fa85f64-5717-4562-b3fc-2c963f66afa6",
]


@pytest.mark.parametrize("secret, text", SECRETS, ids=[t[:24] for _, t in SECRETS])
def test_each_secret_is_redacted_once(secret, text):
    out, n = redact(text)
    assert secret not in out and n == 1, out
    assert not [line for line in secret.splitlines() if len(line) >= 8 and line in out], out


@pytest.mark.parametrize("text", LOOKALIKES, ids=[t[:24] for t in LOOKALIKES])
def test_lookalikes_near_a_keyword_are_not_a_secret(text):
    assert redact(text) == (text, 0)


def test_a_private_key_in_a_markdown_transcript_is_redacted_before_it_is_split(run, vault):
    transcript = (
        "# Ops chat\n\nWe rotated the deploy key today.\n\n"
        f"Here is the old one:\n\n{PEM_ENCRYPTED}\n\nAnd the signing key:\n\n{PGP}\n\nBoth are retired now."
    )
    res = run("ingest", "--json", "-", input=transcript)
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["redactions"] == 2
    stored = "".join(p.read_text(encoding="utf-8") for p in vault.glob("*.md"))
    assert "retired now" in stored
    for line in (PEM_ENCRYPTED + "\n" + PGP).splitlines():
        if len(line) >= 10 and "PRIVATE KEY" not in line:
            assert line not in stored, line
