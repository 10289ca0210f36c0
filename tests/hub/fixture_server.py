#!/usr/bin/env python3
"""A local stand-in for the Hugging Face Hub, for vramplan's Hub client tests.

It answers GET/HEAD {hub}/{org}/{name}/resolve/{revision}/{file} the way huggingface.co does:
X-Repo-Commit, ETag (git blob sha1) for small files, a 302 to a separate "CDN" server with
X-Linked-Etag (sha256) and X-Linked-Size for safetensors files (LFS), HTTP Range support, and
X-Error-Code headers (RepoNotFound, RevisionNotFound, EntryNotFound, GatedRepo) on errors.

Repositories (the config files live in tests/hub/repos/<org>/<name>/<revision>/):
  tiny-org/tiny-llama      main and v1.0 (4 layers); config + single model.safetensors (BF16)
  tiny-org/tiny-sharded    config + model.safetensors.index.json + 2 shards (BF16 + F32 norms)
  tiny-org/big-header      config + model.safetensors whose header is above 64 KiB
  tiny-org/no-range        config + model.safetensors served directly, ignoring Range
  tiny-org/no-weights      config only
  tiny-org/no-config       no config.json (404 EntryNotFound)
  tiny-org/not-json        config.json is an HTML page
  tiny-org/huge            config.json of 11 MiB
  tiny-org/slow            answers after --slow seconds (default 10)
  tiny-org/server-error    HTTP 500
  tiny-org/loop            redirects to itself forever
  tiny-org/via-cdn         config.json redirected (302) to the CDN on another port
  old-org/renamed-llama    307 relative redirect to tiny-org/tiny-llama (a renamed repo)
  gated-org/gated-llama    401 GatedRepo without a token, 403 with a wrong one; the token is
                           hf_fixture_valid_token
  evil-org/bad-etag        ETag "../../../../escaped"
  evil-org/no-commit       no X-Repo-Commit header
  any other                401 RepoNotFound without a token, 404 RepoNotFound with one

GET /__log on any server returns the requests every server received (method, path, server,
authorization, range) as JSON; GET /__clear empties it.

Usage: fixture_server.py [--https] [--slow SECONDS]. Prints one JSON line with the base URLs
({"hub", "cdn", "https", "ca"}) once it listens, then serves until killed.
"""

import argparse
import hashlib
import json
import os
import shutil
import signal
import ssl
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
REPOS_DIR = os.path.join(HERE, "repos")
VALID_TOKEN = "hf_fixture_valid_token"

LOG = []
LOG_LOCK = threading.Lock()


def read(path):
    with open(path, "rb") as f:
        return f.read()


def commit_of(repo, revision_dir):
    return hashlib.sha1(f"{repo}@{revision_dir}".encode()).hexdigest()


def git_blob_sha(data):
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def safetensors(tensors, metadata_padding=0):
    """Bytes of a safetensors file of zeros: tensors is [(name, dtype, shape)]."""
    sizes = {"BF16": 2, "F16": 2, "F32": 4, "I8": 1}
    header = {"__metadata__": {"format": "pt"}}
    if metadata_padding:
        header["__metadata__"]["padding"] = "x" * metadata_padding
    offset = 0
    for name, dtype, shape in tensors:
        n = 1
        for d in shape:
            n *= d
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + n * sizes[dtype]]}
        offset += n * sizes[dtype]
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + b"\0" * offset


def llama_tensors(config, norm_dtype="BF16"):
    """The tensors of a Llama checkpoint as transformers names and shapes them."""
    h = config["hidden_size"]
    f = config["intermediate_size"]
    v = config["vocab_size"]
    heads = config["num_attention_heads"]
    kv = config.get("num_key_value_heads", heads)
    d = h // heads
    out = [("model.embed_tokens.weight", "BF16", [v, h])]
    for i in range(config["num_hidden_layers"]):
        p = f"model.layers.{i}."
        out += [
            (p + "self_attn.q_proj.weight", "BF16", [heads * d, h]),
            (p + "self_attn.k_proj.weight", "BF16", [kv * d, h]),
            (p + "self_attn.v_proj.weight", "BF16", [kv * d, h]),
            (p + "self_attn.o_proj.weight", "BF16", [h, heads * d]),
            (p + "mlp.gate_proj.weight", "BF16", [f, h]),
            (p + "mlp.up_proj.weight", "BF16", [f, h]),
            (p + "mlp.down_proj.weight", "BF16", [h, f]),
            (p + "input_layernorm.weight", norm_dtype, [h]),
            (p + "post_attention_layernorm.weight", norm_dtype, [h]),
        ]
    out.append(("model.norm.weight", norm_dtype, [h]))
    if not config.get("tie_word_embeddings", False):
        out.append(("lm_head.weight", "BF16", [v, h]))
    return out


class Repo:
    def __init__(self, name, files_by_revision, lfs=(), gated=False, behaviour=None):
        self.name = name
        self.revisions = {}  # revision name or commit -> (commit, {file: bytes})
        for revision, files in files_by_revision.items():
            commit = commit_of(name, revision)
            self.revisions[revision] = (commit, files)
            self.revisions[commit] = (commit, files)
        self.lfs = set(lfs)
        self.gated = gated
        self.behaviour = behaviour


def build_repos():
    base = os.path.join(REPOS_DIR, "tiny-org", "tiny-llama")
    main_config = read(os.path.join(base, "main", "config.json"))
    v1_config = read(os.path.join(base, "v1.0", "config.json"))
    cfg = json.loads(main_config)
    single = safetensors(llama_tensors(cfg))
    v1_single = safetensors(llama_tensors(json.loads(v1_config)))

    tensors = llama_tensors(cfg, norm_dtype="F32")
    half = len(tensors) // 2
    shards = {"model-00001-of-00002.safetensors": tensors[:half],
              "model-00002-of-00002.safetensors": tensors[half:]}
    shard_files = {name: safetensors(t) for name, t in shards.items()}
    weight_map = {t[0]: name for name, ts in shards.items() for t in ts}
    total = sum(len(b) - 8 - struct.unpack("<Q", b[:8])[0] for b in shard_files.values())
    index = json.dumps({"metadata": {"total_size": total}, "weight_map": weight_map}).encode()

    big_header = safetensors(llama_tensors(cfg), metadata_padding=100_000)
    huge = b'{"padding": "' + b" " * (11 << 20) + b'"}'
    html = b"<!DOCTYPE html><html><body>Sign in to continue</body></html>"

    repos = [
        Repo("tiny-org/tiny-llama",
             {"main": {"config.json": main_config, "model.safetensors": single},
              "v1.0": {"config.json": v1_config, "model.safetensors": v1_single}},
             lfs=["model.safetensors"]),
        Repo("tiny-org/tiny-sharded",
             {"main": {"config.json": main_config, "model.safetensors.index.json": index,
                       **shard_files}},
             lfs=shard_files.keys()),
        Repo("tiny-org/big-header",
             {"main": {"config.json": main_config, "model.safetensors": big_header}},
             lfs=["model.safetensors"]),
        Repo("tiny-org/no-range",
             {"main": {"config.json": main_config, "model.safetensors": big_header}},
             behaviour="ignore-range"),
        Repo("tiny-org/no-weights", {"main": {"config.json": main_config}}),
        Repo("tiny-org/no-config", {"main": {"README.md": b"# no config\n"}}),
        Repo("tiny-org/not-json", {"main": {"config.json": html}}, behaviour="html"),
        Repo("tiny-org/huge", {"main": {"config.json": huge}}),
        Repo("tiny-org/slow", {"main": {"config.json": main_config}}, behaviour="slow"),
        Repo("tiny-org/server-error", {"main": {"config.json": main_config}}, behaviour="500"),
        Repo("tiny-org/loop", {"main": {"config.json": main_config}}, behaviour="loop"),
        Repo("tiny-org/via-cdn", {"main": {"config.json": main_config}}, lfs=["config.json"]),
        Repo("old-org/renamed-llama", {"main": {}}, behaviour="renamed"),
        Repo("gated-org/gated-llama",
             {"main": {"config.json": main_config, "model.safetensors": single}},
             lfs=["model.safetensors"], gated=True),
        Repo("evil-org/bad-etag", {"main": {"config.json": main_config}}, behaviour="bad-etag"),
        Repo("evil-org/no-commit", {"main": {"config.json": main_config}}, behaviour="no-commit"),
    ]
    return {r.name: r for r in repos}


class State:
    repos = {}
    cdn_blobs = {}  # sha256 -> bytes
    cdn_url = ""
    slow_seconds = 10.0


def parse_range(header, size):
    """(first, last) inclusive for 'bytes=a-b', or None when there is none or it is unusable."""
    if not header or not header.startswith("bytes="):
        return None
    first, _, last = header[len("bytes="):].partition("-")
    if not first.isdigit():
        return None
    first = int(first)
    last = int(last) if last.isdigit() else size - 1
    if first >= size:
        return None
    return first, min(last, size - 1)


class Handler(BaseHTTPRequestHandler):
    server_name_label = "hub"
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):  # quiet: tests read /__log instead
        pass

    def handle_one_request(self):
        try:
            super().handle_one_request()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client gave up (timeout tests)

    def record(self):
        with LOG_LOCK:
            LOG.append({"server": self.server_name_label, "method": self.command,
                        "path": self.path,
                        "authorization": self.headers.get("Authorization"),
                        "range": self.headers.get("Range")})

    def send(self, status, body=b"", headers=None, head=False):
        self.send_response(status)
        headers = dict(headers or {})
        headers.setdefault("Content-Type", "application/json")
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def send_file(self, data, headers, head):
        r = parse_range(self.headers.get("Range"), len(data))
        if r is None:
            self.send(200, data, {**headers, "Content-Type": "application/octet-stream",
                                  "Accept-Ranges": "bytes"}, head)
        else:
            first, last = r
            self.send(206, data[first:last + 1],
                      {**headers, "Content-Type": "application/octet-stream",
                       "Content-Range": f"bytes {first}-{last}/{len(data)}"}, head)

    def do_HEAD(self):
        self.do_GET(head=True)

    def do_GET(self, head=False):
        path = urllib.parse.urlsplit(self.path).path
        if path == "/__log":
            with LOG_LOCK:
                return self.send(200, json.dumps(LOG).encode())
        if path == "/__clear":
            with LOG_LOCK:
                LOG.clear()
            return self.send(200, b"{}")
        self.record()
        if self.server_name_label == "cdn":
            return self.serve_cdn(path, head)
        return self.serve_hub(path, head)

    def serve_cdn(self, path, head):
        sha = path.rsplit("/", 1)[-1]
        if sha not in State.cdn_blobs:
            return self.send(404, b"<Error>NoSuchKey</Error>", {"Content-Type": "application/xml"})
        return self.send_file(State.cdn_blobs[sha], {"ETag": f'"{sha}"'}, head)

    def error(self, status, code, message, head, commit=None):
        headers = {"X-Error-Code": code, "X-Error-Message": message}
        if commit:
            headers["X-Repo-Commit"] = commit
        self.send(status, json.dumps({"error": message}).encode(), headers, head)

    def serve_hub(self, path, head):
        parts = [urllib.parse.unquote(p) for p in path.split("/")[1:]]
        if len(parts) < 5 or parts[2] != "resolve":
            return self.send(404, b"Not Found", {"Content-Type": "text/plain"}, head)
        repo_id = f"{parts[0]}/{parts[1]}"
        revision = parts[3]
        filename = "/".join(parts[4:])
        auth = self.headers.get("Authorization")
        repo = State.repos.get(repo_id)
        if repo is None:
            status = 404 if auth else 401
            return self.error(status, "RepoNotFound", "Repository not found", head)
        if repo.gated and auth != f"Bearer {VALID_TOKEN}":
            status = 403 if auth else 401
            return self.error(status, "GatedRepo",
                              f"Access to model {repo_id} is restricted. You must have access to "
                              "it and be authenticated to access it. Please log in.", head)
        if repo.behaviour == "renamed":
            return self.send(307, b"", {"Location": path.replace(repo_id, "tiny-org/tiny-llama", 1)},
                             head)
        if repo.behaviour == "loop":
            return self.send(302, b"", {"Location": path}, head)
        if repo.behaviour == "500":
            return self.send(500, b"Internal Error", {"Content-Type": "text/plain"}, head)
        if repo.behaviour == "slow":
            time.sleep(State.slow_seconds)
        if revision not in repo.revisions:
            return self.error(404, "RevisionNotFound", f"Invalid rev id: {revision}", head)
        commit, files = repo.revisions[revision]
        if filename not in files:
            return self.error(404, "EntryNotFound", f"{filename} does not exist", head, commit)
        data = files[filename]
        headers = {"X-Repo-Commit": commit, "ETag": f'"{git_blob_sha(data)}"'}
        if repo.behaviour == "bad-etag":
            headers["ETag"] = '"../../../../escaped"'
        if repo.behaviour == "no-commit":
            del headers["X-Repo-Commit"]
        if repo.behaviour == "html":
            headers["Content-Type"] = "text/html"
            return self.send(200, data, headers, head)
        if filename in repo.lfs:
            sha = hashlib.sha256(data).hexdigest()
            State.cdn_blobs[sha] = data
            return self.send(302, b"", {**headers, "X-Linked-Etag": f'"{sha}"',
                                        "X-Linked-Size": str(len(data)),
                                        "Location": f"{State.cdn_url}/repos/{sha}?X-Amz-Expires=3600"},
                             head)
        if repo.behaviour == "ignore-range" or not filename.endswith(".safetensors"):
            content_type = "application/json" if filename.endswith(".json") else "application/octet-stream"
            return self.send(200, data, {**headers, "Content-Type": content_type}, head)
        return self.send_file(data, headers, head)


def serve(label, context=None):
    handler = type(f"{label}Handler", (Handler,), {"server_name_label": label})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    if context is not None:
        server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server.server_address[1]


def make_certificate(directory):
    """A self-signed certificate for 127.0.0.1 (the client must refuse it unless told to trust it)."""
    cert = os.path.join(directory, "cert.pem")
    key = os.path.join(directory, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", key, "-out", cert],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return cert, key


def main():
    parent = os.getppid()  # before the slow start-up, while the test that started us waits
    parser = argparse.ArgumentParser()
    parser.add_argument("--https", action="store_true", help="also serve the Hub over TLS")
    parser.add_argument("--slow", type=float, default=10.0, help="seconds tiny-org/slow waits")
    args = parser.parse_args()
    cleanup = []
    signal.signal(signal.SIGTERM, lambda *_: (([shutil.rmtree(d, True) for d in cleanup]),
                                               os._exit(0)))
    State.repos = build_repos()
    State.slow_seconds = args.slow
    cdn_port = serve("cdn")
    State.cdn_url = f"http://127.0.0.1:{cdn_port}"
    hub_port = serve("hub")
    urls = {"hub": f"http://127.0.0.1:{hub_port}", "cdn": State.cdn_url}
    if args.https:
        directory = tempfile.mkdtemp(prefix="vramplan-hub-tls-")
        cleanup.append(directory)
        cert, key = make_certificate(directory)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        urls["https"] = f"https://127.0.0.1:{serve('hub', context)}"
        urls["ca"] = cert
    print(json.dumps(urls), flush=True)
    # Serve until killed, or until the test that started us is gone (a crashed test must not
    # leave servers behind).
    try:
        while os.getppid() == parent:
            time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    for d in cleanup:
        shutil.rmtree(d, True)


if __name__ == "__main__":
    sys.exit(main())
