#!/usr/bin/env python3
"""Checks one running webhook starter kit (examples/clients/webhook_bot.*) as the server
will call it (shared/API.md, "Webhook bots"). Standard library only; no domino server.

    check.py URL SECRET          the kit was started with DOMINO_WEBHOOK_SECRET=SECRET
    check.py URL --no-secret     the kit was started without one (registration time)

Prints one line per check; exits 1 if any failed.
"""
import copy
import hashlib
import hmac
import json
import os
import sys
import time
import urllib.error
import urllib.request
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
failures = []


def check(name, ok, detail=""):
    print(f"  {'ok  ' if ok else 'FAIL'} {name}{'' if ok else f': {detail}'}")
    if not ok:
        failures.append(name)


def sign(secret, body, t_ms=None):
    t = str(int(time.time() * 1000) if t_ms is None else t_ms)
    mac = hmac.new(secret.encode(), f"{t}.".encode() + body, hashlib.sha256).hexdigest()
    return f"t={t},v1={mac}"


def post(url, body, signature=None):
    """(status, parsed JSON answer or the raw text, content-type)"""
    headers = {"Content-Type": "application/json", "Domino-Call-Id": str(uuid.uuid4())}
    if signature is not None:
        headers["Domino-Signature"] = signature
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=5) as answer:
            status, raw, ctype = answer.status, answer.read(), answer.headers.get("Content-Type", "")
    except urllib.error.HTTPError as error:
        status, raw, ctype = error.code, error.read(), error.headers.get("Content-Type", "")
    try:
        return status, json.loads(raw), ctype
    except ValueError:
        return status, raw.decode(errors="replace"), ctype


def fixture_matches_schema(call):
    """The fixture's view is a GameView as openapi/openapi.json has it: every required field,
    and each legal move a Move variant with only that variant's fields."""
    schemas = json.load(open(os.path.join(ROOT, "openapi", "openapi.json")))["components"]["schemas"]
    missing = set(schemas["GameView"]["required"]) - set(call["view"])
    check("fixture: the view has every field GameView requires", not missing, f"missing {sorted(missing)}")
    mapping = schemas["Move"]["discriminator"]["mapping"]  # "play" -> "#/components/schemas/PlayMove"
    bad = [move for move in call["view"]["legal_moves"]
           if move.get("type") not in mapping
           or set(move) - set(schemas[mapping[move["type"]].split("/")[-1]]["properties"])]
    check("fixture: each legal move is a Move variant with only its fields",
          call["view"]["legal_moves"] and not bad, f"{bad}")


def move_checks(url, secret, call, label):
    body = json.dumps(call).encode()
    legal = call["view"]["legal_moves"]
    best = max(m.get("points") or 0 for m in legal)
    status, answer, ctype = post(url, body, sign(secret, body))
    check(f"signed move call ({label}): 200 application/json", status == 200 and ctype.startswith("application/json"),
          f"{status} {ctype} {answer!r}")
    check(f"signed move call ({label}): the answer is one of legal_moves, unchanged", answer in legal,
          f"answered {answer!r}, legal {legal!r}")
    check(f"signed move call ({label}): the default choice, the most points ({best})",
          isinstance(answer, dict) and (answer.get("points") or 0) == best, f"answered {answer!r}")


def main():
    url, secret = sys.argv[1], sys.argv[2]
    call = json.load(open(os.path.join(HERE, "move-call.json")))
    body = json.dumps(call).encode()
    ping = {"type": "ping", "call_id": str(uuid.uuid4()), "challenge": uuid.uuid4().hex}
    ping_body = json.dumps(ping).encode()

    status, answer, _ = post(url, ping_body)
    check("ping without a signature: 200, the challenge echoed", status == 200 and answer == {"challenge": ping["challenge"]},
          f"{status} {answer!r}")

    if secret == "--no-secret":
        status, answer, _ = post(url, body, sign("whatever the server holds", body))
        check("move call before a secret is set: 401", status == 401, f"{status} {answer!r}")
        return

    fixture_matches_schema(call)
    status, answer, _ = post(url, ping_body, sign(secret, ping_body))
    check("signed ping: the challenge echoed", status == 200 and answer == {"challenge": ping["challenge"]},
          f"{status} {answer!r}")
    status, answer, _ = post(url, ping_body, sign("another secret", ping_body))
    check("ping with a wrong signature: still answered (registration)", status == 200 and answer == {"challenge": ping["challenge"]},
          f"{status} {answer!r}")

    move_checks(url, secret, call, "the fixture")
    reversed_call = copy.deepcopy(call)
    reversed_call["view"]["legal_moves"].reverse()
    move_checks(url, secret, reversed_call, "legal_moves reversed")

    now = int(time.time() * 1000)
    other_body = body.replace(b'"seat": 0', b'"seat": 1')
    assert other_body != body
    refused = [
        ("signed with another secret", sign("not the secret", body)),
        ("signature of another body", sign(secret, other_body)),
        ("no Domino-Signature header", None),
        ("t 6 minutes old", sign(secret, body, now - 6 * 60 * 1000)),
        ("t 6 minutes ahead", sign(secret, body, now + 6 * 60 * 1000)),
        ("t in seconds, not ms", sign(secret, body, now // 1000)),
        ("v1 cut short", sign(secret, body)[:-2]),
        ("v1 with extra characters", sign(secret, body) + "00"),
        ("t missing", "v1=" + sign(secret, body).split("v1=")[1]),
    ]
    for name, signature in refused:
        status, answer, _ = post(url, body, signature)
        check(f"move call, {name}: 401", status == 401, f"{status} {answer!r}")
    status, answer, _ = post(url, body, sign(secret, body) + ",v1=" + "0" * 64)
    check("move call with two v1, one right (a rotated secret): 200", status == 200 and answer in call["view"]["legal_moves"],
          f"{status} {answer!r}")
    garbage = b"not json"
    status, answer, _ = post(url, garbage, sign(secret, garbage))
    check("signed body that is not JSON: 400", status == 400, f"{status} {answer!r}")


if __name__ == "__main__":
    main()
    sys.exit(1 if failures else 0)
