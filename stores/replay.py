#!/usr/bin/python3
"""The stores checked against the real thing (`make stores`).

Reads the runs that `cargo run -p idem-stores` dumped (one JSON object a line)
and replays each on a real PostgreSQL and Redis that this script starts itself,
on 127.0.0.1 only, in a temporary directory, and stops on exit (failure too):

- every SQL statement, as the page displays it, on one real connection per
  model connection, in the model's order; its tag, rows (in order where the
  SQL fixes one with ORDER BY), error code and constraint must match;
- a statement the model parks must wait on a lock in pg_stat_activity, and
  pg_blocking_pids must name the backend the model parks it behind (the lock
  holder's, or the first waiter's for the same row); a statement the model
  runs at once must not wait;
- every Redis command, as displayed, parsed as redis-cli parses it; the reply,
  and the keyspace with its TTLs on a clock mapped to the model's, exactly
  (to the millisecond): a SET that gives a TTL must have run on Redis's clock
  within the command's round trip (its PEXPIRETIME minus the TTL), and the
  key's expiry then moves to the model's clock (see `MODEL_EPOCH`);
- at the end of each run, the committed tables and the Redis keyspace.

Prints `<N> SQL statements, <M> Redis commands, <K> mismatches` and exits 1 on
any mismatch, or on a server that cannot start (saying which and how to
install it). Clients: Debian's python3-psycopg2 and python3-redis.
"""

import atexit
import glob
import json
import math
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

try:
    import psycopg2
    import psycopg2.extensions
    import redis
except ImportError as e:  # pragma: no cover - set-up error
    sys.exit(
        f"stores: missing Python module ({e.name}): apt-get install python3-psycopg2 python3-redis "
        "(make setup installs them), and run this with /usr/bin/python3"
    )

INSTALL = {
    "postgres": "apt-get install postgresql (make setup installs it)",
    "redis-server": "apt-get install redis-server (make setup installs it)",
}
# How long a statement the model parks may take to show as waiting, and to be let go.
BLOCK_TIMEOUT = 2.0
# How long a statement the model runs at once may take before it counts as waiting: on
# a loaded machine a lock's release (a lost connection's backend exiting) takes seconds.
RUN_TIMEOUT = 10.0
# How long a Redis command may take to answer before the replay stops with a message.
REDIS_TIMEOUT = 10.0
SHOWN = int(os.environ.get("STORES_SHOW", "12"))  # mismatches printed in full
# Where model time 0 stands on Redis's clock (ms since 1970: 2100-01-01). Every
# expiry is kept at MODEL_EPOCH + the model's expiry, so Redis never expires a
# key by itself and the real time the replay takes ages nothing: TTLs compare
# exactly. Model time passing expires keys by Redis's own rule (a key lives
# through the millisecond of its expiry: db.c, expireIfNeeded `now <= when`).
MODEL_EPOCH = 4_102_444_800_000


def die(msg):
    print(f"stores: error: {msg}", file=sys.stderr)
    sys.exit(1)


# ------------------------------------------------------------------ servers

def pg_bindir():
    """The newest PostgreSQL's server binaries (Debian keeps them off PATH), else PATH's."""
    runs = lambda d: all(os.access(os.path.join(d, b), os.X_OK) for b in ("postgres", "initdb"))
    dirs = sorted((os.path.dirname(p) for p in glob.glob("/usr/lib/postgresql/*/bin/postgres")),
                  key=lambda d: int(d.split("/")[4]) if d.split("/")[4].isdigit() else 0, reverse=True)
    p = shutil.which("postgres")
    dirs += [os.path.dirname(os.path.realpath(p))] if p else []
    for d in dirs:
        if runs(d):
            return d
    die(f"PostgreSQL's server binaries (postgres, initdb) not found: {INSTALL['postgres']}")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_in_use(port):
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


class Servers:
    """A private PostgreSQL cluster and a Redis, stopped by stop() (atexit, signals)."""

    def __init__(self):
        self.procs = []
        self.tmp = tempfile.mkdtemp(prefix="idem-stores-")
        atexit.register(self.stop)
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, lambda *_: sys.exit(130))

    def stop(self):
        for p in self.procs:
            if p.poll() is None:
                p.send_signal(signal.SIGINT)  # postgres: fast shutdown; redis: exit
        for p in self.procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
        self.procs = []
        shutil.rmtree(self.tmp, ignore_errors=True)

    def _as_server_user(self):
        # PostgreSQL refuses to run as root: run it as Debian's `postgres` user, in
        # the process itself (no runuser in between: stop() signals the server).
        return {"user": "postgres", "group": "postgres", "extra_groups": []} if os.geteuid() == 0 else {}

    def start_postgres(self):
        bindir = pg_bindir()
        data = os.path.join(self.tmp, "pg")
        log = os.path.join(self.tmp, "pg.log")
        if os.geteuid() == 0:
            try:
                shutil.chown(self.tmp, "postgres")
            except LookupError:
                die(f"running as root and there is no `postgres` user to run PostgreSQL: {INSTALL['postgres']}")
        r = subprocess.run(
            [f"{bindir}/initdb", "-D", data, "-U", "postgres", "--auth=trust",
             "-E", "UTF8", "--no-locale", "--no-sync"],
            capture_output=True, text=True, **self._as_server_user())
        if r.returncode != 0:
            die(f"initdb failed ({bindir}/initdb):\n{r.stderr.strip()}")
        port = free_port()
        if port_in_use(port):
            die(f"PostgreSQL: port {port} on 127.0.0.1 is in use")
        with open(log, "w") as f:
            shutil.chown(log, "postgres") if os.geteuid() == 0 else None
            p = subprocess.Popen(
                [
                    f"{bindir}/postgres", "-D", data, "-p", str(port), "-k", self.tmp,
                    "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off",
                    "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
                    "-c", "max_connections=200", "-c", "deadlock_timeout=100ms",
                    "-c", "log_min_messages=fatal"],
                stdout=f, stderr=subprocess.STDOUT, start_new_session=True, **self._as_server_user())
        self.procs.append(p)
        dsn = f"host={self.tmp} port={port} user=postgres dbname=postgres"
        deadline = time.time() + 30
        while True:
            if p.poll() is not None:
                die(f"PostgreSQL ({bindir}/postgres) did not start on 127.0.0.1:{port}"
                    f" (port in use?):\n{open(log).read().strip()}")
            try:
                c = psycopg2.connect(dsn)
                c.close()
                break
            except psycopg2.OperationalError:
                if time.time() > deadline:
                    die(f"PostgreSQL did not accept connections within 30 s:\n{open(log).read().strip()}")
                time.sleep(0.05)
        self.pg_version = subprocess.run([f"{bindir}/postgres", "--version"], capture_output=True,
                                         text=True).stdout.strip()
        return dsn

    def start_redis(self):
        exe = shutil.which("redis-server")
        if not exe:
            die(f"redis-server not found (or not executable) on PATH: {INSTALL['redis-server']}")
        port = free_port()
        if port_in_use(port):
            die(f"Redis: port {port} on 127.0.0.1 is in use")
        log = os.path.join(self.tmp, "redis.log")
        with open(log, "w") as f:
            p = subprocess.Popen(
                [exe, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                 "--dir", self.tmp, "--daemonize", "no"],
                stdout=f, stderr=subprocess.STDOUT, start_new_session=True)
        self.procs.append(p)
        # A timeout on every socket: a port another program grabbed may accept and never answer.
        r = redis.Redis(host="127.0.0.1", port=port, decode_responses=True,
                        socket_connect_timeout=REDIS_TIMEOUT, socket_timeout=REDIS_TIMEOUT)
        deadline = time.time() + 30
        while True:
            if p.poll() is not None:
                die(f"redis-server ({exe}) did not start on 127.0.0.1:{port} (port in use?):\n"
                    f"{open(log).read().strip()}")
            try:
                r.ping()
                break
            except redis.exceptions.TimeoutError:
                die(f"Redis: 127.0.0.1:{port} did not answer PING within {REDIS_TIMEOUT:g} s"
                    " (is another program on that port?)")
            except redis.exceptions.ConnectionError:
                if time.time() > deadline:
                    die(f"redis-server did not answer within 30 s:\n{open(log).read().strip()}")
                time.sleep(0.05)
        self.redis_version = r.info("server")["redis_version"]
        return r


# ------------------------------------------------------------------ redis-cli's parsing

def split_args(line):
    """The arguments of `line` as redis-cli splits them (sdssplitargs)."""
    args, i, n = [], 0, len(line)
    while True:
        while i < n and line[i].isspace():
            i += 1
        if i == n:
            return args
        cur, inq, insq = "", False, False
        while True:
            if inq:
                if i == n:
                    raise ValueError("unbalanced quotes")
                c = line[i]
                if c == "\\" and i + 1 < n:
                    nxt = line[i + 1]
                    if nxt == "x" and i + 3 < n:
                        cur += chr(int(line[i + 2:i + 4], 16))
                        i += 3
                    else:
                        cur += {"n": "\n", "r": "\r", "t": "\t", "b": "\b", "a": "\a"}.get(nxt, nxt)
                        i += 1
                elif c == '"':
                    if i + 1 < n and not line[i + 1].isspace():
                        raise ValueError("closing quote must be followed by a space")
                    inq = False
                    i += 1
                    break
                else:
                    cur += c
            elif insq:
                if i == n:
                    raise ValueError("unbalanced quotes")
                c = line[i]
                if c == "\\" and i + 1 < n and line[i + 1] == "'":
                    cur += "'"
                    i += 1
                elif c == "'":
                    if i + 1 < n and not line[i + 1].isspace():
                        raise ValueError("closing quote must be followed by a space")
                    insq = False
                    i += 1
                    break
                else:
                    cur += c
            else:
                if i == n:
                    break
                c = line[i]
                if c.isspace():
                    break
                if c == '"':
                    inq = True
                elif c == "'":
                    insq = True
                else:
                    cur += c
            i += 1
        args.append(cur)


# ------------------------------------------------------------------ replay

class Mismatch(Exception):
    pass


def wait_conn(conn, timeout):
    """Drives an async connection; True when its query finished, False on timeout."""
    deadline = time.time() + timeout
    while True:
        state = conn.poll()
        if state == psycopg2.extensions.POLL_OK:
            return True
        left = deadline - time.time()
        if left <= 0:
            return False
        if state == psycopg2.extensions.POLL_READ:
            select.select([conn.fileno()], [], [], left)
        elif state == psycopg2.extensions.POLL_WRITE:
            select.select([], [conn.fileno()], [], left)


def sql_literal(v):
    if v is None:
        return "NULL"
    if isinstance(v, int):
        return str(v)
    return "'" + v.replace("'", "''") + "'"


class Replayer:
    def __init__(self, dsn, r, dumper):
        self.dumper = dumper
        self.dsn = dsn
        self.r = r
        self.admin = psycopg2.connect(dsn)
        self.admin.autocommit = True
        self.rconn = r.connection_pool.get_connection("replay")
        self.sql = 0
        self.cmds = 0
        self.waits = 0
        self.blockers = 0       # waits whose blocker pg_blocking_pids confirmed
        self.errors = 0
        self.mismatches = []
        self.signature = None
        self.pool = []          # idle real connections, reused across runs
        self.lingering = False  # a closed connection's backend may still wait
        self.swaps = 0
        self.branches = 0       # races Postgres decided otherwise, followed into the model's branch
        self.ttls = 0           # TTLs compared (each exactly)
        self.set_rtt = 0        # the longest round trip (ms) a SET's clock was placed in

    # --- set-up

    def reset(self, run):
        if self.lingering:
            # Backends of connections a crash closed may still wait: end them.
            with self.admin.cursor() as c:
                c.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE backend_type = "
                          "'client backend' AND pid <> pg_backend_pid() AND pid <> ALL(%s)",
                          ([c.get_backend_pid() for c in self.pool],))
            self.lingering = False
        sig = json.dumps([(t["name"], t["columns"], t["unique"]) for t in run["tables"]])
        stmts = []
        if sig != self.signature:
            stmts.append("DROP SCHEMA IF EXISTS lab CASCADE; CREATE SCHEMA lab")
            for t in run["tables"]:
                cols = ", ".join(f"{c} {ty}" for c, ty in t["columns"])
                stmts.append(f"CREATE TABLE lab.{t['name']} ({cols})")
                for name, cs in t["unique"]:
                    stmts.append(f"ALTER TABLE lab.{t['name']} ADD CONSTRAINT {name} UNIQUE ({', '.join(cs)})")
            self.signature = sig
        else:
            stmts.append("TRUNCATE " + ", ".join(f"lab.{t['name']}" for t in run["tables"]))
        for t in run["tables"]:
            for row in t["rows"]:
                stmts.append(f"INSERT INTO lab.{t['name']} VALUES ({', '.join(map(sql_literal, row))})")
        with self.admin.cursor() as c:
            c.execute(";\n".join(stmts))
        self.rconn.send_command("FLUSHALL")
        self.rconn.read_response()

    def connect(self):
        if self.pool:
            return self.pool.pop()
        c = psycopg2.connect(self.dsn + " options='-c search_path=lab'", async_=1)
        wait_conn(c, 10)
        return c

    def release(self, conn):
        """Back to the pool, its transaction (if any) rolled back."""
        cur = conn.cursor()
        cur.execute("ROLLBACK")
        if wait_conn(conn, BLOCK_TIMEOUT):
            self.pool.append(conn)
        else:
            conn.close()
            self.lingering = True

    # --- checks

    def pid_waits_behind(self, pid, holder_pid):
        """Whether backend `pid` waits on a lock, and `holder_pid` is one of
        its blockers as `pg_blocking_pids` names them: the transaction holding
        the lock, or the waiter queued first for the same row (its tuple lock).
        Not a blocker's blocker: the model must name the same one."""
        with self.admin.cursor() as c:
            c.execute("SELECT wait_event_type, pg_blocking_pids(pid) FROM pg_stat_activity "
                      "WHERE pid = %s", (pid,))
            row = c.fetchone()
        if row is None or row[0] != "Lock":
            return False, row
        return holder_pid is None or holder_pid in row[1], row

    def result_of(self, cur, text):
        """The finished statement's result, shaped as the dump's."""
        rows = []
        if cur.description is not None:
            rows = [list(r) for r in cur.fetchall()]
        return {"ok": {"tag": cur.statusmessage, "rows": rows}}

    def compare_sql(self, ev, got):
        want = ev["result"]
        if "ok" in want and "ok" in got:
            w, g = want["ok"], got["ok"]
            if w["tag"] != g["tag"]:
                raise Mismatch(f"{ev['text']!r}: model {w['tag']}, Postgres {g['tag']}")
            wr, gr = w["rows"], g["rows"]
            if "ORDER BY" not in ev["text"].upper():
                wr, gr = sorted(map(json.dumps, wr)), sorted(map(json.dumps, gr))
            if wr != gr:
                raise Mismatch(f"{ev['text']!r}: rows differ: model {w['rows']}, Postgres {g['rows']}")
        elif want != got:
            raise Mismatch(f"{ev['text']!r}: model {want}, Postgres {got}")

    # --- one run

    def replay(self, run):
        self.reset(run)
        conns = {}      # model conn -> real async connection
        pending = {}    # model conn -> (cursor, text) of a statement sent and not finished
        closed = set()
        pids = {}
        hist = {}       # model conn -> what it ran so far (texts and results)
        rclock = 0      # the model time the real keyspace stands at
        i = -1
        events, end = run["events"], run["end"]
        picks = []      # the winners of the races so far, as candidate indexes
        try:
            while i + 1 < len(events):
                i += 1
                ev = events[i]
                k = ev["kind"]
                if k == "race":
                    won = self.race(ev, conns, pending)
                    if won != ev["winner"]:
                        # Postgres's scheduler let another waiter win: follow the
                        # model's run in which that one wins (it shares this one's past).
                        branch = self.branch(run["name"], picks + [ev["candidates"].index(won)])
                        if branch["events"][:i] != events[:i] or branch["events"][i]["winner"] != won:
                            raise Mismatch(f"race {ev['index']}: the model cannot let conn {won} win")
                        events, end = branch["events"], branch["end"]
                        self.branches += 1
                    picks.append(ev["candidates"].index(won))
                    continue
                if k in ("sql", "wait"):
                    n = ev["conn"]
                    if n in closed:
                        raise Mismatch(f"conn {n} runs {ev['text']!r} after its connection was lost")
                    if n not in conns:
                        conns[n] = self.connect()
                        pids[n] = conns[n].get_backend_pid()
                        hist[n] = []
                    conn = conns[n]
                    if n not in pending:
                        hist[n].append(ev["text"])
                    if k == "wait":
                        cur = conn.cursor()
                        cur.execute(ev["text"])
                        if wait_conn(conn, 0.0005):
                            raise Mismatch(f"{ev['text']!r} waits in the model, runs at once in Postgres")
                        pending[n] = (cur, ev["text"])
                        holder = None
                        if ev["holder"] is not None:
                            if ev["holder"] not in pids:
                                raise Mismatch(f"{ev['text']!r} waits behind conn {ev['holder']}, which never ran")
                            holder = pids[ev["holder"]]
                            self.blockers += 1
                        deadline = time.time() + BLOCK_TIMEOUT
                        while True:
                            ok, info = self.pid_waits_behind(pids[n], holder)
                            if ok:
                                break
                            if wait_conn(conn, 0.001):
                                raise Mismatch(f"{ev['text']!r} waits in the model, runs in Postgres")
                            if time.time() > deadline:
                                conn_of = {p: m for m, p in pids.items()}
                                said = info and (info[0], [conn_of.get(p, f"pid {p}") for p in info[1]])
                                raise Mismatch(f"{ev['text']!r} of conn {n} waits behind conn {ev['holder']} in the model;"
                                               f" in Postgres (wait, blocked by conns): {said}")
                        self.waits += 1
                        continue
                    if n in pending:
                        if pending[n][1] != ev["text"]:
                            raise Mismatch(f"conn {n}: model runs {ev['text']!r}, Postgres waits on {pending[n][1]!r}")
                        # Waiters that a rollback released race for the key: Postgres lets
                        # any of them win. One whose session is a twin of this one (the same
                        # statements, the same results) may win in its place: they swap roles.
                        twins = [m for m in pending if m != n and hist[m] == hist[n]
                                 and pending[m][1] == ev["text"]]
                        deadline = time.time() + BLOCK_TIMEOUT
                        while twins and not wait_conn(conn, 0.001) and time.time() < deadline:
                            won = next((m for m in twins if wait_conn(conns[m], 0)), None)
                            if won is not None:
                                for d in (conns, pids, pending):
                                    d[n], d[won] = d[won], d[n]
                                conn = conns[n]
                                self.swaps += 1
                                break
                        cur, text = pending.pop(n)
                    else:
                        cur = conn.cursor()
                        cur.execute(ev["text"])
                    self.sql += 1
                    try:
                        if not wait_conn(conn, RUN_TIMEOUT):
                            _, info = self.pid_waits_behind(pids[n], None)
                            pending[n] = (cur, ev["text"])
                            raise Mismatch(f"{ev['text']!r} runs at once in the model, waits in Postgres: {info}")
                        got = self.result_of(cur, ev["text"])
                    except psycopg2.Error as e:
                        got = {"error": {"code": e.pgcode,
                                         "constraint": e.diag.constraint_name if e.pgcode == "23505" else None}}
                    if "error" in ev["result"]:
                        self.errors += 1
                    hist[n].append(json.dumps(got))
                    self.compare_sql(ev, got)
                elif k == "lost":
                    n = ev["conn"]
                    conn = conns.pop(n, None)
                    closed.add(n)
                    if conn is None:
                        continue
                    was_waiting = pending.pop(n, None) is not None
                    conn.close()
                    self.lingering |= was_waiting
                    if not was_waiting:
                        # The backend reads the closed socket and rolls back: wait until it is gone.
                        deadline = time.time() + 10
                        while True:
                            with self.admin.cursor() as c:
                                c.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = %s", (pids[n],))
                                if c.fetchone()[0] == 0:
                                    break
                            if time.time() > deadline:
                                raise Mismatch(f"conn {n}'s backend outlived its closed socket")
                            time.sleep(0.0005)
                elif k == "redis":
                    rclock = self.advance(rclock, ev["t"])
                    args = split_args(ev["text"])
                    self.cmds += 1
                    before = time.time()
                    self.rconn.send_command(*args)
                    try:
                        got = self.rconn.read_response()
                    except redis.exceptions.ResponseError as e:
                        got = {"error": str(e)}
                    after = time.time()
                    if args[0].upper() == "SET" and got == "OK":
                        self.to_model_clock(args, ev["t"], before, after)
                    want = ev["reply"]
                    if want == "ok":
                        good = got == "OK"
                    elif want == "nil":
                        good = got is None
                    elif "int" in want:
                        good = got == want["int"]
                    elif "bulk" in want:
                        good = got == want["bulk"]
                    else:
                        good = isinstance(got, dict) and got["error"] == want["error"]
                    if not good:
                        raise Mismatch(f"{ev['text']!r}: model {want}, Redis {got!r}")
            # The end: tables and keyspace.
            for n, (cur, text) in list(pending.items()):
                # Statements still waiting at the end (the model's too) are cancelled below.
                pass
            with self.admin.cursor() as c:
                for name, want in end["tables"].items():
                    c.execute(f"SELECT * FROM lab.{name}")
                    got = sorted(json.dumps(list(r)) for r in c.fetchall())
                    if got != sorted(map(json.dumps, want)):
                        raise Mismatch(f"table {name} at the end: model {want}, Postgres {[json.loads(g) for g in got]}")
            rclock = self.advance(rclock, end["t"])
            self.compare_keyspace(end["redis"], end["t"])
        except Mismatch as m:
            self.mismatches.append((run["name"], i, str(m)))
        finally:
            for n, c in conns.items():
                if n in pending:
                    c.close()
                    self.lingering = True
                else:
                    self.release(c)

    def race(self, ev, conns, pending):
        """Which of the race's candidates Postgres let run first: the model's
        winner if its statement finishes, else the first that does."""
        cands = [c for c in ev["candidates"] if c in pending and c in conns]
        deadline = time.time() + BLOCK_TIMEOUT
        while time.time() < deadline:
            done = [c for c in cands if wait_conn(conns[c], 0)]
            if ev["winner"] in done or ev["winner"] not in cands:
                return ev["winner"]
            if done:
                # Give the model's winner a moment: both may have finished.
                if wait_conn(conns[ev["winner"]], 0.02):
                    return ev["winner"]
                return done[0]
            time.sleep(0.0005)
        return ev["winner"]

    def branch(self, name, picks):
        r = subprocess.run([self.dumper, name, ",".join(map(str, picks))], capture_output=True, text=True)
        if r.returncode != 0:
            raise Mismatch(f"the model's branch {picks} of this run: {r.stderr.strip()}")
        return json.loads(r.stdout)

    def redis(self, *args):
        self.rconn.send_command(*args)
        return self.rconn.read_response()

    def to_model_clock(self, args, t, before, after):
        """A SET ran between real times `before` and `after` (s) at model time
        `t`. If it gave the key a TTL, Redis's expiry is its clock then plus
        the TTL: that clock must fall within the round trip (to the ms), and
        the expiry moves to MODEL_EPOCH + t + the TTL."""
        opts = [a.upper() for a in args[3:]]
        unit = next((u for u in ("PX", "EX") if u in opts), None)
        if unit is None:
            return
        ttl = int(args[3 + opts.index(unit) + 1]) * (1 if unit == "PX" else 1000)
        ran = self.redis("PEXPIRETIME", args[1]) - ttl
        lo, hi = math.floor(before * 1000), math.floor(after * 1000)
        if not lo <= ran <= hi:
            raise Mismatch(f"{' '.join(args)!r}: Redis's TTL counts from {ran} ms, not from the"
                           f" command's own time [{lo}, {hi}] ms")
        self.set_rtt = max(self.set_rtt, hi - lo)
        self.redis("PEXPIREAT", args[1], MODEL_EPOCH + t + ttl)

    def expiry(self, key):
        """The key's expiry on the model's clock (ms); None: no TTL."""
        at = self.redis("PEXPIRETIME", key)
        return None if at < 0 else at - MODEL_EPOCH

    def advance(self, rclock, t):
        """Moves the real keyspace's clock from model time `rclock` to `t`:
        a key whose expiry `t` has passed is deleted, as Redis would expire it
        (it lives through its expiry's millisecond)."""
        if t <= rclock:
            return rclock
        for key in self.redis("KEYS", "*"):
            at = self.expiry(key)
            if at is not None and at < t:
                self.redis("DEL", key)
        return t

    def compare_keyspace(self, want, t):
        keys = sorted(self.redis("KEYS", "*"))
        if keys != sorted(k for k, _, _ in want):
            raise Mismatch(f"Redis keys at the end: model {sorted(k for k, _, _ in want)}, Redis {keys}")
        for key, value, ttl in want:
            got = self.redis("GET", key)
            if got != value:
                raise Mismatch(f"Redis {key!r} at the end: model {value!r}, Redis {got!r}")
            at = self.expiry(key)
            left = None if at is None else at - t
            if left != ttl:
                raise Mismatch(f"Redis {key!r}'s TTL at the end: model {ttl} ms, Redis {left} ms")
            self.ttls += ttl is not None


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: stores/replay.py RUNS.jsonl DUMPER  (make stores dumps the runs with DUMPER,"
                 " target/debug/idem-stores, and replays them)")
    started = time.time()
    servers = Servers()
    dsn = servers.start_postgres()
    r = servers.start_redis()
    print(f"stores: {servers.pg_version}, Redis {servers.redis_version} (private servers on 127.0.0.1)")
    rp = Replayer(dsn, r, sys.argv[2])
    runs = 0
    with open(sys.argv[1]) as f:
        for line in f:
            try:
                rp.replay(json.loads(line))
            except redis.exceptions.TimeoutError:
                die(f"Redis (127.0.0.1, redis-server {servers.redis_version}) gave no reply within"
                    f" {REDIS_TIMEOUT:g} s during run {runs + 1}")
            runs += 1
    for name, i, m in rp.mismatches[:SHOWN]:
        print(f"MISMATCH {name} (event {i}): {m}")
    if len(rp.mismatches) > SHOWN:
        print(f"… and {len(rp.mismatches) - SHOWN} more")
    print(f"stores: {runs} runs in {time.time() - started:.1f} s ({rp.waits} statements waited on a lock,"
          f" {rp.blockers} behind the blocker the model names,"
          f" {rp.errors} errors; {rp.swaps} races won by a twin session, {rp.branches} by another waiter;"
          f" {rp.ttls} TTLs equal to the ms, every SET's clock within its round trip, up to {rp.set_rtt} ms)")
    print(f"{rp.sql} SQL statements, {rp.cmds} Redis commands, {len(rp.mismatches)} mismatches")
    sys.exit(1 if rp.mismatches else 0)


if __name__ == "__main__":
    main()
