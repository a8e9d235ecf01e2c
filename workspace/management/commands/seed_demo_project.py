from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from workspace import selectors, services


class Command(BaseCommand):
    help = "Give USER a demo LaTeX project that builds, unless they already have one by that name."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--name", default="Demo paper")

    def handle(self, *args, username: str, name: str, **options):
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"No user named {username!r}.")
        if any(project.name == name for project in selectors.projects_visible_to(user_id=user.pk)):
            self.stdout.write(f"kept project {name!r}")
            return
        project = services.project_create(actor_id=user.pk, name=name, project_type="latex", starter=True)
        self.stdout.write(f"created project {name!r} ({project.pk})")
