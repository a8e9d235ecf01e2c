from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from access import facade as access
from workspace import selectors, services
from workspace.starters import DEMO_PAPER


class Command(BaseCommand):
    help = "Give USER a demo LaTeX project that builds, unless they already have one by that name."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--name", default="Demo paper")
        parser.add_argument("--editor", action="append", default=[], help="Also make this user an editor of it.")

    def handle(self, *args, username: str, name: str, editor: list[str], **options):
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"No user named {username!r}.")
        project = next((p for p in selectors.projects_visible_to(user_id=user.pk) if p.name == name), None)
        if project is None:
            project = services.project_create(actor_id=user.pk, name=name, project_type="latex", starter=True)
            for path, text in DEMO_PAPER.items():
                services.file_write(actor_id=user.pk, project_id=project.pk, path=path, data=text.encode())
            self.stdout.write(f"created project {name!r} ({project.pk})")
        else:
            self.stdout.write(f"kept project {name!r}")
        for member in editor:
            access.member_set(actor_id=user.pk, project_id=project.pk, username=member, role="editor")
