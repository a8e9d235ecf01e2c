from django.db import migrations


def groups_create(apps, schema_editor):
    from operators.roles import groups_grant

    groups_grant(apps)


class Migration(migrations.Migration):
    dependencies = [
        ("operators", "0001_initial"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("processing", "0016_queued_by_requester"),
        ("library", "0001_initial"),
        ("office", "0001_initial"),
    ]

    operations = [migrations.RunPython(groups_create, migrations.RunPython.noop)]
