"""The click group, its default command and the error policy shared by every command."""

from __future__ import annotations

import importlib
import os
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import click

from ..errors import TraceconvError
from ..process_setup import set_up_process
from ..terminal import printable
from ..version import __version__

EPILOG = """\b
Examples:
  traceconv trace.json.gz --to perfetto          writes trace.pftrace
  traceconv rank-*.json --to perfetto -o all.pftrace
  traceconv info trace.json --json
  traceconv check out.pftrace
  traceconv formats
"""


class DefaultGroup(click.Group):
    """A group whose first argument may be an input file: then ``convert`` is implied.

    Commands load lazily: ``traceconv info`` imports the module of ``info`` alone (and what
    it runs), ``traceconv --version`` none. A first word that is neither a command nor a
    file but close to a command's name (``traceconv infos f``) is a usage error with a
    suggestion, not a missing input."""

    default_command = "convert"

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args[:1] == ["--version"]:
            return super().parse_args(ctx, args)
        first = args[0] if args else None
        if first is not None and first not in ("--help", "-h"):
            if first.startswith("-"):   # `-` (standard input) or an option of convert
                args = [self.default_command, *args]
            elif self.get_command(ctx, first) is None:
                if not os.path.exists(first):
                    _suggest_command(first, self.list_commands(ctx))
                args = [self.default_command, *args]
        return super().parse_args(ctx, args)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        from . import COMMANDS

        if cmd_name not in self.commands:
            module = COMMANDS.get(cmd_name)
            if module is not None:
                importlib.import_module(f"{__package__}.{module}")
            elif not os.path.exists(cmd_name):   # a command not in the table: load them all
                load_commands()
        return super().get_command(ctx, cmd_name)

    def list_commands(self, ctx: click.Context) -> list[str]:
        load_commands()
        return super().list_commands(ctx)

    def invoke(self, ctx: click.Context) -> object:
        """Run the command under the error policy as a whole: what a command renders after
        its own ``handled_errors`` block (tables, ``--json``) fails in one line too."""
        try:
            return super().invoke(ctx)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise   # usage errors and --help: click's own messages
        except Exception:  # noqa: BLE001 - the handler decides what each kind prints
            with handled_errors():
                raise
            raise   # (not reached: handled_errors exits)


def _suggest_command(word: str, commands: list[str]) -> None:
    """Exit 2 with a did-you-mean when ``word`` (not a file) is close to a command name."""
    import difflib

    close = difflib.get_close_matches(word, commands, n=1, cutoff=0.75)
    if close:
        click.echo(f"traceconv: error: no command or file named {printable(word)!r}; did you "
                   f"mean {close[0]!r}? (see `traceconv --help`)", err=True)
        sys.exit(2)


def load_commands() -> None:
    """Import every command module (each registers its command on :data:`app`)."""
    from . import COMMAND_MODULES

    for module in COMMAND_MODULES:
        importlib.import_module(f"{__package__}.{module}")


@click.group(cls=DefaultGroup, epilog=EPILOG,
             context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="traceconv")
def app() -> None:
    """Convert deep-learning profiler traces through one graph-aware model.

    Reads PyTorch (Kineto, snapshots, memory timelines, execution traces), Nsight Systems,
    XPlane, rocprof (v1-v3 CSV, JSON, results.db) and .rpd, TensorRT trtexec, MegEngine,
    Paddle, MIGraphX and Perfetto, writes Perfetto protobuf (open at
    https://ui.perfetto.dev), Chrome JSON, memory-flow SVG and summary tables. `traceconv IN --to FORMAT` is short for `traceconv convert IN --to FORMAT`.
    """


@contextmanager
def handled_errors() -> Iterator[None]:
    """Turn handled errors into one line on stderr and exit status 1 (no traceback).

    Every file is written through :mod:`traceconv.output_files`, whose failures are handled
    errors; a failed write that names no file (a full or closed standard output under
    printed tables and JSON) is standard output's."""
    from ..output_files import is_write_failure, silence_stdout, stdout_error

    try:
        yield
    except TraceconvError as exc:
        click.echo(f"traceconv: error: {printable(exc)}", err=True)
        sys.exit(getattr(exc, "exit_status", 1))   # 2: a usage error found late
    except KeyboardInterrupt:
        click.echo("traceconv: interrupted", err=True)
        sys.exit(130)
    except BrokenPipeError:   # the reader of standard output closed it (| head): no message
        silence_stdout()
        sys.exit(1)
    except MemoryError:   # (outside reading, where traceconv.io.reading names the input)
        click.echo("traceconv: error: ran out of memory (try fewer or smaller inputs, or a "
                   "machine with more memory)", err=True)
        sys.exit(1)
    except ValueError as exc:   # a number of thousands of digits, outside reading
        from ..numbers import is_digit_limit

        if not is_digit_limit(exc) or os.environ.get("TRACECONV_DEBUG"):
            _internal(exc)
        click.echo("traceconv: error: a number of more than 4,300 digits (no time or count "
                   "needs more than 19)", err=True)
        sys.exit(1)
    except OSError as exc:   # an operating system call failed: its file and reason
        if is_write_failure(exc):   # standard output's (files name themselves)
            click.echo(f"traceconv: error: {printable(stdout_error(exc))}", err=True)
            sys.exit(1)
        if os.environ.get("TRACECONV_DEBUG"):
            raise
        place = f"{printable(exc.filename)}: " if exc.filename else ""
        click.echo(f"traceconv: error: {place}{printable(exc.strerror or exc)}", err=True)
        sys.exit(1)
    except Exception as exc:  # a bug: still one line, with a way to see the traceback
        _internal(exc)


def _internal(exc: Exception) -> None:
    """A bug: one line and exit 1, or the traceback under ``TRACECONV_DEBUG``."""
    if os.environ.get("TRACECONV_DEBUG"):
        raise exc
    click.echo(f"traceconv: internal error: {type(exc).__name__}: {printable(exc)} "
               "(set TRACECONV_DEBUG=1 for the traceback)", err=True)
    sys.exit(1)


# Every signal whose default action ends the process and that a handler can catch: each
# unwinds like Ctrl-C, so the hidden ``.traceconv-*.part`` of an output is removed.
# (SIGPIPE is ignored by Python: a write to a closed pipe raises BrokenPipeError instead.)
TERMINATING_SIGNALS = ("SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGALRM",
                       "SIGVTALRM", "SIGPROF", "SIGXCPU", "SIGXFSZ", "SIGPOLL", "SIGPWR",
                       "SIGSTKFLT", "SIGSYS", "SIGTRAP", "SIGEMT", "SIGLOST", "SIGINFO")


def _terminated(signum: int, frame: object) -> None:
    """A terminating signal unwinds like Ctrl-C does, so half-written outputs are removed on
    the way; the exit status is 128 + the signal's number, as a shell reports it."""
    for number in _caught():   # a second signal must not interrupt the clean-up
        signal.signal(number, signal.SIG_IGN)
    click.echo(f"traceconv: terminated ({signal.Signals(signum).name})", err=True)
    raise SystemExit(128 + signum)


def _caught() -> list[int]:
    return [getattr(signal, name) for name in TERMINATING_SIGNALS if hasattr(signal, name)]


def catch_terminating_signals() -> None:
    """Install :func:`_terminated` for every terminating signal left at its default action
    (one the caller ignores, as ``nohup`` does with SIGHUP, stays ignored)."""
    for number in _caught():
        if signal.getsignal(number) == signal.SIG_DFL:
            signal.signal(number, _terminated)


def main() -> None:
    """Console-script entry point."""
    set_up_process()
    catch_terminating_signals()
    app(prog_name="traceconv")
