from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from access.services import token_create


class Command(BaseCommand):
    help = "Create a personal API token for USER and print it once."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--name", default="cli")

    def handle(self, *args, username: str, name: str, **options):
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"No user named {username!r}.")
        _, plaintext = token_create(user_id=user.pk, name=name)
        self.stdout.write(plaintext)
