"""Rendering processes: chunk HTML files rendered to PDF files, and the files joined, elsewhere.

xhtml2pdf is pure Python, so a long table renders on several CPUs: the caller writes each
chunk's HTML to a file and hands it to one of a few processes started here, then has one
of them join the rendered files once every chunk is done.

The processes are started as ``python -m app.rendering.pdf_processes``, a program that
imports the renderer and nothing else. multiprocessing's spawn would start them by importing
the caller's main module first, which in a worker is ``jobs.worker`` with RQ, Redis and the
whole application (measured: about 45 MB more per process); a fork would copy the caller's
database connections and threads. So the caller never imports xhtml2pdf, reportlab or
pypdf, and each process holds only the renderer, its fonts and one chunk.

They talk in JSON lines over the processes' standard input and output, one answer per
request, in the order asked. A process that ends (killed, or out of memory) closes its
output, which the caller reads as an error. A process whose input closes, because the caller
is done or was killed, finishes its request and exits.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from app.rendering.pdf import PdfRenderError

#: How long a process may take to exit once its input is closed before it is killed.
EXIT_SECONDS = 10.0
_PACKAGE_ROOT = Path(__file__).resolve().parents[2]


@dataclass
class _Process:
    popen: subprocess.Popen[bytes]

    def ask(self, request: dict[str, Any]) -> None:
        stdin = self.popen.stdin
        assert stdin is not None
        try:
            stdin.write(json.dumps(request).encode("utf-8") + b"\n")
            stdin.flush()
        except BrokenPipeError as exc:
            raise PdfRenderError("a PDF rendering process ended unexpectedly") from exc

    def answer(self) -> str:
        """The next answer: the path written. Raises PdfRenderError for an error or an ended process."""
        stdout = self.popen.stdout
        assert stdout is not None
        line = stdout.readline()
        if not line:
            code = self.popen.wait()
            raise PdfRenderError(f"a PDF rendering process ended (exit status {code}) before finishing its work")
        reply = json.loads(line)
        if "error" in reply:
            raise PdfRenderError(reply["error"])
        return str(reply["wrote"])


class RenderingProcesses:
    """A few rendering processes; use as a context manager so that they always end.

    ``render`` queues a chunk on the next process in turn and returns a ticket; ``wait``
    takes the tickets back in the order they were given. In turn, not on the least busy:
    answers are read in order, so a process that is done may not look it yet, and chunks
    cost about the same. ``join`` waits for nothing: call it once every chunk has been
    waited for.
    """

    def __init__(self, count: int) -> None:
        if count < 1:
            raise ValueError("at least one rendering process is needed")
        self.count = count
        self._processes: list[_Process] = []
        self._turn = 0

    def __enter__(self) -> RenderingProcesses:
        environment = dict(os.environ)
        # The program imports `app`; a worker's working directory need not be the project's.
        paths = [str(_PACKAGE_ROOT), environment.get("PYTHONPATH", "")]
        environment["PYTHONPATH"] = os.pathsep.join(path for path in paths if path)
        try:
            for _ in range(self.count):
                popen = subprocess.Popen(
                    [sys.executable, "-m", __name__],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    env=environment,
                )
                self._processes.append(_Process(popen))
        except BaseException:
            self.close(kill=True)  # __exit__ is not called when __enter__ raises
            raise
        return self

    def __exit__(self, exc_type: Any, exc: Any, traceback: Any) -> None:
        self.close(kill=exc_type is not None)

    @property
    def pids(self) -> list[int]:
        return [process.popen.pid for process in self._processes]

    def render(self, html_path: Path, pdf_path: Path) -> _Process:
        process = self._processes[self._turn % len(self._processes)]
        self._turn += 1
        process.ask({"render": str(html_path), "to": str(pdf_path)})
        return process

    @staticmethod
    def wait(ticket: _Process) -> Path:
        return Path(ticket.answer())

    def join(self, paths: Sequence[Path], title: str, destination: Path) -> Path:
        """Join ``paths`` into ``destination`` in one process, after ending the others.

        The others end first so that their memory is given back before the join needs its own.
        """
        keep, *others = self._processes
        for process in others:
            _end(process.popen, kill=False)
        self._processes = [keep]
        keep.ask({"join": [str(path) for path in paths], "title": title, "to": str(destination)})
        return Path(keep.answer())

    def close(self, *, kill: bool) -> None:
        """End every process: at once when ``kill``, otherwise once its current request is done."""
        for process in self._processes:
            _end(process.popen, kill=kill)
        self._processes = []


def _end(popen: subprocess.Popen[bytes], *, kill: bool) -> None:
    if kill:
        popen.kill()
    for stream in (popen.stdin, popen.stdout):
        if stream is not None:
            with contextlib.suppress(BrokenPipeError):
                stream.close()
    try:
        popen.wait(timeout=EXIT_SECONDS)
    except subprocess.TimeoutExpired:
        popen.kill()
        popen.wait()


# --------------------------------------------------------------------------- the process


def _serve(requests: IO[bytes], answers: IO[bytes]) -> None:
    from app.rendering import pdf, pdf_join

    for line in requests:
        request = json.loads(line)
        try:
            if "render" in request:
                pdf.render_html_file(Path(request["render"]), Path(request["to"]))
            else:
                destination = Path(request["to"])
                pdf_join.join_files([Path(p) for p in request["join"]], request["title"], destination)
        except Exception as exc:  # every failure is answered; the caller raises it
            reply: dict[str, Any] = {"error": f"{type(exc).__name__}: {exc}"}
        else:
            reply = {"wrote": request["to"]}
        answers.write(json.dumps(reply).encode("utf-8") + b"\n")


def main() -> None:
    # Ctrl-C in a terminal reaches the whole process group; the caller decides when its
    # rendering processes end (by closing their input), so they do not die mid-chunk.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # Libraries print warnings on standard output; the answers get a descriptor of their own
    # and everything printed goes to standard error with the caller's logs.
    # Unbuffered: an answer is one write, and nothing is left to flush at exit.
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "wb", buffering=0)
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    # A broken pipe means the caller is gone (killed, or done): there is no one to answer.
    with contextlib.suppress(BrokenPipeError):
        _serve(sys.stdin.buffer, answers)


if __name__ == "__main__":
    main()
