"""Hangar's parallel driver: runs a `type: parallel` job's entry script over mini-batches.

Python standard library only; embedded in the hangar binary and written beside the run by the
supervisor ($HANGAR_PARALLEL_DRIVER). The job's command is

    python3 "$HANGAR_PARALLEL_DRIVER" --input-data PATH [--append-row-to PATH] -- ARGS...

with the job's settings in $HANGAR_PARALLEL_SETTINGS (JSON), this node's place among the run's
nodes in $HANGAR_PARALLEL_NODE_RANK and $HANGAR_PARALLEL_NODE_COUNT, and the file the reason of
a failure is written to (the run's reason) in $HANGAR_PARALLEL_REASON_FILE.

The contract is Azure ML's parallel run step: the input is cut into mini-batches (see
split_input): a folder's files (walked in sorted order) by count or by size, one file's lines by
size, an mltable's rows (its MLTable file read by the supervisor into $HANGAR_PARALLEL_TABLE) by
size, count or partition_keys. Node r of n takes the mini-batches whose index % n == r;
max_concurrency_per_instance worker processes each import the entry script (sys.argv =
[entry_script] + ARGS) and call its init() once, then run(mini_batch) (with a second argument,
the mini_batch_context, when run() takes one), and shutdown() at the end if it has one. Every
element run() returns (a list, or a pandas DataFrame's rows written space-separated) is one line
of the append_row_to output (parallel_run_step.txt in a folder output), in mini-batch order. On
a multi-node run each node writes parallel_run_step_<rank>.txt and, beside it, an index of its
mini-batches (their indexes and byte counts, in <file>.hangar-index.json); the server merges the
nodes' files into parallel_run_step.txt in mini-batch order once it has them all. A mini-batch
that raises, kills its worker or runs past retry_settings.timeout is tried again up to
max_retries times (a timed-out worker is killed and replaced); once it has failed that often its
files (lines, rows) count as failed, and the job fails when the failed mini-batches exceed
mini_batch_error_threshold or the failed files exceed error_threshold (-1: no limit).
"""

import collections
import csv
import importlib.util
import inspect
import json
import logging
import multiprocessing
import os
import sys
import time
import traceback
from multiprocessing.connection import wait

ROW_FILE = "parallel_run_step.txt"
INDEX_SUFFIX = ".hangar-index.json"
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


class Split:
    """The input cut into mini-batches: each a (payload, count, label) whose payload the worker
    turns into run()'s argument (see materialize), count is how many items (files, lines or
    rows) it holds and label names it in errors; unit names the items and how the cut was made."""

    def __init__(self, unit, how):
        self.unit, self.how, self.items, self.batches = unit, how, 0, []

    def add(self, payload, count, label):
        self.batches.append((payload, count, label))
        self.items += count

    def mine(self, rank, nodes):
        """This node's (index, batch) mini-batches: those whose index % nodes == rank."""
        return [(i, b) for i, b in enumerate(self.batches) if i % nodes == rank]


def split_input(path, settings):
    """Cuts input_data into mini-batches: a table (an mltable input, described by the
    supervisor in $HANGAR_PARALLEL_TABLE) into rows, one file by size into lines, files by
    count or by size."""
    size, limit = settings.get("mini_batch_size") or 0, settings.get("mini_batch_bytes") or 0
    table = os.environ.get("HANGAR_PARALLEL_TABLE")
    if table:
        return split_table(json.loads(table), size, limit, settings.get("partition_keys") or [])
    files = list_files(path)
    if limit and os.path.isfile(path):
        return split_lines(path, limit)
    if limit:
        out = Split("files", "of up to %d bytes" % limit)
        group, used = [], 0
        for f in files:
            n = os.path.getsize(f)
            if group and used + n > limit:
                out.add(("files", group), len(group), os.path.basename(group[0]))
                group, used = [], 0
            group.append(f)
            used += n
        if group:
            out.add(("files", group), len(group), os.path.basename(group[0]))
        return out
    out = Split("files", "of up to %d" % size)
    for i in range(0, len(files), size):
        out.add(("files", files[i:i + size]), len(files[i:i + size]), os.path.basename(files[i]))
    return out


def line_spans(path, skip_first=False):
    """(offset, length) of each line of a file, a header line left out."""
    spans, offset = [], 0
    with open(path, "rb") as f:
        for n, line in enumerate(f):
            if line.strip() and not (skip_first and n == 0):
                spans.append((offset, len(line)))
            offset += len(line)
    return spans


def split_lines(path, limit):
    """One file's lines, consecutive ones grouped up to limit bytes (a longer line alone)."""
    out = Split("lines", "of up to %d bytes" % limit)
    for group in group_spans([(path, o, n) for o, n in line_spans(path)], limit):
        (_, start, length), = merge_spans(group)
        out.add(("lines", path, start, length), len(group), "%s at byte %d" % (os.path.basename(path), start))
    return out


def merge_spans(spans):
    """Spans (path, offset, length) that follow each other in one file made one (path, start,
    length); the lines between them are blank ones, left out when read."""
    out = []
    for path, offset, length in spans:
        if out and out[-1][0] == path and offset >= out[-1][1] + out[-1][2]:
            out[-1][2] = offset + length - out[-1][1]
        else:
            out.append([path, offset, length])
    return [tuple(s) for s in out]


def split_table(t, size, limit, keys):
    """An mltable's rows: consecutive ones grouped up to limit bytes or size rows, or one
    mini-batch per distinct value of the partition keys, in the order they first appear."""
    delimited = t["format"] == "delimited"
    spans = []
    for i, f in enumerate(t["files"]):
        skip = delimited and (t["header"] == "all_files_same_headers" or (t["header"] == "from_first_file" and i == 0))
        spans.extend((f, o, n) for o, n in line_spans(f, skip))
    cols = table_columns(t)
    if keys:
        return split_partitions(t, cols, spans, keys)
    if limit:
        out, groups = Split("rows", "of up to %d bytes" % limit), group_spans(spans, limit)
    else:
        out, groups = Split("rows", "of up to %d rows" % size), (spans[i:i + size] for i in range(0, len(spans), size))
    for g in groups:
        out.add(("table", t, cols, merge_spans(g)), len(g), "%s at byte %d" % (os.path.basename(g[0][0]), g[0][1]))
    return out


def split_partitions(t, cols, spans, keys):
    """One mini-batch per distinct combination of the keys' values, in order of appearance."""
    records = read_records(t, merge_spans(spans))
    if t["format"] == "delimited":
        missing = [k for k in keys if k not in cols]
        if missing:
            raise Abort("partition_keys: no column %s in the table (its columns: %s)" % (", ".join(missing), ", ".join(cols)))
        at = [cols.index(k) for k in keys]
        key_of = lambda r: tuple(r[i] if i < len(r) else None for i in at)
    else:
        key_of = lambda r: tuple(r.get(k) if isinstance(r, dict) else None for k in keys)
    groups = collections.OrderedDict()
    for r in records:
        value = key_of(r)  # JSON values may be lists or objects: grouped by their JSON text
        groups.setdefault(json.dumps(value, sort_keys=True, default=str), (value, []))[1].append(r)
    out = Split("rows", "by partition_keys %s" % ", ".join(keys))
    for value, rows in groups.values():
        label = ", ".join("%s=%s" % kv for kv in zip(keys, value))
        out.add(("rows", t, cols, rows, dict(zip(keys, value))), len(rows), label)
    return out


def table_columns(t):
    """A delimited table's column names: its header, or Column1, Column2, ... (None: JSON lines)."""
    if t["format"] != "delimited" or not t["files"]:
        return None
    with open(t["files"][0], encoding=t.get("encoding") or "utf-8", newline="") as f:
        first = next(csv.reader(f, delimiter=t.get("delimiter") or ","), [])
    if t["header"] == "no_header":
        return ["Column%d" % (i + 1) for i in range(len(first))]
    return first


def read_records(t, segments):
    """The rows of a table's segments: lists of strings (delimited) or JSON values."""
    out = []
    for path, offset, length in segments:
        with open(path, "rb") as f:
            f.seek(offset)
            text = f.read(length).decode(t.get("encoding") or "utf-8")
        lines = [l.rstrip("\r") for l in text.split("\n") if l.strip()]
        if t["format"] == "json_lines":
            out.extend(json.loads(l) for l in lines)
        else:
            rows = csv.reader(lines, delimiter=t.get("delimiter") or ",")
            if t.get("empty_as_string"):
                out.extend(rows)
            else:  # as Azure reads them: an empty value is no value
                out.extend([v if v != "" else None for v in r] for r in rows)
    return out


def to_frame(t, cols, records):
    """What run() gets of a table's rows: a pandas DataFrame when pandas imports, else a list of
    dicts (a delimited row's values are strings)."""
    if cols is not None:
        records = [dict(zip(cols, r)) for r in records]
    try:
        import pandas
    except ImportError:
        return records
    frame = pandas.DataFrame.from_records(records, columns=cols)
    if cols is not None:  # as read_csv would: numbers become numbers
        for c in frame.columns:
            try:
                frame[c] = pandas.to_numeric(frame[c])
            except (ValueError, TypeError):
                pass
    return frame


class Context:
    """run()'s second argument, when it takes one (Azure's mini_batch_context)."""

    def __init__(self, index, partition):
        self.minibatch_index = index
        self.partition_key_value = partition


def materialize(payload):
    """run()'s argument for a mini-batch's payload, and the partition it holds (a dict)."""
    kind = payload[0]
    if kind == "files":
        return list(payload[1]), {}
    if kind == "lines":
        _, path, offset, length = payload
        with open(path, "rb") as f:
            f.seek(offset)
            text = f.read(length).decode("utf-8", "replace")
        return [l.rstrip("\r") for l in text.split("\n") if l.strip()], {}
    if kind == "table":
        _, t, cols, segments = payload
        return to_frame(t, cols, read_records(t, segments)), {}
    _, t, cols, rows, partition = payload
    return to_frame(t, cols, rows), partition


def takes_context(fn):
    """Whether run() takes a second argument (Azure's run(mini_batch, mini_batch_context))."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)]
    return len(positional) >= 2 or any(p.kind == p.VAR_POSITIONAL for p in positional)


def group_spans(spans, limit):
    """Consecutive spans (path, offset, length) grouped up to limit bytes."""
    group, used = [], 0
    for span in spans:
        if group and used + span[2] > limit:
            yield group
            group, used = [], 0
        group.append(span)
        used += span[2]
    if group:
        yield group


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
    with_context = takes_context(mod.run)
    while True:
        try:
            msg = conn.recv()
        except EOFError:
            break
        if msg is None:
            break
        index, payload = msg
        try:
            batch, partition = materialize(payload)
            if with_context:
                rows = to_rows(mod.run(batch, Context(index, partition)))
            else:
                rows = to_rows(mod.run(batch))
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
        self.task = None  # [index, (payload, count, label), attempt]
        self.deadline = None

    def send(self, task, timeout):
        self.task = task
        self.deadline = time.monotonic() + timeout
        try:
            self.conn.send((task[0], task[1][0]))
        except OSError:
            pass  # the worker died: its sentinel tells, and the mini-batch counts as an attempt

    def kill(self):
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join()
        self.conn.close()


class Driver:
    def __init__(self, settings, batches, entry, args, rank, unit="files"):
        self.s = settings
        self.unit = unit
        self.rank = rank
        self.entry, self.args = entry, args
        self.pending = collections.deque([i, batch, 0] for i, batch in batches)
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
                log.debug("mini-batch %d (%d %s) to worker %d", task[0], task[1][1], self.unit, w.number)
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
        index, batch, attempt = task
        if attempt < self.s["max_retries"]:
            self.retried += 1
            log.warning("mini-batch %d: attempt %d of %d failed (%s); retrying", index, attempt + 1,
                        self.s["max_retries"] + 1, why)
            self.pending.append([index, batch, attempt + 1])
            return
        _, count, label = batch
        self.failed += 1
        self.failed_files += count
        self.last_error = "mini-batch %d (%s): %s" % (index, label, why)
        log.error("mini-batch %d failed %d times; giving up on its %d %s: %s", index, attempt + 1, count, self.unit, why)
        self.progress()
        mb, files_limit = self.s["mini_batch_error_threshold"], self.s["error_threshold"]
        if mb >= 0 and self.failed > mb:
            raise Abort("%d failed mini-batches exceed mini_batch_error_threshold %d; last error: %s"
                        % (self.failed, mb, self.last_error))
        if files_limit >= 0 and self.failed_files > files_limit:
            raise Abort("%d failed %s exceed error_threshold %d; last error: %s"
                        % (self.failed_files, self.unit, files_limit, self.last_error))

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


def index_file(part):
    """The index beside a node's rows file: the server merges the nodes' files by it."""
    return part + INDEX_SUFFIX


def write_rows(path, rows, nodes=1):
    """Writes the rows in mini-batch order. On a multi-node run it also writes the index of the
    file, each mini-batch's index and byte count, which the server merges the nodes' files by
    (the rows of mini-batch i follow those of i-1 whichever node ran them); the index is written
    last, so a file without one was not finished."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    count, spans = 0, []
    with open(path, "wb") as f:
        for index in sorted(rows):
            data = b"".join(row.encode("utf-8", "surrogateescape") + b"\n" for row in rows[index])
            f.write(data)
            count += len(rows[index])
            if data:
                spans.append([index, len(data)])
    if nodes > 1:
        with open(index_file(path), "w", encoding="utf-8") as f:
            json.dump({"mini_batches": spans}, f)
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
        try:
            split = split_input(input_data, settings)
        except (OSError, ValueError) as e:  # unreadable files, bad JSON lines, bad encodings
            raise Abort("input_data: cannot split %s into mini-batches: %s" % (input_data, e))
        batches = split.mine(rank, nodes)
        log.info("node %d of %d: %d %s in %d mini-batches %s, this node takes %d; %d workers",
                 rank, nodes, split.items, split.unit, len(split.batches), split.how, len(batches),
                 min(settings["max_concurrency_per_instance"], max(len(batches), 1)))
        driver = Driver(settings, batches, settings["entry_script"], args, rank, split.unit)
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
    summary = "node %d: %d mini-batches: %d succeeded, %d failed (%d %s), %d retried" % (
        rank, driver.total, driver.done, driver.failed, driver.failed_files, driver.unit, driver.retried)
    if append_to:
        path = row_file(append_to, rank, nodes, name)
        summary += "; %d rows written to %s" % (write_rows(path, driver.rows, nodes), os.path.basename(path))
    log.info("%s", summary)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
