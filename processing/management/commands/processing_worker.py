from pathlib import Path

from django.core.management.base import BaseCommand, CommandError


class Command(BaseCommand):
    help = "Run a worker agent that speaks the worker protocol to Core over HTTP."

    def run_from_argv(self, argv):
        # The agent has its own argument parser and needs nothing from Django.
        raise SystemExit(_agent().run(argv[2:], prog=f"{Path(argv[0]).name} {argv[1]}"))

    def create_parser(self, prog_name, subcommand, **kwargs):
        return _agent().parser(prog=f"{prog_name} {subcommand}")


def _agent():
    """The worker agent's command line, from its own distribution (worker/), which Core does not need to run."""
    try:
        from quire_worker import main
    except ImportError as exc:
        raise CommandError("The worker agent is not installed here: pip install ./worker (or -e ./worker).") from exc
    return main
