"""A sweep's rows streamed to a file as they arrive, and a sweep resumed
from it.

``to="rows.csv"`` appends rows to a CSV file; ``to="rows.parquet"`` (with
pyarrow) writes a Parquet dataset: a folder of part files, each written
whole under a temporary name and renamed, because a Parquet file is
readable only once its footer is written, which a killed process never
writes.  Either way each row carries ``sweep_index``, its call's position
in the grid (the stable key of Calls), and the sweep's description (the
function, the grid, the seeds) is kept beside the rows -- ``rows.csv.json``,
or ``_sweep.json`` in the folder -- so that a sweep resumed from the file
is checked to be the same sweep, and a table read from it carries the
attrs an in-memory one would.

Rows are buffered and written every FLUSH_ROWS rows or FLUSH_S[...] seconds,
the interval doubling from 1 s to 30 s: the first rows are on disk at once,
and a long sweep writes few parts.  A sweep that stops with an exception
(a failing call, a broken executor, Ctrl-C) writes what it holds; a killed
process loses at most its buffer, whose calls a resumed sweep makes again.

Resuming reads only the keys, chunk by chunk, into a list of intervals of
positions done, so it holds no more than a chunk of keys and the gaps
between them, however large the file.
"""
import csv
import hashlib
import io
import json
import os
import pathlib
import time

import numpy as np

from .grid import described

INDEX = "sweep_index"  # the column of each row's position in the grid
FLUSH_ROWS = 100_000
FLUSH_S = (1.0, 30.0)  # the first interval between writes, and the longest
CHUNK = 1 << 20  # keys read at a time when resuming
META = "_sweep.json"


def kind(path):
    """"csv" or "parquet", by the path's suffix."""
    suffix = pathlib.Path(path).suffix.lower()
    if suffix == ".csv":
        return "csv"
    if suffix in (".parquet", ".pq"):
        return "parquet"
    raise ValueError(f"to={str(path)!r}: the file's suffix chooses its format, .csv or .parquet "
                     f"(not {suffix or 'none'!r})")


def _pyarrow():
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:
        raise ImportError("a .parquet sweep file needs pyarrow: pip install pyarrow "
                          "(or name a .csv file)") from None
    return pyarrow


def _meta_path(path):
    path = pathlib.Path(path)
    return path / META if kind(path) == "parquet" else path.with_name(path.name + ".json")


def _plain_json(v):
    """json's default: what a grid may hold beyond JSON -- a long range or
    an array by a digest of its values, anything else by its repr."""
    if isinstance(v, range):
        return f"range({v.start}, {v.stop}, {v.step})"
    if isinstance(v, np.ndarray):
        return f"array {v.dtype} {len(v)} {hashlib.sha256(v.tobytes()).hexdigest()}"
    if isinstance(v, np.generic):
        return v.item()
    return repr(v)


def fingerprint(grid, seeds):
    """A digest of the calls: the grid (every point of a list of them) and
    the seeds."""
    h = hashlib.sha256()
    if isinstance(grid, dict):
        h.update(json.dumps(described(grid), default=_plain_json).encode())
    else:
        for p in grid:
            h.update(json.dumps(p, default=_plain_json).encode())
    h.update(json.dumps(seeds).encode())
    return h.hexdigest()


def describe(attrs, grid, seeds, names, count):
    """What a sweep file keeps beside its rows."""
    return {"format": 1, "attrs": json.loads(json.dumps(attrs, default=_plain_json)),
            "names": names, "calls": count, "fingerprint": fingerprint(grid, seeds)}


def read_meta(path):
    meta = _meta_path(path)
    try:
        return json.loads(meta.read_text())
    except FileNotFoundError:
        raise ValueError(f"{str(path)!r} is no sweep file of pysched's: {meta.name} is missing "
                         "beside its rows") from None


# ---- the positions done, as intervals ----

def _runs(keys):
    """Sorted, merged [start, end) intervals of an array of positions."""
    keys = np.unique(np.asarray(keys, dtype=np.int64))
    if not len(keys):
        return []
    breaks = np.nonzero(np.diff(keys) != 1)[0]
    starts = np.concatenate([[keys[0]], keys[breaks + 1]])
    ends = np.concatenate([keys[breaks] + 1, [keys[-1] + 1]])
    return list(zip(starts.tolist(), ends.tolist()))


def merge(intervals):
    """Sorted [start, end) intervals, those that touch or overlap joined."""
    out = []
    for a, b in sorted(intervals):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def gaps(done, count):
    """The intervals of 0..count that `done` (merged intervals) leaves."""
    out, at = [], 0
    for a, b in done:
        if a > at:
            out.append((at, a))
        at = max(at, b)
    if at < count:
        out.append((at, count))
    return out


# ---- writers ----

class _Writer:
    """Buffers rows and writes them every FLUSH_ROWS rows or FLUSH_S
    seconds."""

    def __init__(self, path, names):
        self.path = pathlib.Path(path)
        self.names = names
        self.buffer = []  # (position, row)
        self.interval = FLUSH_S[0]
        self.last = time.monotonic()
        self.written = 0

    def write(self, first, rows):
        self.buffer.extend(zip(range(first, first + len(rows)), rows))
        if len(self.buffer) >= FLUSH_ROWS or time.monotonic() - self.last >= self.interval:
            self.flush()

    def flush(self):
        if self.buffer:
            self._write(self.buffer)
            self.written += len(self.buffer)
            self.buffer = []
            self.interval = min(2 * self.interval, FLUSH_S[1])
        self.last = time.monotonic()

    def close(self):
        self.flush()


def _cell(v):
    return "" if v is None else v


class CsvWriter(_Writer):
    """Appends rows to a CSV file, whose header the first rows fix (a
    column that appears later is an error: a CSV file cannot grow one)."""

    def __init__(self, path, names, header=None):
        super().__init__(path, names)
        self.header = header
        self.fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)

    def _write(self, items):
        out = io.StringIO()
        w = csv.writer(out, lineterminator="\n")
        if self.header is None:
            self.header = [INDEX] + list(dict.fromkeys([*self.names, *(k for _, r in items
                                                                       for k in r)]))
            w.writerow(self.header)
        known = set(self.header)
        for i, r in items:
            new = [k for k in r if k not in known]
            if new:
                raise ValueError(f"the function returned {new[0]!r} at {dict(list(r.items())[:len(self.names)])}, "
                                 f"a column the first rows of {self.path.name} did not have: a CSV "
                                 "file's columns are fixed by its header (write a .parquet file, or "
                                 "return every column at every point, NaN where there is none)")
            w.writerow([i] + [_cell(r.get(c)) for c in self.header[1:]])
        data = out.getvalue().encode()
        # one write of whole lines: a process killed between two writes
        # leaves whole rows, and a short write is finished
        while data:
            n = os.write(self.fd, data)
            data = data[n:]

    def close(self):
        if self.fd is None:
            return  # closed already (a sweep closes its writer again when stopping)
        try:
            super().close()
        finally:
            os.close(self.fd)
            self.fd = None


class ParquetWriter(_Writer):
    """Writes each buffer as a part file of a Parquet dataset (a folder),
    under a temporary name first."""

    def __init__(self, path, names):
        super().__init__(path, names)
        self.pa = _pyarrow()
        self.path.mkdir(parents=True, exist_ok=True)
        self.seq = len(list(self.path.glob("part-*.parquet")))

    def _write(self, items):
        pa = self.pa
        cols = [INDEX] + list(dict.fromkeys([*self.names, *(k for _, r in items for k in r)]))
        data = {c: [r.get(c) for _, r in items] for c in cols[1:]}
        data[INDEX] = [i for i, _ in items]
        try:
            table = pa.table({c: data[c] for c in cols})
        except (pa.ArrowInvalid, pa.ArrowTypeError) as e:
            raise TypeError(f"the rows cannot be written to {self.path.name}: {e} (a Parquet "
                            "column holds one type; a .csv file takes any)") from e
        while (self.path / f"part-{self.seq:06d}.parquet").exists():
            self.seq += 1
        final = self.path / f"part-{self.seq:06d}.parquet"
        tmp = self.path / f".{final.name}.tmp"
        self.pa.parquet.write_table(table, tmp)
        os.replace(tmp, final)
        self.seq += 1


# ---- opening a file to write, and reading one ----

def _csv_done(path):
    """The intervals done in a CSV sweep file and its header; a last line
    cut short (a process killed while writing) is cut off."""
    with open(path, "rb+") as f:
        f.seek(0, os.SEEK_END)
        size = f.tell()
        if size:
            f.seek(max(0, size - 1))
            if f.read(1) != b"\n":
                # back to the end of the last whole line
                block, at = b"", size
                while at > 0 and b"\n" not in block:
                    at = max(0, at - 65536)
                    f.seek(at)
                    block = f.read(size - at)
                cut = at + block.rfind(b"\n") + 1 if b"\n" in block else 0
                f.truncate(cut)
    done, header, keys = [], None, []
    with open(path, newline="") as f:
        first = f.readline()
        if first:
            header = next(csv.reader([first]))
        for line in f:
            keys.append(int(line.split(",", 1)[0]))
            if len(keys) >= CHUNK:
                done = merge(done + _runs(keys))
                keys = []
    return merge(done + _runs(keys)), header


def _parquet_parts(path):
    return sorted(pathlib.Path(path).glob("part-*.parquet"))


def _parquet_done(path):
    pq = _pyarrow().parquet
    for tmp in pathlib.Path(path).glob(".part-*.tmp"):
        tmp.unlink()  # a part a killed process did not finish
    done = []
    for part in _parquet_parts(path):
        done = merge(done + _runs(pq.read_table(part, columns=[INDEX])[INDEX].to_numpy()))
    return done


def open_writer(path, meta, resume):
    """A writer for the sweep described by meta at path, and the intervals
    of positions its file holds already (resume=True: a file there must
    hold the same sweep; resume=False: no file may be there)."""
    path = pathlib.Path(path)
    fmt = kind(path)
    if fmt == "parquet":
        _pyarrow()
    meta_path = _meta_path(path)
    exists = path.exists() or meta_path.exists()
    if exists and not resume:
        raise FileExistsError(f"to={str(path)!r} exists: resume=True continues the sweep it "
                              "holds, or remove it (or name another file) to start anew")
    done, header = [], None
    if exists:
        old = read_meta(path)
        for what in ("fingerprint", "calls", "names"):
            if old.get(what) != meta[what]:
                raise ValueError(f"{str(path)!r} holds another sweep (its grid or seeds differ: "
                                 f"{what}): resume it with the grid and seeds that made it, or "
                                 "write to another file")
        if old["attrs"].get("function") != meta["attrs"]["function"]:
            raise ValueError(f"{str(path)!r} holds a sweep of {old['attrs'].get('function')}, not "
                             f"of {meta['attrs']['function']}: resume it with that function, or "
                             "write to another file")
        if fmt == "csv" and path.exists():
            done, header = _csv_done(path)
        elif fmt == "parquet" and path.exists():
            done = _parquet_done(path)
    else:
        if fmt == "parquet":
            path.mkdir(parents=True)
        meta_path.write_text(json.dumps(meta))
    if fmt == "csv":
        return CsvWriter(path, meta["names"], header), done
    return ParquetWriter(path, meta["names"]), done


def read_frame(path):
    """A sweep file's rows as a DataFrame in grid order, indexed by
    position (a RangeIndex when it holds every call), with its attrs."""
    try:
        import pandas as pd
    except ImportError:
        raise ImportError("reading a sweep file needs pandas: pip install pandas") from None
    path = pathlib.Path(path)
    fmt = kind(path)
    meta = read_meta(path)
    if fmt == "csv":
        # a float must read back as the very float written (its repr): pandas
        # 3 reads so by default, pandas 2 only with float_precision="round_trip"
        exact = {} if int(pd.__version__.split(".")[0]) >= 3 else {"float_precision": "round_trip"}
        df = pd.read_csv(path, **exact) if path.exists() and path.stat().st_size else \
            pd.DataFrame(columns=[INDEX])
    else:
        pq = _pyarrow().parquet
        parts = [pq.read_table(p).to_pandas() for p in _parquet_parts(path)]
        parts.sort(key=lambda d: d[INDEX].min() if len(d) else 0)
        df = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=[INDEX])
    df = df.drop_duplicates(INDEX).sort_values(INDEX, kind="stable")
    index = df.pop(INDEX).to_numpy(dtype=np.int64)
    if np.array_equal(index, np.arange(meta["calls"])):
        df.index = pd.RangeIndex(meta["calls"])
    else:
        df.index = pd.Index(index)
    df.attrs.update(meta["attrs"])
    return df
