"""The example migration function (Examples/jit-migration/migrate_password.py) under test: its own handler, plus modes that
break the contract the way a faulty function can, and a count of the calls it received.

Usage: jit_function.py <migrate_password.py's arguments>
  POST /_mode {"mode": "normal" | "wrongNonce" | "replay" | "slow" | "block" | "update"}: how the next calls are answered
  POST /_tenant {"tenant": URL}: the new tenant (it starts after the function, on a port the test learns then)
  GET /_calls  {"calls": N}: the events received so far
"""
import json
import os
import sys
import threading
import time
from http.server import ThreadingHTTPServer

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Examples", "jit-migration"))
import migrate_password as example  # noqa: E402

state = {"mode": "normal", "calls": 0, "last": None}
lock = threading.Lock()


def main(argv):
    args = argv
    keys = args[args.index("--keys") + 1]
    key, certificate = example.key_pair(keys)
    value = lambda name: args[args.index(name) + 1] if name in args else None  # noqa: E731
    migration = example.Migration(key, value("--legacy").rstrip("/"), value("--legacy-client"), value("--legacy-ca"),
                                  value("--app-id"), value("--tenant") or "http://127.0.0.1:9")
    base = example.handler_for(migration)

    class Handler(base):
        def do_GET(self):
            if self.path == "/_calls":
                with lock:
                    return self.reply(200, {"calls": state["calls"]})
            return self.reply(404, {})

        def do_POST(self):
            length = int(self.headers.get("Content-Length", "0"))
            if self.path == "/_mode":
                with lock:
                    state["mode"] = json.loads(self.rfile.read(length))["mode"]
                return self.reply(200, {})
            if self.path == "/_tenant":
                migration.tenant = json.loads(self.rfile.read(length))["tenant"]
                return self.reply(200, {})
            body = self.rfile.read(length)
            with lock:
                state["calls"] += 1
                mode = state["mode"]
            if mode == "slow":
                time.sleep(7)  # beyond the test tenant's timeout (6000 ms, JITMigrationTests)
            if not migration.caller_is_the_tenant(self.headers.get("Authorization", "")):
                return self.reply(401, {"error": "the caller is not the tenant"})
            try:
                answer = migration.answer(json.loads(body))
            except Exception as e:  # noqa: BLE001 - what a function that cannot decrypt answers
                return self.reply(400, {"error": f"the event could not be read: {type(e).__name__}"})
            if mode == "wrongNonce":
                answer["data"]["nonce"] = "00000000-0000-0000-0000-000000000000"
            if mode == "update":
                answer["data"]["actions"] = [{"@odata.type": example.ACTION + "UpdatePassword"}]
            if mode == "block":
                answer["data"]["actions"] = [{"@odata.type": example.ACTION + "Block", "title": "Locked",
                                              "message": "Your old account is locked."}]
            with lock:
                replayed, state["last"] = state["last"], answer
            self.reply(200, replayed if mode == "replay" and replayed else answer)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(json.dumps({"url": f"http://127.0.0.1:{server.server_port}/", "certificate": certificate}), flush=True)
    server.serve_forever()


main(sys.argv[1:])
