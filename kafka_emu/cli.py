"""The ``kafka-emu`` command (also ``python -m kafka_emu``).

    kafka-emu serve [--host 127.0.0.1] [--port 9092] [-c key=value ...] [--topic NAME:PARTITIONS ...]
                    [--brokers N [--rack RACK ...]]
                    [--control-port PORT [--control-host 127.0.0.1] [--control-token TOKEN]]
                    [--clock real|manual]
    kafka-emu groups --bootstrap-server HOST:PORT (--list [--state [STATE ...]] | --describe --group G)
    kafka-emu versions --bootstrap-server HOST:PORT
    kafka-emu ctl [--control HOST:PORT] (list | OPERATION [--param value ...])

``serve`` prints the bootstrap address (with --brokers N every broker's, comma-separated) as the
first line on stdout once it accepts connections
(then, with ``--control-port``, a line ``control: http://HOST:PORT`` and a line
``control-token: TOKEN``: the token every control request but /health must send; random unless
``--control-token`` or ``$KAFKA_EMU_CONTROL_TOKEN`` gives one),
logs to stderr and exits cleanly on SIGINT/SIGTERM. A bad flag or config value gets a one-line
error and exit code 2.
"""

from __future__ import annotations

import argparse
import errno
import gc
import logging
import os
import signal
import socket
import sys
from functools import partial
from typing import NoReturn, TypeVar

E = TypeVar("E", bound=BaseException)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, exit 2 (not argparse's usage)
        self.exit(2, f"{self.prog}: error: {message}\n")


def _topic(text: str) -> tuple[str, int]:
    name, sep, count = text.rpartition(":")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"expected NAME:PARTITIONS, got {text!r}")
    try:
        partitions = int(count)
    except ValueError:
        raise argparse.ArgumentTypeError(f"partitions must be an integer in {text!r}") from None
    if partitions < 1:
        raise argparse.ArgumentTypeError(f"partitions must be at least 1 in {text!r}")
    from .log.catalogue import INTERNAL_TOPICS, MAX_RECORDS_PER_USER_OP, topic_name_error

    # Kafka's controller writes one record per partition plus the topic's in one batch and
    # refuses a batch over MAX_RECORDS_PER_USER_OP (POLICY_VIOLATION), as the catalogue does
    if 1 + partitions > MAX_RECORDS_PER_USER_OP:
        raise argparse.ArgumentTypeError(
            f"{partitions} partitions in {text!r}: Kafka creates at most "
            f"{MAX_RECORDS_PER_USER_OP - 1} in one topic (\"Unable to perform excessively large "
            f"batch operation.\")")

    reason = topic_name_error(name)
    if reason is not None:
        raise argparse.ArgumentTypeError(f"invalid topic name in {text!r}: {reason}")
    if name in INTERNAL_TOPICS or name == "__cluster_metadata":  # as the control plane refuses
        raise argparse.ArgumentTypeError(
            f"topic {name!r} is internal: the broker creates it itself, on first need, with its "
            f"configured partition count (-c offsets.topic.num.partitions=N for "
            f"__consumer_offsets)")
    return name, partitions


def _setting(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected key=value, got {text!r}")
    return key.strip(), value.strip()


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid port {text!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"port {port} is outside 0-65535")
    return port


def _control_token(text: str) -> str:
    from .control.access import token_error

    problem = token_error(text)
    if problem is not None:
        raise argparse.ArgumentTypeError(problem)
    return text


def _brokers(text: str) -> int:
    try:
        count = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid broker count {text!r}") from None
    if not 1 <= count <= 64:
        raise argparse.ArgumentTypeError(f"broker count {count} is outside 1-64")
    return count


def build_parser(*, serve_only: bool = False) -> argparse.ArgumentParser:
    """The whole command line; with ``serve_only`` just ``serve``, which parses a serve
    command the same way without importing the other commands' modules (the admin tools load
    message declarations, ``ctl`` an HTTP client): a serve starts sooner."""
    from . import __version__

    parser = _Parser(prog="kafka-emu", description="An in-memory Apache Kafka broker emulator.")
    parser.add_argument("--version", action="version", version=f"kafka-emu {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    serve = sub.add_parser("serve", help="run the emulator")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    serve.add_argument("--port", type=_port, default=9092, help="port (default 9092; 0 = any)")
    serve.add_argument("-c", "--config", dest="settings", type=_setting, action="append",
                       default=[], metavar="KEY=VALUE", help="a Kafka broker config")
    serve.add_argument("--topic", dest="topics", type=_topic, action="append", default=[],
                       metavar="NAME:PARTITIONS", help="create a topic at start")
    serve.add_argument("--log-level", default="INFO", type=str.upper,
                       choices=["DEBUG", "INFO", "WARNING", "ERROR"],
                       help="DEBUG: a line per request; INFO: a line per group event (any case)")
    serve.add_argument("--log-format", default="text", choices=["text", "json"],
                       help="text lines (default) or one JSON object per line")
    serve.add_argument("--control-port", type=_port, default=None, metavar="PORT",
                       help="also serve the HTTP control endpoint (0 = any free port)")
    serve.add_argument("--control-host", default="127.0.0.1",
                       help="address of the control endpoint (default 127.0.0.1)")
    serve.add_argument("--control-token", type=_control_token, metavar="TOKEN",
                       default=os.environ.get("KAFKA_EMU_CONTROL_TOKEN") or None,
                       help="the token control requests must send as 'Authorization: Bearer "
                            "TOKEN' (default $KAFKA_EMU_CONTROL_TOKEN, else a random one, "
                            "printed)")
    serve.add_argument("--brokers", type=_brokers, default=1, metavar="N",
                       help="a cluster of N brokers in one process (node ids 1..N; ports "
                            "PORT, PORT+1, ..., or all free ones with --port 0)")
    serve.add_argument("--rack", dest="racks", action="append", default=[], metavar="RACK",
                       help="the next broker's rack (repeat once per broker)")
    serve.add_argument("--trace-dir", metavar="DIR",
                       help="write this run's trace to DIR/date=YYYY-MM-DD/run=<id>.jsonl")
    serve.add_argument("--trace-label", dest="trace_labels", type=_setting, action="append",
                       default=[], metavar="KEY=VALUE", help="a label on the trace (repeatable)")
    serve.add_argument("--trace-compress", choices=["gzip"], help="compress the trace")
    serve.add_argument("--clock", choices=["real", "manual"], default=None,
                       help="coordinator time: real (default) or manual (moves only when the "
                            "control plane advances it)")
    if serve_only:
        return parser

    from .admin import cli as admin_cli
    admin_cli.add_commands(sub)
    from .control import cli as control_cli
    control_cli.add_commands(sub)
    from .conformance import cli as conformance_cli
    conformance_cli.add_commands(sub)
    from .report import cli as report_cli
    report_cli.add_commands(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(serve_only=argv[:1] == ["serve"])
    if not argv:  # bare `kafka-emu`: say what it can do
        sys.stderr.write(parser.format_help())
        return 2
    args = parser.parse_args(argv)
    try:
        code = _serve(parser, args) if args.command == "serve" else args.run(args)
        sys.stdout.flush()
    except BrokenPipeError:
        # `kafka-emu versions | head`: the reader left; stop quietly (as Python's docs advise,
        # pointing stdout at /dev/null so the flush at exit does not complain again).
        _stdout_gone()
        return 1
    return code


def _stdout_gone() -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def _serve(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    # No cyclic garbage collection while starting: the imports (trio's, the declarations') make
    # objects that live as long as the server, and the collector would go over them several
    # times before the first answer. Once listening they are set aside for good (gc.freeze) and
    # collection resumes for what serving makes.
    gc.disable()
    from .broker.config import BrokerConfig

    settings = dict(args.settings)
    if args.clock is not None:
        settings["emu.clock"] = args.clock
    try:
        cluster = {}
        if args.brokers != 1:
            cluster["brokers"] = args.brokers
        if args.racks:
            if len(args.racks) > args.brokers:
                parser.error(f"{len(args.racks)} --rack values for {args.brokers} broker(s)")
            cluster["racks"] = tuple(args.racks)
        if args.port and args.port + args.brokers - 1 > 65535:
            parser.error(f"ports {args.port}-{args.port + args.brokers - 1} go past 65535")
        config = BrokerConfig.from_kafka(settings, host=args.host, port=args.port,
                                         topics=tuple(args.topics), **cluster)
    except ValueError as exc:
        parser.error(str(exc))
    from .broker.log_sink import attach_log_sink, configure_logging

    configure_logging(args.log_level, args.log_format)
    writer = None
    if args.trace_dir is not None:
        from .trace.writer import TraceError, TraceWriter
        try:
            writer = TraceWriter(args.trace_dir, labels=dict(args.trace_labels),
                                 compress=args.trace_compress).open()
        except TraceError as exc:
            parser.error(str(exc))
    import trio

    from .broker.server import serve
    from .errors import KafkaError

    failed: list[tuple[int, str]] = []  # (exit code, message) of a failure to listen

    def _failed_to_listen(exc: BaseException, what: str, host: str, port: int) -> bool:
        found = _os_error(exc)
        if found is not None:
            failed.append(_listen_error(found, host, port, what))
        return found is not None

    async def run() -> None:
        async with trio.open_nursery() as nursery:
            try:
                bound = await nursery.start(partial(serve, config))
            except Exception as exc:  # an OSError, bare or in an ExceptionGroup (trio >= 0.25)
                refused = _found(exc, KafkaError)
                from .security.tls import TlsSetupError
                tls = _found(exc, TlsSetupError)
                if refused is not None:  # a start-up topic Kafka would refuse: the user's input
                    failed.append((2, f"cannot start: {refused}"))
                elif tls is not None:  # the user's keystore or truststore
                    failed.append((2, f"cannot start: {tls}"))
                elif not _failed_to_listen(exc, "", config.host, config.port):
                    raise
                nursery.cancel_scope.cancel()
                return
            attach_log_sink(bound.broker)  # group events at INFO, requests at DEBUG
            if writer is not None:
                try:
                    writer.attach(bound.broker, nursery, config)
                except TraceError as exc:
                    # not SystemExit here: inside the nursery it would become an ExceptionGroup
                    failed.append((2, str(exc)))
                    nursery.cancel_scope.cancel()
                    return
            control = None
            if args.control_port is not None:
                from .control.http import serve_control
                try:
                    control = await nursery.start(partial(
                        serve_control, bound.broker, args.control_host, args.control_port,
                        token=args.control_token))
                except Exception as exc:
                    if not _failed_to_listen(exc, "the control endpoint", args.control_host,
                                             args.control_port):
                        raise
                    nursery.cancel_scope.cancel()
                    return
            if args.control_port is not None:
                # the timeline records from the first client on; without a control endpoint
                # nobody could read it, so nothing is recorded (and serving pays nothing)
                from .control.plane import control_of
                control_of(bound.broker)
            # Listen for signals before saying we are up: a script that reads the address and
            # sends SIGTERM at once must get a clean stop, not the default handler's kill.
            with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                try:
                    print(bound.bootstrap, flush=True)  # always the first line: scripts read it
                    if len(bound.listeners) > 1 or bound.listeners[0][0] != "PLAINTEXT":
                        for name, protocol, bootstrap in bound.listeners:
                            print(f"listener {name} ({protocol}): {bootstrap}", flush=True)
                    if bound.tls is not None and bound.tls.ca_file:
                        print(f"ssl-ca: {bound.tls.ca_file}", flush=True)
                    if control is not None:
                        print(f"control: {control.url}", flush=True)
                        print(f"control-token: {control.token}", flush=True)
                except BrokenPipeError:  # `kafka-emu serve | head -1`: serve on, print nothing
                    _stdout_gone()
                gc.freeze()
                gc.enable()
                async for signum in signals:
                    logging.getLogger("kafka_emu").info("received %s, stopping",
                                                        signal.Signals(signum).name)
                    nursery.cancel_scope.cancel()
                    break

    try:
        trio.run(run)
    finally:
        if writer is not None:
            writer.close()
    if failed:
        code, message = failed[0]
        print(f"kafka-emu: error: {message}", file=sys.stderr)
        return code
    return 0


def _found(exc: BaseException, kind: type[E]) -> E | None:
    """The ``kind`` exception in ``exc``, looking inside exception groups (trio wraps errors
    in them from 0.25 on, strict_exception_groups; older trio raises them bare)."""
    if isinstance(exc, kind):
        return exc
    for inner in getattr(exc, "exceptions", ()):
        found = _found(inner, kind)
        if found is not None:
            return found
    return None


def _os_error(exc: BaseException) -> OSError | None:
    return _found(exc, OSError)


def _listen_error(exc: OSError, host: str, port: int, what: str = "") -> tuple[int, str]:
    """(exit code, one line) for a failure to listen: 2 when the address given is wrong,
    1 when the machine is in the way (port in use, no permission)."""
    from .broker.server import host_port

    where = f"cannot listen{' for ' + what if what else ''} on {host_port(host, port)}"
    reason = exc.strerror or str(exc) or type(exc).__name__
    if isinstance(exc, socket.gaierror):
        return 2, f"{where}: unknown host {host!r} ({reason})"
    if exc.errno == errno.EADDRNOTAVAIL:
        return 2, f"{where}: {reason} (not an address of this machine)"
    return 1, f"{where}: {reason}"


if __name__ == "__main__":
    raise SystemExit(main())
