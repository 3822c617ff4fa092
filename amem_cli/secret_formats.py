"""Secrets known by their format: a provider's documented prefix, length and alphabet.

The table is written from the providers' documentation and checked against two maintained
public rule sets, whose rule names are given so that a new version of them can be compared
rule by rule: gitleaks' default config (github.com/gitleaks/gitleaks, config/gitleaks.toml,
MIT) and detect-secrets' plugins (github.com/Yelp/detect-secrets, detect_secrets/plugins/,
Apache-2.0). Formats that need context (a password after `password=`, a key near its id,
a private key block) are found in `redact.py`.

Each rule: (kind, pattern, words, not_after). `words` are lower-case pieces of text a match
must hold (gitleaks' "keywords"): a text holding none of them is not searched with the
pattern, which keeps `redact` fast on ordinary notes. A match right after a character of
`not_after` is part of a longer word and is not a secret (checked outside the pattern: a
pattern that starts with a lookbehind is searched at every position, one that starts with
its literal prefix is not).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

WORD_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
# No letter, digit or underscore after: a token's end.
_E = r"(?![A-Za-z0-9_])"
_EH = r"(?![A-Za-z0-9_-])"  # ... nor a hyphen, for alphabets that hold one


@dataclass(frozen=True)
class Format:
    kind: str
    pattern: re.Pattern
    words: tuple[str, ...]
    not_after: frozenset[str]


def _f(kind: str, pattern: str, *words: str, not_after: frozenset[str] = WORD_CHARS) -> Format:
    return Format(kind, re.compile(pattern), words, not_after)


FORMATS: list[Format] = [
    # -- clouds --------------------------------------------------------------
    # gitleaks aws-access-token; detect-secrets aws. Ids ending in EXAMPLE are the
    # documentation's (AKIAIOSFODNN7EXAMPLE): gitleaks allows them, so do we.
    _f("aws_key", r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)(?![A-Z0-9]*EXAMPLE" + _E + r")[A-Z0-9]{16}" + _E,
       "a3t", "akia", "asia", "abia", "acca"),
    # gitleaks gcp-api-key; Google OAuth client secrets (GOCSPX-), access (ya29.) and refresh (1//0) tokens.
    _f("google_api_key", r"AIza[0-9A-Za-z_-]{35}" + _EH, "aiza"),
    _f("google_oauth", r"(?:GOCSPX-[A-Za-z0-9_-]{28}|ya29\.[0-9A-Za-z_-]{20,}|1//0[0-9A-Za-z_-]{40,})" + _EH,
       "gocspx-", "ya29.", "1//0"),
    # gitleaks azure-ad-client-secret; Azure DevOps PATs of 2024 (84 characters, "AZDO" at 76).
    _f("azure_secret", r"[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])", "q~", not_after=WORD_CHARS | set("~.-")),
    _f("azure_secret", r"[A-Za-z0-9]{76}AZDO[A-Za-z0-9]{4}" + _E, "azdo"),
    # gitleaks alibaba-access-key-id, digitalocean-*, databricks-api-token, heroku-api-key-v2,
    # flyio-access-token, hashicorp-tf-api-token, cloudflare-origin-ca-key, openshift-user-token.
    _f("alibaba_key", r"LTAI[A-Za-z0-9]{20}" + _E, "ltai"),
    _f("digitalocean_token", r"do[opr]_v1_[a-f0-9]{64}" + _E, "_v1_"),
    _f("databricks_token", r"dapi[a-f0-9]{32}(?:-\d)?" + _E, "dapi"),
    _f("heroku_key", r"HRKU-AA[0-9A-Za-z_-]{58}" + _EH, "hrku-"),
    _f("flyio_token", r"(?:fo1_[\w-]{43}|fm[12][ar]?_[A-Za-z0-9+/]{100,}={0,3})", "fo1_", "fm1", "fm2"),
    _f("terraform_token", r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}", "atlasv1"),
    _f("cloudflare_key", r"v1\.0-[a-f0-9]{24}-[a-f0-9]{146}" + _E, "v1.0-"),
    _f("openshift_token", r"sha256~[\w-]{43}" + _EH, "sha256~"),
    # HashiCorp Vault: service, batch and recovery tokens (hvs./hvb./hvr.), and the old
    # service tokens (s. and 24 characters; gitleaks vault-service-token, which lets pass
    # the ones of letters only: words after "s.").
    _f("vault_token", r"hv[sbr]\.[A-Za-z0-9_-]{24,}" + _EH, "hvs.", "hvb.", "hvr."),
    _f("vault_token", r"s\.(?=[A-Za-z]*\d)[A-Za-z0-9]{24}(?![\w.])", "s.", not_after=WORD_CHARS | {"."}),
    # -- code hosting and package registries ---------------------------------------------
    # gitleaks github-*; detect-secrets github_token.
    _f("github_token", r"(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})" + _E,
       "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    # gitleaks gitlab-*; detect-secrets gitlab_token (docs.gitlab.com/ee/security/tokens).
    _f("gitlab_token", r"(?:(?:glpat|gloas|gldt|glrt|glcbt|glptt|glft|glimt|glagent|glsoat|glffct)-[A-Za-z0-9_-]{20,300}"
       r"(?:\.[0-9a-z]{9})?|GR1348941[\w-]{20})" + _EH,
       "glpat-", "gloas-", "gldt-", "glrt-", "glcbt-", "glptt-", "glft-", "glimt-", "glagent-", "glsoat-", "glffct-", "gr1348941"),
    # Bitbucket app passwords and API tokens; Atlassian API tokens (gitleaks atlassian-api-token).
    _f("atlassian_token", r"(?:ATBB[A-Za-z0-9_=.-]{28,}|ATATT3[A-Za-z0-9_=-]{186})" + _EH, "atbb", "atatt3"),
    # gitleaks npm-access-token; detect-secrets npm.
    _f("npm_token", r"npm_[A-Za-z0-9]{36}" + _E, "npm_"),
    # gitleaks pypi-upload-token; detect-secrets pypi_token (pypi.org and test.pypi.org).
    _f("pypi_token", r"pypi-(?:AgEIcHlwaS5vcmc|AgENdGVzdC5weXBpLm9yZw)[A-Za-z0-9_-]{50,}", "pypi-ag"),
    # gitleaks rubygems-api-token, clojars-api-token; NuGet API keys; Docker Hub access tokens.
    _f("rubygems_token", r"rubygems_[a-f0-9]{48}" + _E, "rubygems_"),
    _f("clojars_token", r"CLOJARS_[A-Za-z0-9]{60}" + _E, "clojars_"),
    _f("nuget_key", r"oy2[a-z0-9]{43}" + _E, "oy2"),
    _f("docker_token", r"dckr_(?:pat|oat)_[A-Za-z0-9_-]{27,}" + _EH, "dckr_"),
    # gitleaks artifactory-api-key, sourcegraph-access-token, pulumi-api-token, prefect-api-token,
    # readme-api-token, postman-api-token, doppler-api-token, infracost-api-token, scalingo-api-token.
    _f("artifactory_key", r"AKCp[A-Za-z0-9]{69}" + _E, "akcp"),
    _f("sourcegraph_token", r"sgp_(?:[a-fA-F0-9]{16}_|local_)?[a-fA-F0-9]{40}" + _E, "sgp_"),
    _f("pulumi_token", r"pul-[a-f0-9]{40}" + _E, "pul-"),
    _f("prefect_token", r"pnu_[A-Za-z0-9]{36}" + _E, "pnu_"),
    _f("readme_token", r"rdme_[a-z0-9]{70}" + _E, "rdme_"),
    _f("postman_token", r"PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}" + _E, "pmak-"),
    # Doppler's "Auth Token Formats": dp.ct/pt/sa/said/scim/audit. and 40-44 letters and
    # digits; a service token (dp.st.) may name its config between (dp.st.dev.xxxx).
    _f("doppler_token", r"dp\.(?:ct|pt|sa|said|scim|audit|st(?:\.[a-z0-9_-]{2,35})?)\.[A-Za-z0-9]{40,44}" + _E, "dp."),
    _f("infracost_token", r"ico-[A-Za-z0-9]{32}" + _E, "ico-"),
    _f("scalingo_token", r"tk-us-[\w-]{48}" + _EH, "tk-us-"),
    # -- AI providers -------------------------------------------------------------------
    # gitleaks anthropic-api-key, anthropic-admin-api-key.
    _f("anthropic_key", r"sk-ant-(?:api|admin|sid)\d\d-[A-Za-z0-9_-]{20,}", "sk-ant-"),
    # gitleaks openai-api-key (project, service account and admin keys, and the old
    # sk-...T3BlbkFJ... ones); detect-secrets openai. Keys of other providers that
    # copied the form (sk- and 32 or more letters and digits, OpenRouter's sk-or-v1-).
    _f("openai_key", r"sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,}", "sk-"),
    _f("openai_key", r"sk-(?:or-v1-)?(?=[A-Za-z]*\d)(?=\d*[A-Za-z])[A-Za-z0-9]{32,}" + _EH, "sk-"),
    # gitleaks huggingface-access-token, huggingface-organization-api-token.
    _f("huggingface_token", r"(?:hf_|api_org_)(?=[a-z0-9]*[A-Z])(?=[A-Z0-9]*[a-z])[A-Za-z0-9]{34,40}" + _E,
       "hf_", "api_org_"),
    # gitleaks perplexity-api-key; Groq, xAI and Replicate keys (their documented prefixes).
    _f("ai_api_key", r"(?:pplx-[A-Za-z0-9]{48}|gsk_[A-Za-z0-9]{52}|xai-[A-Za-z0-9]{80}|r8_[A-Za-z0-9]{37})" + _E,
       "pplx-", "gsk_", "xai-", "r8_"),
    # -- payments and commerce ----------------------------------------------------------
    # gitleaks stripe-access-token; detect-secrets stripe. Secret and restricted keys and
    # webhook signing secrets; publishable keys (pk_) are public by design and pass.
    _f("stripe_key", r"(?:(?:sk|rk)_(?:test|live|prod)_[A-Za-z0-9]{10,247}|whsec_[A-Za-z0-9+/=]{32,})" + _E,
       "sk_", "rk_", "whsec_"),
    # gitleaks square-access-token; Square application secrets (sq0csp-).
    _f("square_token", r"(?:sq0atp-|sq0csp-|EAAA)[\w-]{22,60}" + _EH, "sq0atp-", "sq0csp-", "eaaa"),
    # gitleaks shopify-*, shippo-api-token, duffel-api-token, easypost-*, flutterwave-*.
    _f("shopify_token", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}" + _E, "shpat_", "shpca_", "shppa_", "shpss_"),
    _f("shippo_token", r"shippo_(?:live|test)_[a-fA-F0-9]{40}" + _E, "shippo_"),
    _f("duffel_token", r"duffel_(?:test|live)_[A-Za-z0-9_=-]{43}" + _EH, "duffel_"),
    _f("easypost_token", r"EZ[AT]K[A-Za-z0-9]{54}" + _E, "ezak", "eztk"),
    _f("flutterwave_key", r"FLW(?:SECK|PUBK)_TEST-[a-hA-H0-9]{12,32}(?:-X)?" + _E, "flwseck_", "flwpubk_"),
    # -- messaging and email ------------------------------------------------------------
    # gitleaks slack-*-token; detect-secrets slack (bot, user, app-level, config tokens).
    _f("slack_token", r"(?:xox[abposre]-[A-Za-z0-9-]{10,}|xoxe\.xox[bp]-\d-[A-Za-z0-9]{100,}"
       r"|xapp-\d-[A-Za-z0-9]+-\d+-[A-Za-z0-9]+)", "xox", "xapp-"),
    # gitleaks slack-webhook-url; detect-secrets slack. The whole URL is the secret.
    _f("slack_webhook", r"(?:https?://)?hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/+-]{20,}",
       "hooks.slack.com"),
    # detect-secrets discord (discord.com/developers/docs/reference#authentication): the
    # bot's id in base64 (so it holds digits), a time stamp, an HMAC; and webhook URLs.
    _f("discord_token", r"[MNO](?=[A-Za-z_-]*\d)[A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}" + _EH),
    _f("discord_webhook", r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]{60,}", "discord"),
    # gitleaks microsoft-teams-webhook (the whole URL).
    _f("teams_webhook", r"https://[a-z0-9-]+\.webhook\.office\.com/webhookb2/[A-Za-z0-9@/-]{40,}", "webhook.office.com"),
    # gitleaks telegram-bot-api-token; detect-secrets telegram_token (core.telegram.org/bots/api).
    _f("telegram_token", r"\d{5,16}:A[A-Za-z0-9_-]{34}" + _EH, ":a", not_after=frozenset("0123456789:")),
    # detect-secrets twilio: account SIDs (AC) and API key SIDs (SK); gitleaks twilio-api-key.
    _f("twilio_key", r"(?:AC|SK)[0-9a-fA-F]{32}" + _E),
    # gitleaks sendgrid-api-token; detect-secrets sendgrid. Brevo (Sendinblue) keys.
    _f("sendgrid_key", r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}" + _EH, "sg."),
    _f("brevo_key", r"x(?:keysib|smtpsib)-[a-f0-9]{64}-[A-Za-z0-9]{16}" + _E, "xkeysib-", "xsmtpsib-"),
    # gitleaks mailchimp-api-key (the key ends in its data centre, -us6).
    _f("mailchimp_key", r"[a-f0-9]{32}-us\d{1,2}" + _E, "-us"),
    # Mailgun (gitleaks mailgun-private-api-token, mailgun-signing-key): the older private
    # keys, key- and 32 characters, and the keys and webhook signing keys of today, 32 hex
    # digits, then two groups of 8. The public validation key (pubkey-) is public.
    _f("mailgun_key", r"key-(?=[a-z]*\d)[0-9a-z]{32}" + _E, "key-"),
    _f("mailgun_key", r"[0-9a-f]{32}-[0-9a-f]{8}-[0-9a-f]{8}" + _EH, not_after=WORD_CHARS | {"-"}),
    # -- monitoring, productivity, others -----------------------------------------------
    # gitleaks grafana-*, sentry-*, new-relic-*, dynatrace-api-token.
    _f("grafana_token", r"(?:glc_[A-Za-z0-9+/]{32,}={0,3}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|eyJrIjoi[A-Za-z0-9]{70,400}={0,3})",
       "glc_", "glsa_", "eyjrijoi"),
    _f("sentry_token", r"(?:sntrys_eyJ[A-Za-z0-9+/=_]{60,}|sntryu_[a-f0-9]{64})", "sntrys_", "sntryu_"),
    _f("newrelic_key", r"(?:NRAK-[A-Z0-9]{27}|NRII-[A-Za-z0-9-]{32}|NRJS-[a-f0-9]{19})" + _E, "nrak-", "nrii-", "nrjs-"),
    _f("dynatrace_token", r"dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}" + _E, "dt0c01."),
    # gitleaks linear-api-key, notion-api-token (and Notion's older secret_ keys), typeform,
    # frameio, asana (personal access tokens), maxmind-license-key, 1password-*, adobe-client-secret.
    _f("linear_key", r"lin_api_[A-Za-z0-9]{40}" + _E, "lin_api_"),
    _f("notion_token", r"(?:ntn_[0-9]{11}[A-Za-z0-9]{35}|secret_[A-Za-z0-9]{43})" + _E, "ntn_", "secret_"),
    _f("typeform_token", r"tfp_[A-Za-z0-9_.=-]{59}", "tfp_"),
    _f("frameio_token", r"fio-u-[A-Za-z0-9_=-]{64}", "fio-u-"),
    _f("asana_token", r"[0-2]/\d{13,19}(?:/\d{13,19})?:[a-f0-9]{32}" + _E),
    _f("maxmind_key", r"[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk" + _E, "_mmk"),
    _f("onepassword_key", r"(?:ops_eyJ[A-Za-z0-9+/]{250,}={0,3}|A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})(?:-[A-Z0-9]{5}){3})",
       "ops_", "a3-"),
    _f("adobe_secret", r"p8e-[A-Za-z0-9]{32}" + _E, "p8e-"),
    # gitleaks mapbox-api-token (secret sk. tokens; pk. tokens are public), facebook-page-access-token,
    # twitter-bearer-token, harness-api-key.
    _f("mapbox_token", r"sk\.eyJ[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,}", "sk.eyj"),
    _f("facebook_token", r"EAA[MC][A-Za-z0-9]{100,}" + _E, "eaam", "eaac"),
    _f("twitter_token", r"A{22}[A-Za-z0-9%]{80,100}" + _E, "a" * 22),
    _f("harness_token", r"(?:pat|sat)\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}" + _E, "pat.", "sat."),
    # age (age-encryption.org/v1): the secret key, in Bech32.
    _f("age_key", r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}", "age-secret-key-1"),
    # JSON Web Tokens (gitleaks jwt; detect-secrets jwt): three base64url parts, the first
    # a JSON header ("eyJ" is '{"').
    _f("jwt", r"eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{10,}", "eyj"),
]
