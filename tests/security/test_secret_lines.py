"""Secrets round 3 found stored by every way in: `.pgpass` and `.netrc` lines,
passphrases and app passwords written as words after their keyword, Mailgun keys and
Doppler tokens. Written from the formats' documentation (PostgreSQL's "The Password
File", the netrc format of ftp/curl, Google's and Apple's app passwords, Mailgun's and
Doppler's key formats), not from the held-out corpus (benchmarks/data/secrets_heldout/,
measured by benchmarks/secret_detection.py). Each look-alike must come back unchanged."""

from __future__ import annotations

import pytest

from amem_cli.redact import redact

SECRETS = [  # (text, the secret, which must not survive)
    # .pgpass: hostname:port:database:username:password
    ("db.prod.internal:5432:orders:app_user:ZqIEFRCoVhRbzN#7", "ZqIEFRCoVhRbzN#7"),
    ("*:*:*:postgres:oiB1tMtw1E3BDBgZlg", "oiB1tMtw1E3BDBgZlg"),
    ("~/.pgpass holds:\nlocalhost:5432:*:replicator:Xk8\\:pq2Lm9vT\n10.0.4.17:6432:billing:billing_ro:hunterhunter2",
     "Xk8\\:pq2Lm9vT"),
    ("10.0.4.17:6432:billing:billing_ro:Gq7pL2mZx", "Gq7pL2mZx"),
    ("add `replica.db:5432:analytics:etl:s3cr3t-Pa55` to the runner's .pgpass", "s3cr3t-Pa55"),
    ("*:*:*:postgres:postgres-2019", "postgres-2019"),
    # .netrc
    ("machine api.heroku.com\n  login me@example.com\n  password 3b0f1c4e-8a2d-4f6b-9c7e-1d2a3b4c5d6e",
     "3b0f1c4e-8a2d-4f6b-9c7e-1d2a3b4c5d6e"),
    ("machine files.example.org login alice password marmalade", "marmalade"),
    ("default login anonymous password guest1234", "guest1234"),
    # passphrases and app passwords, as words
    ("my vault passphrase is correct horse battery staple", "correct horse battery staple"),
    ("Seed phrase: witch collapse practice feed shame open despair creek road again ice least",
     "witch collapse practice feed shame open despair creek road again ice least"),
    ("the gpg passphrase for the backup key is 'plaid ostrich velvet monsoon'", "plaid ostrich velvet monsoon"),
    ("gmail app password for the laptop mail client is kbdu kkrz xbid avje", "kbdu kkrz xbid avje"),
    ("Apple ID app-specific password: abcd-efgh-ijkl-mnop.", "abcd-efgh-ijkl-mnop"),
    ("wifi password = purple monkey dishwasher", "purple monkey dishwasher"),
    # Mailgun: the older private key, and today's keys and webhook signing keys
    ("mailgun key-3ax6xnjp29jd6fds4gc373sgvjxteol0 for the newsletter", "key-3ax6xnjp29jd6fds4gc373sgvjxteol0"),
    ("MG signing: 5f3c2a1b9e8d7c6b5a4f3e2d1c0b9a8f-9c1d2e3f-4a5b6c7d", "5f3c2a1b9e8d7c6b5a4f3e2d1c0b9a8f-9c1d2e3f-4a5b6c7d"),
    # Doppler: a service token that names its config, a service account identity token
    ("DOPPLER_TOKEN=dp.st.dev.bAqhcVzrhy5cRHkOlNTc0Ve6w5NUDCpcutm8vGE9myi",
     "bAqhcVzrhy5cRHkOlNTc0Ve6w5NUDCpcutm8vGE9myi"),
    ("identity token dp.said.Hq2mXv9Lr4TzP8cWn1Ys6Dk3Fb7Jg5Ue0Ao2Ri4Ml8N", "Hq2mXv9Lr4TzP8cWn1Ys6Dk3Fb7Jg5Ue0Ao2Ri4Ml8N"),
]

LOOKALIKES = [
    "hostname:port:database:username:password",  # the documentation's template
    "localhost:5432:mydb:postgres:$PGPASSWORD",
    "localhost:5432:*:*:yourpassword",
    "the MAC address is 00:1a:2b:3c:4d:5e",
    "00:11:22:33:44:55",
    "the race clock read 01:12:30:45:07 at the finish",
    "fe80::1ff:fe23:4567:890a",
    "mix them 1:2:3:4:5 by weight",
    "connect to db.example.com:5432 as app_user",
    "the password is stored in the team vault",
    "my passphrase is four random words",
    "the recovery phrase is written on paper in the safe.",
    "the password is changed every ninety days.",
    "Enter passphrase (empty for no passphrase):",
    "Enter same passphrase again:",
    "password rules: upper lower digits symbols",
    "The passphrase is what you chose when you set up the key.",
    "machine learning models need a login page and a password field",
    "a key-value-store-for-the-nodes-of-the-cluster",
    "uuid 550e8400-e29b-41d4-a716-446655440000",
    "the public validation key pubkey-5f3c2a1b9e8d7c6b5a4f3e2d1c0b9a8f",
    "dp.st.dev is the config, and the token goes in the environment",
]


@pytest.mark.parametrize("text, secret", SECRETS, ids=[s[:40] for _, s in SECRETS])
def test_the_secret_is_redacted(text, secret):
    out, n = redact(text)
    assert secret not in out and n >= 1, out  # on bae2764: kept


@pytest.mark.parametrize("text", LOOKALIKES)
def test_the_lookalike_is_left(text):
    assert redact(text) == (text, 0)


def test_every_way_in_redacts_them(run, memory):
    """The CLI, the Python API (the MCP server's add_memory calls the same service)."""
    import json

    res = run("add", "*:*:*:postgres:oiB1tMtw1E3BDBgZlg", "--json")
    assert "oiB1tMtw1E3BDBgZlg" not in res.stdout and json.loads(res.stdout)["metadata"]["amem_redacted"] == 1
    note = memory.add("my vault passphrase is correct horse battery staple", tags=["vault"])
    assert "staple" not in note.content and "staple" not in (memory.path / f"{note.id}.md").read_text()
