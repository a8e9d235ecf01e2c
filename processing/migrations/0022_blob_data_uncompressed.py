# Downloads read a blob a chunk at a time with substring() (processing/blobs.py BlobWindow). On a compressed
# value PostgreSQL decompresses from the start up to each chunk, so reading one grows with its square; stored
# uncompressed (EXTERNAL), each chunk reads only the TOAST chunks it covers. The blobs are mostly PDFs and
# archives, compressed already. Applies to values written from now on; older ones still read, only slower.

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("processing", "0021_job_preparation_lease_index"),
    ]

    operations = [
        migrations.RunSQL(
            "ALTER TABLE processing_processingblob ALTER COLUMN data SET STORAGE EXTERNAL",
            "ALTER TABLE processing_processingblob ALTER COLUMN data SET STORAGE EXTENDED",
        ),
    ]
