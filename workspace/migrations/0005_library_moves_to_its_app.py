# The PDF library's models moved to the ``library`` app (library/migrations/0001_initial).
# State only: the tables, their rows, constraints and indexes stay as they are.

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('workspace', '0004_readable_choice_labels'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveField(model_name='librarydocument', name='requested_version'),
                migrations.RemoveField(model_name='librarydocument', name='searchable_version'),
                migrations.DeleteModel(name='LibraryPage'),
                migrations.DeleteModel(name='LibraryVersion'),
                migrations.DeleteModel(name='LibraryDocument'),
            ],
            database_operations=[],
        ),
    ]
