"""Hangar's parallel driver: runs a `type: parallel` job's entry script over mini-batches.

Python standard library only; embedded in the hangar binary and written beside the run by the
supervisor ($HANGAR_PARALLEL_DRIVER). The job's command is

    python3 "$HANGAR_PARALLEL_DRIVER" --input-data PATH [--append-row-to PATH] -- ARGS...

with the job's settings in $HANGAR_PARALLEL_SETTINGS (JSON), this node's place among the run's
nodes in $HANGAR_PARALLEL_NODE_RANK and $HANGAR_PARALLEL_NODE_COUNT, and the file the reason of
a failure is written to (the run's reason) in $HANGAR_PARALLEL_REASON_FILE.

The contract is Azure ML's parallel run step: the input's files (a folder's, walked in sorted
order, or one file) are cut into mini-batches of mini_batch_size files; node r of n takes the
mini-batches whose index % n == r; max_concurrency_per_instance worker processes each import
the entry script (sys.argv = [entry_script] + ARGS) and call its init() once, then run(mini_batch)
with a list of file paths, and shutdown() at the end if it has one. Every element run() returns
(a list, or a pandas DataFrame's rows written space-separated) is one line of the append_row_to
output (parallel_run_step.txt in a folder output; parallel_run_step_<rank>.txt on each node of a
multi-node run), in mini-batch order. A mini-batch that raises, kills its worker or runs past
retry_settings.timeout is tried again up to max_retries times (a timed-out worker is killed and
replaced); once it has failed that often its files count as failed, and the job fails when the
failed mini-batches exceed mini_batch_error_threshold or the failed files exceed
error_threshold (-1: no limit).
"""

import collections
import importlib.util
import json
import logging
import multiprocessing
import os
import sys
import time
import traceback
from multiprocessing.connection import wait

ROW_FILE = "parallel_run_step.txt"
log = logging.getLogger("hangar-parallel")


class Abort(Exception):
    """The job must fail; the message is its reason."""


def parse_args(argv):
    input_data, append_to, rest = None, None, []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            rest = argv[i + 1:]
            break
        if arg in ("--input-data", "--append-row-to") and i + 1 < len(argv):
            if arg == "--input-data":
                input_data = argv[i + 1]
            else:
                append_to = argv[i + 1]
            i += 2
            continue
        raise Abort("parallel driver: unexpected argument %r" % arg)
    if not input_data:
        raise Abort("parallel driver: --input-data is required")
    return input_data, append_to, rest


def list_files(path):
    """The input's files: a folder's, depth first in sorted order, or the one file."""
    if os.path.isfile(path):
        return [path]
    if not os.path.isdir(path):
        raise Abort("input_data: %s is neither a file nor a folder" % path)
    files = []
    for root, dirs, names in os.walk(path, followlinks=True):
        dirs.sort()
        files.extend(os.path.join(root, n) for n in sorted(names))
    return files


def mini_batches(files, size, rank, nodes):
    """This node's (index, files) mini-batches."""
    batches = [files[i:i + size] for i in range(0, len(files), size)]
    return [(i, b) for i, b in enumerate(batches) if i % nodes == rank]


def to_rows(result):
    """The lines a run() result appends: one per list element, or per DataFrame row."""
    if result is None:
        return []
    if hasattr(result, "itertuples") and hasattr(result, "columns"):
        return [" ".join(str(v) for v in row) for row in result.itertuples(index=False, name=None)]
    if isinstance(result, (str, bytes)):
        raise TypeError("run() must return a list or a pandas DataFrame, not %s" % type(result).__name__)
    return [str(v) for v in result]


def load_entry(entry):
    path = os.path.abspath(entry)
    for d in (os.path.dirname(path), os.getcwd()):
        if d not in sys.path:
            sys.path.insert(0, d)
    spec = importlib.util.spec_from_file_location(os.path.splitext(os.path.basename(path))[0], path)
    if spec is None:
        raise ImportError("cannot import %s" % entry)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    if not callable(getattr(mod, "run", None)):
        raise AttributeError("%s has no run(mini_batch) function" % entry)
    return mod


def worker_main(conn, entry, args):
    """A worker process: init() once, then run() for each mini-batch it is sent."""
    try:
        sys.argv = [entry] + list(args)
        mod = load_entry(entry)
        if callable(getattr(mod, "init", None)):
            mod.init()
    except BaseException:
        conn.send(("init-failed", traceback.format_exc()))
        return
    conn.send(("ready",))
    while True:
        try:
            msg = conn.recv()
        except EOFError:
            break
        if msg is None:
            break
        index, files = msg
        try:
            rows = to_rows(mod.run(list(files)))
            msg = ("done", index, rows)
        except BaseException:
            msg = ("failed", index, traceback.format_exc())
        sys.stdout.flush()
        sys.stderr.flush()
        conn.send(msg)
    if callable(getattr(mod, "shutdown", None)):
        mod.shutdown()


class Worker:
    def __init__(self, ctx, number, entry, args):
        self.number = number
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=worker_main, args=(child, entry, args), daemon=True)
        self.proc.start()
        child.close()
        self.ready = False
        self.task = None  # [index, files, attempt]
        self.deadline = None

    def send(self, task, timeout):
        self.task = task
        self.deadline = time.monotonic() + timeout
        try:
            self.conn.send((task[0], task[1]))
        except OSError:
            pass  # the worker died: its sentinel tells, and the mini-batch counts as an attempt

    def kill(self):
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join()
        self.conn.close()


class Driver:
    def __init__(self, settings, batches, entry, args, rank):
        self.s = settings
        self.rank = rank
        self.entry, self.args = entry, args
        self.pending = collections.deque([i, files, 0] for i, files in batches)
        self.total = len(batches)
        self.rows = {}
        self.done = self.failed = self.retried = self.failed_files = 0
        self.last_error = ""
        self.ctx = multiprocessing.get_context("fork")
        self.workers = []
        self.next_number = 0
        self.last_progress = -1

    def start_worker(self):
        self.next_number += 1
        return Worker(self.ctx, self.next_number, self.entry, self.args)

    def run(self):
        n = min(self.s["max_concurrency_per_instance"], self.total)
        self.workers = [self.start_worker() for _ in range(n)]
        try:
            while self.pending or any(w.task for w in self.workers):
                self.assign()
                self.step()
        except BaseException:
            for w in self.workers:
                w.kill()
            raise
        self.stop()

    def assign(self):
        for w in self.workers:
            if w.ready and w.task is None and self.pending:
                task = self.pending.popleft()
                log.debug("mini-batch %d (%d files) to worker %d", task[0], len(task[1]), w.number)
                w.send(task, self.s["timeout"])

    def step(self):
        busy = [w.deadline for w in self.workers if w.task]
        timeout = max(0.0, min(busy) - time.monotonic()) if busy else None
        ready = set(wait([w.conn for w in self.workers] + [w.proc.sentinel for w in self.workers], timeout))
        for i, w in enumerate(self.workers):
            if w.conn in ready:
                try:
                    msg = w.conn.recv()
                except EOFError:
                    msg = None
                if msg is not None:
                    self.handle(w, msg)
                    continue
            if w.conn in ready or w.proc.sentinel in ready:
                w.proc.join()
                self.replace(i, "the worker process exited with code %s" % w.proc.exitcode)
            elif w.task and time.monotonic() >= w.deadline:
                log.warning("mini-batch %d ran past retry_settings.timeout (%ds): killing worker %d",
                            w.task[0], self.s["timeout"], w.number)
                self.replace(i, "timed out after %ds (retry_settings.timeout)" % self.s["timeout"])

    def handle(self, w, msg):
        kind = msg[0]
        if kind == "ready":
            w.ready = True
            log.debug("worker %d: init() done", w.number)
        elif kind == "init-failed":
            log.error("worker %d: init() failed:\n%s", w.number, msg[1])
            raise Abort("the entry script's init() failed: %s" % last_line(msg[1]))
        elif kind == "done":
            self.rows[msg[1]] = msg[2]
            w.task = None
            self.done += 1
            self.progress()
        elif kind == "failed":
            log.warning("mini-batch %d failed on worker %d:\n%s", msg[1], w.number, msg[2].rstrip())
            task, w.task = w.task, None
            self.attempt_failed(task, last_line(msg[2]))

    def replace(self, i, why):
        w = self.workers[i]
        task = w.task
        if not w.ready and task is None:
            w.kill()
            raise Abort("a worker process exited before its init() finished (exit code %s)" % w.proc.exitcode)
        w.kill()
        self.workers[i] = self.start_worker()
        if task:
            self.attempt_failed(task, why)

    def attempt_failed(self, task, why):
        index, files, attempt = task
        if attempt < self.s["max_retries"]:
            self.retried += 1
            log.warning("mini-batch %d: attempt %d of %d failed (%s); retrying", index, attempt + 1,
                        self.s["max_retries"] + 1, why)
            self.pending.append([index, files, attempt + 1])
            return
        self.failed += 1
        self.failed_files += len(files)
        self.last_error = "mini-batch %d (%s): %s" % (index, os.path.basename(files[0]) if files else "", why)
        log.error("mini-batch %d failed %d times; giving up on its %d files: %s", index, attempt + 1, len(files), why)
        self.progress()
        mb, files_limit = self.s["mini_batch_error_threshold"], self.s["error_threshold"]
        if mb >= 0 and self.failed > mb:
            raise Abort("%d failed mini-batches exceed mini_batch_error_threshold %d; last error: %s"
                        % (self.failed, mb, self.last_error))
        if files_limit >= 0 and self.failed_files > files_limit:
            raise Abort("%d failed files exceed error_threshold %d; last error: %s"
                        % (self.failed_files, files_limit, self.last_error))

    def progress(self):
        finished = self.done + self.failed
        step = max(1, self.total // 20)
        if finished == self.total or finished // step != self.last_progress // step or self.failed:
            log.info("node %d progress: %d/%d mini-batches done, %d failed, %d retried",
                     self.rank, self.done, self.total, self.failed, self.retried)
        self.last_progress = finished

    def stop(self):
        """Ends the idle workers: each runs the script's shutdown() and exits."""
        for w in self.workers:
            try:
                if w.proc.is_alive():
                    w.conn.send(None)
            except OSError:
                pass
        deadline = time.monotonic() + 10
        for w in self.workers:
            w.proc.join(max(0.0, deadline - time.monotonic()))
            w.kill()


def last_line(text):
    lines = [l for l in text.strip().splitlines() if l.strip()]
    return lines[-1].strip() if lines else "unknown error"


def row_file(append_to, rank, nodes, name=None):
    path = os.path.join(append_to, name or ROW_FILE) if os.path.isdir(append_to) else append_to
    if nodes > 1:
        stem, ext = os.path.splitext(path)
        path = "%s_%d%s" % (stem, rank, ext)
    return path


def write_rows(path, rows):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    count = 0
    with open(path, "w", encoding="utf-8") as f:
        for index in sorted(rows):
            for row in rows[index]:
                f.write(row)
                f.write("\n")
                count += 1
    return count


def main(argv):
    settings = json.loads(os.environ["HANGAR_PARALLEL_SETTINGS"])
    level = getattr(logging, settings.get("logging_level", "INFO").upper(), logging.INFO)
    logging.basicConfig(level=level, stream=sys.stderr,
                        format="%(asctime)s hangar-parallel %(levelname)s %(message)s")
    rank = int(os.environ.get("HANGAR_PARALLEL_NODE_RANK", "0"))
    nodes = int(os.environ.get("HANGAR_PARALLEL_NODE_COUNT", "1"))
    driver, append_to = None, None
    try:
        input_data, append_to, args = parse_args(argv)
        files = list_files(input_data)
        batches = mini_batches(files, settings["mini_batch_size"], rank, nodes)
        log.info("node %d of %d: %d files in %d mini-batches of up to %d, this node takes %d; %d workers",
                 rank, nodes, len(files), -(-len(files) // settings["mini_batch_size"]),
                 settings["mini_batch_size"], len(batches),
                 min(settings["max_concurrency_per_instance"], max(len(batches), 1)))
        driver = Driver(settings, batches, settings["entry_script"], args, rank)
        driver.run()
    except Abort as e:
        reason = str(e)
        finish(driver, append_to, rank, nodes, settings.get("output_file_name"))
        log.error("%s", reason)
        path = os.environ.get("HANGAR_PARALLEL_REASON_FILE")
        if path:
            with open(path, "w", encoding="utf-8") as f:
                f.write(reason)
        return 1
    finish(driver, append_to, rank, nodes, settings.get("output_file_name"))
    return 0


def finish(driver, append_to, rank, nodes, name=None):
    if driver is None:
        return
    summary = "node %d: %d mini-batches: %d succeeded, %d failed (%d files), %d retried" % (
        rank, driver.total, driver.done, driver.failed, driver.failed_files, driver.retried)
    if append_to:
        path = row_file(append_to, rank, nodes, name)
        summary += "; %d rows written to %s" % (write_rows(path, driver.rows), os.path.basename(path))
    log.info("%s", summary)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
