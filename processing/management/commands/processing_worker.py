from django.core.management.base import BaseCommand

from processing.worker.main import parser, run


class Command(BaseCommand):
    help = "Run a worker agent that speaks the worker protocol to Core over HTTP."

    def run_from_argv(self, argv):
        # The agent has its own argument parser and needs nothing from Django.
        raise SystemExit(run(argv[2:]))

    def create_parser(self, prog_name, subcommand, **kwargs):
        return parser()
