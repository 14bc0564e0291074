"""The hook's connection to torchmem: one daemon thread per process that
sleeps in select() on the socket and a wake pipe, sends queued messages,
ticks allocator stats and runs commands. Program threads only append to a
bounded queue (and write one byte to the pipe), except when the process is
dying (uncaught exception, OOM, exit), where messages are sent at once.

This module owns the connection: it alone holds the Agent, and the hooks
it installs (_steps, _cuda, _torchstats) get `current`, the getter of the
process's agent, rather than importing this module."""

import collections
import json
import os
import select
import socket
import sys
import threading
import time

from torchmem_hook import _common, _cuda, _cycles, _steps
from torchmem_hook import _torchstats as ts

_agent = None  # the Agent of this process (replaced after fork)


def _env_float(name, default):
    try:
        v = float(os.environ.get(name, ""))
        return v if v > 0 else default
    except ValueError:
        return default


class Agent(object):
    def __init__(self, torch, child=False):
        self.torch = torch
        self.path = os.environ.get("TORCHMEM_HOOK_SOCKET", "")
        self.interval = _env_float("TORCHMEM_HOOK_INTERVAL", 1.0)
        self.step_gap = 1.0 / _env_float("TORCHMEM_HOOK_STEP_HZ", 20.0)
        self.child = child  # started by fork/multiprocessing: wait to learn if a worker
        self.worker = False
        self.sock = None
        self.closed = False
        self.queue = collections.deque(maxlen=2048)
        self.send_lock = threading.Lock()
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_r, False)
        os.set_blocking(self.wake_w, False)
        self.step = None  # global step: max over optimizers of their step counts
        self.opt_steps = {}
        self.steps_pending = 0
        self.last_step_sent = 0.0
        self.last_step_time = None
        self.step_seconds_sum = 0.0
        self.thread = None
        self.pid = os.getpid()  # a different os.getpid(): this is a forked copy
        self.hello_sent = False
        self.worker_id = None
        self.conn_lock = threading.Lock()
        self.step_lock = threading.Lock()
        self.role_known = threading.Event()
        self.collect_wait = None  # seconds until _cycles' quiet collection is due
        self.cuda_devices = []  # devices of the last stats tick (step peaks read these)
        self.step_peaks = {}  # device -> [allocated, reserved]: max over the pending steps
        self.step_peaks_on = _steps.peaks_enabled()

    # ---- sending -------------------------------------------------------

    def enqueue(self, msg):
        """From any thread: queue a message for the agent thread."""
        if self.closed:
            return
        self.queue.append(msg)
        try:
            os.write(self.wake_w, b"x")
        except OSError:
            pass  # pipe full: the thread is already awake

    def send_now(self, msg):
        """From a dying thread: send the queue and msg before returning."""
        if self.closed or self.sock is None:
            return
        self.queue.append(msg)
        self._flush()

    def _flush(self):
        with self.send_lock:
            while self.queue and not self.closed:
                # Every line carries the protocol version; stamped here, where
                # all messages pass, rather than by each producer.
                msg = self.queue.popleft()
                msg["v"] = _common.PROTOCOL_VERSION
                try:
                    line = json.dumps(msg, separators=(",", ":"), default=str) + "\n"
                    self.sock.sendall(line.encode("utf-8", "replace"))
                except (OSError, ValueError):
                    self._go_quiet()
                except Exception:
                    _common.debug()

    def _go_quiet(self):
        """The supervisor is gone: stop sending, keep the program untouched."""
        self.closed = True
        self.queue.clear()
        try:
            if self.sock is not None:
                self.sock.close()
        except Exception:
            pass

    # ---- lifecycle -----------------------------------------------------

    def connect(self):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(2.0)
        s.connect(self.path)
        self.sock = s

    def start(self):
        t = threading.Thread(target=self._run, name="torchmem-hook", daemon=True)
        self.thread = t
        t.start()

    def _run(self):
        try:
            if self.child:
                self._learn_role()
            self.ensure_hello()
            if self.worker:
                self.interval = None  # workers send no allocator stats
            self._loop()
        except Exception:
            _common.debug()
            self._go_quiet()

    def ensure_hello(self):
        """Connect (if needed) and send hello, once, from whichever thread
        gets here first: the agent thread, or a DataLoader worker starting."""
        with self.conn_lock:
            if self.hello_sent or self.closed:
                return
            if self.sock is None:
                self.connect()
            self.hello_sent = True
            self.queue.appendleft(ts.hello(self))
            for n in ts.pending_notices():
                self.enqueue(n)
        self._flush()

    def request_collect(self):
        """From a gc callback: wake the thread to run _cycles' quiet collection."""
        try:
            os.write(self.wake_w, b"x")
        except OSError:
            pass

    def worker_started(self, worker_id):
        """Called by the wrapped torch DataLoader worker loop, before it runs:
        workers can live for milliseconds, so say hello synchronously."""
        self.worker, self.worker_id = True, worker_id
        self.interval = None
        self.role_known.set()
        self.ensure_hello()

    def _learn_role(self):
        """A multiprocessing child is a DataLoader worker if torch's worker
        loop starts (worker_started) or sets its worker info; wait up to 2 s."""
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline:
            if self.role_known.wait(0.02):
                return
            wi = ts.worker_info(self.torch)
            if wi is not None:
                self.worker, self.worker_id = True, getattr(wi, "id", None)
                return

    def _loop(self):
        buf = b""
        next_tick = time.monotonic() + (self.interval or 0)
        while not self.closed:
            timeout = None
            if self.interval:
                timeout = max(0.0, next_tick - time.monotonic())
            if self.steps_pending:
                gap = max(0.0, self.last_step_sent + self.step_gap - time.monotonic())
                timeout = gap if timeout is None else min(timeout, gap)
            if self.collect_wait is not None:
                timeout = self.collect_wait if timeout is None else min(timeout, self.collect_wait)
            try:
                ready, _, _ = select.select([self.sock, self.wake_r], [], [], timeout)
            except (OSError, ValueError):
                self._go_quiet()
                return
            if self.wake_r in ready:
                try:
                    os.read(self.wake_r, 4096)
                except OSError:
                    pass
            if self.sock in ready:
                try:
                    data = self.sock.recv(65536)
                except socket.timeout:
                    data = None
                except OSError:
                    data = b""
                if data == b"":
                    self._go_quiet()
                    return
                if data:
                    buf = self._commands(buf + data)
            msg = self.pending_steps_message()
            if msg is not None:
                self.queue.append(msg)
            self.collect_wait = _cycles.tick()
            if self.interval and time.monotonic() >= next_tick:
                next_tick = time.monotonic() + self.interval
                if not self.worker:
                    self.queue.append(ts.stats_message(self, "stats"))
            self._flush()

    def _commands(self, buf):
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            try:
                cmd = json.loads(line.decode("utf-8"))
            except Exception:
                continue
            if isinstance(cmd, dict):
                self.enqueue(_cuda.run_command(self, cmd))
        if len(buf) > 1 << 20:
            buf = b""
        return buf

    # ---- optimizer steps (program thread) --------------------------------

    def on_step(self, optimizer):
        if self.closed or self.worker:
            return
        key = id(optimizer)
        n = self.opt_steps.get(key, 0) + 1
        self.opt_steps[key] = n
        if self.step is not None and n <= self.step:
            return  # another optimizer of the same iteration (GANs, multi-opt)
        peaks = self._take_peaks()
        now = time.monotonic()
        with self.step_lock:
            for d, a, r in peaks:
                p = self.step_peaks.setdefault(d, [a, r])
                p[0], p[1] = max(p[0], a), max(p[1], r)
            if self.last_step_time is not None:
                self.step_seconds_sum += now - self.last_step_time
            self.last_step_time = now
            self.step = n
            self.steps_pending += 1
            if now - self.last_step_sent < self.step_gap:
                if self.steps_pending == 1:
                    # First held-back step: wake the agent thread so it sends
                    # it when the gap is over even if no further step comes.
                    try:
                        os.write(self.wake_w, b"x")
                    except OSError:
                        pass
                return
            msg = self._step_message(now)
        self.enqueue(msg)

    def _take_peaks(self):
        if not self.step_peaks_on:
            return []
        try:
            return _steps.take_peaks(self.torch, self.cuda_devices)
        except Exception:
            self.step_peaks_on = False  # a torch without these calls: once
            _common.debug()
            return []

    def _step_message(self, now):
        """Build the step message for the pending steps; hold step_lock."""
        self.last_step_sent = now
        msg = ts.stats_message(self, "step")
        msg["steps"] = self.steps_pending
        if self.step_peaks:
            msg["step_peaks"] = [{"device": d, "allocated": p[0], "reserved": p[1]} for d, p in sorted(self.step_peaks.items())]
            self.step_peaks = {}
        if self.step_seconds_sum > 0:
            msg["step_seconds"] = self.step_seconds_sum / self.steps_pending
        self.steps_pending = 0
        self.step_seconds_sum = 0.0
        return msg

    def pending_steps_message(self):
        """The rate-limited steps not yet reported, once their gap is over."""
        now = time.monotonic()
        with self.step_lock:
            if self.steps_pending and now - self.last_step_sent >= self.step_gap:
                return self._step_message(now)
        return None

    def flush_steps(self):
        with self.step_lock:
            if self.steps_pending:
                return self._step_message(time.monotonic())
        return None


def start(torch):
    """Called once torch is imported in this process."""
    global _agent
    if _agent is not None:
        return
    child = _is_mp_child()
    a = Agent(torch, child=child)
    if not child:
        try:
            a.connect()
        except OSError:
            return  # no supervisor listening: stay out of the way
    _agent = a
    if not child:  # once per job, not again from each worker or rank
        for text in _common.degraded():
            ts.notice(None, "Python %s: %s" % (sys.version.split()[0], text))
    _install(torch)
    if _AT_FORK:
        os.register_at_fork(after_in_child=_after_fork_in_child)
    a.start()


# Python 3.6 has no os.register_at_fork: current() then notices a fork by
# the pid and replaces the agent there (the first hook call in the child).
_AT_FORK = hasattr(os, "register_at_fork")


def current():
    """The Agent of this process (None: not started, or the supervisor was
    not listening); the hooks call it each time, as a fork replaces it."""
    if not _AT_FORK and _agent is not None and _agent.pid != os.getpid():
        _after_fork_in_child()
    return _agent


def _install(torch):
    """Install the step hook, the DataLoader worker hook, exception hooks,
    the CUDA-init hook and atexit, each given current; one that fails
    leaves the others."""
    for fn in (_steps.install_step_hook, ts.install_worker_hook, ts.install_excepthooks, _cuda.install_cuda_init, ts.install_atexit,
               _cycles.install):
        try:
            fn(torch, current)
        except Exception:
            _common.debug()


def _is_mp_child():
    # A spawn/forkserver child imports torch while unpickling its target,
    # before multiprocessing records the parent: its argv says it instead.
    for arg in _common.start_argv:
        if arg == "--multiprocessing-fork" or "multiprocessing.forkserver" in str(arg):
            return True
    mp = sys.modules.get("multiprocessing.process")
    if mp is None:
        return False
    try:
        if hasattr(mp, "parent_process"):
            return mp.parent_process() is not None
        # Python < 3.8: the main process's _parent_pid is None, a child's
        # is its parent's pid.
        return getattr(mp.current_process(), "_parent_pid", None) is not None
    except Exception:
        return False


def _after_fork_in_child():
    """The forked child inherits the parent's socket and a dead thread: drop
    both (closing our copy of the fd leaves the parent's connection alone)
    and start afresh, learning whether this child is a DataLoader worker."""
    global _agent
    old = _agent
    if old is None:
        return
    try:
        for fd in (old.wake_r, old.wake_w):
            os.close(fd)
        old.closed = True
        if old.sock is not None:
            os.close(old.sock.detach())
    except Exception:
        pass
    try:
        a = Agent(old.torch, child=True)
        a.step, a.opt_steps = old.step, dict(old.opt_steps)
        _agent = a
        a.start()
    except Exception:
        _agent = None

