"""Builds the held-out redaction corpus (heldout_secrets.jsonl, heldout_lookalikes.jsonl).

Written blind: every template below was written by hand from providers' public format
documentation; every value is drawn from a seeded PRNG in the documented shape, so no
value is a real credential. Re-running reproduces the files byte for byte.
"""

import base64
import json
import os
import random
import string

R = random.Random(20250607)
HERE = os.path.dirname(os.path.abspath(__file__))

HEX = "0123456789abcdef"
LOW = string.ascii_lowercase
UP = string.ascii_uppercase
DIG = string.digits
LET = string.ascii_letters
ALNUM = string.ascii_letters + string.digits
URLSAFE = ALNUM + "-_"


def pick(alphabet, n):
    return "".join(R.choice(alphabet) for _ in range(n))


def password(n=16, symbols="!%&*+-_.=?@^~"):
    """A random password with at least one lower, upper, digit and symbol."""
    while True:
        s = pick(LET, 1) + pick(ALNUM + symbols, n - 1)
        if (any(c in LOW for c in s) and any(c in UP for c in s)
                and any(c in DIG for c in s) and (not symbols or any(c in symbols for c in s))):
            return s


def shell_password(n=16):
    """Symbols that need no quoting on a shell command line."""
    return password(n, symbols="-_.+=%@,")


def url_password(n=20):
    return password(n, symbols="-_.~")


def b64(nbytes):
    return base64.b64encode(bytes(R.getrandbits(8) for _ in range(nbytes))).decode()


def b64url(nbytes):
    return base64.urlsafe_b64encode(bytes(R.getrandbits(8) for _ in range(nbytes))).decode().rstrip("=")


def google_app():
    return " ".join(pick(LOW, 4) for _ in range(4))


def apple_app():
    return "-".join(pick(LOW, 4) for _ in range(4))


def mg_legacy():
    return "key-" + pick(HEX, 32)


def mg_new():
    return pick(HEX, 32) + "-" + pick(HEX, 8) + "-" + pick(HEX, 8)


def dp(prefix, env=None):
    mid = f"{env}." if env else ""
    return f"dp.{prefix}.{mid}" + pick(ALNUM, R.choice([40, 43, 44]))


def uuid4():
    h = pick(HEX, 32)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{R.choice('89ab')}{h[17:20]}-{h[20:]}"


def pem_body(prefix, lines, width=70):
    raw = prefix + b64(width * lines)[len(prefix):]
    return "\n".join(raw[i:i + width] for i in range(0, width * lines, width))


def bitlocker():
    return "-".join(f"{R.randrange(0, 65535) * 11:06d}" for _ in range(8))


SECRETS = []
LOOKS = []


def S(kind, text, secret):
    SECRETS.append({"kind": kind, "text": text, "secret": secret})


def L(kind, text):
    LOOKS.append({"kind": kind, "text": text})


# --------------------------------------------------------------------------------------
# .pgpass lines (hostname:port:database:username:password)
# --------------------------------------------------------------------------------------
p = password(18)
S("pgpass", f"Added this to ~/.pgpass on the bastion:\n```\ndb-prod-01.internal:5432:orders:app_rw:{p}\n```\nchmod 600 it or psql ignores the file.", p)
p = password(14)
S("pgpass", f"pgpass line for the read replica: `replica.db.lan:5433:*:readonly:{p}`", p)
p = password(20)
S("pgpass", f"fyi the staging entry is staging-pg.example.net:5432:analytics:etl_user:{p} - rotate it after the demo", p)
p = password(16)
S("pgpass", f"`*:*:*:postgres:{p}` is what I baked into the container's .pgpass, which is lazy, fix later", p)
raw = password(8) + ":" + password(7)
esc = raw.replace(":", "\\:")
S("pgpass", f"The billing password has a colon in it, so in .pgpass it has to be escaped:\n\n    localhost:5432:billing:billing_admin:{esc}", esc)
p = password(22)
S("pgpass", f"```\n# hostname:port:database:username:password\n10.0.4.17:5432:inventory:svc_inventory:{p}\n```", p)
p = password(24)
S("pgpass", f"Created PGPASSFILE=/run/secrets/pgpass containing `pg.internal.corp:6432:pgbouncer:stats_reader:{p}` and restarted the exporter.", p)
p = password(15)
S("pgpass", f"On Windows it lives in %APPDATA%\\postgresql\\pgpass.conf:\n  sqlsrv-bi:5432:warehouse:tableau:{p}", p)
p1 = password(17)
p2 = password(17)
two = f"~/.pgpass now has both:\n```\nprimary.pg.local:5432:app:app_owner:{p1}\nstandby.pg.local:5432:app:app_owner:{p2}\n```"
S("pgpass", two, p1)
S("pgpass", two, p2)
raw = password(6) + "\\" + password(8)
esc = raw.replace("\\", "\\\\")
S("pgpass", f"note: backslash in the pw must be doubled in pgpass -> dw.corp:5432:reporting:rpt:{esc}", esc)
p = password(19)
S("pgpass", f"@maria can you try `echo 'pg-analytics.eu-west-1.rds.amazonaws.com:5432:*:looker:{p}' >> ~/.pgpass` and rerun the sync?", p)
p = password(21)
S("pgpass", f"replication slot user goes in the standby's pgpass: primary.pg.local:5432:replication:replicator:{p}", p)
p = password(16)
S("pgpass", f"IPv6 loopback needs the colons escaped too:\n\\:\\:1:5432:*:postgres:{p}", p)
p = password(18)
S("pgpass", f"| service | .pgpass entry |\n|---|---|\n| ledger | ledger-db:5432:ledger:ledger_app:{p} |", p)
p = password(20)
S("pgpass", f"- name: write pgpass for backups\n  lineinfile:\n    path: /var/lib/postgresql/.pgpass\n    line: \"pg01.dc2:5432:*:backup:{p}\"\n    mode: \"0600\"", p)
p = password(23)
S("pgpass", f"RUN cat > /root/.pgpass <<'EOF'\ndb:5432:app_test:tester:{p}\nEOF\nRUN chmod 600 /root/.pgpass", p)
p = password(14)
S("pgpass", f"any port, any db for the migrator: pg.internal:*:*:migrator:{p}", p)
raw = password(5) + ":" + password(5) + ":" + password(4)
esc = raw.replace(":", "\\:")
S("pgpass", f"crm-db.local:5432:crm:crm_rw:{esc}", esc)
p = password(16)
S("pgpass", f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: pgpass\nstringData:\n  .pgpass: |\n    postgres-0.postgres.db.svc:5432:app:app:{p}", p)
p = password(32)
S("pgpass", f"Note to self: the .pgpass entry for the old box was 192.168.1.20:5432:family_photos:jan:{p}, the NAS one is different.", p)
p = password(20)
S("pgpass", f"Wrote ~/.pgpass (mode 0600) with: timescale.prod:5432:metrics:grafana_ro:{p}. Connection verified with `psql -h timescale.prod -U grafana_ro metrics -c 'select 1'`.", p)
p = password(12)
S("pgpass", f"localhost:5432:dev:dev:{p}", p)

# --------------------------------------------------------------------------------------
# .netrc (machine host login user password pw)
# --------------------------------------------------------------------------------------
tok = "ghp_" + pick(ALNUM, 36)
S("netrc", f"machine api.github.com login octo-bot password {tok}", tok)
p = password(14, symbols="!%&*+-_.=?@^~")
S("netrc", f"~/.netrc for the mirror job:\n```\nmachine ftp.example.org\n  login uploader\n  password {p}\n```", p)
p = password(18)
S("netrc", f"last line of my netrc is a catch-all: `default login deploy password {p}`", p)
k = uuid4()
S("netrc", f"heroku CLI writes this into ~/.netrc:\nmachine api.heroku.com\n  login me@example.com\n  password {k}\nmachine git.heroku.com\n  login me@example.com", k)
p = password(16)
S("netrc", f"RUN echo \"machine git.internal.company.com login ci password {p}\" > /root/.netrc && go mod download", p)
p = password(13)
S("netrc", f"machine ftp.archive.example.edu login jdoe password {p} account billing", p)
p = password(20)
S("netrc", f"put this in ~/.netrc and `curl -n` just works:\nmachine registry.example.io login robot_ci password {p}", p)
p = password(15)
S("netrc", f"machine\tnexus.corp.local\tlogin\tadmin\tpassword\t{p}", p)
glp = "glpat-" + pick(URLSAFE, 20)
S("netrc", f"For go get against our GitLab: `machine gitlab.com login oauth2 password {glp}` in ~/.netrc", glp)
p = password(17)
S("netrc", f"printf 'machine %s login %s password %s\\n' artifacts.acme.dev svc-build '{p}' >> ~/.netrc", p)
ghs = "ghs_" + pick(ALNUM, 36)
S("netrc", f"CI step writes `machine github.com login x-access-token password {ghs}` so private modules resolve", ghs)
p1 = password(14)
p2 = password(14)
pt = "pypi-AgEIcHlwaS5vcmc" + pick(URLSAFE, 60)
multi = f"machine pypi.org login __token__ password {pt}\nmachine ftp.lab.example login lab password {p1}\nmachine backup.lab.example login restic password {p2}"
S("netrc", multi, p1)
S("netrc", multi, p2)
S("netrc", multi, pt)
p = password(16)
S("netrc", f"On Windows the file is %USERPROFILE%\\_netrc:\nmachine files.partner.example login acme_sftp password {p}", p)
p = password(19)
S("netrc", f"machine mail.example.net password {p} login alerts@example.net", p)
p = password(12)
S("netrc", f"```netrc\nmachine urs.earthdata.nasa.gov login mkl_science password {p}\n```", p)
p = password(22)
S("netrc", f"Configured ~/.netrc: machine artifactory.acme.dev login svc-build password {p} (chmod 600). wget --netrc now pulls the snapshots.", p)
p = password(18)
S("netrc", f"netrc entry for the weather station FTP -> machine 203.0.113.40 login station7 password {p}", p)
p = password(16)
S("netrc", f"machine bitbucket.example.org\nlogin jenkins\npassword {p}\n\nmachine jira.example.org\nlogin jenkins", p)
p = password(14)
S("netrc", f"Python's netrc module parsed it fine: `machine svn.example.com login build password {p}`", p)
p = password(21)
S("netrc", f"hey, ~/.netrc on the build box has `machine dl.vendor.example login acme password {p}`, can we move that into Vault?", p)

# --------------------------------------------------------------------------------------
# passphrases and passwords with spaces
# --------------------------------------------------------------------------------------
WORDS = ("tangerine lobby whistle oven maple crater velvet pickle anchor lantern orbit "
         "biscuit canyon gravel harbor juniper kettle meadow noodle pepper quartz ribbon "
         "saddle thimble umbrella walnut yonder zephyr falcon garnet hazel iguana jasper "
         "mango nectar opal parsley quiver radish spruce tundra violet willow cobalt "
         "fennel otter plum sparrow timber marble copper ember").split()


def phrase(n, digits=False, caps=False):
    ws = R.sample(WORDS, n)
    if caps:
        ws = [w.capitalize() for w in ws]
    if digits:
        ws.append(str(R.randrange(10, 99)))
    return " ".join(ws)


ph = phrase(4)
S("passphrase", f"my vault passphrase is {ph}", ph)
ph = phrase(3, digits=True)
S("passphrase", f"the wifi password is: {ph}", ph)
ph = phrase(5)
S("passphrase", f"passphrase = {ph}", ph)
ph = phrase(4, caps=True)
S("passphrase", f"Passphrase: {ph}", ph)
ph = phrase(4)
S("passphrase", f"ssh key passphrase -> {ph}", ph)
ph = phrase(5)
S("passphrase", f"GPG passphrase was set to '{ph}' when I made the release key", ph)
ph = phrase(3, digits=True)
S("passphrase", f"pw for the guest network: {ph}", ph)
ph = phrase(4) + "!"
S("passphrase", f"KeePass master password is \"{ph}\"", ph)
ph = phrase(6)
S("passphrase", f"restic repository password: {ph}\nrepo: s3:s3.eu-central-1.amazonaws.com/backups-home", ph)
ph = phrase(5)
S("passphrase", f"```\nexport BORG_REPO=ssh://borg@nas.local/./laptop\nexport BORG_PASSPHRASE='{ph}'\n```", ph)
ph = "blauer Elefant tanzt leise 7"
S("passphrase", f"Das WLAN-Passwort ist {ph}", ph)
ph = "cheval rouge mange trois pommes"
S("passphrase", f"le mot de passe du wifi est : {ph}", ph)
ph = "tortuga verde bajo la lluvia 31"
S("passphrase", f"la contraseña del router es {ph}", ph)
ph = "fiets regen molen kaas"
S("passphrase", f"wachtwoord: {ph}", ph)
ph = "gato azul come bolo 88"
S("passphrase", f"a senha do wifi é {ph}", ph)
ph = "pasta fredda sotto il ponte"
S("passphrase", f"la password del NAS è {ph}", ph)
ph = phrase(4)
S("passphrase", f"the pass phrase for the code-signing key is {ph}", ph)
ph = phrase(6)
S("passphrase", f"Set the LUKS passphrase on the new SSD to {ph} (same as the old one but one more word).", ph)
ph = phrase(3, digits=True, caps=True)
S("passphrase", f"password (yes, with spaces): {ph}", ph)
ph = phrase(4)
S("passphrase", f"remember: {ph} is the passphrase for the backup disk", ph)
ph = phrase(5)
S("passphrase", f"ansible-vault password is {ph}", ph)
ph = phrase(3, digits=True)
S("passphrase", f"Wi-Fi: CoffeeHouse_5G / pass: {ph}", ph)
ph = phrase(4, caps=True)
S("passphrase", f"SSID HomeNet-2G, password \"{ph}\"", ph)
ph = phrase(4, digits=True)
S("passphrase", f"I changed the router admin password to {ph} yesterday", ph)
ph = phrase(5)
S("passphrase", f"new passphrase for id_ed25519: {ph}", ph)
ph = phrase(3, digits=True)
S("passphrase", f"the password for the zip file is {ph}", ph)
ph = phrase(4)
S("passphrase", f"mot de passe : {ph}", ph)
ph = phrase(4)
S("passphrase", f"User said: \"my password is {ph}, please log in and check the invoice page\"", ph)
ph = phrase(5)
S("passphrase", f"- 1Password master: {ph}\n- Emergency kit is in the drawer", ph)
ph = phrase(4, digits=True)
S("passphrase", f"passwd for the kiosk account → {ph}", ph)
ph = phrase(6)
S("passphrase", f"VeraCrypt volume passphrase: {ph}", ph)
ph = phrase(4)
S("passphrase", f"PASSPHRASE=\"{ph}\" ./sign-release.sh v2.4.0", ph)

# --------------------------------------------------------------------------------------
# app passwords: Google (16 letters in four groups) and Apple (xxxx-xxxx-xxxx-xxxx)
# --------------------------------------------------------------------------------------
g = google_app()
S("app_password_google", f"gmail app password is {g}", g)
g = google_app()
S("app_password_google", f"App password for Thunderbird on the work laptop: {g}", g)
g = google_app()
S("app_password_google", f"```\nEMAIL_HOST=smtp.gmail.com\nEMAIL_PORT=587\nEMAIL_HOST_USER=alerts.shop@gmail.com\nEMAIL_HOST_PASSWORD=\"{g}\"\n```", g)
g = google_app()
S("app_password_google", f"Google generated {g} for the NAS mail alerts, pasted it into Synology and the test mail went through", g)
g = google_app()
S("app_password_google", f"thunderbird on grandma's pc: {g}", g)
g = google_app()
S("app_password_google", f"Home Assistant notify smtp → {g}", g)
g = pick(LOW, 16)
S("app_password_google", f"16-char app password (spaces don't matter): {g}", g)
g = google_app()
S("app_password_google", f"SMTP_PASS='{g}'", g)
g = google_app()
S("app_password_google", f"the printer scan-to-email needed an app password, it's {g}", g)
g = google_app()
S("app_password_google", f"| app | account | app password |\n|---|---|---|\n| Outlook iOS | ops@example.com | {g} |", g)
g = google_app()
S("app_password_google", f"> Your app password for your device\n> {g}\n\ncopied from the yellow box", g)
g = google_app()
S("app_password_google", f"mutt: set smtp_pass = \"{g}\"", g)
g = pick(LOW, 16)
S("app_password_google", f"server.login('reports.bot@gmail.com', '{g}')", g)
g = google_app()
S("app_password_google", f"new one for the nextcloud mail app: {g}", g)

a = apple_app()
S("app_password_apple", f"app-specific password: {a}", a)
a = apple_app()
S("app_password_apple", f"iCloud mail in Thunderbird wants an app-specific password, generated {a}", a)
a = apple_app()
S("app_password_apple", f"APPLE_APP_SPECIFIC_PASSWORD={a}", a)
a = apple_app()
S("app_password_apple", f"xcrun notarytool store-credentials notary --apple-id dev@example.com --team-id A1B2C3D4E5 --password {a}", a)
a = apple_app()
S("app_password_apple", f"xcrun altool --upload-app -f build/App.ipa -u dev@example.com -p {a}", a)
a = apple_app()
S("app_password_apple", f"export FASTLANE_APPLE_APPLICATION_SPECIFIC_PASSWORD=\"{a}\"", a)
a = apple_app()
S("app_password_apple", f"calendar sync on the Android phone (DAVx5): {a}", a)
a = apple_app()
S("app_password_apple", f"icloud imap for the mail client → {a}", a)
a = apple_app()
S("app_password_apple", f"Apple ID asp for the CI notarization step is {a}, label 'github-actions'", a)
a = apple_app()
S("app_password_apple", f"ok I made a new one for BusyCal: {a}", a)
a = apple_app()
S("app_password_apple", f"- appleid: me@icloud.com\n- app pw: {a}", a)
a = apple_app()
S("app_password_apple", f"{a}", a)

# --------------------------------------------------------------------------------------
# Mailgun
# --------------------------------------------------------------------------------------
k = mg_legacy()
S("mailgun_api_key", f"MAILGUN_API_KEY={k}", k)
k = mg_legacy()
S("mailgun_api_key", f"curl -s --user 'api:{k}' https://api.mailgun.net/v3/mg.example.com/messages -F from='Ops <ops@mg.example.com>' -F to=me@example.com -F subject=test -F text=hi", k)
k = mg_legacy()
S("mailgun_api_key", f"```python\nrequests.post(\n    \"https://api.mailgun.net/v3/mg.example.com/messages\",\n    auth=(\"api\", \"{k}\"),\n    data={{\"from\": \"noreply@mg.example.com\", \"to\": to, \"subject\": s, \"text\": body}},\n)\n```", k)
k = mg_legacy()
S("mailgun_api_key", f"old mailgun private key was {k}, revoked it this morning but it's still in two cron jobs", k)
k = mg_legacy()
S("mailgun_api_key", f"mailgun:\n  domain: mg.example.org\n  api_key: {k}\n  region: eu", k)
k = mg_new()
S("mailgun_api_key", f"new Mailgun private API key (the format changed, no more key- prefix): {k}", k)
k = mg_new()
S("mailgun_api_key", f"export MAILGUN_API_KEY=\"{k}\"\nexport MAILGUN_DOMAIN=mg.example.com", k)
k = mg_new()
S("mailgun_api_key", f"const mg = mailgun.client({{ username: 'api', key: '{k}', url: 'https://api.eu.mailgun.net' }});", k)
k = mg_new()
S("mailgun_api_key", f"Primary account API key (Account settings → API Security): {k}", k)
k = mg_new()
S("mailgun_api_key", f"https://api:{k}@api.mailgun.net/v3/domains", k)
k = mg_new()
S("mailgun_sending_key", f"Created a domain sending key for the newsletter app: {k} - it can only POST /messages", k)
k = mg_new()
S("mailgun_sending_key", f"MG_SENDING_KEY={k}", k)
k = mg_new()
S("mailgun_sending_key", f"sending API key for mg.shop.example → {k}", k)
k = mg_new()
S("mailgun_sending_key", f"| domain | sending key |\n|---|---|\n| mg.blog.example | {k} |", k)
k = mg_legacy()
S("mailgun_webhook_signing_key", f"HTTP webhook signing key: {k}", k)
k = mg_new()
S("mailgun_webhook_signing_key", f"MAILGUN_WEBHOOK_SIGNING_KEY={k}", k)
k = mg_new()
S("mailgun_webhook_signing_key", f"```python\nSIGNING_KEY = b\"{k}\"\ndef verify(token, timestamp, signature):\n    digest = hmac.new(SIGNING_KEY, (timestamp + token).encode(), hashlib.sha256).hexdigest()\n    return hmac.compare_digest(digest, signature)\n```", k)
k = mg_new()
S("mailgun_webhook_signing_key", f"Rock asked for the webhook signing key separately, it's {k} (differs from the API key after the reset)", k)
p = pick(HEX, 32) + "-" + pick(HEX, 8) + "-" + pick(HEX, 8)
S("mailgun_smtp_password", f"SMTP creds for mg.example.com: postmaster@mg.example.com / {p}", p)
p = password(20)
S("mailgun_smtp_password", f"MAIL_HOST=smtp.mailgun.org\nMAIL_PORT=587\nMAIL_USERNAME=postmaster@mg.example.net\nMAIL_PASSWORD={p}", p)
k = mg_legacy()
S("mailgun_api_key", f"@dev-team heads up: someone pasted {k} in #general, I've rotated it", k)
k = mg_new()
S("mailgun_api_key", f"$mg = Mailgun::create('{k}', 'https://api.eu.mailgun.net');", k)

# --------------------------------------------------------------------------------------
# Doppler
# --------------------------------------------------------------------------------------
t = dp("st", "prd")
S("doppler_service_token", f"doppler run --token {t} -- node server.js", t)
t = dp("st", "dev")
S("doppler_service_token", f"DOPPLER_TOKEN={t}", t)
t = dp("st")
S("doppler_service_token", f"service token for the worker config: {t}", t)
t = dp("st", "stg")
S("doppler_service_token", f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: doppler-token-secret\n  namespace: doppler-operator-system\ndata: {{}}\nstringData:\n  serviceToken: {t}", t)
t = dp("st", "ci")
S("doppler_service_token", f"echo \"{t}\" | doppler configure set token --scope /app", t)
t = dp("st", "prd_eu")
S("doppler_service_token", f"ARG DOPPLER_TOKEN={t}\nRUN doppler secrets download --no-file --format env > .env", t)
t = dp("st")
S("doppler_service_token", f"Dana: the read-only token for billing/prd is {t}, don't give it write access", t)
t = dp("pt")
S("doppler_personal_token", f"curl --request GET --url 'https://api.doppler.com/v3/projects' --header 'authorization: Bearer {t}'", t)
t = dp("pt")
S("doppler_personal_token", f"my personal doppler token (Tokens > Personal): {t}", t)
t = dp("pt")
S("doppler_personal_token", f"curl -u {t}: https://api.doppler.com/v3/workplace", t)
t = dp("pt")
S("doppler_personal_token", f"terraform {{\n  required_providers {{ doppler = {{ source = \"DopplerHQ/doppler\" }} }}\n}}\nprovider \"doppler\" {{\n  doppler_token = \"{t}\"\n}}", t)
t = dp("ct")
S("doppler_cli_token", f"~/.doppler/.doppler.yaml:\nscoped:\n    /:\n        token: {t}\n        api-host: https://api.doppler.com", t)
t = dp("ct")
S("doppler_cli_token", f"doppler login printed a CLI token, {t}, and I copied it to the VM with `doppler configure set token`", t)
t = dp("ct")
S("doppler_cli_token", f"export DOPPLER_TOKEN='{t}'  # from doppler login on my laptop", t)
t = dp("sa")
S("doppler_service_account_token", f"Service account token for the deploy bot: {t}", t)
t = dp("sa")
S("doppler_service_account_token", f"gh secret set DOPPLER_TOKEN --body \"{t}\"", t)
t = dp("sa")
S("doppler_service_account_token", f"{{\n  \"name\": \"doppler-sync\",\n  \"token\": \"{t}\"\n}}", t)
t = dp("said")
S("doppler_service_account_identity_token", f"OIDC exchange returned {t} (expires in 10 min)", t)
t = dp("scim")
S("doppler_scim_token", f"Okta provisioning → Doppler SCIM: base URL https://api.doppler.com/scim/v2, bearer {t}", t)
t = dp("scim")
S("doppler_scim_token", f"SCIM token: {t}", t)
t = dp("audit")
S("doppler_audit_token", f"audit API token for the SIEM integration is {t}", t)
t = dp("audit")
S("doppler_audit_token", f"DOPPLER_AUDIT_TOKEN={t}", t)

# --------------------------------------------------------------------------------------
# other kinds people paste into notes
# --------------------------------------------------------------------------------------
p = url_password(22)
S("postgres_url", f"DATABASE_URL=postgres://app_user:{p}@db.internal:5432/app?sslmode=require", p)
p = url_password(18)
S("postgres_url", f"psql \"postgresql://analyst:{p}@warehouse.example.com:5432/bi\"", p)
p = url_password(16)
S("postgres_url", f"tried connecting with postgresql+psycopg://etl:{p}@10.2.0.5/staging and it timed out", p)
p = shell_password(14)
S("mysql_password", f"mysql -h 127.0.0.1 -u root -p{p} shop_prod < dump.sql", p)
p = password(16)
S("mysql_password", f"MYSQL_PWD='{p}' mysqldump --single-transaction crm > crm.sql", p)
p = url_password(24)
S("mongodb_url", f"MONGO_URI=mongodb+srv://api_svc:{p}@cluster0.x7q2m.mongodb.net/prod?retryWrites=true&w=majority", p)
p = url_password(20)
S("mongodb_url", f"const client = new MongoClient('mongodb://root:{p}@mongo-0.mongo:27017/?authSource=admin');", p)
p = url_password(32)
S("redis_url", f"REDIS_URL=redis://default:{p}@redis-13524.c92.us-east-1-3.ec2.cloud.redislabs.com:13524", p)
p = url_password(20)
S("redis_url", f"redis-cli -u rediss://:{p}@cache.internal:6380/0 ping", p)
p = url_password(18)
S("amqp_url", f"celery broker: amqp://worker:{p}@rabbitmq.svc:5672/jobs", p)
p = password(15)
S("jdbc_password", f"spring.datasource.url=jdbc:postgresql://db:5432/orders\nspring.datasource.username=orders\nspring.datasource.password={p}", p)
p = password(17)
S("adonet_password", f"\"ConnectionStrings\": {{ \"Default\": \"Server=sql01;Database=Payroll;User Id=payroll_app;Password={p};TrustServerCertificate=True\" }}", p)
k = b64(64)
S("azure_storage_key", f"AZURE_STORAGE_CONNECTION_STRING=\"DefaultEndpointsProtocol=https;AccountName=acmelogs;AccountKey={k};EndpointSuffix=core.windows.net\"", k)
k = b64(64)
S("azure_storage_key", f"storage account key1 for acmebackups: {k}", k)
ak = "AKIA" + pick(UP + "234567", 16)
sk = pick(ALNUM + "/+", 40)
S("aws_secret_access_key", f"~/.aws/credentials\n```\n[deploy]\naws_access_key_id = {ak}\naws_secret_access_key = {sk}\n```", sk)
ak = "AKIA" + pick(UP + "234567", 16)
sk = pick(ALNUM + "/+", 40)
S("aws_secret_access_key", f"export AWS_ACCESS_KEY_ID={ak}\nexport AWS_SECRET_ACCESS_KEY={sk}\naws s3 ls s3://acme-artifacts", sk)
ak = "AKIA" + pick(UP + "234567", 16)
sk = pick(ALNUM + "/+", 40)
S("aws_secret_access_key", f"new IAM user for the uploader: key id {ak}, secret {sk}", sk)
t = "ghp_" + pick(ALNUM, 36)
S("github_pat", f"git remote set-url origin https://{t}@github.com/acme/infra.git", t)
t = "ghp_" + pick(ALNUM, 36)
S("github_pat", f"GITHUB_TOKEN={t}", t)
t = "github_pat_" + pick(ALNUM, 22) + "_" + pick(ALNUM, 59)
S("github_fine_grained_pat", f"fine-grained PAT for the release bot (contents: write on acme/app only): {t}", t)
t = "glpat-" + pick(URLSAFE, 20)
S("gitlab_pat", f"curl --header \"PRIVATE-TOKEN: {t}\" https://gitlab.example.com/api/v4/projects", t)
t = "glpat-" + pick(URLSAFE, 20)
S("gitlab_pat", f"| system | token |\n|---|---|\n| GitLab CI (renovate) | {t} |", t)
t = "xoxb-" + pick(DIG, 12) + "-" + pick(DIG, 13) + "-" + pick(ALNUM, 24)
S("slack_bot_token", f"SLACK_BOT_TOKEN={t}", t)
t = "xoxb-" + pick(DIG, 11) + "-" + pick(DIG, 13) + "-" + pick(ALNUM, 24)
S("slack_bot_token", f"bot token after reinstalling the app: {t}", t)
seg = pick(ALNUM, 24)
url = f"https://hooks.slack.com/services/T{pick(UP + DIG, 8)}/B{pick(UP + DIG, 10)}/{seg}"
S("slack_webhook", f"alerts go to #oncall via {url}", seg)
t = "sk_live_" + pick(ALNUM, 99)
S("stripe_secret_key", f"STRIPE_SECRET_KEY={t}", t)
t = "sk_live_" + pick(ALNUM, 24)
S("stripe_secret_key", f"Stripe.api_key = \"{t}\"", t)
t = "rk_live_" + pick(ALNUM, 99)
S("stripe_restricted_key", f"restricted key (read charges only) for the dashboard: {t}", t)
t = "sk-proj-" + pick(URLSAFE, 74) + "T3BlbkFJ" + pick(URLSAFE, 74)
S("openai_api_key", f"export OPENAI_API_KEY={t}", t)
t = "sk-proj-" + pick(URLSAFE, 58) + "T3BlbkFJ" + pick(URLSAFE, 58)
S("openai_api_key", f"client = OpenAI(api_key=\"{t}\")", t)
t = "sk-ant-api03-" + pick(URLSAFE, 93) + "AA"
S("anthropic_api_key", f"ANTHROPIC_API_KEY={t}", t)
t = "sk-ant-api03-" + pick(URLSAFE, 93) + "AA"
S("anthropic_api_key", f"curl https://api.anthropic.com/v1/messages -H \"x-api-key: {t}\" -H \"anthropic-version: 2023-06-01\"", t)
t = "SG." + pick(URLSAFE, 22) + "." + pick(URLSAFE, 43)
S("sendgrid_api_key", f"sendgrid key for transactional mail: {t}", t)
t = "SG." + pick(URLSAFE, 22) + "." + pick(URLSAFE, 43)
S("sendgrid_api_key", f"{{\"sendgrid\": {{\"apiKey\": \"{t}\", \"from\": \"no-reply@example.com\"}}}}", t)
t = pick(HEX, 32)
S("twilio_auth_token", f"TWILIO_ACCOUNT_SID=AC{pick(HEX, 32)}\nTWILIO_AUTH_TOKEN={t}", t)
t = pick(HEX, 32)
S("twilio_auth_token", f"twilio auth token (primary): {t}", t)
t = "npm_" + pick(ALNUM, 36)
S("npm_token", f"~/.npmrc:\n//registry.npmjs.org/:_authToken={t}", t)
t = "npm_" + pick(ALNUM, 36)
S("npm_token", f"NPM_TOKEN={t} npm publish --access public", t)
t = "pypi-AgEIcHlwaS5vcmc" + pick(URLSAFE, 140)
S("pypi_token", f"[pypi]\n  username = __token__\n  password = {t}", t)
t = "pypi-AgEIcHlwaS5vcmc" + pick(URLSAFE, 120)
S("pypi_token", f"twine upload -u __token__ -p {t} dist/*", t)
t = "hf_" + pick(LET, 34)
S("huggingface_token", f"huggingface-cli login --token {t}", t)
t = "hf_" + pick(LET, 34)
S("huggingface_token", f"HF_TOKEN={t}", t)
t = "dop_v1_" + pick(HEX, 64)
S("digitalocean_pat", f"doctl auth init --access-token {t}", t)
t = "shpat_" + pick(HEX, 32)
S("shopify_token", f"X-Shopify-Access-Token: {t}", t)
t = "lin_api_" + pick(ALNUM, 40)
S("linear_api_key", f"Linear API key for the triage script: {t}", t)
t = "ntn_" + pick(DIG, 11) + pick(ALNUM, 35)
S("notion_token", f"NOTION_TOKEN=\"{t}\"", t)
t = "dapi" + pick(HEX, 32)
S("databricks_token", f"databricks configure --token\nHost: https://adb-1234567890123456.7.azuredatabricks.net\nToken: {t}", t)
t = "hvs." + pick(URLSAFE, 92)
S("vault_token", f"VAULT_ADDR=https://vault.internal:8200 VAULT_TOKEN={t} vault kv get secret/app", t)
t = "glsa_" + pick(ALNUM, 32) + "_" + pick(HEX, 8)
S("grafana_sa_token", f"Authorization: Bearer {t}", t)
t = "sntryu_" + pick(HEX, 64)
S("sentry_token", f"SENTRY_AUTH_TOKEN={t} sentry-cli releases new 1.4.2", t)
t = "PMAK-" + pick(HEX, 24) + "-" + pick(HEX, 34)
S("postman_api_key", f"postman api key: {t}", t)
t = "pul-" + pick(HEX, 40)
S("pulumi_token", f"PULUMI_ACCESS_TOKEN={t}", t)
t = str(R.randrange(1000000000, 7999999999)) + ":AA" + pick(URLSAFE, 33)
S("telegram_bot_token", f"BotFather gave me {t} for @acme_alerts_bot", t)
t = str(R.randrange(100000000, 999999999)) + ":AA" + pick(URLSAFE, 33)
S("telegram_bot_token", f"curl https://api.telegram.org/bot{t}/getUpdates", t)
hdr = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
payload = base64.urlsafe_b64encode(json.dumps({"sub": str(R.randrange(10**6, 10**7)), "role": "admin", "iat": 1717761000}).encode()).decode().rstrip("=")
t = f"{hdr}.{payload}.{b64url(32)}"
S("jwt", f"curl -H \"Authorization: Bearer {t}\" https://api.example.com/admin/users", t)
payload = base64.urlsafe_b64encode(json.dumps({"sub": "svc-reporting", "aud": "internal", "exp": 1893456000}).encode()).decode().rstrip("=")
t = f"{hdr}.{payload}.{b64url(32)}"
S("jwt", f"long-lived service JWT (expires 2030!): {t}", t)
body = pem_body("b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW", 5)
S("private_key", f"deploy key for the docs box:\n```\n-----BEGIN OPENSSH PRIVATE KEY-----\n{body}\n-----END OPENSSH PRIVATE KEY-----\n```", body)
body = pem_body("MHcCAQEEI", 3, width=64)
S("private_key", f"-----BEGIN EC PRIVATE KEY-----\n{body}\n-----END EC PRIVATE KEY-----", body)
t = "AGE-SECRET-KEY-1" + pick("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58)
S("age_secret_key", f"# created: 2025-03-02T10:11:12Z\n# public key: age1{pick('qpzry9x8gf2tvdw0s3jn54khce6mua7l', 58)}\n{t}", t)
t = "A3-" + pick(UP + DIG, 6) + "-" + pick(UP + DIG, 6) + "-" + pick(UP + DIG, 5) + "-" + pick(UP + DIG, 5) + "-" + pick(UP + DIG, 5) + "-" + pick(UP + DIG, 5)
S("onepassword_secret_key", f"1Password Secret Key from the emergency kit: {t}", t)
p = password(20)
S("env_password", f".env.production\n```\nDB_HOST=db.internal\nDB_USER=app\nDB_PASSWORD={p}\n```", p)
p = password(16)
S("env_password", f"ADMIN_PASSWORD={p}", p)
k = pick(LOW + DIG + "!@#$%^&*(-_=+)", 50)
S("django_secret_key", f"SECRET_KEY = '{k}'", k)
p = shell_password(14)
S("cli_password", f"docker login registry.example.com -u ci-bot -p {p}", p)
p = url_password(16)
S("cli_password", f"curl -u admin:{p} http://localhost:9200/_cluster/health", p)
p = password(15)
S("cli_password", f"sshpass -p '{p}' ssh pi@192.168.1.50", p)
p = shell_password(18)
S("cli_password", f"PGPASSWORD={p} psql -h db.internal -U reporting -d bi", p)
p = shell_password(13)
S("cli_password", f"htpasswd -b -c /etc/nginx/.htpasswd grafana {p}", p)
p = shell_password(17)
S("cli_password", f"keytool -importkeystore -srckeystore app.p12 -srcstoretype PKCS12 -srcstorepass {p} -destkeystore app.jks", p)
p = password(19)
S("yaml_password", f"services:\n  db:\n    image: postgres:16\n    environment:\n      POSTGRES_USER: app\n      POSTGRES_PASSWORD: {p}", p)
p = password(16)
S("yaml_password", f"smtp:\n  host: smtp.office365.com\n  user: scanner@example.com\n  password: \"{p}\"", p)
k = "GOCSPX-" + pick(URLSAFE, 28)
S("google_oauth_secret", f"{{\"web\": {{\"client_id\": \"{pick(DIG, 12)}-{pick(LOW + DIG, 32)}.apps.googleusercontent.com\", \"client_secret\": \"{k}\"}}}}", k)
k = "AIza" + pick(URLSAFE, 35)
S("google_api_key", f"Maps key for the store locator: {k}", k)
p = url_password(14)
S("basic_auth_url", f"grafana datasource url: https://prom_reader:{p}@prometheus.example.com", p)
t = "ghp_" + pick(ALNUM, 36)
S("git_credentials", f"~/.git-credentials\nhttps://jdoe:{t}@github.com", t)
k = b64(32)
S("wireguard_private_key", f"[Interface]\nAddress = 10.8.0.2/24\nPrivateKey = {k}\nDNS = 1.1.1.1\n\n[Peer]\nPublicKey = {b64(32)}\nEndpoint = vpn.example.net:51820", k)
t = "HRKU-AA" + pick(URLSAFE, 58)
S("heroku_api_key", f"HEROKU_API_KEY={t}", t)
t = pick(HEX, 32) + "-us14"
S("mailchimp_api_key", f"mailchimp api key: {t}", t)
k = bitlocker()
S("bitlocker_recovery_key", f"BitLocker recovery key for the finance laptop (ID 7A3C...): {k}", k)
SEED = ("ability abstract accident acoustic adapt advice aerobic afford alcohol alley anchor "
        "ancient antique anxiety arctic arena armor arrow artwork asthma athlete auction august "
        "autumn avocado awkward axis zoo wrist velvet timber sunset orange puzzle piano ocean normal "
        "music lizard kitten jungle island hockey guitar fossil engine dolphin cabin bridge").split()
sp = " ".join(R.sample(SEED, 12))
S("seed_phrase", f"wallet recovery phrase (12 words): {sp}", sp)
sp = " ".join(R.sample(SEED, 12))
S("seed_phrase", f"seed: {sp}", sp)
p = password(16)
S("cli_password", f"| env | user | password |\n|---|---|---|\n| staging | admin | {p} |", p)
p = password(18)
S("json_secret", f"{{\n  \"host\": \"ftp.partner.example\",\n  \"username\": \"acme\",\n  \"password\": \"{p}\"\n}}", p)

# ======================================================================================
# LOOKALIKES: no secret, must stay byte-for-byte unchanged
# ======================================================================================
# .pgpass-like
L("pgpass_like", "Format reminder: hostname:port:database:username:password (one entry per line).")
L("pgpass_like", "```\n# hostname:port:database:username:password\n```\nis just the header comment, the real entries are in the vault.")
L("pgpass_like", "db-prod-01.internal:5432:orders:app_rw")
L("pgpass_like", "the replica is replica.db.lan:5433, database orders, user readonly")
L("pgpass_like", "localhost:5432:*:postgres:*")
L("pgpass_like", "PGPASSFILE=/run/secrets/pgpass")
L("pgpass_like", "psql \"host=db.internal port=5432 dbname=app user=readonly sslmode=require\"")
L("pgpass_like", "host    all    all    10.0.0.0/8    scram-sha-256")
L("pgpass_like", "postgres://app@db.internal:5432/app?sslmode=verify-full")
L("pgpass_like", "postgresql://USER:PASSWORD@HOST:PORT/DATABASE")
L("pgpass_like", "On Windows the file is %APPDATA%\\postgresql\\pgpass.conf; chmod 0600 on Unix.")
L("pgpass_like", "libpq checks PGPASSWORD first, then ~/.pgpass.")
L("pgpass_like", "arn:aws:rds:eu-west-1:123456789012:db:orders-prod")
L("pgpass_like", "arn:aws:iam::123456789012:role/deploy")
L("pgpass_like", "*:*:*:*")
L("pgpass_like", "kubectl port-forward svc/postgres 5432:5432 -n data")
L("pgpass_like", "pg_dump -h db.internal -p 5432 -U backup -Fc orders > orders.dump")
L("pgpass_like", "db.internal:5432:app:reader:")
L("pgpass_like", "SMPTE-ish log prefix 10:42:07:118:worker-3:info")

# .netrc-like
L("netrc_like", "machine api.heroku.com login me@example.com")
L("netrc_like", "machine github.com\n  login octocat")
L("netrc_like", "machine github.com login x-access-token password $GITHUB_TOKEN")
L("netrc_like", "printf 'machine %s login %s password %s\\n' \"$HOST\" \"$USER\" \"$TOKEN\" >> ~/.netrc")
L("netrc_like", "The machine learning team's login page has a password reset link now.")
L("netrc_like", "use `machine <host> login <user> password <token>` in ~/.netrc")
L("netrc_like", "curl --netrc-optional --netrc-file ~/.config/curl/netrc https://files.example.org/")
L("netrc_like", "default login anonymous")
L("netrc_like", "The machine reboots, then the login prompt asks for the password twice.")
L("netrc_like", "netrc tokens: machine, default, login, password, account, macdef")
L("netrc_like", "machine build-07 login failed at 03:12, password expired according to PAM")
L("netrc_like", "chmod 600 ~/.netrc  # curl refuses world-readable netrc on some builds")
L("netrc_like", "machine registry.example.io login robot_ci password ${REGISTRY_PASSWORD}")
L("netrc_like", "machine github.com login octocat password")

# passphrase / password prose
L("passphrase_prose", "the passphrase is something only I know")
L("passphrase_prose", "password: see 1Password")
L("passphrase_prose", "password is the same as before")
L("passphrase_prose", "the wifi password is on the fridge")
L("passphrase_prose", "Passphrase: ask Dana")
L("passphrase_prose", "my vault passphrase is stored on the hardware key, not here")
L("passphrase_prose", "password: ********")
L("passphrase_prose", "password: [REDACTED:password]")
L("passphrase_prose", "DB_PASSWORD=[REDACTED:env_password]")
L("passphrase_prose", "Das Passwort steht im Tresor.")
L("passphrase_prose", "le mot de passe est dans le gestionnaire")
L("passphrase_prose", "la contraseña está en el sobre azul")
L("passphrase_prose", "The passphrase must be at least 20 characters and may contain spaces.")
L("passphrase_prose", "we should switch everyone to passphrases of four random words")
L("passphrase_prose", "forgot-password flow sends the email twice")
L("passphrase_prose", "The password is wrong, try again.")
L("passphrase_prose", "Password is required.")
L("passphrase_prose", "the wifi password is printed on the router label")
L("passphrase_prose", "passphrase: none (key is unencrypted, see ticket OPS-214)")
L("passphrase_prose", "I typed my password wrong three times and got locked out")
L("passphrase_prose", "Password: (leave empty for anonymous)")
L("passphrase_prose", "ssh-keygen asked for a passphrase and I just pressed enter")
L("passphrase_prose", "the password for the zip file was sent in a separate email")
L("passphrase_prose", "passwords with spaces work fine in 1Password and Bitwarden")
L("passphrase_prose", "wifi: CoffeeHouse_Guest (open network, no password)")
L("passphrase_prose", "password hint: the dog's name plus the year we moved")
L("passphrase_prose", "the passphrase is four words, I'll tell you in person")
L("passphrase_prose", "Passwort: siehe Bitwarden")

# grouped words that are not app passwords
L("grouped_words", "the code review is done done done")
L("grouped_words", "this time will work, then back home")
L("grouped_words", "plan: ship docs then rest")
L("grouped_words", "they were very nice about the delay")
L("grouped_words", "git checkout -b feat-auth-flow-docs")
L("grouped_words", "make lint-test-docs-html")
L("grouped_words", "well well well, look what the cron job dragged in")
L("grouped_words", "tags: rust wasm perf docs")
L("grouped_words", "App password: xxxx xxxx xxxx xxxx (Google shows it in four groups)")
L("grouped_words", "Apple app-specific passwords look like xxxx-xxxx-xxxx-xxxx")
L("grouped_words", "gmail app password goes here: <app password>")
L("grouped_words", "the build went from slow slow slow to fast")
L("grouped_words", "must have more time next week")
L("grouped_words", "icloud mail works again after the update")
L("grouped_words", "ISBN 978 0 13 468599 1")
L("grouped_words", "call +1 415 555 0132 for the vendor")
L("grouped_words", "Google app passwords are 16 letters; spaces in them are ignored.")
L("grouped_words", "post-mortem-next-week is the calendar slug")
L("grouped_words", "Apple ID: me@icloud.com (2FA on, app-specific passwords under Sign-In and Security)")

# hashes, shas, uuids, versions
L("hex_hash", f"sha256sum of the tarball: {pick(HEX, 64)}  app-2.4.0.tar.gz")
L("hex_hash", f"md5 {pick(HEX, 32)} matches the mirror")
L("hex_hash", f"image: ghcr.io/acme/api@sha256:{pick(HEX, 64)}")
L("hex_hash", f"ETag: \"{pick(HEX, 32)}\"")
L("hex_hash", f"\"integrity\": \"sha512-{b64(64)}\"")
L("hex_hash", f"content hash {pick(HEX, 40)} differs between the two builds")
L("hex_hash", f"Checksum (SHA-1): {pick(HEX, 40).upper()}")
L("hex_hash", f"blake3: {pick(HEX, 64)}")
L("hex_hash", f"the cache key is deps-{pick(HEX, 64)}")
L("git_sha", f"fixed in {pick(HEX, 7)}, released in v1.8.2")
L("git_sha", f"git revert {pick(HEX, 40)}")
L("git_sha", f"Merge commit '{pick(HEX, 12)}' into main")
L("git_sha", f"{pick(HEX, 7)} fix: retry on 503\n{pick(HEX, 7)} docs: readme\n{pick(HEX, 7)} chore: bump deps")
L("git_sha", f"bisect says the first bad commit is {pick(HEX, 40)}")
L("git_sha", f"git cherry-pick {pick(HEX, 10)}..{pick(HEX, 10)}")
L("git_sha", f"pinned action: uses: actions/checkout@{pick(HEX, 40)} # v4.1.1")
L("uuid", f"request id {uuid4()} failed with 502")
L("uuid", f"trace_id={pick(HEX, 32)} span_id={pick(HEX, 16)}")
L("uuid", f"metadata.uid: {uuid4()}")
L("uuid", f"Azure subscription {uuid4()}, tenant {uuid4()}")
L("uuid", f"correlation-id: {uuid4()}")
L("uuid", f"INSERT INTO users (id, name) VALUES ('{uuid4()}', 'Ada');")
L("uuid", f"the Grafana dashboard uid is {pick(LOW + DIG, 9)}")
L("version", "bumped to v2.14.0-rc.1+build.5")
L("version", "python 3.11.9, node v20.11.1, postgres 16.2")
L("version", "requires \"^4.17.21\" and \">=1.2.3 <2.0.0\"")
L("version", "macOS 14.4.1 (23E224)")
L("version", "firmware 1.2.3.4567 on the switch")
L("version", "kernel 6.8.0-31-generic")
L("version", "chart version 0.23.4, appVersion 1.29.0")

# key-value talk and prefix talk
L("key_value_talk", "we store sessions in a key-value store")
L("key_value_talk", "the key-value pairs come back as a dict")
L("key_value_talk", "see the key-rotation runbook before Friday")
L("key_value_talk", "primary key is (tenant_id, id); foreign key to orders")
L("key_value_talk", "the `key-` prefix means it's a legacy Mailgun key")
L("key_value_talk", "Doppler service tokens start with dp.st. and personal ones with dp.pt.")
L("key_value_talk", "Stripe live keys start with sk_live_, test keys with sk_test_")
L("key_value_talk", "GitHub classic tokens begin with ghp_, fine-grained ones with github_pat_")
L("key_value_talk", "key-frame interpolation is off in the export")
L("key_value_talk", "keys: [id, created_at, updated_at]")
L("key_value_talk", "hotkey: ctrl-shift-k")
L("key_value_talk", "The key to this migration is doing it in two steps.")
L("key_value_talk", "redis-cli --scan --pattern 'session:*' | head")

# documentation placeholders
L("placeholder", "MAILGUN_API_KEY=key-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx")
L("placeholder", "curl -s --user 'api:YOUR_API_KEY' https://api.mailgun.net/v3/YOUR_DOMAIN/messages")
L("placeholder", "Authorization: Bearer <your-api-key>")
L("placeholder", "DOPPLER_TOKEN=dp.st.xxxx")
L("placeholder", "doppler run --token dp.st.prd.xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx -- ./start.sh")
L("placeholder", "MAILGUN_API_KEY=${MAILGUN_API_KEY}")
L("placeholder", "export DOPPLER_TOKEN=\"$(doppler configure get token --plain)\"")
L("placeholder", "password: \"{{ vault_db_password }}\"")
L("placeholder", "export OPENAI_API_KEY=sk-...")
L("placeholder", "api_key = \"REPLACE_ME\"")
L("placeholder", "SECRET_KEY=your-secret-key-here")
L("placeholder", "key-<32 hex chars>")
L("placeholder", "postgres://user:password@localhost:5432/mydb")
L("placeholder", "mysql -u root -p$MYSQL_ROOT_PASSWORD")
L("placeholder", "echo \"$CR_PAT\" | docker login ghcr.io -u USERNAME --password-stdin")
L("placeholder", "AWS_SECRET_ACCESS_KEY=${{ secrets.AWS_SECRET_ACCESS_KEY }}")
L("placeholder", "STRIPE_SECRET_KEY=sk_test_<your key>")
L("placeholder", "token: <paste the token from the Tokens page>")
L("placeholder", "PrivateKey = <contents of privatekey file>")
L("placeholder", "DATABASE_URL=postgres://$DB_USER:$DB_PASS@$DB_HOST/app")
L("placeholder", "ghp_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX")
L("placeholder", "<add key=\"ClearTextPassword\" value=\"%NUGET_PASSWORD%\" />")

# colon-separated times and numbers
L("colon_time", "12:30:45:00")
L("colon_time", "SMPTE timecode 01:00:10:12 is where the audio drifts")
L("colon_time", "meeting 09:30-10:15, then lunch at 12:00")
L("colon_time", "2025-03-01 12:30:45,123 INFO worker started")
L("colon_time", "uptime: 3 days, 4:05")
L("colon_time", "ffmpeg -ss 00:01:30.500 -to 00:02:10 -i in.mp4 out.mp4")
L("colon_time", "aspect ratio 16:9, sample rate 48000")
L("colon_time", "Ezekiel 25:17")
L("colon_time", "the lap splits were 1:02:33:10 and 1:03:01:87")
L("colon_time", "cron: 0 */6 * * * /usr/local/bin/backup.sh")

# addresses
L("ipv6", "2001:db8:85a3::8a2e:370:7334")
L("ipv6", "ping6 fe80::1ff:fe23:4567:890a%eth0")
L("ipv6", "listen [::]:443 ssl http2;")
L("ipv6", "the pod got 2001:db8:0:0:1:0:0:1 from the CNI")
L("ipv6", "curl -g 'http://[2001:db8::10]:8080/health'")
L("ipv6", "::ffff:192.0.2.128 is the v4-mapped form")
L("mac", "00:1A:2B:3C:4D:5E")
L("mac", "DHCP reservation for the printer: a4:83:e7:12:9b:0c -> 192.168.1.40")
L("mac", "ether 3c:22:fb:91:7e:05  txqueuelen 1000")
L("mac", "Bluetooth headset F4-5C-89-AB-12-9E keeps reconnecting")
L("mac", "switchport port-security mac-address 0050.56a1.b2c3")

# public keys and fingerprints
L("public_key", f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{b64(32)[:43]} jdoe@laptop")
L("public_key", f"ED25519 key fingerprint is SHA256:{b64(32).rstrip('=')}.")
L("public_key", "PGP fingerprint: 4E1F 9A2B 77C0 3D58 E6A1  0B9C 52D7 13F4 8A60 C2E9")
L("public_key", f"age recipient: age1{pick('qpzry9x8gf2tvdw0s3jn54khce6mua7l', 58)}")
L("public_key", f"[Peer]\nPublicKey = {b64(32)}\nAllowedIPs = 10.8.0.0/24")
L("public_key", "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA" + b64(32)[:44] + "\n-----END PUBLIC KEY-----")
L("public_key", f"Mailgun public validation keys start with pubkey- and are meant for the browser.")

# other colon- and token-shaped strings
L("colon_misc", "image: postgres:16.2-alpine")
L("colon_misc", "git clone git@github.com:acme/infra.git")
L("colon_misc", "chown www-data:www-data /var/www -R")
L("colon_misc", "scp build.tar.gz deploy@web01:/tmp/")
L("colon_misc", "ERROR:root:connection refused (db.internal:5432)")
L("colon_misc", "grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer")
L("colon_misc", "xs[1:10:2] gives every second element")
L("colon_misc", "s3://acme-artifacts/releases/2025/03/app-2.4.0.tar.gz")
L("colon_misc", "urn:isbn:0451450523")
L("colon_misc", "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")
L("colon_misc", "base64 of 'hello world' is aGVsbG8gd29ybGQ=")
L("colon_misc", "ratelimit: 100:60:burst=20")

# ordinary sentences with the keywords
L("keyword_prose", "Rotate the token every 90 days.")
L("keyword_prose", "Set the token TTL to 1h and refresh in the background.")
L("keyword_prose", "The tokenizer splits this into 4096 tokens.")
L("keyword_prose", "JWT access tokens expire after 15 minutes.")
L("keyword_prose", "Password reset emails were delayed by the Mailgun outage.")
L("keyword_prose", "Doppler service tokens are scoped to a single config.")
L("keyword_prose", "Mailgun sending keys can only POST to /messages.")
L("keyword_prose", "You need an app password because 2-Step Verification is on.")
L("keyword_prose", "Changing your Apple ID password revokes every app-specific password.")
L("keyword_prose", "We removed the password field from the signup form.")
L("keyword_prose", "Password managers are the answer, not sticky notes.")
L("keyword_prose", "The API key lives in Doppler under MAILGUN_API_KEY; never paste it here.")
L("keyword_prose", "key rotation done; old webhook signing key stays valid for 24h")
L("keyword_prose", "token: see CI settings")
L("keyword_prose", "API key: stored in Doppler (project billing, config prd)")
L("keyword_prose", "the SCIM token is generated on the Team > SCIM page")
L("keyword_prose", "Audit tokens are read-only and limited to one workplace.")
L("keyword_prose", "My passphrase habit: four random words plus a number.")
L("keyword_prose", "passphrase-protected keys need ssh-agent on the CI runner")
L("keyword_prose", "secret: the surprise party is on Friday")
L("keyword_prose", "The .netrc file needs a password line only if the server asks for one.")
L("keyword_prose", "Use `doppler login` to get a CLI token instead of sharing your personal token.")
L("keyword_prose", "the `--password-stdin` flag keeps the password out of shell history")


def write():
    os.makedirs(HERE, exist_ok=True)
    with open(os.path.join(HERE, "heldout_secrets.jsonl"), "w", encoding="utf-8") as f:
        for i, rec in enumerate(SECRETS, 1):
            f.write(json.dumps({"id": f"s{i:03d}", **rec}, ensure_ascii=False) + "\n")
    with open(os.path.join(HERE, "heldout_lookalikes.jsonl"), "w", encoding="utf-8") as f:
        for i, rec in enumerate(LOOKS, 1):
            f.write(json.dumps({"id": f"l{i:03d}", **rec}, ensure_ascii=False) + "\n")


def check():
    """Re-read both files: they parse, ids are unique, each secret occurs in its text, and
    no lookalike contains a secret value."""
    def load(name):
        with open(os.path.join(HERE, name), encoding="utf-8") as f:
            return [json.loads(line) for line in f]
    secrets, looks = load("heldout_secrets.jsonl"), load("heldout_lookalikes.jsonl")
    ids = [r["id"] for r in secrets + looks]
    assert len(ids) == len(set(ids)), "duplicate ids"
    for r in secrets:
        assert set(r) == {"id", "kind", "text", "secret"} and r["secret"] in r["text"], r["id"]
    for r in looks:
        assert set(r) == {"id", "kind", "text"}, r["id"]
        assert not any(s["secret"] in r["text"] for s in secrets), r["id"]
    return len(secrets), len(looks)


if __name__ == "__main__":
    write()
    print("%d secrets, %d lookalikes, checks passed" % check())
