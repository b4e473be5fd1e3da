"""Inside a docker job's container: run the job's command, keep the last bytes of its stdout and stderr, and write
them into a folder the engine reads on the host, so that the end of the output arrives whatever the daemon's
log does under load (its json-file copy rotates under a flood, and a busy daemon closes the log streams before
they deliver the last lines).

    python3 -I -S /clade/capture.py KEEP OUT -- COMMAND...

The command's stdout and stderr are pipes to this process; the last KEEP bytes of each are written to OUT/stdout
and OUT/stderr, and OUT/state.json says how many bytes each stream had and whether the command ended
(`complete`). The files are replaced whole (a write to a temporary name, then a rename) every FLUSH_S while
output comes, so a container killed at its time limit leaves what came until a moment before. Exits with the
command's code, 128+N when a signal N ended it (as the container's init does), 127 when it could not start
(its message on stderr, `clade-capture: exec PROGRAM failed: REASON`). SIGTERM and SIGINT are passed on to it.

Standard library only, no import of Clade's: this file is bind-mounted read-only into an image that holds
Python and nothing of the engine.
"""

import json
import os
import selectors
import signal
import subprocess
import sys
import time

FLUSH_S = 0.5  # how often the tails are written while output comes
CHUNK = 64 * 1024


class Tail:
    """The last `keep` bytes of a stream and its length."""

    def __init__(self, keep):
        self.keep = keep
        self.buf = bytearray()
        self.total = 0

    def add(self, data):
        self.total += len(data)
        self.buf += data
        if len(self.buf) > self.keep:
            del self.buf[: len(self.buf) - self.keep]


def write_atomically(path, data):
    temporary = path + ".part"
    with open(temporary, "wb") as handle:
        handle.write(data)
    os.replace(temporary, path)


def flush(out_dir, tails, complete):
    """Each stream's tail, then the state that names them: a reader sees whole files, never half of one."""
    try:
        for name, tail in tails.items():
            write_atomically(os.path.join(out_dir, name), bytes(tail.buf))
        state = {name + "_total": tail.total for name, tail in tails.items()}
        state["complete"] = complete
        write_atomically(os.path.join(out_dir, "state.json"), json.dumps(state).encode())
    except OSError:
        pass  # the engine falls back to the daemon's log


def drain(pipes, tails):
    """What is in the pipes now, without waiting: all that the ended command wrote (a write returns once its
    bytes are in the pipe), but not what a process it left behind may write later."""
    for name, pipe in pipes.items():
        os.set_blocking(pipe.fileno(), False)
        while True:
            try:
                data = os.read(pipe.fileno(), CHUNK)
            except BlockingIOError:
                break
            if not data:
                break
            tails[name].add(data)


def pump(child, pipes, tails, out_dir):
    """Read both pipes into their tails until both end or the command ends. A process the command left behind
    may hold a pipe open; as when the command was the container's first process, its later output is not kept
    (the container's end takes it)."""
    selector = selectors.DefaultSelector()
    for name, pipe in pipes.items():
        selector.register(pipe, selectors.EVENT_READ, name)
    last_flush, changed = time.monotonic(), False
    while selector.get_map():
        for key, _ in selector.select(timeout=FLUSH_S):
            data = os.read(key.fd, CHUNK)
            if data:
                tails[key.data].add(data)
                changed = True
            else:
                selector.unregister(key.fileobj)
        if child.poll() is not None:
            drain({key.data: key.fileobj for key in selector.get_map().values()}, tails)
            break
        now = time.monotonic()
        if changed and now - last_flush >= FLUSH_S:
            flush(out_dir, tails, False)
            last_flush, changed = now, False
    selector.close()


def main(argv):
    keep, out_dir, command = int(argv[1]), argv[2], argv[4:]
    tails = {"stdout": Tail(keep), "stderr": Tail(keep)}
    try:
        child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except OSError as exc:
        message = f"clade-capture: exec {command[0]} failed: {exc.strerror or exc}\n".encode()
        tails["stderr"].add(message)
        sys.stderr.buffer.write(message)
        flush(out_dir, tails, True)
        return 127
    for number in (signal.SIGTERM, signal.SIGINT):
        signal.signal(number, lambda received, _frame: child.send_signal(received))
    pump(child, {"stdout": child.stdout, "stderr": child.stderr}, tails, out_dir)
    code = child.wait()
    flush(out_dir, tails, True)
    return 128 - code if code < 0 else code


if __name__ == "__main__":
    sys.exit(main(sys.argv))
