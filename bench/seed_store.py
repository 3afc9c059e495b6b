#!/usr/bin/env python3
"""Fill a b2c token store with synthetic people, modelled on a real signed-in account.

The store must have been created by `b2c` (schema, application_id and GRDB migration in place) and hold
at least one account from a real sign-in: that account is the template. Every synthetic row mirrors it:

  identities      (environment, client_id, tenant_id, oid) with name, given/family name and email
  accounts        account_id = <oid>-<policy lower-cased>.<tenant id> (the template's host and client id), the template's authority with the
                  policy swapped in, an id token of the same shape and size, claims JSON with tfp (or acr),
                  oid, sub, name and emails
  access_tokens   the template's target (sorted, lower-cased scopes), a token of the same size,
                  expires_on far in the future
  refresh_tokens  one per account, of the same size as the real one

The template person counts as one of --people and gets the policies it lacks too; it becomes the current
account of every seeded policy, so `b2c token --policy P` selects it. Everything is one transaction.

Usage: seed_store.py STORE --people N --policies B2C_1_a,B2C_1_b [--copy-from OTHER_STORE] [--seed 1]
"""
import argparse
import base64
import json
import random
import sqlite3
import sys
import time
import uuid


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def random_b64url(rng: random.Random, length: int) -> str:
    return b64url(rng.randbytes(length * 3 // 4 + 3))[:length]


def fake_jwt(header: str, claims: dict, signature_length: int, rng: random.Random) -> str:
    """Header of the real token, our claims, random bytes where the signature is: same shape and size."""
    payload = b64url(json.dumps(claims, separators=(",", ":")).encode())
    return f"{header}.{payload}.{random_b64url(rng, signature_length)}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("store")
    ap.add_argument("--people", type=int, required=True, help="people in the store after seeding (the template person included)")
    ap.add_argument("--policies", required=True, help="comma-separated policy names; every person gets an account under each")
    ap.add_argument("--copy-from", help="copy this store (SQLite backup) to STORE first")
    ap.add_argument("--seed", type=int, default=1, help="random seed (oids, token bytes)")
    args = ap.parse_args()
    policies = [p for p in args.policies.split(",") if p]
    rng = random.Random(args.seed)

    if args.copy_from:
        src = sqlite3.connect(args.copy_from)
        dst = sqlite3.connect(args.store)
        src.backup(dst)
        src.close()
        dst.close()

    db = sqlite3.connect(args.store, isolation_level=None)
    db.execute("PRAGMA foreign_keys = ON")
    if db.execute("PRAGMA application_id").fetchone()[0] != 0x62326321:
        sys.exit(f"{args.store} is not a b2c store (let b2c create it first)")

    storage = db.execute("SELECT value FROM settings WHERE key = 'storage'").fetchone()
    if storage is None or storage[0] != "plaintext":
        sys.exit(f"{args.store} is not in plaintext mode (b2c config set storage plaintext before the sign-in); "
                 "encrypt it after seeding with b2c config set storage encrypted")
    row = db.execute("SELECT account_id, tenant_id, oid, policy, authority, client_id, id_token, claims, environment FROM accounts "
                     "ORDER BY created_at LIMIT 1").fetchone()
    if row is None:
        sys.exit(f"{args.store} holds no account to use as a template (sign one person in first)")
    t_id, tenant, t_oid, t_policy, t_authority, client_id, t_id_token, t_claims, environment = row
    t_claims = json.loads(t_claims)
    at = db.execute("SELECT target, secret FROM access_tokens WHERE environment = ? AND client_id = ? AND account_id = ?",
                    (environment, client_id, t_id)).fetchone()
    rt = db.execute("SELECT secret FROM refresh_tokens WHERE environment = ? AND client_id = ? AND account_id = ?",
                    (environment, client_id, t_id)).fetchone()
    if at is None or rt is None:
        sys.exit("the template account has no access or refresh token")
    target, at_secret = at
    rt_length = len(rt[0])
    id_header, _, id_sig = t_id_token.split(".")
    at_parts = at_secret.split(".")
    if len(at_parts) != 3:
        sys.exit("the template access token is not a JWT")
    at_header, at_sig_len = at_parts[0], len(at_parts[2])
    at_claims_template = json.loads(base64.urlsafe_b64decode(at_parts[1] + "=" * (-len(at_parts[1]) % 4)))
    policy_claim = "acr" if "acr" in t_claims and "tfp" not in t_claims else "tfp"
    if not t_authority.endswith("/" + t_policy):
        sys.exit(f"unexpected authority form '{t_authority}' (expected the path form ending in /{t_policy})")
    authority_base = t_authority[: -len(t_policy)]

    now = int(time.time())
    far = now + 10 * 365 * 86400

    identities, accounts, access_tokens, refresh_tokens = [], [], [], []

    def add_account(oid: str, email: str, name: str, policy: str) -> str:
        account_id = f"{oid}-{policy.lower()}.{tenant}"
        claims = dict(t_claims)
        claims.update({"oid": oid, "sub": oid, "name": name, "given_name": name.split()[0], "family_name": name.split()[-1],
                       "emails": [email], policy_claim: policy.lower() if policy_claim == "acr" else policy})
        id_token = fake_jwt(id_header, claims, len(id_sig), rng)
        accounts.append((environment, client_id, account_id, tenant, oid, policy, authority_base + policy, id_token,
                         json.dumps(claims, separators=(",", ":"), ensure_ascii=False), now, now))
        at_claims = dict(at_claims_template)
        at_claims.update({k: v for k, v in claims.items() if k in at_claims_template and k not in ("aud", "nonce")})
        at_claims["exp"] = far
        access_tokens.append((environment, client_id, account_id, target, fake_jwt(at_header, at_claims, at_sig_len, rng), far, now))
        refresh_tokens.append((environment, client_id, account_id, random_b64url(rng, rt_length), now))
        return account_id

    # The template person's missing policies.
    have = {p.lower() for (p,) in db.execute(
        "SELECT policy FROM accounts WHERE environment = ? AND client_id = ? AND tenant_id = ? AND oid = ?",
        (environment, client_id, tenant, t_oid))}
    t_email = (t_claims.get("emails") or [t_claims.get("email", "template@example.com")])[0]
    t_name = t_claims.get("name", "Template Person")
    current = {}
    for p in policies:
        if p.lower() in have:
            current[p] = f"{t_oid}-{p.lower()}.{tenant}"
        else:
            current[p] = add_account(t_oid, t_email, t_name, p)

    for i in range(max(0, args.people - 1)):
        oid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        email = f"user{i:06d}@bench.contoso.com"
        name = f"Bench User{i:06d}"
        identities.append((environment, client_id, tenant, oid, name, "Bench", f"User{i:06d}", email, now))
        for p in policies:
            add_account(oid, email, name, p)

    db.execute("BEGIN IMMEDIATE")
    # Identities are kept per scope (environment and client id), as accounts are (store migration v5).
    db.executemany("INSERT INTO identities(environment, client_id, tenant_id, oid, name, given_name, family_name, email, updated_at) "
                   "VALUES (?,?,?,?,?,?,?,?,?)", identities)
    db.executemany("INSERT INTO accounts(environment, client_id, account_id, tenant_id, oid, policy, authority, id_token, claims, "
                   "created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)", accounts)
    db.executemany("INSERT INTO access_tokens(environment, client_id, account_id, target, secret, expires_on, cached_at) "
                   "VALUES (?,?,?,?,?,?,?)", access_tokens)
    db.executemany("INSERT INTO refresh_tokens(environment, client_id, account_id, secret, updated_at) VALUES (?,?,?,?,?)", refresh_tokens)
    db.executemany("INSERT OR REPLACE INTO current_accounts(environment, client_id, policy, account_id) VALUES (?, ?, ?, ?)",
                   [(environment, client_id, p, a) for p, a in current.items()])
    db.execute("COMMIT")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    tables = ("identities", "accounts", "access_tokens", "refresh_tokens")
    counts = {t: db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables}
    db.close()
    print("seeded: " + ", ".join(f"{k} {v}" for k, v in counts.items()), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
