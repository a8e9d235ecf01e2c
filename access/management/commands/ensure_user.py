from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Create USER with PASSWORD if absent (used by `make run` for the demo login)."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("password")
        parser.add_argument("--staff", action="store_true", help="May open the operators' admin.")

    def handle(self, *args, username: str, password: str, staff: bool, **options):
        user, created = get_user_model().objects.get_or_create(username=username)
        if created:
            user.set_password(password)
            user.is_staff = user.is_superuser = staff
            user.save()
        self.stdout.write(f"{'created' if created else 'kept'} user {username}")
