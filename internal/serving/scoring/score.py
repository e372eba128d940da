"""Hangar's scoring server for code_configuration deployments (Python standard library only).

It follows the contract of the Azure ML inference server (azureml-inference-server-http) as
users' scoring scripts expect it:

- AML_APP_ROOT is the code folder and AZUREML_ENTRY_SCRIPT the scoring script, relative to it
  (main.py when unset); AZUREML_MODEL_DIR is the model's folder. The working directory comes
  first on sys.path, then AML_APP_ROOT (Hangar runs the server in it), ahead of installed
  packages: Azure's server runs under gunicorn, which puts its working directory (AML_APP_ROOT's
  default) first, so a module beside the script wins over an installed one of the same name.
- The script is imported and its init() called once, before the port is opened. A script that
  fails to import, lacks init() or run(), or whose init() raises, prints the traceback on
  stderr and exits with status 3, as Azure's server does, so that the replica's log says why.
- GET / answers "Healthy" (Azure's liveness and readiness route; there is no other).
- POST /score calls run(raw_data) with the body as text. GET /score passes the query
  parameters as a JSON object (text), as Azure does; OPTIONS answers 200.
  run() may take a `request_headers` argument (the request's headers, a dict). A run()
  decorated with inference_schema's @input_schema gets the JSON body's fields as keyword
  arguments, as Azure does. @rawhttp (a Flask request object) is not supported: the server
  refuses to start with such a script.
- The result is JSON-encoded, as Azure does (a returned str is JSON-quoted, None is {}), except
  bytes, which are sent as they are (application/octet-stream). An exception in run() answers
  500 {"message": "run() failed: <type>: <message>"}, the traceback on stderr.
- Requests are served on threads; run() calls are serialised unless WORKER_COUNT (Azure's
  variable: its number of worker processes) allows that many at once, in this one process
  (so sharing what init() loaded: the script must then be thread-safe).
- One line per request on stdout: method, path, status, milliseconds, response bytes.
- stdout and stderr are the pipe the replica's supervisor reads. Once nobody reads it (the
  supervisor was killed), the replica drains: what is written is dropped (a print() in run()
  never fails for it), every answer carries "x-hangar-replica: draining" and closes its
  connection (the router then sends it nothing more), GET / answers 503, and once it has been
  quiet for a moment after telling the router so, the server exits.

With HANGAR_MLFLOW_SCORER set (a no-code MLflow deployment) there is no scoring script: that
file, Hangar's built-in MLflow scorer (mlflow_scorer.py), loads the MLflow model at
AZUREML_MODEL_DIR and answers POST /score in MLflow's and Azure's scoring protocols.

PORT is the port to listen on (0 picks a free one) and HANGAR_SERVE_HOST the address (default
0.0.0.0); the line "Listening on <address>:<port>" is printed once the server accepts requests.

A replica answers only the workspace's router: every request must carry the secret of
HANGAR_REPLICA_SECRET (removed from the environment before the script is imported) in the
X-Hangar-Replica-Secret header, compared in constant time; without it the answer is 401, with
another 403, and no user code runs. Only the health route (GET /) answers anyone: it says
"Healthy" and nothing else, for probes that cannot know the secret (Kubernetes' kubelet). The
header is not among the request_headers run() gets. Without HANGAR_REPLICA_SECRET the server
does not start.
"""

import hmac
import http.server
import importlib.util
import inspect
import json
import os
import select
import socket
import sys
import threading
import time
import traceback
import urllib.parse
import uuid

HEADER_LIMIT = 100  # Azure's bound on request id headers
INIT_FAILED = 3  # Azure's exit status when the script cannot be loaded or initialised
DRAIN_HEADER = "x-hangar-replica"  # "draining": the router takes the replica out of its rotation
SECRET_HEADER = "x-hangar-replica-secret"
SECRET_ENV = "HANGAR_REPLICA_SECRET"
HOST_ENV = "HANGAR_SERVE_HOST"
MLFLOW_ENV = "HANGAR_MLFLOW_SCORER"  # set: serve the MLflow model at AZUREML_MODEL_DIR with this scorer, no script
DRAIN_QUIET = 2.0  # seconds without a request, once the router was told, before a draining server exits
DRAIN_MAX = 60.0  # seconds a draining server waits at most


class Drain:
    """Whether the replica is draining because its supervisor is gone, and when it may exit."""

    def __init__(self):
        self._lock = threading.Lock()
        self.started = threading.Event()
        self._told = False  # an answer carried DRAIN_HEADER
        self._in_flight = 0
        self._last = time.monotonic()

    def start(self):
        with self._lock:
            if self.started.is_set():
                return
            self.started.set()
            self._since = time.monotonic()
        threading.Thread(target=self._exit_when_quiet, daemon=True).start()

    def enter(self):
        with self._lock:
            self._in_flight += 1

    def leave(self, told):
        with self._lock:
            self._in_flight -= 1
            self._last = time.monotonic()
            self._told = self._told or told

    def _exit_when_quiet(self):
        while True:
            time.sleep(0.1)
            now = time.monotonic()
            with self._lock:
                quiet = self._in_flight == 0 and now - self._last >= DRAIN_QUIET
                if (self._told and quiet) or (now - self._since >= DRAIN_MAX and self._in_flight == 0):
                    os._exit(0)  # nobody reads the output: no flush, no message


DRAIN = Drain()


class Output:
    """sys.stdout or sys.stderr: the pipe the replica's supervisor reads. A write that fails
    because nobody reads the pipe any more drops what was written, and everything after, and
    starts the drain."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text):
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._lost()
            return len(text)

    def flush(self):
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._lost()

    def _lost(self):
        self._stream = open(os.devnull, "w")
        DRAIN.start()

    def __getattr__(self, name):
        return getattr(self._stream, name)


def watch_supervisor(fd):
    """Starts the drain as soon as nobody reads fd (a pipe's reading end closed: POLLERR), even
    before anything is written to it. Not a pipe (a file, a terminal): nothing to watch."""
    if not os.path.exists(f"/proc/self/fd/{fd}") or not os.readlink(f"/proc/self/fd/{fd}").startswith("pipe:"):
        return

    def watch():
        p = select.poll()
        p.register(fd, 0)  # only errors and hang-ups are reported
        while not p.poll():
            pass
        DRAIN.start()

    threading.Thread(target=watch, daemon=True).start()


class ScriptError(Exception):
    """The scoring script cannot be served; the message says why."""


class Script:
    """The user's scoring script: its init() and how its run() is called."""

    def __init__(self, app_root, entry):
        self.path = os.path.join(app_root, entry.replace("/", os.sep))
        spec = importlib.util.spec_from_file_location("entry_module", self.path)
        if spec is None:
            raise ScriptError(f"cannot load {self.path}: not a Python file")
        module = importlib.util.module_from_spec(spec)
        # Registered so that pickle and dataclasses find classes the script defines.
        sys.modules["entry_module"] = module
        spec.loader.exec_module(module)
        for name in ("init", "run"):
            if not callable(getattr(module, name, None)):
                raise ScriptError(f"{self.path} does not define a {name}() function")
        if getattr(sys.modules.get("azureml.contrib.services.aml_request"), "_rawHttpRequested", False):
            raise ScriptError("run() is decorated with @rawhttp, which Hangar's scoring server does not support")
        self.init = module.init
        self.run = module.run
        self._analyse()

    def _analyse(self):
        params = list(inspect.signature(self.run).parameters.values())
        if any(p.kind not in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params):
            raise ScriptError("run() cannot accept positional-only arguments, *args, or **kwargs")
        self.wants_headers = any(p.name == "request_headers" for p in params)
        self.params = [p for p in params if p.name != "request_headers"]
        if not self.params:
            raise ScriptError("run() needs an argument for the input data")
        self.schema = is_schema_decorated(self.run)

    def arguments(self, method, body, query):
        """Returns run()'s keyword arguments, or raises BadInput."""
        if self.schema:
            return self._schema_arguments(method, body, query)
        if method == "GET":
            return {self.params[0].name: json.dumps(query_values(query))}
        try:
            return {self.params[0].name: body.decode("utf-8")}
        except UnicodeDecodeError as e:
            raise BadInput(400, f"Input cannot be decoded as UTF-8: {e}") from None

    def _schema_arguments(self, method, body, query):
        if method == "GET":
            values = query_values(query)
        else:
            try:
                values = json.loads(body)
            except ValueError as e:
                msg = f"POST body could not be decoded as JSON: {e}" if body else "POST body is empty. Expecting a JSON dictionary."
                raise BadInput(400, msg) from None
            if not isinstance(values, dict):
                raise BadInput(400, "POST body should be a JSON dictionary.")
        args = {}
        for p in self.params:
            v = values.get(p.name, p.default)
            if v is inspect.Parameter.empty:
                raise BadInput(400, f"A value is not provided for the {p.name!r} parameter.")
            args[p.name] = v
        return args


class BadInput(Exception):
    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


def is_schema_decorated(fn):
    # A script decorated with @input_schema imported inference_schema; without it, it is not.
    if "inference_schema" not in sys.modules:
        return False
    try:
        from inference_schema.schema_util import is_schema_decorated as check
    except ImportError:
        return False
    return check(fn)


def query_values(query):
    """Azure's reading of GET parameters: each value parsed as JSON when it is JSON, a list
    when the parameter repeats."""
    out = {}
    for key, values in urllib.parse.parse_qs(query, keep_blank_values=True).items():
        parsed = [json_or_text(v) for v in values]
        out[key] = parsed[0] if len(parsed) == 1 else parsed
    return out


def json_or_text(s):
    try:
        return json.loads(s)
    except ValueError:
        return s


def encode_result(result):
    """The response body and content type of run()'s result, as Azure's server encodes it."""
    if isinstance(result, (bytes, bytearray, memoryview)):
        return bytes(result), "application/octet-stream"
    if result is None:
        result = {}
    return json.dumps(result).encode("utf-8"), "application/json"


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: the router reuses its connections
    server_version = "hangar-scoring"
    # Headers and body leave in one write: unbuffered, they went as two segments and the second
    # waited for the router's delayed ACK (Nagle), 40 ms an answer.
    wbufsize = -1
    disable_nagle_algorithm = True
    script = None  # set by serve()
    slots = None
    secret = b""

    def do_GET(self):
        self.route("GET")

    def do_POST(self):
        self.route("POST")

    def do_OPTIONS(self):
        self.route("OPTIONS")

    def do_PUT(self):
        self.route("PUT")

    def do_DELETE(self):
        self.route("DELETE")

    def do_PATCH(self):
        self.route("PATCH")

    def route(self, method):
        start = time.perf_counter()
        self.extra_headers = {}
        url = urllib.parse.urlsplit(self.path)
        DRAIN.enter()
        told = False
        try:
            try:
                body = self.read_body()
                status, payload, ctype = self.dispatch(method, url, body)
            except BadInput as e:
                status, payload, ctype = error(e.status, str(e))
            except Exception as e:  # a bug here must not drop the connection without an answer
                traceback.print_exc(file=sys.stderr)
                status, payload, ctype = error(500, f"scoring server: {type(e).__name__}: {e}")
            # Logged before the answer: a pipe found broken here drains from this answer on.
            ms = (time.perf_counter() - start) * 1e3
            print(f"{method} {self.path} {status} {ms:.3f}ms {len(payload)}", flush=True)
            told = self.answer(status, payload, ctype)
        finally:
            DRAIN.leave(told)

    def dispatch(self, method, url, body):
        if not self.request_ids():
            return error(431, f"request id headers must not exceed {HEADER_LIMIT} characters")
        if url.path == "/" and method == "GET":
            if DRAIN.started.is_set():
                return error(503, "this replica's supervisor is gone; the replica is stopping")
            return 200, b"Healthy", "text/plain; charset=utf-8"
        refused = self.refused()
        if refused:
            return refused
        if url.path == "/":
            return error(405, "Method not allowed")
        if hasattr(self.script, "respond"):
            return self.mlflow_route(method, url.path, body)
        if url.path != "/score":
            return error(404, "Not found: " + url.path)
        if method == "OPTIONS":
            return 200, b"", "text/plain; charset=utf-8"
        if method not in ("GET", "POST"):
            return error(405, "Method not allowed")
        return self.score(method, body, url.query)

    def refused(self):
        """The answer to a request without the replica's secret (None: it has it)."""
        given = self.headers.get(SECRET_HEADER)
        if given is None:
            return error(401, "this replica answers only its workspace's router; call the endpoint's scoring URI")
        if not hmac.compare_digest(given.encode("utf-8", "surrogateescape"), self.secret):
            return error(403, "this replica answers only its workspace's router; the replica secret is wrong")
        return None

    def mlflow_route(self, method, path, body):
        """The routes of a no-code MLflow deployment: MLflow's scoring server's, with Azure's
        /score beside /invocations."""
        if path in ("/ping", "/health") and method == "GET":
            return 200, b"\n", "application/json"
        if path == "/version" and method == "GET":
            return 200, self.script.version.encode("utf-8"), "application/json"
        if path not in ("/score", "/invocations"):
            return error(404, "Not found: " + path)
        if method != "POST":
            return error(405, "Method not allowed: a no-code MLflow deployment scores POST requests")
        with self.slots:
            return self.script.respond(body, self.headers)

    def score(self, method, body, query):
        args = self.script.arguments(method, body, query)
        if self.script.wants_headers:
            args["request_headers"] = {k: v for k, v in self.headers.items() if k.lower() != SECRET_HEADER}
        start = time.perf_counter()
        with self.slots:
            try:
                result = self.script.run(**args)
            except BaseException as e:  # SystemExit too: one request's failure, not the server's
                traceback.print_exc(file=sys.stderr)
                sys.stderr.flush()
                self.extra_headers["x-ms-run-function-failed"] = "True"
                return error(500, f"run() failed: {type(e).__name__}: {e}")
        self.extra_headers["x-ms-run-fn-exec-ms"] = f"{(time.perf_counter() - start) * 1e3:.3f}"
        try:
            payload, ctype = encode_result(result)
        except (TypeError, ValueError) as e:
            traceback.print_exc(file=sys.stderr)
            sys.stderr.flush()
            return error(500, f"run() returned a value that cannot be encoded as JSON: {type(e).__name__}: {e}")
        return 200, payload, ctype

    def request_ids(self):
        """Echoes Azure's request id headers; False when one is too long."""
        rid = self.headers.get("x-request-id") or str(uuid.uuid4())
        client = self.headers.get("x-ms-client-request-id", "")
        legacy = self.headers.get("x-ms-request-id", "") or client or rid
        if max(len(rid), len(client), len(legacy)) > HEADER_LIMIT:
            return False
        self.extra_headers["x-request-id"] = rid
        self.extra_headers["x-ms-request-id"] = legacy
        if client:
            self.extra_headers["x-ms-client-request-id"] = client
        return True

    def read_body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            return self.read_chunked()
        try:
            n = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            raise BadInput(400, "invalid Content-Length") from None
        return self.rfile.read(n) if n > 0 else b""

    def read_chunked(self):
        parts = []
        while True:
            line = self.rfile.readline(65537)
            try:
                size = int(line.split(b";", 1)[0].strip(), 16)
            except ValueError:
                self.close_connection = True
                raise BadInput(400, "invalid chunked body") from None
            if size == 0:
                while self.rfile.readline(65537) not in (b"\r\n", b"\n", b""):
                    pass  # trailers
                return b"".join(parts)
            parts.append(self.rfile.read(size))
            self.rfile.readline(65537)

    def answer(self, status, payload, ctype):
        """Sends the answer; True when it told the router that the replica drains."""
        draining = DRAIN.started.is_set()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("x-ms-run-function-failed", self.extra_headers.pop("x-ms-run-function-failed", "False"))
        for k, v in self.extra_headers.items():
            self.send_header(k, v)
        if draining:
            self.send_header(DRAIN_HEADER, "draining")
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)
        return draining

    def log_message(self, format, *args):
        pass  # route() logs one line per request on stdout


def error(status, message):
    return status, json.dumps({"message": message}).encode("utf-8"), "application/json"


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128


class Server6(Server):
    address_family = socket.AF_INET6


def serve(script, host, port, workers, secret):
    Handler.script = script
    Handler.slots = threading.BoundedSemaphore(workers)
    Handler.secret = secret.encode("utf-8")
    server = (Server6 if ":" in host else Server)((host, port), Handler)
    shown = f"[{host}]" if ":" in host else host
    print(f"Listening on {shown}:{server.server_address[1]}", flush=True)
    watch_supervisor(1)
    server.serve_forever()


def fail(message):
    print(message, file=sys.stderr, flush=True)
    sys.exit(INIT_FAILED)


def put_code_first(app_root):
    """Puts the working directory and then app_root ahead of installed packages on sys.path."""
    for p in (app_root, os.getcwd()):
        p = os.path.abspath(p)
        if p in sys.path:
            sys.path.remove(p)
        sys.path.insert(0, p)


def mlflow_scorer(path, workers):
    """The built-in scorer of a no-code MLflow deployment (the module at path, written beside
    this file by the supervisor), for the model at AZUREML_MODEL_DIR."""
    model_dir = os.environ.get("AZUREML_MODEL_DIR")
    if not model_dir:
        fail("scoring server: a no-code MLflow deployment needs its model (AZUREML_MODEL_DIR is not set)")
    spec = importlib.util.spec_from_file_location("hangar_mlflow_scorer", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    print(f"Hangar scoring server: built-in MLflow scorer, model dir {model_dir}, {workers} concurrent predict() call(s)", flush=True)
    return module.Scorer(model_dir)


def main():
    # The user's prints reach the replica's log as they happen.
    sys.stdout.reconfigure(line_buffering=True)
    sys.stdout, sys.stderr = Output(sys.stdout), Output(sys.stderr)
    here = os.path.dirname(os.path.abspath(__file__))
    if sys.path and os.path.abspath(sys.path[0] or ".") == here:
        del sys.path[0]  # this file's folder is Hangar's, not the user's
    secret = os.environ.pop(SECRET_ENV, "")
    if not secret:
        fail(f"scoring server: {SECRET_ENV} is not set: a replica answers only its workspace's router, which sends that secret")
    host = os.environ.get(HOST_ENV) or "0.0.0.0"
    app_root = os.path.abspath(os.environ.get("AML_APP_ROOT") or os.getcwd())
    entry = os.environ.get("AZUREML_ENTRY_SCRIPT") or "main.py"
    try:
        port = int(os.environ.get("PORT", "5001"))
        workers = max(1, int(os.environ.get("WORKER_COUNT") or 1))
    except ValueError as e:
        fail(f"scoring server: bad PORT or WORKER_COUNT: {e}")
    mlflow = os.environ.get(MLFLOW_ENV)
    if mlflow:
        script = mlflow_scorer(mlflow, workers)
    else:
        put_code_first(app_root)
        print(f"Hangar scoring server: script {os.path.join(app_root, entry)}, model dir "
              f"{os.environ.get('AZUREML_MODEL_DIR', '(unset)')}, {workers} concurrent run() call(s)", flush=True)
        try:
            script = Script(app_root, entry)
        except ScriptError as e:
            fail(f"scoring server: {e}")
        except BaseException:
            traceback.print_exc()
            fail(f"scoring server: importing {os.path.join(app_root, entry)} failed (traceback above)")
    try:
        script.init()
    except BaseException as e:
        if mlflow and type(e).__name__ == "ScorerError":
            fail(f"scoring server: {e}")
        traceback.print_exc()
        fail("scoring server: init() failed (traceback above)")
    print("init() done", flush=True)
    try:
        serve(script, host, port, workers, secret)
    except OSError as e:
        fail(f"scoring server: listen on {host} port {port}: {e}")


if __name__ == "__main__":
    main()
