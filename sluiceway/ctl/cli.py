"""``sluiceway ctl``: argparse wiring of the commands (kcctl's verbs) and the global options.

Global options may come before or after the command (``ctl -o json get connectors`` and
``ctl get connectors -o json`` are the same): every sub-parser declares them with
suppressed defaults, so only the ones given override the top-level values.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import Any

from sluiceway.ctl import change_commands, inspect_commands, offset_commands, snapshot_commands
from sluiceway.ctl.client import ConnectClient, parse_url, parse_user, tls_verify
from sluiceway.ctl.errors import CtlError, UsageError
from sluiceway.ctl.exit_codes import HELP as EXIT_CODES_HELP
from sluiceway.ctl.exit_codes import ExitCode
from sluiceway.ctl.render import Output
from sluiceway.ctl.session import Session

URL_ENV = "SLUICEWAY_CONNECT_URL"
DEFAULT_URL = "http://localhost:8083"
DEFAULT_TIMEOUT_S = 60.0
LOG_LEVELS = ("ALL", "TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL", "OFF")

Handler = Callable[[Session, argparse.Namespace], int]

DESCRIPTION = """Operate a running Kafka Connect (or Sluiceway) cluster through its REST API.

examples:
  %(prog)s get connectors
  %(prog)s apply -f file-source.properties
  %(prog)s describe connector file-source
  %(prog)s patch connector file-source --set batch.size=500 --unset transforms
  %(prog)s pause file-source --wait
  %(prog)s offsets reset file-source --resume --wait
"""

EPILOG = f"""environment:
  {URL_ENV}  the worker URL when --url is not given (default {DEFAULT_URL})
  NO_COLOR               set it to turn colours off, like --no-color

{EXIT_CODES_HELP}"""


def _positive_seconds(raw: str) -> float:
    try:
        value = float(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{raw}' is not a number of seconds") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"'{raw}' must be more than 0 seconds")
    return value


def _add_global_options(parser: argparse.ArgumentParser, suppress: bool) -> None:
    def default(value: Any) -> Any:
        return argparse.SUPPRESS if suppress else value

    group = parser.add_argument_group("global options")
    group.add_argument(
        "--url",
        default=default(os.environ.get(URL_ENV) or DEFAULT_URL),
        help=f"the worker's REST URL (default: ${URL_ENV}, else {DEFAULT_URL})",
    )
    group.add_argument(
        "-o",
        "--output",
        choices=("table", "json", "yaml"),
        default=default("table"),
        help="output format of get, describe, validate, logs and patch (default: table); "
        "json and yaml print the REST answers as they are",
    )
    group.add_argument(
        "--timeout",
        type=_positive_seconds,
        metavar="SECONDS",
        default=default(DEFAULT_TIMEOUT_S),
        help=f"limit for each request and for each wait for a state (default: {DEFAULT_TIMEOUT_S:g})",
    )
    group.add_argument(
        "--user", metavar="USER:PASSWORD", default=default(None), help="HTTP basic authentication"
    )
    group.add_argument(
        "--insecure",
        action="store_true",
        default=default(False),
        help="do not verify the worker's TLS certificate (https)",
    )
    group.add_argument(
        "--cacert",
        metavar="FILE",
        default=default(None),
        help="verify the worker's TLS certificate with these PEM CA certificates",
    )
    group.add_argument(
        "--no-color", action="store_true", default=default(False), help="plain output without colours"
    )


class _Builder:
    """Adds sub-parsers that all know the global options."""

    def __init__(self, prog: str) -> None:
        self.root = argparse.ArgumentParser(
            prog=prog,
            description=DESCRIPTION,
            epilog=EPILOG,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        _add_global_options(self.root, suppress=False)

    def sub(
        self, parent: argparse._SubParsersAction[argparse.ArgumentParser], name: str, summary: str, **kw: Any
    ) -> argparse.ArgumentParser:
        parser = parent.add_parser(
            name,
            help=summary,
            description=summary,
            formatter_class=argparse.RawDescriptionHelpFormatter,
            **kw,
        )
        _add_global_options(parser, suppress=True)
        return parser


def _with_handler(parser: argparse.ArgumentParser, handler: Handler) -> None:
    parser.set_defaults(handler=handler)


def build_parser(prog: str) -> argparse.ArgumentParser:
    b = _Builder(prog)
    commands = b.root.add_subparsers(dest="command", metavar="COMMAND", required=True)

    # get
    get = b.sub(commands, "get", "list connectors, plugins, offsets or loggers")
    what = get.add_subparsers(dest="what", metavar="WHAT", required=True)
    p = b.sub(what, "connectors", "NAME TYPE STATE TASKS of every connector", aliases=["connector"])
    p.add_argument("names", nargs="*", metavar="NAME", help="only these connectors")
    _with_handler(p, lambda s, a: inspect_commands.get_connectors(s, a.names))
    p = b.sub(what, "plugins", "installed connector plugins", aliases=["plugin"])
    p.add_argument("--all", action="store_true", help="converters, transforms and predicates too")
    _with_handler(p, lambda s, a: inspect_commands.get_plugins(s, a.all))
    p = b.sub(what, "offsets", "a connector's committed offsets")
    p.add_argument("connector", metavar="CONNECTOR")
    _with_handler(p, lambda s, a: inspect_commands.get_offsets(s, a.connector))
    p = b.sub(what, "loggers", "the worker's loggers and their levels")
    _with_handler(p, lambda s, a: inspect_commands.get_loggers(s))

    # describe
    describe = b.sub(commands, "describe", "show a connector in detail")
    what = describe.add_subparsers(dest="what", metavar="WHAT", required=True)
    p = b.sub(
        what,
        "connector",
        "config, state, worker, tasks (with traces when FAILED), topics",
        aliases=["connectors"],
    )
    p.add_argument("names", nargs="+", metavar="NAME")
    _with_handler(p, lambda s, a: inspect_commands.describe_connectors(s, a.names))

    # apply
    p = b.sub(commands, "apply", "create or update connectors from .properties or .json files")
    p.add_argument(
        "-f",
        "--file",
        dest="files",
        action="append",
        required=True,
        metavar="FILE",
        help="a connector file ('-' reads stdin); repeat for several connectors",
    )
    p.add_argument("--name", help="the connector's name (overrides the file's)")
    p.add_argument(
        "--dry-run", action="store_true", help="only validate the config and say what would happen"
    )
    _with_handler(p, lambda s, a: change_commands.apply(s, a.files, a.name, a.dry_run))

    # patch
    patch = b.sub(commands, "patch", "change some keys of a connector's config")
    what = patch.add_subparsers(dest="what", metavar="WHAT", required=True)
    p = b.sub(what, "connector", "PATCH /connectors/NAME/config")
    p.add_argument("name", metavar="NAME")
    p.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--unset", dest="unsets", action="append", default=[], metavar="KEY")
    _with_handler(p, lambda s, a: change_commands.patch(s, a.name, a.sets, a.unsets))

    # pause / resume / stop
    for verb, summary in (
        ("pause", "pause connectors and their tasks"),
        ("resume", "resume paused or stopped connectors"),
        ("stop", "stop connectors (their tasks are shut down; offsets can then be changed)"),
    ):
        p = b.sub(commands, verb, summary)
        p.add_argument("names", nargs="+", metavar="NAME")
        p.add_argument("--wait", action="store_true", help="wait until the new state is reached")
        _with_handler(p, _change_state(verb))

    # restart
    restart = b.sub(commands, "restart", "restart a connector or a task")
    what = restart.add_subparsers(dest="what", metavar="WHAT", required=True)
    p = b.sub(what, "connector", "POST /connectors/NAME/restart", aliases=["connectors"])
    p.add_argument("names", nargs="+", metavar="NAME")
    p.add_argument("--tasks", action="store_true", help="restart its tasks too (includeTasks=true)")
    p.add_argument(
        "--only-failed", action="store_true", help="only the instances that are FAILED (onlyFailed=true)"
    )
    p.add_argument("--wait", action="store_true", help="wait until the connector and tasks are RUNNING")
    _with_handler(
        p, lambda s, a: change_commands.restart_connector(s, a.names, a.tasks, a.only_failed, a.wait)
    )
    p = b.sub(what, "task", "POST /connectors/NAME/tasks/ID/restart", aliases=["tasks"])
    p.add_argument("refs", nargs="+", metavar="NAME/ID")
    p.add_argument("--wait", action="store_true", help="wait until the task is RUNNING")
    _with_handler(p, lambda s, a: change_commands.restart_task(s, a.refs, a.wait))

    # delete
    delete = b.sub(commands, "delete", "delete connectors")
    what = delete.add_subparsers(dest="what", metavar="WHAT", required=True)
    p = b.sub(what, "connector", "DELETE /connectors/NAME", aliases=["connectors"])
    p.add_argument("names", nargs="+", metavar="NAME")
    _with_handler(p, lambda s, a: change_commands.delete(s, a.names))

    # validate
    p = b.sub(commands, "validate", "validate connector files with their plugin (exit 1 on errors)")
    p.add_argument("-f", "--file", dest="files", action="append", required=True, metavar="FILE")
    p.add_argument("--name", help="the connector's name (overrides the file's)")
    _with_handler(p, lambda s, a: inspect_commands.validate(s, a.files, a.name))

    # logs
    logs = b.sub(commands, "logs", "the workers' log levels")
    what = logs.add_subparsers(dest="what", metavar="WHAT", required=True)
    p = b.sub(what, "level", "list loggers, show one logger's level, or set it")
    p.add_argument("logger", nargs="?", metavar="LOGGER", help="a logger name ('root' for all)")
    p.add_argument(
        "level",
        nargs="?",
        metavar="LEVEL",
        type=str.upper,
        choices=LOG_LEVELS,
        help="the new level: " + ", ".join(LOG_LEVELS),
    )
    p.add_argument(
        "--scope",
        choices=("worker", "cluster"),
        default="worker",
        help="set it on this worker only or on every worker (default: worker)",
    )
    _with_handler(p, lambda s, a: inspect_commands.logs_level(s, a.logger, a.level, a.scope))

    # snapshot
    p = b.sub(commands, "snapshot", "how far a CDC connector's initial snapshot has got")
    p.add_argument("name", metavar="NAME")
    p.add_argument(
        "--wait", action="store_true", help="show progress until the snapshot completes (within --timeout)"
    )
    _with_handler(p, lambda s, a: snapshot_commands.snapshot(s, a.name, a.wait))

    # offsets
    offsets = b.sub(commands, "offsets", "reset or alter a connector's offsets (stops it first)")
    what = offsets.add_subparsers(dest="what", metavar="WHAT", required=True)
    p = b.sub(what, "reset", "stop the connector, wait until STOPPED, delete its offsets")
    p.add_argument("name", metavar="NAME")
    _offsets_resume_options(p)
    _with_handler(p, lambda s, a: offset_commands.reset(s, a.name, a.resume, a.wait))
    p = b.sub(what, "alter", "stop the connector, wait until STOPPED, set offsets from a file")
    p.add_argument("name", metavar="NAME")
    p.add_argument(
        "-f",
        "--file",
        required=True,
        metavar="FILE",
        help='{"offsets": [{"partition": {...}, "offset": {...}}]}, as `get offsets -o json` prints',
    )
    _offsets_resume_options(p)
    _with_handler(p, lambda s, a: offset_commands.alter(s, a.name, a.file, a.resume, a.wait))
    return b.root


def _change_state(verb: str) -> Handler:
    return lambda s, a: change_commands.change_state(s, verb, a.names, a.wait)


def _offsets_resume_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--resume", action="store_true", help="resume the connector afterwards")
    p.add_argument("--wait", action="store_true", help="with --resume: wait until it is RUNNING")


def _session(args: argparse.Namespace, out: Output) -> Session:
    url = parse_url(args.url)
    auth = parse_user(args.user) if args.user is not None else None
    verify = tls_verify(args.insecure, args.cacert)
    if getattr(args, "wait", False) and args.command == "offsets" and not args.resume:
        raise UsageError("--wait waits for the resumed connector: give --resume too")
    client = ConnectClient(url, timeout=args.timeout, auth=auth, verify=verify)
    return Session(client, out, args.timeout)


def main(argv: list[str] | None = None, prog: str = "sluiceway ctl") -> int:
    parser = build_parser(prog)
    try:
        args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    except SystemExit as exc:  # argparse exits with 2 on usage errors, 0 after --help
        return exc.code if isinstance(exc.code, int) else ExitCode.USAGE
    out = Output(args.output, color=not args.no_color)
    handler: Handler = args.handler
    try:
        session = _session(args, out)
        with session.client:
            return handler(session, args)
    except CtlError as exc:
        out.error(str(exc))
        return exc.exit_code
    except KeyboardInterrupt:
        out.error("interrupted")
        return 130


if __name__ == "__main__":
    sys.exit(main())
